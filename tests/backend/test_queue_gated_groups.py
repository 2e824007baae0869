"""The queue's index of gated pods by pod group (what eventhandlers._retry_gated_group reads): after any sequence of
adds, ungates, removals and new reasons, each group's list is the gated pods of that group in the queue's order,
and the counts per (schedulerName, plugin, reason) are those of its gated pods."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from gangscheduling_support import V137, pod136
from packsched.backend.queue import SchedulingQueue
from packsched.framework.podinfo import PodInfo, make_pod_info

OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "ungate", "remove", "hold"]),
        st.integers(0, 7),  # the pod
        st.sampled_from(["", "a", "b"]),  # its group ("" none)
        st.sampled_from(["GangScheduling", "SchedulingGates"]),
        st.sampled_from(["r1", "r2"]),
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_the_gated_pods_of_each_group_follow_the_queue(ops: list[tuple[str, int, str, str, str]]) -> None:
    q = SchedulingQueue(lambda info: (info.arrival,))
    for op, i, group, plugin, reason in ops:
        key = f"ns1/p{i}"
        if op == "add":
            q.add(info_in_group(f"p{i}", group), gate_reason=reason, gate_plugin=plugin)
        elif op == "ungate":
            q.ungate(key)
        elif op == "remove":
            q.remove(key)
        elif key in q.gated:
            q.hold_again(q.gated[key], reason, plugin)
        for g in ("a", "b"):
            group_key = f"ns1/{g}"
            expect = [
                qp for qp in q.gated_pods() if qp.info.pod_group is not None and qp.info.pod_group.key == group_key
            ]
            assert q.gated_in_group(group_key) == expect
            assert (q.first_gated_in_group(group_key) is None) == (not expect)
            kinds = Counter((qp.info.pod.scheduler_name, qp.gate_plugin, qp.last_reason) for qp in expect)
            assert dict(q.gate_kinds(group_key)) == dict(kinds)


def info_in_group(name: str, group: str) -> PodInfo:
    return make_pod_info(pod136(name, group), version=V137)
