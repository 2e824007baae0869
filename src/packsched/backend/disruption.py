"""PodDisruptionBudgets and how many disruptions each allows now, as the disruption controller computes it."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from packsched.api.objects import Pod, PodDisruptionBudget
from packsched.framework.podinfo import PodInfo


@dataclass
class BudgetStatus:
    pdb: PodDisruptionBudget
    healthy: int
    desired_healthy: int

    @property
    def disruptions_allowed(self) -> int:
        return max(0, self.healthy - self.desired_healthy)

    def matches(self, pod: PodInfo) -> bool:
        return self.pdb.matches(pod.pod)


def _scaled(value: int | str, total: int) -> int:
    if isinstance(value, int):
        return value
    return math.ceil(int(value[:-1]) * total / 100)


def budget_status(pdb: PodDisruptionBudget, running: Iterable[Pod], all_pods: Iterable[Pod]) -> BudgetStatus:
    """``running``: pods placed on nodes (healthy); ``all_pods``: every pod that exists, pending included
    (the number the pods' controllers want, which percentages and maxUnavailable are taken of)."""
    healthy = sum(1 for p in running if pdb.matches(p))
    expected = sum(1 for p in all_pods if pdb.matches(p))
    if pdb.max_unavailable is not None:
        desired = max(0, expected - _scaled(pdb.max_unavailable, expected))
    elif pdb.min_available is not None:
        desired = _scaled(pdb.min_available, expected)  # percentages round up
    else:
        desired = 0  # neither field set: the disruption controller asks for no healthy pods
    return BudgetStatus(pdb, healthy, desired)


def budgets(pdbs: Iterable[PodDisruptionBudget], pods: Iterable[tuple[Pod, bool]]) -> list[BudgetStatus]:
    """Every budget's status now. ``pods``: every pod that exists (pending ones included, none on its way out),
    each with whether it runs (is placed on a node). The simulator and the live adapter both answer with this."""
    pdbs = list(pdbs)
    if not pdbs:
        return []
    alive: list[Pod] = []
    running: list[Pod] = []
    for pod, runs in pods:
        alive.append(pod)
        if runs:
            running.append(pod)
    return [budget_status(pdb, running, alive) for pdb in pdbs]
