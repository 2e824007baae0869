"""The Filter pass with nominated pods (``Framework.run_filters_with_nominated``) where every filter reads amounts
and pod counts only, or no placed pod (``arithmetic_filters``): the nominated pods' totals are added to the arrays
and only the fit filter runs again. Its verdicts and reasons must be those of the general path, which places each
node's nominated pods of equal or higher priority and runs every filter again (upstream's addNominatedPods)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import node, pod
from packsched.api.manifests import Cluster
from packsched.api.objects import NO_SCHEDULE, Taint, Toleration
from packsched.config import default_config
from packsched.framework import runtime
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import ExtraPods
from packsched.framework.podinfo import make_pod_info
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation


def _per_node(feasible: Any, groups: Any) -> list[tuple[bool, frozenset[tuple[str, str, int]]]]:
    out = []
    for col in range(len(feasible)):
        reasons = frozenset((g.plugin, g.reason, int(g.code)) for g in groups if g.mask[col])
        out.append((bool(feasible[col]), reasons))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_totals_pass_judges_as_placing_each_nominated_pod(monkeypatch: Any, data: st.DataObject) -> None:
    draw = data.draw
    nodes = []
    for i in range(draw(st.integers(2, 12))):
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
    if draw(st.booleans()):  # the pod itself nominated (a second attempt): its own nomination is left out
        sched.nominator.nominate(info, draw(st.integers(0, len(nodes) - 1)))
    # every node, or some columns (as preemption's dry run asks); the totals pass judges the nodes to judge
    # either as the whole selection or gathered (the few-node path under nine)
    sel: Any = slice(None)
    if draw(st.booleans()):
        picked = draw(st.lists(st.integers(0, len(nodes) - 1), min_size=1, unique=True))
        sel = np.array(sorted(picked), dtype=np.intp)
    monkeypatch.setattr(runtime, "_WHOLE_SELECTION", draw(st.sampled_from([0, 8, 10**6])))

    def judged() -> list[tuple[bool, frozenset[tuple[str, str, int]]]]:
        state = CycleState()
        assert fwk.run_pre_filter(state, info).ok
        feasible, groups = fwk.run_filters_with_nominated(state, info, sel)
        return _per_node(feasible, groups)

    state = CycleState()
    assert fwk.run_pre_filter(state, info).ok
    assert fwk.arithmetic_filters(state) is not None  # the totals pass applies
    by_totals = judged()
    fwk.arithmetic_filters = lambda state: None  # type: ignore[method-assign]  # the general path
    by_placing = judged()
    assert by_totals == by_placing
    assert np.asarray(sched.snapshot.requested).min() >= 0  # the trial additions were taken back


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_fit_with_extra_pods_is_fit_on_arrays_holding_them(data: st.DataObject) -> None:
    """NodeResourcesFit's ``filter_with_extra`` gives the rejections its ``filter`` gives once the extra pods'
    counts and amounts are added to the snapshot's arrays: over every node, over columns (the array path from
    nine), and over a few columns (node by node), with a resource some nodes lack and the pod limit."""
    draw = data.draw
    gpu = "example.com/gpu"
    nodes = [
        node(
            f"n{i}",
            cpu=draw(st.integers(500, 4000)),
            memory=draw(st.integers(1, 8)) * 2**30,
            pods=draw(st.integers(1, 6)),
            extra={gpu: draw(st.integers(1, 4))} if draw(st.booleans()) else None,
        )
        for i in range(draw(st.integers(1, 20)))
    ]
    registry = in_tree_registry()
    sim = Simulation(Cluster(nodes=nodes, pods=[]), default_config(set(registry)), registry, 0)
    sched = sim.scheduler
    fit = sched.frameworks["default-scheduler"].plugins["NodeResourcesFit"]
    snap = sched.snapshot
    version = sched.config.kube_version
    for j in range(draw(st.integers(0, 15))):
        placed = pod(f"p{j}", cpu=draw(st.integers(0, 1500)), memory=draw(st.integers(0, 2)) * 2**30)
        snap.add_pod(make_pod_info(placed, j, version), draw(st.integers(0, len(nodes) - 1)))
    wants = {gpu: draw(st.integers(0, 3))}
    incoming = pod("incoming", cpu=draw(st.integers(0, 2500)), memory=draw(st.integers(0, 4)) * 2**30, extra=wants)
    info = make_pod_info(incoming, 999, version)
    state = CycleState()
    assert fit.pre_filter(state, info, snap).ok
    names = [snap.resources[row] for row, _ in fit.fit_demand(state, info, snap)]
    n = snap.n
    count = np.array([draw(st.integers(0, 3)) for _ in range(n)], dtype=np.int64)
    amounts = {name: np.array([draw(st.integers(0, 2**31)) for _ in range(n)], dtype=np.int64) for name in names}
    if names and draw(st.booleans()):
        del amounts[names[-1]]  # a resource no extra pod requests
    sel: Any = slice(None)
    if draw(st.booleans()):
        sel = np.array(sorted(draw(st.lists(st.integers(0, n - 1), min_size=1, unique=True))), dtype=np.intp)

    def seen(rejections: Any) -> list[tuple[str, int, list[bool]]]:
        return [(r.reason, int(r.code), np.asarray(r.mask).tolist()) for r in rejections]

    with_extra = seen(fit.filter_with_extra(state, info, snap, sel, ExtraPods(count, amounts)))
    for name, more in amounts.items():
        snap.requested[snap.row[name]] += more
    snap.pod_count[:] += count
    on_arrays = seen(fit.filter(state, info, snap, sel))
    assert with_extra == on_arrays


def test_a_nominated_node_alone_counts_the_other_pods_nominated_there() -> None:
    """A pod's nominated node judged alone (its second attempt): a pod of the same priority nominated there counts,
    the pod's own nomination does not."""
    registry = in_tree_registry()
    sim = Simulation(
        Cluster(nodes=[node("n0", cpu=1000), node("n1", cpu=1000)], pods=[]), default_config(set(registry)), registry, 0
    )
    sched = sim.scheduler
    fwk = sched.frameworks["default-scheduler"]
    version = sched.config.kube_version
    info = make_pod_info(pod("incoming", cpu=600, priority=1), 1, version)
    sched.nominator.nominate(info, 0)

    def on_n0() -> list[tuple[bool, frozenset[tuple[str, str, int]]]]:
        state = CycleState()
        assert fwk.run_pre_filter(state, info).ok
        return _per_node(*fwk.run_filters_with_nominated(state, info, np.array([0], dtype=np.intp)))

    assert on_n0() == [(True, frozenset())]
    sched.nominator.nominate(make_pod_info(pod("other", cpu=600, priority=1), 2, version), 0)
    assert on_n0() == [(False, frozenset({("NodeResourcesFit", "Insufficient cpu", 2)}))]
