"""kube-scheduler 1.37.2's pod-group cycle (``pkg/scheduler/schedule_one_podgroup_test.go``) as tables run against
podgroup_placement.py: TestPodGroupSchedulingAlgorithm (each pod's outcome and PlacementFeasible's answers, scripted
as upstream's fake plugins script them; TopologyAwareWorkloadScheduling and CompositePodGroup off) and
TestValidatePodGroup (PodGroupPreemptionPolicy and CompositePodGroup off, the gates packsched refuses on). The
whole cycle in a simulation is tested in tests/sim/test_gangs_1_37.py."""

from __future__ import annotations

from typing import Any

import pytest

from gangscheduling_support import V137, pod136
from packsched.api.objects import PREEMPT_NEVER, Pod
from packsched.framework.podinfo import make_pod_info
from packsched.framework.status import Code, Status
from packsched.podgroup_placement import default_algorithm, validate_pod_group

CODES = {
    "S": Code.SUCCESS,
    "U": Code.UNSCHEDULABLE,
    "R": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    "W": Code.WAIT,
    "E": Code.ERROR,
}


def row(name: str, *values: Any) -> Any:
    return pytest.param(*values, id=name)


# -- TestPodGroupSchedulingAlgorithm ------------------------------------------------------------------------------
# Three pods p1..p3; ``filters``: what each pod's attempt gives (S placed, U/R unschedulable, E error);
# ``feasible``: PlacementFeasible's answers in call order ("" or past the end: Success); the group's code, and the
# code of each pod tried (the pods after the loop stopped are absent).


@pytest.mark.parametrize(
    ("filters", "feasible", "group", "pods"),
    [
        row("All pods feasible", "SSS", "", "S", "SSS"),
        row("All pods feasible, podGroup already meeting quorum before any pod is evaluated", "SSS", "SSSS", "S",
            "SSS"),
        row("All pods feasible, podGroup schedulable with 3 schedulable pods", "SSS", "WWWS", "S", "SSS"),
        row("All pods feasible, podGroup waiting", "SSS", "WWWW", "U", "SSS"),
        row("All pods feasible, podGroup unschedulable", "SSS", "WU", "U", "S"),
        row("All pods feasible, podGroup unschedulable with 2 pods", "SSS", "WWU", "U", "SS"),
        row("PodGroup schedulable with 2 schedulable pods", "USS", "WWWS", "S", "USS"),
        row("All pods unschedulable", "RUU", "WSSS", "U", "RUU"),
        row("Any filter returned Error", "SES", "", "E", "SE"),
        row("Any placementFeasible returned Error", "SSS", "WSE", "E", "SS"),
        row("First placementFeasible call returned Unschedulable", "SSS", "U", "U", ""),
        row("First placementFeasible call returned Error", "SSS", "E", "E", ""),
    ],
)  # fmt: skip
def test_pod_group_scheduling_algorithm(filters: str, feasible: str, group: str, pods: str) -> None:
    answers = iter(feasible)
    calls: list[tuple[int, int]] = []

    def place(i: int) -> Status:
        return Status(CODES[filters[i]], [] if filters[i] == "S" else [f"p{i + 1}"])

    def feasible_fn(scheduled: int, remaining: int) -> Status:
        calls.append((scheduled, remaining))
        return Status(CODES[next(answers, "S")], ["scripted"])

    out = default_algorithm(3, 0, place, feasible_fn)
    assert out.status.code == CODES[group]
    assert [st.code for st in out.pods] == [CODES[c] for c in pods]
    # the progress PlacementFeasible sees: before any pod, then after each pod tried
    assert calls[0] == (0, 3)
    for n, (scheduled, remaining) in enumerate(calls[1:], start=1):
        assert (scheduled, remaining) == (pods[:n].count("S"), 3 - n)


def test_a_group_that_fits_with_nothing_placed_is_unschedulable() -> None:
    """runRootSchedulingAlgorithm: minCount met by pods placed before, every queued pod failing: no success."""
    out = default_algorithm(2, 3, lambda i: Status(Code.UNSCHEDULABLE), lambda s, r: Status())
    assert (out.status.code, out.status.message, out.any_scheduled) == (
        Code.UNSCHEDULABLE,
        "pod group is unschedulable",
        False,
    )


def test_statuses_made_with_upstreams_error_begin_with_it() -> None:
    """A Go Status lists its error first among its reasons: the group's status begins "pod group is
    unschedulable" where upstream wraps errPodGroupUnschedulable (PlacementFeasible's first answer, a Wait left
    at the end), not where PlacementFeasible's Unschedulable ends the loop."""

    def wait(s: int, r: int) -> Status:
        return Status(Code.WAIT, ["w"])

    def no(s: int, r: int) -> Status:
        return Status(Code.UNSCHEDULABLE, ["no"])

    assert default_algorithm(1, 0, lambda i: Status(), wait).status.message == "pod group is unschedulable, w"
    assert default_algorithm(1, 0, lambda i: Status(), no).status.message == "pod group is unschedulable, no"
    answers = iter([Status(Code.WAIT, ["w"]), Status(Code.UNSCHEDULABLE, ["late"])])
    assert default_algorithm(2, 0, lambda i: Status(), lambda s, r: next(answers)).status.message == "late"


def test_errors_carry_upstreams_words() -> None:
    out = default_algorithm(2, 0, lambda i: Status.error("boom"), lambda s, r: Status(Code.WAIT, ["w"]))
    assert out.status.message == "failed to schedule other pod from a pod group: boom"
    out = default_algorithm(2, 0, lambda i: Status(), lambda s, r: Status.error("bad"))
    assert out.status.message == "failed to evaluate placement feasibility: bad"


# -- TestValidatePodGroup -------------------------------------------------------------------------------------------


def pod(name: str, scheduler: str = "default-scheduler", priority: int = 0, never: bool = False, node: str = "") -> Pod:
    p = pod136(name, "pg", ns="default", node=node)
    p.scheduler_name, p.priority = scheduler, priority
    if never:
        p.preemption_policy = PREEMPT_NEVER
    return p


PROFILES = ("default-scheduler", "sched1")


@pytest.mark.parametrize(
    ("group_priority", "queued", "placed", "problem"),
    [
        row("success for same scheduler name", 0, [pod("p1", "sched1"), pod("p2", "sched1")], [], None),
        row("failure for different scheduler names", 0, [pod("p1", "sched1"), pod("p2", "sched2")], [],
            'all pods in a single pod group should have the same .spec.schedulerName set, got: "sched2" and '
            '"sched1"'),
        row("failure when profile not found", 0, [pod("p1", "sched3"), pod("p2", "sched3")], [],
            'profile not found for scheduler name "sched3"'),
        row("success when priorities match", 10, [pod("p1", priority=10), pod("p2", priority=10)], [], None),
        row("failure when different priorities across pods", 10, [pod("p1", priority=9), pod("p2", priority=10)],
            [], "all pods in a single pod group should have the same priority as the pod group's priority, got 9 "
            "and 10"),
        row("failure when different priorities across pods and pod group", 9,
            [pod("p1", priority=10), pod("p2", priority=10)], [],
            "all pods in a single pod group should have the same priority as the pod group's priority, got 10 and 9"),
        row("success when new pods match scheduled pods scheduler name and priority", 10,
            [pod("p1", "sched1", 10)], [pod("p2", "sched1", 10, node="node1")], None),
        row("failure when new pod has different scheduler name than scheduled pod", 10,
            [pod("p1", "sched1", 10)], [pod("p2", "sched2", 10, node="node1")],
            'all pods in a single pod group should have the same .spec.schedulerName set, got: "sched2" and '
            '"sched1"'),
        row("failure when new pod has different priority than scheduled pod", 10,
            [pod("p1", "sched1", 10)], [pod("p2", "sched1", 9, node="node1")],
            "all pods in a single pod group should have the same priority as the pod group's priority, got 9 and 10"),
        row("success when preemption policies between pods and podgroup do not match but PodGroupPreemptionPolicy "
            "is disabled", 0, [pod("p1"), pod("p2")], [], None),
        row("failure when preemption policies do not match across pods and PodGroupPreemptionPolicy is disabled", 0,
            [pod("p1"), pod("p2", never=True)], [],
            "all pods in a single pod group should have the same preemption policy, got Never and "
            "PreemptLowerPriority"),
    ],
)  # fmt: skip
def test_validate_pod_group(group_priority: int, queued: list[Pod], placed: list[Pod], problem: str | None) -> None:
    infos = [make_pod_info(p, version=V137) for p in queued]
    done = [make_pod_info(p, version=V137) for p in placed]
    assert validate_pod_group(infos, done, group_priority, PROFILES) == problem
