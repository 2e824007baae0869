"""SchedulerPopFromBackoffQ (KEP-4247) in the scheduling queue: upstream's backoff queue unit tests
(``pkg/scheduler/backend/queue/backoff_queue_test.go`` and the Pop cases of ``scheduling_queue_test.go``, v1.37.2)
ported as data. Upstream's fake clock becomes the queue's ``now``; a pod's upstream ``Timestamp`` is the time it is
sent back here (its failure); its backoff count is its attempts (one pop each)."""

from __future__ import annotations

import math

import pytest

from helpers import pod
from packsched.backend.queue import QueuedPod, SchedulingQueue, backoff_end
from packsched.framework.podinfo import PodInfo, make_pod_info

PLUGIN = frozenset({"plugin"})


def priority_sort(info: PodInfo) -> tuple[int, int]:
    """PrioritySort: priority first, then the queue timestamp (here the arrival order)."""
    return (-info.priority, info.arrival)


def queue(windows: bool, initial: float = 1.0, maximum: float = 10.0) -> SchedulingQueue:
    return SchedulingQueue(priority_sort, initial, maximum, pop_from_backoff=windows)


def popped(q: SchedulingQueue, names_priorities: list[tuple[str, int]]) -> dict[str, QueuedPod]:
    """Add the pods (in this order: their queue timestamps' order) and pop each once (one attempt)."""
    for name, priority in names_priorities:
        q.add(make_pod_info(pod(name, priority=priority)))
    out: dict[str, QueuedPod] = {}
    while (qp := q.pop(0.0)) is not None:
        out[qp.info.pod.name] = qp
    assert len(out) == len(names_priorities)
    return out


def flushed_order(q: SchedulingQueue, qps: dict[str, QueuedPod], now: float) -> list[str]:
    """The pods the flush at ``now`` moves to the active queue, in the order it moves them (each is restamped as it
    goes: the order of their new queue timestamps). A pod of the highest priority waits in the active queue, so that
    the pop that flushes returns it rather than a pod of the flush (or of the backoff queue)."""
    marker = max(qp.info.arrival for qp in qps.values())
    q.add(make_pod_info(pod("sentinel", priority=1000)))
    sentinel = q.pop(now)  # flushes first
    assert sentinel is not None and sentinel.info.pod.name == "sentinel"
    moved = [qp for qp in qps.values() if qp.info.arrival > marker]
    return [qp.info.pod.name for qp in sorted(moved, key=lambda qp: qp.info.arrival)]


# TestBackoffQueue_calculateBackoffDuration: (initial, max, count, entity size, want); upstream's nanoseconds as
# seconds (the overflow cases are Go's integer limits, not reachable with floats)
CALCULATE = [
    ("normal", 3.0, 1000.0, 5, 1, 48.0),  # 3 x 2^4
    ("hitting max backoff duration", 1.0, 32.0, 16, 1, 32.0),
    ("larger entity size", 1.0, 32.0, 7, 10, 64.0),  # cap 32 x sqrt(10) = 101.19 is not reached
    ("hitting max backoff duration with larger entity size", 1.0, 32.0, 16, 10, 32 * math.sqrt(10)),
]


@pytest.mark.parametrize(
    ("name", "initial", "maximum", "count", "size", "want"), CALCULATE, ids=[c[0] for c in CALCULATE]
)
def test_calculate_backoff_duration(
    name: str, initial: float, maximum: float, count: int, size: int, want: float
) -> None:
    q = queue(True, initial, maximum)
    assert q.backoff_duration(count, q.group_max_backoff(size)) == pytest.approx(want, abs=1e-9)


# TestBackoffQueue_getBackoffTime with windows: (failed at, count, max, want: when it leaves backoff). Upstream's
# BackoffExpiration is the truncated expiry E; packsched keeps when the pod leaves, the flush at E + 1 s.
GET_BACKOFF_TIME = [
    ("backoff by count", 0.0, 16, 32.0, 33.0),  # 0 + 32 = 32.0 s, window 32 s, flushed at 33 s
    ("truncated to the window", 0.4, 2, 32.0, 3.0),  # 0.4 + 2 = 2.4 s, window 2 s, flushed at 3 s
    ("zero maxBackoffDuration means no backoff", 5.0, 16, 0.0, 0.0),
]


@pytest.mark.parametrize(
    ("name", "failed_at", "count", "maximum", "want"), GET_BACKOFF_TIME, ids=[c[0] for c in GET_BACKOFF_TIME]
)
def test_get_backoff_time(name: str, failed_at: float, count: int, maximum: float, want: float) -> None:
    q = queue(True, 0.0 if maximum == 0 else 1.0, maximum)
    qps = popped(q, [("p", 0)])
    qps["p"].attempts = count
    q.requeue_after_backoff(qps["p"], failed_at, "why", PLUGIN)
    assert qps["p"].backoff_until == want
    if maximum:
        assert want == backoff_end(failed_at, q.backoff_duration(count), True)


# TestBackoffQueue_popAllBackoffCompleted: now 10.5 s; pod0 and pod2 failed 2 s before (1 s backoff: 9.5 s, window
# 9 s, done), pod1 and pod3 1 s after (12.5 s, not done); pod0 and pod1 were rejected by a plugin (backoff heap),
# pod2 and pod3 came back after an error (error backoff heap). The backoff heap is flushed first.
POP_ALL = [
    ("Both queues empty, no pods moved to activeQ", [], []),
    ("Pods only in backoffQ, some pods moved to activeQ", ["pod0", "pod1"], ["pod0"]),
    ("Pods only in errorBackoffQ, some pods moved to activeQ", ["pod2", "pod3"], ["pod2"]),
    ("Pods in both queues, some pods moved to activeQ", ["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"]),
    ("Pods in both queues, all pods moved to activeQ", ["pod0", "pod2"], ["pod0", "pod2"]),
    ("Pods in both queues, no pods moved to activeQ", ["pod1", "pod3"], []),
]
FAILED_AT = {"pod0": 8.5, "pod1": 11.5, "pod2": 8.5, "pod3": 11.5}


@pytest.mark.parametrize("windows", [True, False])
@pytest.mark.parametrize(("name", "in_backoff", "want"), POP_ALL, ids=[c[0] for c in POP_ALL])
def test_pop_all_backoff_completed(name: str, in_backoff: list[str], want: list[str], windows: bool) -> None:
    q = queue(windows)
    qps = popped(q, [(n, 0) for n in ["pod0", "pod1", "pod2", "pod3", "other"]])
    for n in in_backoff:
        if n in ("pod0", "pod1"):
            q.requeue_after_backoff(qps[n], FAILED_AT[n], "rejected", PLUGIN)
        else:
            q.requeue_now(qps[n], FAILED_AT[n])  # an error
    qps = {n: qps[n] for n in in_backoff} | {"other": qps["other"]}
    assert flushed_order(q, qps, 10.5) == want
    assert [n for n in in_backoff if qps[n].in_backoff] == [n for n in in_backoff if n not in want]


# TestBackoffQueueOrdering: now 10 s (a whole second); each pod failed at its time with a 1 s backoff. With windows,
# pods of one window leave in the active queue's order (priority, then timestamp); without, by expiry alone.
ORDERING_PODS = [  # (name, priority, failed at), in the order of their queue timestamps
    ("pod5", 1, 7.0),  # 8.0 s: window 8 s
    ("pod3", 1, 8.0),  # 9.0 s: window 9 s
    ("pod4", 2, 8.0),  # 9.0 s: window 9 s
    ("pod2", 2, 8.001),  # 9.001 s: window 9 s
    ("pod1", 1, 9.0),  # 10.0 s: window 10 s, not before the current one: still backing off
    ("pod0", 1, 10.0),  # 11.0 s
]


@pytest.mark.parametrize(
    ("windows", "now", "want"),
    [
        (True, 10.0, ["pod5", "pod4", "pod2", "pod3"]),
        # without windows a pod leaves at its exact expiry (packsched's flush takes a pod whose expiry is now, where
        # upstream's waits for the next flush): checked at 9.5 s, where upstream's 10 s leaves the same pods
        (False, 9.5, ["pod5", "pod3", "pod4", "pod2"]),
    ],
)
def test_backoff_queue_ordering(windows: bool, now: float, want: list[str]) -> None:
    q = queue(windows)
    qps = popped(q, [(n, p) for n, p, _ in ORDERING_PODS])
    for n, _, failed_at in ORDERING_PODS:
        q.requeue_after_backoff(qps[n], failed_at, "rejected", PLUGIN)
    assert flushed_order(q, qps, now) == want


# TestPriorityQueue_Pop (individual pods): a pod in the active queue, one in backoff rejected by a plugin, one in
# the error backoff, one unschedulable; with the gate Pop takes the active pod, then the backoff queue's head, and
# never the error backoff's pod nor the unschedulable one.
@pytest.mark.parametrize(("windows", "want"), [(True, ["med", "high"]), (False, ["med"])])
def test_pop_takes_the_backoff_queues_head_when_nothing_is_active(windows: bool, want: list[str]) -> None:
    q = queue(windows)
    qps = popped(q, [("high", 100), ("high2", 100), ("unsched", 0)])
    q.requeue_after_backoff(qps["high"], 0.0, "rejected", PLUGIN)
    q.requeue_now(qps["high2"], 0.0)  # error backoff
    q.add_unschedulable(qps["unsched"], 0.0, "rejected", PLUGIN)
    q.add(make_pod_info(pod("med", priority=50)))
    got = []
    while (qp := q.pop(0.5)) is not None:
        got.append(qp.info.pod.name)
    assert got == want
    # the error backoff's pod leaves at its flush: 0 + 1 = 1.0 s, window 1 s (2 s); without windows at 1 s
    assert q.next_backoff_expiry() == (2.0 if windows else 1.0)


def test_a_pod_popped_from_backoff_is_not_popped_from_backoff_again_at_the_same_instant() -> None:
    """The simulator's guard (a cycle takes no time): the pod that fails again goes back to backoff, and waits for
    its flush (attempt 2: 0 + 2 = 2.0 s, window 2 s, flushed at 3 s) instead of being retried at 0 s forever."""
    q = queue(True)
    qps = popped(q, [("p", 0)])
    q.requeue_after_backoff(qps["p"], 0.0, "rejected", PLUGIN)
    again = q.pop(0.0)
    assert again is qps["p"] and again.attempts == 2
    q.requeue_after_backoff(again, 0.0, "rejected", PLUGIN)
    assert q.pop(0.0) is None and q.next_backoff_expiry() == 3.0
    third = q.pop(0.5)  # another instant: popped from backoff once more
    assert third is not None and third.attempts == 3


@pytest.mark.parametrize(
    ("failed_at", "duration", "want"),
    [(0.0, 1.0, 2.0), (0.3, 1.0, 2.0), (0.999, 1.0, 2.0), (1.0, 1.0, 3.0), (3.5, 10.0, 14.0), (2.0, 0.0, 3.0)],
)
def test_backoff_ends_at_the_flush_after_its_window(failed_at: float, duration: float, want: float) -> None:
    """isEntityBackingoff: still backing off while the truncated expiry is not before the current window (a zero
    backoff still waits for the next flush, as upstream's); without windows at the expiry itself."""
    assert backoff_end(failed_at, duration, True) == want == math.floor(failed_at + duration) + 1
    assert backoff_end(failed_at, duration, False) == round(failed_at + duration, 9)
