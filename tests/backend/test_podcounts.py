"""The snapshot's pod count index: per-node counts of the placed pods a filter matches, right after adds and
removes (one at a time and in bulk), for filters registered before or after the pods came, by namespace, with and
without terminating pods; idle filters dropped; nodes added later; per-domain sums."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import node
from packsched.api.objects import LabelSelector, Pod, Requirement
from packsched.backend import podcounts
from packsched.backend.podcounts import PodCountIndex, PodFilter, domain_sums, pod_counts
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.snapshot import Snapshot

APP_A = LabelSelector((("app", "a"),))
HAS_APP = LabelSelector((), (Requirement("app", "Exists"),))
EVERY = LabelSelector()


def _snap(n: int = 3) -> Snapshot:
    return Snapshot([node(f"n{i}") for i in range(n)])


def _info(name: str, labels: dict[str, str], namespace: str = "default", terminating: bool = False) -> PodInfo:
    return make_pod_info(Pod(name, namespace, labels=dict(labels), terminating=terminating))


def _row(index: PodCountIndex, filt: PodFilter) -> list[int]:
    return [int(x) for x in index.counts(filt)]


def test_one_index_per_snapshot_registered_as_a_listener() -> None:
    snap = _snap()
    index = pod_counts(snap)
    assert pod_counts(snap) is index and index in snap.listeners
    assert pod_counts(_snap()) is not index


def test_counts_follow_adds_and_removes() -> None:
    snap = _snap()
    index = pod_counts(snap)
    a_only = PodFilter(None, APP_A)
    with_app = PodFilter(None, HAS_APP)
    assert _row(index, a_only) == [0, 0, 0] and _row(index, with_app) == [0, 0, 0]
    a0, a1, b1, plain = _info("a0", {"app": "a"}), _info("a1", {"app": "a"}), _info("b1", {"app": "b"}), _info("x", {})
    snap.add_pod(a0, 0)
    snap.add_pod(a1, 1)
    snap.add_pod(b1, 1)
    snap.add_pod(plain, 2)
    assert _row(index, a_only) == [1, 1, 0]
    assert _row(index, with_app) == [1, 2, 0]
    assert _row(index, PodFilter(None, EVERY)) == [1, 2, 1]  # registered now: walks the placed pods
    snap.remove_pod(a1)
    assert _row(index, a_only) == [1, 0, 0]
    assert _row(index, with_app) == [1, 1, 0]
    assert _row(index, PodFilter(None, EVERY)) == [1, 1, 1]
    snap.add_pod(a1, 2)  # back, elsewhere
    assert _row(index, a_only) == [1, 0, 1]


def test_a_filter_registered_after_the_pods_counts_them_and_then_follows() -> None:
    snap = _snap()
    pods = [_info(f"p{i}", {"app": "a" if i % 2 else "b"}) for i in range(6)]
    for i, p in enumerate(pods):
        snap.add_pod(p, i % 3)
    index = pod_counts(snap)  # made after the pods: the first lookup walks them
    a_only = PodFilter(None, APP_A)
    assert _row(index, a_only) == [1, 1, 1]
    snap.remove_pod(pods[1])
    snap.add_pod(_info("late", {"app": "a"}), 0)
    assert _row(index, a_only) == [2, 0, 1]


def test_namespaces_limit_what_counts() -> None:
    snap = _snap(2)
    index = pod_counts(snap)
    snap.add_pod(_info("p", {"app": "a"}, "team-1"), 0)
    snap.add_pod(_info("q", {"app": "a"}, "team-2"), 0)
    snap.add_pod(_info("r", {"app": "a"}, "team-2"), 1)
    assert _row(index, PodFilter(frozenset({"team-1"}), APP_A)) == [1, 0]
    assert _row(index, PodFilter(frozenset({"team-2"}), APP_A)) == [1, 1]
    assert _row(index, PodFilter(frozenset({"team-1", "team-2"}), APP_A)) == [2, 1]
    assert _row(index, PodFilter(frozenset(), APP_A)) == [0, 0]
    assert _row(index, PodFilter(None, APP_A)) == [2, 1]
    snap.add_pod(_info("s", {"app": "a"}, "team-1"), 1)
    assert _row(index, PodFilter(frozenset({"team-1"}), APP_A)) == [1, 1]
    assert _row(index, PodFilter(frozenset({"team-2"}), APP_A)) == [1, 1]


def test_terminating_pods_count_only_for_filters_that_keep_them() -> None:
    snap = _snap(2)
    index = pod_counts(snap)
    keep = PodFilter(None, APP_A)
    skip = PodFilter(None, APP_A, skip_terminating=True)
    assert _row(index, skip) == [0, 0]  # registered before the pods
    going = _info("going", {"app": "a"}, terminating=True)
    snap.add_pod(going, 0)
    snap.add_pod(_info("staying", {"app": "a"}), 1)
    assert _row(index, keep) == [1, 1]  # registered after them
    assert _row(index, skip) == [0, 1]
    assert _row(index, PodFilter(None, HAS_APP, skip_terminating=True)) == [0, 1]
    snap.remove_pod(going)
    assert _row(index, keep) == [0, 1] and _row(index, skip) == [0, 1]


def test_bulk_adds_and_removes_match_one_at_a_time() -> None:
    snap = _snap(4)
    index = pod_counts(snap)
    a_only = PodFilter(None, APP_A)
    pods = [_info(f"p{i}", {"app": "a" if i % 3 else "b"}) for i in range(20)]
    snap.add_pods([(p, i % 4) for i, p in enumerate(pods)])  # 20 pods: the arrays' bulk path
    want = [sum(1 for i, p in enumerate(pods) if i % 4 == c and p.pod.labels["app"] == "a") for c in range(4)]
    assert _row(index, a_only) == want
    snap.remove_pods(pods[:10])
    want = [
        sum(1 for i, p in enumerate(pods) if i >= 10 and i % 4 == c and p.pod.labels["app"] == "a") for c in range(4)
    ]
    assert _row(index, a_only) == want


def test_rows_grow_with_nodes_added_later() -> None:
    snap = _snap(2)
    index = pod_counts(snap)
    a_only = PodFilter(None, APP_A)
    snap.add_pod(_info("p", {"app": "a"}), 1)
    assert _row(index, a_only) == [0, 1]
    col = snap.add_node(node("late"))
    snap.add_pod(_info("q", {"app": "a"}), col)  # a listener update reaching past the old width
    assert _row(index, a_only) == [0, 1, 1]
    snap.add_nodes([node("later")])
    assert _row(index, a_only) == [0, 1, 1, 0]
    assert _row(index, PodFilter(None, EVERY)) == [0, 1, 1, 0]


def test_idle_filters_are_dropped_and_come_back_right(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(podcounts, "IDLE_CYCLES", 2)
    snap = _snap(2)
    index = pod_counts(snap)
    old = PodFilter(None, APP_A)
    busy = PodFilter(None, HAS_APP)
    snap.add_pod(_info("p", {"app": "a"}), 0)
    assert _row(index, old) == [1, 0]
    for _ in range(3):
        assert _row(index, busy) == [1, 0]
    assert _row(index, PodFilter(None, EVERY)) == [1, 0]  # a new filter: idle ones go first
    assert old not in index.filters and busy in index.filters
    assert index.rows.shape == (len(index.filters), 2)
    snap.add_pod(_info("q", {"app": "a"}), 1)
    assert _row(index, busy) == [1, 1]
    assert _row(index, PodFilter(None, EVERY)) == [1, 1]
    assert _row(index, old) == [1, 1]  # registered again: walks the placed pods


def test_domain_sums_add_the_eligible_nodes_of_each_domain() -> None:
    per_node = np.array([1, 2, 3, 4, 5], dtype=np.int64)
    codes = np.array([0, 1, 0, -1, 2], dtype=np.int32)
    eligible = np.array([True, True, True, True, False])
    assert domain_sums(per_node, codes, eligible, 4).tolist() == [4, 2, 0, 0]
    assert domain_sums(per_node, codes, np.zeros(5, dtype=bool), 2).tolist() == [0, 0]
    assert domain_sums(per_node, codes, eligible, 4).dtype == np.int64


_OPS = st.lists(
    st.tuples(
        st.booleans(),  # add (or remove a placed pod)
        st.integers(0, 3),  # node
        st.sampled_from(["a", "b", ""]),  # app label ("" = none)
        st.sampled_from(["ns1", "ns2"]),
        st.booleans(),  # terminating
        st.integers(0, 50),  # which placed pod to remove
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(_OPS, st.integers(0, 40))
def test_counts_always_equal_a_walk_over_the_placed_pods(
    ops: list[tuple[bool, int, str, str, bool, int]], when: int
) -> None:
    # filters registered at a random point among the operations must agree with a recount at the end
    snap = _snap(4)
    filters = [
        PodFilter(None, APP_A),
        PodFilter(frozenset({"ns1"}), HAS_APP, skip_terminating=True),
        PodFilter(frozenset({"ns2"}), EVERY),
        PodFilter(None, EVERY, skip_terminating=True),
    ]
    index = pod_counts(snap)
    placed: list[PodInfo] = []
    for step, (add, col, app, ns, terminating, pick) in enumerate(ops):
        if step == when:
            for f in filters:
                index.counts(f)
        if add or not placed:
            info = _info(f"p{step}", {"app": app} if app else {}, ns, terminating)
            snap.add_pod(info, col)
            placed.append(info)
        else:
            snap.remove_pod(placed.pop(pick % len(placed)))
    for f in filters:
        want = np.zeros(4, dtype=np.int64)
        for info in placed:
            if f.matches(info.pod):
                want[info.node] += 1
        assert index.counts(f).tolist() == want.tolist()
