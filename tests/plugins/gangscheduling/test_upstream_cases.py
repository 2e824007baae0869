"""kube-scheduler's GangScheduling unit tests, as tables run against packsched's plugin: 1.35.4 and 1.36.3
``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling_test.go`` (the queueing hints and
TestGangSchedulingFlow), and 1.35.4 ``pkg/scheduler/backend/workloadmanager`` (the pod groups' bookkeeping).

Upstream drives the plugin directly, with a fake informer holding the Workloads / PodGroups, the WorkloadManager
(1.35) or the cache (1.36) holding the pods, a waiting-pods map and a pod activator; so do these tests, with the
fake Handle of ``gangscheduling_support``. Rows keep upstream's case names. Where upstream stops checking once
Permit waits, these tables check the activated pods too, and the pods upstream's flow only names as allowed really
wait here and are allowed (marked "derived").
"""

from __future__ import annotations

from typing import Any

import pytest

from gangscheduling_support import (
    V135,
    V136,
    FakeHandle,
    plugin135,
    plugin136,
    pod135,
    pod136,
    pod_group,
    workload,
)
from packsched.api.objects import Pod
from packsched.api.podgroups import SchedulingPodGroup, SchedulingWorkload
from packsched.backend.podgroups import PodGroupState, PodGroupStates
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import (
    ASSIGNED_POD_ADD,
    POD_GROUP_CYCLE,
    SCHEDULING_POD_GROUP,
    SCHEDULING_WORKLOAD,
    UNSCHEDULED_POD_ADD,
)
from packsched.framework.status import Code

QUEUE, SKIP = True, False
UNRESOLVABLE, WAIT = Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.WAIT


def row(name: str, *values: Any) -> Any:
    return pytest.param(*values, id=name)


# -- 1.35: Test_isSchedulableAfterPodAdded --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "new_pod", "hint"),
    [
        row("add a newPod which matches the pod's workload and pod group",
            pod135("p", "w1", "pg"), pod135("n", "w1", "pg"), QUEUE),
        row("add a newPod which matches the pod's workload, pod group and replica key",
            pod135("p", "w1", "pg", "3"), pod135("n", "w1", "pg", "3"), QUEUE),
        row("add a newPod which doesn't match the pod's namespace",
            pod135("p", "w1", "pg"), pod135("n", "w1", "pg", ns="foo"), SKIP),
        row("add a newPod which doesn't match the pod's workload name",
            pod135("p", "w1", "pg"), pod135("n", "w2", "pg"), SKIP),
        row("add a newPod which doesn't match the pod's pod group name",
            pod135("p", "w1", "pg"), pod135("n", "w1", "pg2"), SKIP),
        row("add a newPod which doesn't match the pod's replica key",
            pod135("p", "w1", "pg", "3"), pod135("n", "w1", "pg", "4"), SKIP),
    ],
)  # fmt: skip
def test_1_35_is_schedulable_after_pod_added(pod: Pod, new_pod: Pod, hint: bool) -> None:
    h = FakeHandle(V135)
    pl = plugin135(h)
    # upstream's Pod/Add covers bound and unbound pods alike; packsched has an event for each
    assert pl.queueing_hint(UNSCHEDULED_POD_ADD, h.info(pod), h.info(new_pod)) is hint
    assert pl.queueing_hint(ASSIGNED_POD_ADD, h.info(pod), h.info(new_pod)) is hint


# -- 1.35: Test_isSchedulableAfterWorkloadAdded ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "new_workload", "hint"),
    [
        row("add a workload which matches the pod's workload name",
            pod135("p", "w1", "pg"), workload("w1", pg=1), QUEUE),
        row("add a workload which doesn't match the pod's workload name",
            pod135("p", "w2", "pg"), workload("w1", pg=1), SKIP),
        row("add a workload which doesn't match the pod's workload namespace",
            pod135("p", "w1", "pg"), workload("w1", ns="ns2", pg=1), SKIP),
    ],
)  # fmt: skip
def test_1_35_is_schedulable_after_workload_added(pod: Pod, new_workload: SchedulingWorkload, hint: bool) -> None:
    h = FakeHandle(V135)
    assert plugin135(h).queueing_hint(SCHEDULING_WORKLOAD, h.info(pod), new_workload) is hint


# -- 1.35: TestGangSchedulingFlow -----------------------------------------------------------------------------------

GANG_WL = workload("gang-wl", pg1=3, pg2=4)
BASIC_WL = workload("basic-wl", pg1=None)
P1 = pod135("p1", "gang-wl", "pg1")
P2 = pod135("p2", "gang-wl", "pg1")
P3 = pod135("p3", "gang-wl", "pg1")
P4 = pod135("p4", "gang-wl", "pg2")
P5 = pod135("p5", "gang-wl", "pg1", "2")
BASIC = pod135("basic-pod", "basic-wl", "pg1")
NON_GANG = pod135("non-gang")
WAIT_135 = "waiting for minCount pods from a gang to be waiting on permit"
QUORUM = "waiting for minCount pods from a gang to appear in scheduling queue"


@pytest.mark.parametrize(
    ("pod", "initial", "workloads", "waiting", "pre_enqueue", "permit", "activated", "allowed"),
    [
        row("non-gang pod succeeds immediately", NON_GANG, [], [GANG_WL, BASIC_WL], [], None, None, [], []),
        row("basic policy pod succeeds immediately", BASIC, [], [GANG_WL, BASIC_WL], [], None, None, [], []),
        row("gang pod fails PreEnqueue when workload is not yet created", P1, [P2, P3, P4, P5], [], [],
            (UNRESOLVABLE, 'waiting for pods\'s workload "gang-wl" to appear in scheduling queue'), None, [], []),
        row("gang pod fails PreEnqueue when quorum is not met", P1, [P2, P4, P5], [GANG_WL], [],
            (UNRESOLVABLE, QUORUM), None, [], []),
        row("gang pod passes PreEnqueue, but waits at Permit", P1, [P2, P3, P4, P5], [GANG_WL], [P2, P4, P5],
            None, (WAIT, WAIT_135), ["p3"], []),
        row("final gang pod arrives at Permit and allows all waiting pods from a gang", P1, [P2, P3, P4, P5],
            [GANG_WL], [P2, P3, P4, P5], None, None, [], ["p2", "p3"]),
    ],
)  # fmt: skip
def test_1_35_gang_scheduling_flow(
    pod: Pod,
    initial: list[Pod],
    workloads: list[SchedulingWorkload],
    waiting: list[Pod],
    pre_enqueue: tuple[Code, str] | None,
    permit: tuple[Code, str] | None,
    activated: list[str],
    allowed: list[str],
) -> None:
    h = FakeHandle(V135)
    h.add(*initial, pod)
    pl = plugin135(h, workloads)
    st = pl.pre_enqueue(h.info(pod))
    assert (None if st.ok else (st.code, st.message)) == pre_enqueue
    if not st.ok:
        return
    for other in waiting:  # these pods hit Reserve and Permit before and wait (derived: in the waiting map)
        info = h.info(other)
        assert pl.reserve(CycleState(), info, "some-node").ok
        got, timeout = pl.permit(CycleState(), info, "some-node")
        assert got.code == WAIT
        h.waiting.add(info, "some-node", {"GangScheduling": timeout}, h.now, None)
    assert pl.reserve(CycleState(), h.info(pod), "some-node").ok
    h.activated.clear()
    st, _ = pl.permit(CycleState(), h.info(pod), "some-node")
    assert (None if st.ok else (st.code, st.message)) == permit
    assert sorted(k.partition("/")[2] for k in h.activated) == activated  # (derived for a Wait)
    if st.code == WAIT:
        pl.unreserve(CycleState(), h.info(pod), "some-node")
        ref = h.info(pod).pod_group
        assert ref is not None and pod.key not in h.states.get(ref.key).assumed  # type: ignore[union-attr]
        return
    for other in waiting:  # (derived) the gang's waiting pods are allowed, the others still wait
        wp = h.waiting._pods[other.key]
        assert (wp.outcome is not None and wp.outcome.ok) is (other.name in allowed)


def test_1_35_the_group_deadline_is_shared_and_renewed_once_passed() -> None:
    """(derived) workloadmanager SchedulingTimeout through Permit: the second pod waits what is left of the
    first one's five minutes; once the deadline passed, a new one starts."""
    h = FakeHandle(V135)
    h.add(P1, P2, P3)
    pl = plugin135(h, [GANG_WL])
    assert pl.reserve(CycleState(), h.info(P1), "n").ok
    assert pl.permit(CycleState(), h.info(P1), "n")[1] == 300.0
    h.now = 120.0
    assert pl.reserve(CycleState(), h.info(P2), "n").ok
    assert pl.permit(CycleState(), h.info(P2), "n")[1] == 180.0
    pl.unreserve(CycleState(), h.info(P2), "n")
    h.now = 300.0  # reached: passed (the simulator's clock stands still while pods are tried)
    assert pl.reserve(CycleState(), h.info(P2), "n").ok
    assert pl.permit(CycleState(), h.info(P2), "n")[1] == 300.0


def test_1_35_permit_errors_without_the_workload_or_its_pod_group() -> None:
    """(derived) Permit's own errors: the Workload gone, or no such pod group in it."""
    h = FakeHandle(V135)
    stray = pod135("p9", "gang-wl", "nope")
    h.add(P1, stray)
    pl = plugin135(h)
    st, _ = pl.permit(CycleState(), h.info(P1), "n")
    assert (st.code, st.message) == (
        Code.ERROR,
        'failed to get workload ns1/gang-wl: workload.scheduling.k8s.io "gang-wl" not found',
    )
    pl = plugin135(h, [GANG_WL])
    st, _ = pl.permit(CycleState(), h.info(stray), "n")
    assert (st.code, st.message) == (Code.ERROR, 'pod group "nope" doesn\'t exist for a workload "gang-wl"')
    st = pl.pre_enqueue(h.info(stray))
    assert (st.code, st.message) == (UNRESOLVABLE, 'pod group "nope" doesn\'t exist for a workload "gang-wl"')


# -- 1.36: Test_isSchedulableAfterPodAdded / Test_isSchedulableAfterPodGroupAdded ------------------------------------


@pytest.mark.parametrize(
    ("pod", "new_pod", "hint"),
    [
        row("add a newPod which matches the pod's scheduling group", pod136("p", "pg"), pod136("n", "pg"), QUEUE),
        row("add a newPod which doesn't match the pod's namespace", pod136("p", "pg"), pod136("n", "pg", "foo"), SKIP),
        row("add a newPod which doesn't match the pod's pod group name", pod136("p", "pg1"), pod136("n", "pg2"), SKIP),
    ],
)  # fmt: skip
def test_1_36_is_schedulable_after_pod_added(pod: Pod, new_pod: Pod, hint: bool) -> None:
    h = FakeHandle(V136)
    pl = plugin136(h)
    assert pl.queueing_hint(UNSCHEDULED_POD_ADD, h.info(pod), h.info(new_pod)) is hint
    assert pl.queueing_hint(ASSIGNED_POD_ADD, h.info(pod), h.info(new_pod)) is hint


@pytest.mark.parametrize(
    ("pod", "new_group", "hint"),
    [
        row("add a pod group which matches the pod's pod group name", pod136("p", "pg"), pod_group("pg", 1), QUEUE),
        row("add a pod group which doesn't match the pod's scheduling group name",
            pod136("p", "pg1"), pod_group("pg2", 1), SKIP),
        row("add a pod group which doesn't match the pod's scheduling group namespace",
            pod136("p", "pg"), pod_group("pg", 1, ns="ns2"), SKIP),
    ],
)  # fmt: skip
def test_1_36_is_schedulable_after_pod_group_added(pod: Pod, new_group: SchedulingPodGroup, hint: bool) -> None:
    h = FakeHandle(V136)
    assert plugin136(h).queueing_hint(SCHEDULING_POD_GROUP, h.info(pod), new_group) is hint


# -- 1.36: TestGangSchedulingFlow -----------------------------------------------------------------------------------

G1, G2, G3 = pod_group("pg1", 3), pod_group("pg2", 4), pod_group("pg3", None)
Q1, Q2, Q3 = pod136("p1", "pg1"), pod136("p2", "pg1"), pod136("p3", "pg1")
Q4, Q5 = pod136("p4", "pg2"), pod136("p5", "pg2")
Q_BASIC = pod136("basic-pod", "pg3")
Q_NON_GANG = pod136("non-gang")
WAIT_136 = "waiting for minCount pods from a gang to be scheduled"


@pytest.mark.parametrize(
    ("pod", "initial", "groups", "waiting", "in_group_cycle", "pre_enqueue", "permit", "activated", "allowed"),
    [
        row("non-gang pod succeeds immediately", Q_NON_GANG, [], [G1, G2, G3], [], False, None, None, [], []),
        row("basic policy pod succeeds immediately", Q_BASIC, [], [G1, G2, G3], [], False, None, None, [], []),
        row("gang pod fails PreEnqueue when pod group is not yet created", Q1, [Q2, Q3, Q4, Q5], [], [], False,
            (UNRESOLVABLE, 'waiting for pods\'s pod group "pg1" to appear in scheduling queue'), None, [], []),
        row("gang pod fails PreEnqueue when quorum is not met", Q1, [Q2, Q4, Q5], [G1, G2], [], False,
            (UNRESOLVABLE, QUORUM), None, [], []),
        row("gang pod passes PreEnqueue, but waits at Permit", Q1, [Q2, Q3, Q4, Q5], [G1, G2], [Q2, Q4, Q5], False,
            None, (WAIT, WAIT_136), ["p3"], []),
        row("final gang pod arrives at Permit and allows all waiting pods from a gang", Q1, [Q2, Q3, Q4, Q5],
            [G1, G2], [Q2, Q3, Q4, Q5], False, None, None, [], ["p2", "p3"]),
        row("final gang pod arrives at Permit during pod group scheduling cycle", Q1, [Q2, Q3, Q4, Q5],
            [G1, G2], [Q2, Q3, Q4, Q5], True, None, None, [], ["p2", "p3"]),
    ],
)  # fmt: skip
def test_1_36_gang_scheduling_flow(
    pod: Pod,
    initial: list[Pod],
    groups: list[SchedulingPodGroup],
    waiting: list[Pod],
    in_group_cycle: bool,
    pre_enqueue: tuple[Code, str] | None,
    permit: tuple[Code, str] | None,
    activated: list[str],
    allowed: list[str],
) -> None:
    h = FakeHandle(V136)
    h.add(*initial, pod)
    pl = plugin136(h, groups)
    st = pl.pre_enqueue(h.info(pod))
    assert (None if st.ok else (st.code, st.message)) == pre_enqueue
    if not st.ok:
        return
    for other in waiting:  # assumed in the cache, then Permit: they wait
        h.assume(other)
        got, timeout = pl.permit(CycleState(), h.info(other), "some-node")
        assert got.code == WAIT and timeout == 300.0
        h.waiting.add(h.info(other), "some-node", {"GangScheduling": timeout}, h.now, None)
    h.activated.clear()
    state = CycleState()
    if in_group_cycle:  # the cycle's copy, taken after the waiting pods were assumed; the pod is assumed in it
        copies = h.states.copy()
        ref = h.info(pod).pod_group
        group = copies.get(ref.key) if ref is not None else None
        if group is not None:
            group.assume(h.info(pod))
        state.write(POD_GROUP_CYCLE, copies)
    else:
        h.assume(pod)
    st, _ = pl.permit(state, h.info(pod), "some-node")
    assert (None if st.ok else (st.code, st.message)) == permit
    assert sorted(k.partition("/")[2] for k in h.activated) == activated
    if st.code == WAIT:
        return
    for other in waiting:
        wp = h.waiting._pods[other.key]
        assert (wp.outcome is not None and wp.outcome.ok) is (other.name in allowed)


def test_1_36_a_group_cycle_counts_its_copy_not_the_cache() -> None:
    """(derived) in a pod-group cycle, pods the cycle assumed count; the cache does not see them."""
    h = FakeHandle(V136)
    h.add(Q1, Q2, Q3)
    pl = plugin136(h, [G1])
    copies = h.states.copy()
    state = CycleState()
    state.write(POD_GROUP_CYCLE, copies)
    group = copies.get("ns1/pg1")
    assert group is not None
    for q in (Q1, Q2):
        group.assume(h.info(q))
        assert pl.permit(state, h.info(q), "n")[0].code == WAIT
    group.assume(h.info(Q3))
    assert pl.permit(state, h.info(Q3), "n")[0].ok
    assert h.states.get("ns1/pg1").scheduled_count == 0  # type: ignore[union-attr]
    assert pl.permit(CycleState(), h.info(Q3), "n")[0].code == WAIT


# -- 1.35: workloadmanager_test.go and podgroupinfo_test.go ---------------------------------------------------------

W1 = pod135("p1", "w1", "pg1")
W1_BOUND = pod135("p1", "w1", "pg1", node="node1")
W2_BOUND = pod135("p2", "w1", "pg1", node="node1")
W3_OTHER_NS = pod135("p3", "w1", "pg1", ns="ns2")
W_NONE = pod135("non-workload")


def _parts(state: PodGroupState, key: str) -> tuple[bool, bool, bool, bool]:
    return key in state.pods, key in state.unscheduled, key in state.assumed, key in state.assigned


@pytest.mark.parametrize(
    ("initial", "added", "groups", "parts"),
    [
        row("adding an unscheduled pod", [], W1, 1, (True, True, False, False)),
        row("adding an assigned pod", [], W2_BOUND, 1, (True, False, False, True)),
        row("adding pod with different namespace", [W1], W3_OTHER_NS, 2, (True, True, False, False)),
        row("adding a non-workload pod is a no-op", [], W_NONE, 0, None),
    ],
)  # fmt: skip
def test_workload_manager_add_pod(initial: list[Pod], added: Pod, groups: int, parts: Any) -> None:
    h = FakeHandle(V135)
    h.add(*initial, added)
    assert len(h.states) == groups
    ref = h.info(added).pod_group
    if ref is not None:
        assert _parts(h.states.get(ref.key), added.key) == parts  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("assume", "old", "new", "parts"),
    [
        row("updating an unscheduled pod", False, W1, W1, (True, True, False, False)),
        row("updating an assumed pod", True, W1, W1, (True, False, True, False)),
        row("updating an assigned pod", False, W2_BOUND, W2_BOUND, (True, False, False, True)),
        row("binding an unscheduled pod", False, W1, W1_BOUND, (True, False, False, True)),
        row("binding an assumed pod", True, W1, W1_BOUND, (True, False, False, True)),
        row("updating a non-workload pod is a no-op", False, W_NONE, W_NONE, None),
    ],
)  # fmt: skip
def test_workload_manager_update_pod(assume: bool, old: Pod, new: Pod, parts: Any) -> None:
    h = FakeHandle(V135)
    h.add(old)
    info = h.info(old)
    if assume:
        h.assume(old)
    if new.node_name:  # what the scheduler's event handlers do when they see the pod bound
        h.states.add(info, bound=True)
    assert len(h.states) == (0 if parts is None else 1)
    if info.pod_group is not None:
        assert _parts(h.states.get(info.pod_group.key), old.key) == parts  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("initial", "groups"),
    [
        row("deleting a pod from a group with multiple pods", [W1, pod135("p2", "w1", "pg1")], 1),
        row("deleting the last pod cleans up the info", [W1], 0),
        row("deleting a non-existent pod is a no-op", [], 0),
    ],
)  # fmt: skip
def test_workload_manager_delete_pod(initial: list[Pod], groups: int) -> None:
    h = FakeHandle(V135)
    h.add(*initial)
    h.states.delete(h.info(W1))
    assert len(h.states) == groups
    state = h.states.get("ns1/w1/pg1")
    if state is not None:
        assert state.pods and W1.key not in state.pods


def test_pod_group_info_assume_forget() -> None:
    h = FakeHandle(V135)
    h.add(W1)
    state = h.states.get("ns1/w1/pg1")
    assert state is not None and _parts(state, W1.key) == (True, True, False, False)
    state.assume(h.info(W1))
    assert _parts(state, W1.key) == (True, False, True, False)
    state.forget(W1.key)
    assert _parts(state, W1.key) == (True, True, False, False)


def test_pod_group_info_scheduling_timeout() -> None:
    state = PodGroupState()
    assert state.scheduling_timeout(0.0) == 300.0 and state.deadline == 300.0
    assert state.scheduling_timeout(0.01) < 300.0 and state.deadline == 300.0  # the deadline stays
    state.deadline = -1.0  # passed: a new one
    assert state.scheduling_timeout(0.02) == 300.0 and state.deadline == 300.02


def test_states_copy_is_independent() -> None:
    h = FakeHandle(V136)
    h.add(Q1, Q2)
    copies: PodGroupStates = h.states.copy()
    copies.get("ns1/pg1").assume(h.info(Q1))  # type: ignore[union-attr]
    assert h.states.get("ns1/pg1").assumed == {}  # type: ignore[union-attr]
