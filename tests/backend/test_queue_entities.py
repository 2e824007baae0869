"""kube-scheduler 1.37's pod-group entities in the queue (backend/queue.py GroupEntity): upstream's
``TestAddAttemptedPodGroupIfNeeded`` and ``TestBackoffQueue_calculateBackoffDuration`` (v1.37.2,
backend/queue) ported as data, and the entity's order, counts, window alignment and joining pods, case by case.

The queue is driven as the scheduler drives it: ``pop`` takes a group's first pod and ``pop_specific`` the others
(the pod-group cycle), then ``requeue_entity`` sends back the pods that do not bind. A plain key function stands
for PrioritySort (priority, then the queue timestamp).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gangscheduling_support import V137, pod136
from packsched.api.objects import Container, Pod
from packsched.backend.queue import (
    ENTITY_ERROR,
    ENTITY_FITS,
    ENTITY_REJECTED,
    QueuedPod,
    SchedulingQueue,
)
from packsched.framework.podinfo import PodInfo, make_pod_info

GROUP = "ns1/pg"
NS = 1e-9


def priority_sort(info: PodInfo) -> tuple[int, int]:
    return (-info.priority, info.arrival)


def member(name: str, priority: int = 0) -> PodInfo:
    pod = pod136(name, "pg")
    pod.priority = priority
    return make_pod_info(pod, version=V137)


def plain(name: str, priority: int = 0) -> PodInfo:
    return make_pod_info(Pod(name, "ns1", uid=name, containers=[Container("c", {})], priority=priority), version=V137)


def queue(initial: float = 1.0, maximum: float = 10.0) -> SchedulingQueue:
    # 1.37, where entities exist: SchedulerPopFromBackoffQ on (its default), so expiries are windowed
    return SchedulingQueue(priority_sort, initial, maximum, pop_from_backoff=True)


def pop_group(q: SchedulingQueue, now: float) -> list[QueuedPod]:
    """What the scheduler pops for a pod-group cycle: the first pod, then the group's other queued pods."""
    first = q.pop(now)
    assert first is not None and first.info.pod_group is not None
    others = [q.pop_specific(k) for k in sorted(q._queued) if k.startswith("ns1/m")]
    return [first, *(o for o in others if o is not None)]


def back(pods: list[QueuedPod]) -> list[tuple[QueuedPod, str, frozenset[str]]]:
    return [(qp, "why", frozenset({"P"})) for qp in pods]


def where(q: SchedulingQueue, key: str, now: float) -> str:
    qp = q._queued.get(key)
    if qp is None:
        return "gone"
    if key in q.unschedulable:
        return "unschedulable"
    return "backoff" if qp.in_backoff and qp.backoff_until > now else "active"


# -- TestAddAttemptedPodGroupIfNeeded --------------------------------------------------------------------------
#
# Upstream adds pod1 and pod2 to the pending pods of the in-flight group and calls AddAttemptedPodGroupIfNeeded one
# second after the group was made; "backoff disabled" is initial and maximum backoff 0. Here the two pods are popped
# (the cycle) and sent back one second later.

ATTEMPTED_SKIPPED = {
    "Pods present, pod group scheduling result is unschedulable, and pod group not backing off, but blocked on "
    "PreEnqueue": "PreEnqueue runs where the scheduler adds or lets pods in (eventhandlers.py), not at requeue",
    "Pods present, pod group scheduling result is Error, and pod group backing off, but blocked on PreEnqueue": (
        "PreEnqueue runs where the scheduler adds or lets pods in (eventhandlers.py), not at requeue"
    ),
    "New pods only are present and pod group scheduling was successful, requeue to active queue directly with new "
    "timestamp": "a cycle takes no time here: no pod of the group arrives while it runs",
}

# name: (pods going back, outcome, errors before, backoff off, want unschedulable, want errors, where, preserved)
ATTEMPTED: dict[str, tuple[int, str, int, bool, int, int, str, bool]] = {
    "No pending pods, pod group is not enqueued": (0, ENTITY_REJECTED, 0, False, 0, 0, "gone", False),
    "Pods present, pod group scheduling had an error, and pod group not backing off": (
        2,
        ENTITY_ERROR,
        0,
        True,
        0,
        1,
        "active",
        False,
    ),
    "Pods present, pod group scheduling result is unschedulable, and pod group not backing off": (
        2,
        ENTITY_REJECTED,
        5,
        True,
        1,
        0,
        "active",
        False,
    ),
    "Pods present, pod group scheduling result is Error, and pod group backing off": (
        2,
        ENTITY_ERROR,
        0,
        False,
        0,
        1,
        "backoff",
        False,
    ),
    "Pods present, pod group scheduling result is Unschedulable, and pod group backing off": (
        2,
        ENTITY_REJECTED,
        5,
        False,
        1,
        0,
        "backoff",
        False,
    ),
    "Unschedulable pods are present but pod group scheduling was successful, requeue to active queue directly and "
    "preserve timestamp": (2, ENTITY_FITS, 0, False, 0, 0, "active", True),
}


@pytest.mark.parametrize("name", list(ATTEMPTED))
def test_upstream_add_attempted_pod_group(name: str) -> None:
    pods, outcome, errors_before, no_backoff, want_unsched, want_errors, want_where, preserved = ATTEMPTED[name]
    q = queue(0.0, 0.0) if no_backoff else queue()
    for i in (1, 2):
        q.add(member(f"m{i}"))
    popped = pop_group(q, 0.0)
    stamp = min(qp.info.arrival for qp in popped)
    if errors_before:  # upstream sets it on the popped entity
        q.requeue_entity(GROUP, back(popped), 0.0, ENTITY_ERROR, 0, stamp)
        q.entities[GROUP].errors = errors_before
        popped = pop_group(q, 10.0)
    q.requeue_entity(GROUP, back(popped[:pods]), 1.0, outcome, 0, stamp)
    entity = q.entities.get(GROUP)
    if want_where == "gone":
        assert entity is None and len(q) == 0
        return
    assert entity is not None
    assert (entity.unschedulable, entity.errors) == (want_unsched, want_errors)
    assert {where(q, f"ns1/m{i}", 1.0) for i in (1, 2)} == {want_where}
    assert (entity.stamp == stamp) == preserved
    assert all(qp.info.arrival == entity.stamp for qp in q.pods())


def test_the_attempted_table_is_accounted_for() -> None:
    assert not set(ATTEMPTED) & set(ATTEMPTED_SKIPPED)
    assert len(ATTEMPTED) + len(ATTEMPTED_SKIPPED) == 9  # TestAddAttemptedPodGroupIfNeeded's cases


# -- TestBackoffQueue_calculateBackoffDuration (an entity's size scales the cap) ----------------------------------

# name: (initial ns, maximum ns, count, entity size, want ns); the overflow cases are Go's int64 arithmetic
DURATIONS = {
    "no backoff": (1, 32, 0, 1, 0),
    "normal": (3, 1000, 5, 1, 48),
    "hitting max backoff duration": (1, 32, 16, 1, 32),
    "overflow_32bit": (1, 2**31 - 1, 32, 1, 2**31 - 1),
    "larger entity size": (1, 32, 7, 10, 64),
    "hitting max backoff duration with larger entity size": (1, 32, 16, 10, 101),
}


@pytest.mark.parametrize("name", list(DURATIONS))
def test_upstream_backoff_duration_of_an_entity(name: str) -> None:
    initial, maximum, count, size, want = DURATIONS[name]
    q = queue(initial * NS, maximum * NS)
    got = 0.0 if count == 0 else q.backoff_duration(count, q.group_max_backoff(size))
    assert round(got / NS) == want


# -- ours ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failed_at", "count", "want"),
    [
        (0.0, 1, 2.0),  # expiry 1.0 is in the window [1, 2): the flush at 2 finds it done
        (0.3, 1, 2.0),
        (0.999, 1, 2.0),
        (1.5, 2, 4.0),  # 1.5 + 2 = 3.5 -> window 3 -> flushed at 4
        (0.0, 4, 9.0),  # 8 s
        (0.0, 5, 15.0),  # 16 s, over the cap for two pods: 10 s x sqrt(2) = 14.142135623 s
    ],
)
def test_an_entitys_backoff_ends_at_the_whole_second_flush_after_its_window(
    failed_at: float, count: int, want: float
) -> None:
    q = queue()
    for i in (1, 2):
        q.add(member(f"m{i}"))
    popped = pop_group(q, 0.0)
    stamp = min(qp.info.arrival for qp in popped)
    for _ in range(count - 1):
        q.requeue_entity(GROUP, back(popped), failed_at, ENTITY_REJECTED, 0, stamp)
        popped = pop_group(q, 1e6)
    q.requeue_entity(GROUP, back(popped), failed_at, ENTITY_REJECTED, 0, stamp)
    cap = math.floor(10 * math.sqrt(2) * 1e9) / 1e9
    expiry = failed_at + min(2.0 ** (count - 1), cap)
    assert q.entities[GROUP].backoff_until == want == math.floor(expiry) + 1
    assert q.pop(want - 0.001) is None
    assert q.pop(want) is not None


def test_a_requeued_entity_keeps_its_failure_time_order_ahead_of_a_pod_queued_during_its_backoff() -> None:
    """The entity's timestamp is when it was sent back (upstream refreshes it in AddAttemptedPodGroupIfNeeded, not
    when it leaves backoff): a plain pod of the same priority queued meanwhile comes after it."""
    q = queue()
    for i in (1, 2):
        q.add(member(f"m{i}"))
    popped = pop_group(q, 0.0)
    q.requeue_entity(GROUP, back(popped), 0.0, ENTITY_REJECTED, 0, min(qp.info.arrival for qp in popped))
    late = q.add(plain("p"), now=0.5)
    first = q.pop(2.0)
    assert first is not None and first.info.pod_group is not None
    assert late.info.arrival > first.info.arrival


def test_the_pod_groups_priority_orders_the_entity() -> None:
    """The entity's priority is the PodGroup's, whatever its pods say (upstream QueuedPodGroupInfo.GetPriority)."""
    q = queue(0.0, 0.0)
    q.add(member("m1", priority=0))
    popped = pop_group(q, 0.0)
    q.requeue_entity(GROUP, back(popped), 0.0, ENTITY_ERROR, 100, popped[0].info.arrival)
    q.add(plain("p", priority=50))
    first = q.pop(0.0)
    assert first is not None and first.info.key == "ns1/m1"


def test_a_group_that_fitted_leaves_its_pods_over_ahead_of_pods_queued_after_it() -> None:
    """The group fitted with a pod left over: that pod goes back at once with the timestamp the group was popped
    by, so it is tried before a pod of the same priority queued after the group was (upstream preserves the
    timestamp to preempt at once); and the entity's counts start again, so a later rejection backs off 1 s."""
    q = queue()
    for i in (1, 2, 3):
        q.add(member(f"m{i}"))
    popped = pop_group(q, 0.0)
    q.requeue_entity(GROUP, back(popped), 0.0, ENTITY_REJECTED, 0, min(qp.info.arrival for qp in popped))
    popped = pop_group(q, 2.0)
    stamp = min(qp.info.arrival for qp in popped)
    q.add(plain("late"), now=2.0)  # queued while the group's cycle runs
    q.requeue_entity(GROUP, back(popped[:1]), 2.0, ENTITY_FITS, 0, stamp)
    entity = q.entities[GROUP]
    assert (entity.unschedulable, entity.errors, entity.backoff_until, entity.stamp) == (0, 0, 0.0, stamp)
    first = q.pop(2.0)
    assert first is not None and first.info.pod_group is not None
    q.requeue_entity(GROUP, back([first]), 2.0, ENTITY_REJECTED, 0, stamp)
    assert q.entities[GROUP].backoff_until == 4.0  # count 1 again: 2 + 1 -> window 3 -> 4


def test_a_pod_joining_an_entity_in_backoff_waits_with_it() -> None:
    q = queue()
    q.add(member("m1"))
    popped = pop_group(q, 0.0)
    q.requeue_entity(GROUP, back(popped), 0.0, ENTITY_REJECTED, 0, popped[0].info.arrival)
    q.add(member("m2"), now=0.5)
    assert where(q, "ns1/m2", 0.5) == "backoff" and q.pop(1.9) is None
    assert q._queued["ns1/m2"].info.arrival == q.entities[GROUP].stamp
    assert {qp.info.key for qp in pop_group(q, 2.0)} == {"ns1/m1", "ns1/m2"}


def test_a_pod_back_from_outside_a_cycle_joins_the_waiting_entity_or_makes_a_new_active_one() -> None:
    q = queue()
    q.add(member("m1"))
    q.add(member("m2"))
    popped = pop_group(q, 0.0)
    m1 = next(qp for qp in popped if qp.info.key == "ns1/m1")
    m2 = next(qp for qp in popped if qp.info.key == "ns1/m2")
    q.requeue_entity(GROUP, back([m1]), 0.0, ENTITY_REJECTED, 0, m1.info.arrival)
    q.join_entity(m2, 0.5, "rejected at Permit", frozenset(), 0)  # m1 waits in backoff: m2 waits with it
    assert where(q, "ns1/m2", 0.5) == "backoff"
    popped = pop_group(q, 2.0)
    q.requeue_entity(GROUP, [], 2.0, ENTITY_FITS, 0, 0)  # both bound: the entity is gone
    assert GROUP not in q.entities
    q.join_entity(popped[0], 3.0, "binding failed", frozenset(), 0)  # a new entity, active at once
    assert q.entities[GROUP].unschedulable == 0 and where(q, popped[0].info.key, 3.0) == "active"


def test_without_entities_the_queue_is_as_before() -> None:
    """Releases before 1.37 (or GenericWorkload off) never make an entity: a group's pods are queued and restamped
    one by one, as they were."""
    q = queue()
    q.add(member("m1"))
    qp = q.pop(0.0)
    assert qp is not None
    before = qp.info.arrival
    q.requeue_after_backoff(qp, 0.0, "why", frozenset())
    assert not q.entities
    # 0 s + 1 s backoff = 1.0 s, window 1 s: still backing off at 1.0 s, flushed at the 2 s tick (no rejecting
    # plugin: the error backoff heap, which Pop never takes early)
    assert q.pop(1.0) is None
    again = q.pop(2.0)
    assert again is not None and again.info.arrival > before


OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "cycle", "join", "activate", "remove"]),
        st.integers(0, 5),  # the pod (members m0-m5 of one group)
        st.sampled_from([ENTITY_FITS, ENTITY_REJECTED, ENTITY_ERROR]),
        st.integers(0, 3),  # how many of the cycle's pods go back
        st.floats(0.0, 3.0),  # time passing
    ),
    max_size=30,
)


@settings(max_examples=40, deadline=None)
@given(OPS)
# found by a random run: m0's cycle sends no pod back (no entity), m1 is added on its own, then m0, rejected at
# Permit, joins: it made an entity of its own beside m1
@example(
    [
        ("add", 0, ENTITY_FITS, 0, 0.0),
        ("cycle", 0, ENTITY_FITS, 0, 0.0),
        ("add", 1, ENTITY_FITS, 0, 0.0),
        ("join", 0, ENTITY_FITS, 0, 0.0),
    ]
)
def test_an_entitys_pods_share_its_key_and_expiry(ops: list[tuple[str, int, str, int, float]]) -> None:
    """Whatever happens, the group's pods in the queue are the entity's, carry its timestamp and wait out one expiry
    together; a group with no pod back has no entity."""
    q = queue()
    now = 0.0
    out: dict[str, QueuedPod] = {}  # pods of the group outside the queue (in a cycle, bound or rejected at Permit)
    for op, i, outcome, n_back, step in ops:
        now = round(now + step, 9)
        key = f"ns1/m{i}"
        if op == "add" and key not in q and key not in out:
            q.add(member(f"m{i}"), now=now)
        elif op == "cycle" and len(q):
            first = q.pop(now)
            if first is None:
                continue
            popped = [first, *(o for k in sorted(q._queued) if (o := q.pop_specific(k)) is not None)]
            stamp = min(qp.info.arrival for qp in popped)
            q.requeue_entity(GROUP, back(popped[:n_back]), now, outcome, 0, stamp)
            out.update((qp.info.key, qp) for qp in popped[n_back:])
        elif op == "join" and key in out:
            q.join_entity(out.pop(key), now, "rejected at Permit", frozenset(), 0)
        elif op == "activate":
            q.activate([key], now)
        elif op == "remove":
            q.remove(key)
        entity = q.entities.get(GROUP)
        queued = {qp.info.key: qp for qp in q.pods()}
        if entity is None:
            continue
        assert entity.queued == set(queued) or (not entity.queued and not queued)
        assert {qp.info.arrival for qp in queued.values()} <= {entity.stamp}
        waiting = {qp.backoff_until for qp in queued.values() if qp.in_backoff and qp.backoff_until > now}
        assert waiting <= {entity.backoff_until} or entity.backoff_until <= now
