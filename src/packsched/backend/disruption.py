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
    expected: int = 1  # the pods the budget expects (upstream's expectedCount); none: no disruption allowed

    @property
    def disruptions_allowed(self) -> int:
        return max(0, self.healthy - self.desired_healthy) if self.expected > 0 else 0

    def matches(self, pod: PodInfo) -> bool:
        return self.pdb.matches(pod.pod)


def _scaled(value: int | str, total: int) -> int:
    if isinstance(value, int):
        return value
    return math.ceil(int(value[:-1]) * total / 100)


def _managed(pod: Pod) -> bool:
    """Whether a controller owns the pod (a workload packsched expanded, or a controller ownerReference)."""
    return pod.owner is not None or any(ref.controller for ref in pod.owner_refs)


def budget_status(pdb: PodDisruptionBudget, running: Iterable[Pod], all_pods: Iterable[Pod]) -> BudgetStatus:
    """``running``: pods placed on nodes (healthy); ``all_pods``: every pod that exists, pending included.

    The disruption controller takes an integer ``minAvailable`` as it is; a percentage or ``maxUnavailable`` is
    taken of the scale of the pods' controllers, for which packsched counts the controlled pods that exist (a pod
    no controller owns counts for nothing there). A budget that expects no pod allows no disruption."""
    healthy = sum(1 for p in running if pdb.matches(p))
    matching = [p for p in all_pods if pdb.matches(p)]
    expected = len(matching)
    if pdb.max_unavailable is not None or isinstance(pdb.min_available, str):
        expected = sum(1 for p in matching if _managed(p))
    if pdb.max_unavailable is not None:
        desired = max(0, expected - _scaled(pdb.max_unavailable, expected))
    elif pdb.min_available is not None:
        desired = _scaled(pdb.min_available, expected)  # percentages round up
    else:
        desired, expected = 0, 0  # neither field set: the controller expects no pod
    return BudgetStatus(pdb, healthy, desired, expected)


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
