"""PreFilter and PreScore skip a pod early when neither it nor any placed pod has a term they would count
(``AffinityIndex.carries``). Property: on random placed pods and incoming pods (required and preferred terms of
both kinds, or none), each gives the same status and writes the same state as the full computation, which runs
when ``carries`` always answers yes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packsched.api.objects import LabelSelector, Node, Pod, PodAffinity, PodAffinityTerm
from packsched.api.objects import WeightedPodAffinityTerm as Weighted
from packsched.config.types import InterPodAffinityArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.plugins.interpodaffinity import index
from packsched.plugins.interpodaffinity.inter_pod_affinity import (
    PRE_FILTER_KEY,
    PRE_SCORE_KEY,
    InterPodAffinity,
)

ZONE, HOST = "zone", "kubernetes.io/hostname"
APPS = ("a", "b")


@st.composite
def affinities(draw: st.DrawFn) -> PodAffinity | None:
    kind = draw(st.integers(0, 3))  # none, required, preferred, both
    if kind == 0:
        return None
    term = PodAffinityTerm(draw(st.sampled_from([ZONE, HOST])), LabelSelector((("app", draw(st.sampled_from(APPS))),)))
    required = (term,) if kind in (1, 3) else ()
    preferred = (Weighted(draw(st.integers(1, 5)), term),) if kind in (2, 3) else ()
    return PodAffinity(required=required, preferred=preferred)


@st.composite
def pods(draw: st.DrawFn, name: str) -> Pod:
    return Pod(
        name,
        labels={"app": draw(st.sampled_from(APPS))},
        pod_affinity=draw(affinities()),
        pod_anti_affinity=draw(affinities()),
    )


def _plain(value: Any) -> Any:
    """A state's fields as comparable values (arrays as lists)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__ if k != "info"}
    return value


def _outcome(placed: list[Pod], incoming: Pod, hard: int) -> tuple[Any, ...]:
    snap = Snapshot([Node(f"n{i}", {HOST: f"n{i}", ZONE: f"z{i % 2}"}) for i in range(3)])
    for i, p in enumerate(placed):
        p.name = f"e{i}"
        snap.add_pod(make_pod_info(p, i), i % 3)
    plugin = InterPodAffinity(InterPodAffinityArgs(hard_pod_affinity_weight=hard), None)  # type: ignore[arg-type]
    info = make_pod_info(incoming)
    state = CycleState()
    pre_filter = plugin.pre_filter(state, info, snap).code
    pre_score = plugin.pre_score(state, info, snap, np.arange(3, dtype=np.int64)).code
    return pre_filter, pre_score, _plain(state.read(PRE_FILTER_KEY)), _plain(state.read(PRE_SCORE_KEY))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(pods("placed"), max_size=5),
    pods("incoming"),
    st.sampled_from([0, 1]),
)
def test_an_early_skip_is_the_full_computations_outcome(placed: list[Pod], incoming: Pod, hard: int) -> None:
    fast = _outcome(placed, incoming, hard)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(index.AffinityIndex, "carries", lambda self, kinds: True)
        full = _outcome(placed, incoming, hard)
    assert fast == full
