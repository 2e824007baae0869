"""PodInfo's cached key and its mirrored fields: the snapshot's pod table keeps every placed pod's start time and
start order as the PodInfo says them, whether they were set one field at a time or together (``set_started``, the
bind's path), and a node's stamp moves whenever one of its pods' starts is set."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import node, pod
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.snapshot import Snapshot


def _snapshot(n_pods: int) -> tuple[Snapshot, list[PodInfo]]:
    snap = Snapshot()
    snap.add_nodes([node(f"n{i}", cpu=64000, memory=2**40, pods=200) for i in range(3)])
    infos = [make_pod_info(pod(f"p{i}", cpu=100, memory=1)) for i in range(n_pods)]
    return snap, infos


def _mirrors(snap: Snapshot) -> None:
    """Every placed pod's row holds its PodInfo's start time and order."""
    table = snap.table
    for info in snap.pods.values():
        row = table.row_of[id(info)]
        assert table.start[row] == info.start_time
        assert table.start_seq[row] == info.start_seq


steps = st.lists(
    st.tuples(
        st.sampled_from(["place", "remove", "fields", "time", "seq", "together"]),
        st.integers(0, 5),  # the pod
        st.integers(0, 2),  # the node
        st.integers(0, 4),  # the start time
        st.integers(0, 9),  # the start order
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(steps)
def test_the_pod_table_mirrors_starts_set_field_by_field_or_together(ops: list[tuple[str, int, int, int, int]]) -> None:
    """Pods placed, removed and started in any order (also while not placed, which the table must not hear of):
    the table holds each placed pod's start; a start set on a placed pod puts its node in the table's journal, one
    set on a pod not placed leaves the journal alone."""
    snap, infos = _snapshot(6)
    for op, i, col, time, seq in ops:
        info = infos[i]
        placed = info.key in snap.pods
        if op == "place":
            if not placed:
                snap.add_pod(info, col)
        elif op == "remove":
            if placed:
                snap.remove_pod(info)
        else:
            before = snap.table.clock
            if op == "together":
                info.set_started(float(time), seq)
            elif op == "fields":
                info.start_time = float(time)
                info.start_seq = seq
            elif op == "time":
                info.start_time = float(time)
            else:
                info.start_seq = seq
            if op != "seq":
                assert info.start_time == float(time)
            if op != "time":
                assert info.start_seq == seq
            if placed:  # the pod table's journal names the pod's node
                assert info.node in (snap.table.changed_since(before) or [])
            else:
                assert snap.table.clock == before
        _mirrors(snap)


def test_the_key_is_read_once_and_kept() -> None:
    """The key is the pod's namespace/name, computed on first read and kept in the instance (later reads find it
    there, as a plain attribute)."""
    info = make_pod_info(pod("a", cpu=100))
    assert "key" not in info.__dict__
    assert info.key == "default/a"
    assert info.__dict__["key"] == "default/a"
    info.pod.name = "b"  # never happens to a known pod; shows that the kept key is what is read
    assert info.key == "default/a"
