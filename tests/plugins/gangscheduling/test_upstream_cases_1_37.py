"""kube-scheduler 1.37.2's GangScheduling unit tests (``pkg/scheduler/framework/plugins/gangscheduling/
gangscheduling_test.go``) as tables run against packsched's plugin: PlacementFeasible, the queueing hints (pod
added, PodGroup added, PodGroup updated) and the flow through PreEnqueue and Permit. Only upstream's rows with the
CompositePodGroup gate off are ported (packsched refuses that gate on); rows keep upstream's names, without the
"(CPG=false)" suffix.
"""

from __future__ import annotations

from typing import Any

import pytest

from gangscheduling_support import V137, FakeHandle, plugin137, pod136, pod_group, pod_group_137
from packsched.api.objects import Pod
from packsched.api.podgroups import SchedulingPodGroup
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import (
    ADD,
    ASSIGNED_POD_ADD,
    SCHEDULING_POD_GROUP,
    SCHEDULING_POD_GROUP_UPDATE,
    UNSCHEDULED_POD_ADD,
    ClusterEvent,
)
from packsched.framework.status import Code
from packsched.plugins.gangscheduling.gang_scheduling import placement_feasible

QUEUE, SKIP = True, False
UNRESOLVABLE, WAIT = Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.WAIT
CODES = {"S": Code.SUCCESS, "U": Code.UNSCHEDULABLE, "W": Code.WAIT}


def row(name: str, *values: Any) -> Any:
    return pytest.param(*values, id=name)


# -- TestPlacementFeasible ------------------------------------------------------------------------------------------
# minCount (0: the basic policy), the group's unscheduled pods, the pods placed before the cycle, each pod's outcome
# in the cycle (S placed, U not), and PlacementFeasible's code after each (S, W, U).


@pytest.mark.parametrize(
    ("min_count", "pods", "initial", "outcomes", "expected"),
    [
        row("All pods succeed, minCount met at end", 2, 2, 0, "SS", "WS"),
        row("First pod fails, minCount not satisfiable", 3, 3, 0, "U", "U"),
        row("Second pod fails, minCount not satisfiable", 2, 2, 0, "SU", "WU"),
        row("Non-gang pod group with 0 scheduled pods fails", 0, 1, 0, "U", "U"),
        row("Non-gang pod group with succeeds once 1 pod is scheduled", 0, 1, 0, "S", "S"),
        row("Non-gang pod group with 1 initially scheduled pod succeeds", 0, 1, 1, "U", "S"),
        row("More than minCount pods, all succeed", 2, 3, 0, "SSS", "WSS"),
        row("More than minCount pods, first fails", 2, 3, 0, "USS", "WWS"),
        row("More than minCount pods, minCount not satisfiable", 2, 3, 0, "UU", "WU"),
        row("1 pod scheduled, 2 unscheduled pods succeed, minCount 3 met", 3, 2, 1, "SS", "WS"),
        row("minCount already met by scheduled pods", 2, 1, 2, "U", "S"),
        row("1 pod scheduled, minCount 3, first unscheduled fails, not enough remaining", 3, 2, 1, "U", "U"),
        row("1 pod scheduled, minCount 4, first unscheduled succeeds, not enough remaining", 4, 2, 1, "S", "U"),
    ],
)  # fmt: skip
def test_placement_feasible(min_count: int, pods: int, initial: int, outcomes: str, expected: str) -> None:
    h = FakeHandle(V137)
    group = pod_group_137("test-pg", min_count or None)
    pl = plugin137(h, [group])
    scheduled = initial
    got = []
    for i, outcome in enumerate(outcomes):
        scheduled += outcome == "S"
        got.append(pl.placement_feasible(group, scheduled, pods - (i + 1)).code)
    assert got == [CODES[c] for c in expected]


def test_placement_feasible_messages() -> None:
    """(derived) the words upstream's statuses carry, which become the group's pending message."""
    assert placement_feasible(3, 2, 0).reasons == ["minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"]
    assert placement_feasible(3, 1, 2).reasons == ["minCount (3) is not yet satisfied: 1 scheduled, 2 remaining"]
    assert placement_feasible(3, 1, 2).plugin == "GangScheduling"
    assert placement_feasible(1, 1, 0).ok


# -- Test_isSchedulableAfterPodAdded --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "added", "hint"),
    [
        row("add a newPod which matches the pod's scheduling group", pod136("p", "pg1"), pod136("n", "pg1"), QUEUE),
        row("add a newPod with NodeName set which matches the pod's scheduling group",
            pod136("p", "pg1"), pod136("n", "pg1", node="node1"), QUEUE),
        row("add a newPod which doesn't match the pod's namespace",
            pod136("p", "pg1"), pod136("n", "pg1", ns="foo"), SKIP),
        row("add a newPod which doesn't match the pod's pod group name",
            pod136("p", "pg1"), pod136("n", "pg2"), SKIP),
        row("add a newPod which belongs to a different scheduling group but matches the root CPG",
            pod136("p", "pg1"), pod136("n", "pg2"), SKIP),
    ],
)  # fmt: skip
def test_is_schedulable_after_pod_added(pod: Pod, added: Pod, hint: bool) -> None:
    h = FakeHandle(V137)
    pl = plugin137(h)
    event = ASSIGNED_POD_ADD if added.node_name else UNSCHEDULED_POD_ADD
    assert pl.queueing_hint(event, h.info(pod), h.info(added)) is hint


# -- Test_isSchedulableAfterPodGroupAdded ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "group", "hint"),
    [
        row("add a pod group which matches the pod's pod group name", pod136("p", "pg1"), pod_group_137("pg1", 2),
            QUEUE),
        row("add a pod group which doesn't match the pod's scheduling group name", pod136("p", "pg1"),
            pod_group_137("pg2", 2), SKIP),
        row("add a pod group which doesn't match the pod's scheduling group namespace", pod136("p", "pg1"),
            pod_group_137("pg1", 2, ns="ns2"), SKIP),
        row("add a pod group which doesn't match the pod's scheduling group but matches the root CPG",
            pod136("p", "pg1"), pod_group_137("pg2", 2), SKIP),
    ],
)  # fmt: skip
def test_is_schedulable_after_pod_group_added(pod: Pod, group: SchedulingPodGroup, hint: bool) -> None:
    h = FakeHandle(V137)
    assert plugin137(h).queueing_hint(SCHEDULING_POD_GROUP, h.info(pod), group) is hint


# -- Test_isSchedulableAfterPodGroupUpdated -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "old", "new", "hint"),
    [
        row("minCount decreased matches target pod", pod136("p", "pg1"), pod_group_137("pg1", 5),
            pod_group_137("pg1", 3), QUEUE),
        row("update Basic policy", pod136("p", "pg1"), pod_group_137("pg1", None), pod_group_137("pg1", None), SKIP),
        row("minCount increased matches target pod", pod136("p", "pg1"), pod_group_137("pg1", 3),
            pod_group_137("pg1", 5), SKIP),
        row("minCount unchanged matches target pod", pod136("p", "pg1"), pod_group_137("pg1", 3),
            pod_group_137("pg1", 3), SKIP),
        row("minCount decreased but pod group name doesn't match target pod", pod136("p", "pg1"),
            pod_group_137("pg2", 5), pod_group_137("pg2", 3), SKIP),
        row("minCount decreased but pod group namespace doesn't match target pod", pod136("p", "pg1"),
            pod_group_137("pg1", 5, ns="ns2"), pod_group_137("pg1", 3, ns="ns2"), SKIP),
        row("pod without a scheduling group is skipped", pod136("p"), pod_group_137("pg1", 5),
            pod_group_137("pg1", 3), SKIP),
    ],
)  # fmt: skip
def test_is_schedulable_after_pod_group_updated(
    pod: Pod, old: SchedulingPodGroup, new: SchedulingPodGroup, hint: bool
) -> None:
    h = FakeHandle(V137)
    pl = plugin137(h)
    assert SCHEDULING_POD_GROUP_UPDATE in pl.queueing_events
    assert pl.queueing_hint(SCHEDULING_POD_GROUP_UPDATE, h.info(pod), (old, new)) is hint


# -- TestGangSchedulingFlow -----------------------------------------------------------------------------------------

G1, G2, G3 = pod_group_137("pg1", 3), pod_group_137("pg2", 4), pod_group_137("pg3", None)
Q1, Q2, Q3 = pod136("p1", "pg1"), pod136("p2", "pg1"), pod136("p3", "pg1")
Q4, Q5 = pod136("p4", "pg2"), pod136("p5", "pg2")
Q_BASIC = pod136("basic-pod", "pg3")
Q_NON_GANG = pod136("non-gang")
QUORUM = "waiting for minCount pods from a gang to appear in scheduling queue"
WAIT_137 = "waiting for minCount pods from a gang to be scheduled"


@pytest.mark.parametrize(
    ("pod", "initial", "groups", "waiting", "pre_enqueue", "permit", "activated", "allowed"),
    [
        row("non-gang pod succeeds immediately", Q_NON_GANG, [], [G1, G2, G3], [], None, None, [], []),
        row("basic policy pod succeeds immediately", Q_BASIC, [], [G1, G2, G3], [], None, None, [], []),
        row("gang pod fails PreEnqueue when pod group is not yet created", Q1, [Q2, Q3, Q4, Q5], [], [],
            (UNRESOLVABLE, 'waiting for pods\'s pod group "pg1" to appear in scheduling queue'), None, [], []),
        row("gang pod fails PreEnqueue when quorum is not met", Q1, [Q2, Q4, Q5], [G1, G2], [],
            (UNRESOLVABLE, QUORUM), None, [], []),
        row("gang pod passes PreEnqueue, but waits at Permit", Q1, [Q2, Q3, Q4, Q5], [G1, G2], [Q2, Q4, Q5],
            None, (WAIT, WAIT_137), ["p3"], []),
        row("final gang pod arrives at Permit and allows all waiting pods from a gang", Q1, [Q2, Q3, Q4, Q5],
            [G1, G2], [Q2, Q3, Q4, Q5], None, None, [], ["p2", "p3"]),
    ],
)  # fmt: skip
def test_gang_scheduling_flow(
    pod: Pod,
    initial: list[Pod],
    groups: list[SchedulingPodGroup],
    waiting: list[Pod],
    pre_enqueue: tuple[Code, str] | None,
    permit: tuple[Code, str] | None,
    activated: list[str],
    allowed: list[str],
) -> None:
    h = FakeHandle(V137)
    h.add(*initial, pod)
    pl = plugin137(h, groups)
    st = pl.pre_enqueue(h.info(pod))
    assert (None if st.ok else (st.code, st.message)) == pre_enqueue
    if not st.ok:
        return
    for other in waiting:  # assumed in the cache, then Permit (in their binding cycles): they wait
        h.assume(other)
        got, timeout = pl.permit(CycleState(), h.info(other), "some-node")
        assert got.code == WAIT and timeout == 300.0
        h.waiting.add(h.info(other), "some-node", {"GangScheduling": timeout}, h.now, None)
    h.activated.clear()
    h.assume(pod)
    st, _ = pl.permit(CycleState(), h.info(pod), "some-node")
    assert (None if st.ok else (st.code, st.message)) == permit
    assert sorted(k.partition("/")[2] for k in h.activated) == activated
    if st.code == WAIT:
        return
    for other in waiting:
        wp = h.waiting._pods[other.key]
        assert (wp.outcome is not None and wp.outcome.ok) is (other.name in allowed)


def test_a_1_37_plugin_reads_only_v1beta1_pod_groups() -> None:
    """(derived) kube-scheduler 1.37's API server serves PodGroups as scheduling.k8s.io/v1beta1 only: a v1alpha2
    one (1.36's) never reaches the plugin, and its pods wait for their group."""
    h = FakeHandle(V137)
    h.add(Q1, Q2, Q3)
    pl = plugin137(h)
    pl.on_cluster_event(ClusterEvent(SCHEDULING_POD_GROUP, ADD, None, pod_group("pg1", 3)))
    st = pl.pre_enqueue(h.info(Q1))
    assert (st.code, st.message) == (UNRESOLVABLE, 'waiting for pods\'s pod group "pg1" to appear in scheduling queue')
    pl.on_cluster_event(ClusterEvent(SCHEDULING_POD_GROUP, ADD, None, G1))
    assert pl.pre_enqueue(h.info(Q1)).ok
