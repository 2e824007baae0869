"""PodDisruptionBudgets' allowed disruptions as the disruption controller computes them (pkg/controller/disruption
getExpectedPodCount, updatePdbStatus): an integer minAvailable over every selected pod; a percentage or a
maxUnavailable over the pods a controller owns; nothing allowed while no pod is expected."""

from __future__ import annotations

import pytest

from packsched.api.objects import LabelSelector, OwnerRef, Pod, PodDisruptionBudget
from packsched.backend.disruption import budget_status

APP = LabelSelector(match_labels=(("app", "web"),))


def _pods(running: int, pending: int, *, managed: bool) -> tuple[list[Pod], list[Pod]]:
    refs = (OwnerRef("ReplicaSet", "web", api_version="apps/v1"),) if managed else ()
    pods = [Pod(f"p{i}", labels={"app": "web"}, owner_refs=refs) for i in range(running + pending)]
    return pods[:running], pods


@pytest.mark.parametrize(
    ("min_available", "max_unavailable", "managed", "allowed"),
    [
        (2, None, False, 2),  # an integer minAvailable: every selected pod, owned or not (4 running, 2 wanted)
        (2, None, True, 2),
        ("50%", None, True, 1),  # 50 % of 5 expected rounds up to 3: 4 running leave 1
        ("50%", None, False, 0),  # bare pods: no pod expected, nothing allowed
        (None, 1, True, 0),  # 5 expected, at most 1 unavailable: 4 wanted, 4 running
        (None, "25%", True, 1),  # 25 % of 5 rounds up to 2: 3 wanted
        (None, 3, False, 0),
        (None, None, True, 0),  # neither field: the controller expects no pod
    ],
)
def test_allowed_disruptions(
    min_available: int | str | None, max_unavailable: int | str | None, managed: bool, allowed: int
) -> None:
    running, every = _pods(4, 1, managed=managed)
    pdb = PodDisruptionBudget("web", "default", APP, min_available=min_available, max_unavailable=max_unavailable)
    assert budget_status(pdb, running, every).disruptions_allowed == allowed


def test_a_workload_pod_counts_as_owned() -> None:
    pods = [Pod(f"p{i}", labels={"app": "web"}, owner=OwnerRef("Deployment", "web")) for i in range(4)]
    pdb = PodDisruptionBudget("web", "default", APP, max_unavailable="50%")
    assert budget_status(pdb, pods, pods).disruptions_allowed == 2
