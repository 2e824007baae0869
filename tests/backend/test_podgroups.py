"""The pod group states' copy is copy-on-write: a copy and its original never see each other's later changes,
exactly as a deep copy (checked against one on random sequences of changes to either side)."""

from __future__ import annotations

import copy

from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.gangscheduling_support import V136, pod136

from packsched.backend.podgroups import PodGroupStates
from packsched.framework.podinfo import PodInfo, make_pod_info

PODS = [make_pod_info(pod136(f"p{i}", group=f"g{i % 3}"), version=V136) for i in range(6)]

# (which side: 0 the original, 1 the newest copy; operation; pod index)
OPS = st.lists(
    st.tuples(
        st.integers(0, 1),
        st.sampled_from(["add", "bind", "delete", "assume", "forget", "copy", "deadline"]),
        st.integers(0, len(PODS) - 1),
    ),
    max_size=30,
)


def _apply(states: PodGroupStates, op: str, pod: PodInfo) -> None:
    key = pod.pod_group.key if pod.pod_group else ""
    if op == "add":
        states.add(pod, bound=False)
    elif op == "bind":
        states.add(pod, bound=True)
    elif op == "delete":
        states.delete(pod)
    elif (state := states.get(key)) is not None:
        if op == "assume":
            state.assume(pod)
        elif op == "forget":
            state.forget(pod.key)
        elif op == "deadline":
            state.scheduling_timeout(float(len(state.pods)))


def _view(states: PodGroupStates) -> dict[str, tuple[object, ...]]:
    """Read without get(), which would copy (and so hide a state still shared)."""
    out: dict[str, tuple[object, ...]] = {}
    for key, s in states._groups.items():
        out[key] = (sorted(s.pods), sorted(s.unscheduled), sorted(s.assumed), sorted(s.assigned), s.deadline)
    return out


@settings(max_examples=60, deadline=None)
@given(OPS)
@example([(0, "add", 0), (0, "copy", 0), (0, "add", 3)])  # the original changes a group it shares
@example([(0, "add", 0), (0, "copy", 0), (1, "assume", 0)])  # the copy changes a group it shares
def test_copies_behave_as_deep_copies(ops: list[tuple[int, str, int]]) -> None:
    cow = [PodGroupStates()]
    deep = [PodGroupStates()]
    for side, op, i in ops:
        if op == "copy":
            cow.append(cow[-1].copy())
            deep.append(copy.deepcopy(deep[-1]))
            continue
        target = 0 if side == 0 else len(cow) - 1
        _apply(cow[target], op, PODS[i])
        _apply(deep[target], op, PODS[i])
        assert [_view(c) for c in cow] == [_view(d) for d in deep]
