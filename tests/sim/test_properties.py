"""Invariants over random clusters and pods (hypothesis): no node is ever over-committed by the scheduler, every
plugin score stays in [0, 100], and the same seed gives the same placements."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import make_config, make_profile, node, pod
from packsched.api.manifests import Cluster
from packsched.api.objects import Pod, Taint, Toleration
from packsched.config.types import (
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import CycleResult
from packsched.sim.engine import RUNNING, Simulation

GPU = "nvidia.com/gpu"


@st.composite
def shapes(draw: st.DrawFn) -> list[UtilizationShapePoint]:
    xs = sorted(draw(st.sets(st.integers(0, 100), min_size=1, max_size=4)))
    return [UtilizationShapePoint(x, draw(st.integers(0, 10))) for x in xs]


@st.composite
def strategies_(draw: st.DrawFn) -> ScoringStrategy:
    kind = draw(st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]))
    names = draw(
        st.lists(
            st.sampled_from(["cpu", "memory", GPU, "pods", "example.com/none"]), min_size=1, max_size=4, unique=True
        )
    )
    resources = [ResourceSpec(n, draw(st.integers(1, 100))) for n in names]
    shape = RequestedToCapacityRatioParam(draw(shapes())) if kind == "RequestedToCapacityRatio" else None
    return ScoringStrategy(kind, resources, shape)


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    n_nodes = draw(st.integers(1, 8))
    nodes = []
    for i in range(n_nodes):
        extra = {GPU: draw(st.sampled_from([0, 1, 2, 4, 8]))}
        nd = node(
            f"n{i}",
            cpu=draw(st.integers(500, 16000)),
            memory=draw(st.integers(1, 64)) * 2**30,
            pods=draw(st.integers(1, 10)),
            extra={k: v for k, v in extra.items() if v},
        )
        if draw(st.booleans()):
            nd.taints = [Taint("dedicated", "x", draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"])))]
        nodes.append(nd)
    pods: list[Pod] = []
    for i in range(draw(st.integers(1, 25))):
        extra = {GPU: draw(st.sampled_from([0, 0, 1, 2, 8]))}
        p = pod(
            f"p{i}",
            cpu=draw(st.integers(0, 8000)),
            memory=draw(st.integers(0, 16)) * 2**30,
            priority=draw(st.sampled_from([0, 0, 100, 1000])),
            extra={k: v for k, v in extra.items() if v},
        )
        if draw(st.booleans()):
            p.tolerations = [Toleration("dedicated", "Exists")]
        pods.append(p)
    return Cluster(nodes=nodes, pods=pods)


def _run(cluster: Cluster, strategy: ScoringStrategy, seed: int) -> tuple[Simulation, list[CycleResult]]:
    cycles: list[CycleResult] = []
    prof = make_profile(strategy=strategy, post_filter=["DefaultPreemption"])
    registry = in_tree_registry()
    if "DefaultPreemption" not in registry:  # pragma: no cover - until the plugin is registered
        prof.plugins.at("postFilter").enabled = []
    sim = Simulation(cluster, make_config(prof), registry, seed=seed, on_cycle=cycles.append)
    sim.scheduler.score_details = True  # every plugin's scores in every cycle, for the range check below
    sim.run()
    return sim, cycles


@settings(max_examples=60, deadline=None)
@given(clusters(), strategies_(), st.integers(0, 2**32 - 1))
def test_no_node_over_committed_and_scores_in_range(cluster: Cluster, strategy: ScoringStrategy, seed: int) -> None:
    sim, cycles = _run(cluster, strategy, seed)
    snap = sim.snapshot
    assert np.all(snap.requested <= snap.alloc), "a node holds more than its allocatable"
    assert np.all(snap.pod_count <= snap.allowed_pods)
    for cycle in cycles:
        if cycle.scores is None:
            continue
        for name, scores in cycle.scores.per_plugin.items():
            assert np.all((scores >= 0) & (scores <= 100)), name
    running = [r for r in sim.records.values() if r.phase == RUNNING]
    assert len(running) == int(snap.pod_count.sum())


@settings(max_examples=25, deadline=None)
@given(clusters(), strategies_(), st.integers(0, 2**32 - 1))
def test_same_seed_same_placements(cluster: Cluster, strategy: ScoringStrategy, seed: int) -> None:
    first, _ = _run(cluster, strategy, seed)
    again_cluster = Cluster(nodes=cluster.nodes, pods=[_fresh(p) for p in cluster.pods])
    second, _ = _run(again_cluster, strategy, seed)
    assert [(r.pod.key, r.phase, r.node) for r in first.records.values()] == [
        (r.pod.key, r.phase, r.node) for r in second.records.values()
    ]


def _fresh(p: Pod) -> Pod:
    q = Pod(**{**p.__dict__})
    q.nominated_node_name = ""
    return q
