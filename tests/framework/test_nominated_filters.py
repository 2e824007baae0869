"""The Filter pass with nominated pods (``Framework.run_filters_with_nominated``) where every filter reads amounts
and pod counts only, or no placed pod (``arithmetic_filters``): the nominated pods' totals are added to the arrays
and only the fit filter runs again. Its verdicts and reasons must be those of the general path, which places each
node's nominated pods of equal or higher priority and runs every filter again (upstream's addNominatedPods)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import node, pod
from packsched.api.manifests import Cluster
from packsched.api.objects import NO_SCHEDULE, Taint, Toleration
from packsched.config import default_config
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import make_pod_info
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation


def _per_node(feasible: Any, groups: Any) -> list[tuple[bool, frozenset[tuple[str, str, int]]]]:
    out = []
    for col in range(len(feasible)):
        reasons = frozenset((g.plugin, g.reason, int(g.code)) for g in groups if g.mask[col])
        out.append((bool(feasible[col]), reasons))
    return out


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_the_totals_pass_judges_as_placing_each_nominated_pod(data: st.DataObject) -> None:
    draw = data.draw
    nodes = []
    for i in range(draw(st.integers(2, 7))):
        nd = node(f"n{i}", cpu=draw(st.integers(1000, 4000)), pods=draw(st.integers(1, 5)))
        if draw(st.booleans()):
            nd.taints = [Taint("dedicated", "x", NO_SCHEDULE)]
        nodes.append(nd)
    registry = in_tree_registry()
    sim = Simulation(Cluster(nodes=nodes, pods=[]), default_config(set(registry)), registry, 0)
    sched = sim.scheduler
    fwk = sched.frameworks["default-scheduler"]
    version = sched.config.kube_version
    for j in range(draw(st.integers(0, 8))):
        info = make_pod_info(pod(f"p{j}", cpu=draw(st.integers(100, 1500))), j, version)
        sched.snapshot.add_pod(info, draw(st.integers(0, len(nodes) - 1)))
    for j in range(draw(st.integers(1, 8))):
        cpu = draw(st.integers(100, 2500))
        info = make_pod_info(pod(f"q{j}", cpu=cpu, priority=draw(st.integers(0, 3))), 100 + j, version)
        sched.nominator.nominate(info, draw(st.integers(0, len(nodes) - 1)))
    incoming = pod("incoming", cpu=draw(st.integers(100, 2500)), priority=draw(st.integers(0, 3)))
    if draw(st.booleans()):
        incoming.tolerations = [Toleration("dedicated", "Equal", "x", NO_SCHEDULE)]
    info = make_pod_info(incoming, 999, version)

    def judged() -> list[tuple[bool, frozenset[tuple[str, str, int]]]]:
        state = CycleState()
        assert fwk.run_pre_filter(state, info).ok
        feasible, groups = fwk.run_filters_with_nominated(state, info, slice(None))
        return _per_node(feasible, groups)

    state = CycleState()
    assert fwk.run_pre_filter(state, info).ok
    assert fwk.arithmetic_filters(state) is not None  # the totals pass applies
    by_totals = judged()
    fwk.arithmetic_filters = lambda state: None  # type: ignore[method-assign]  # the general path
    by_placing = judged()
    assert by_totals == by_placing
    assert np.asarray(sched.snapshot.requested).min() >= 0  # the trial additions were taken back
