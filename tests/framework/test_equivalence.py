"""The equivalence cache (framework/equivalence.py) decides exactly what the full pass decides.

Property: random clusters (taints, zones, images, GPUs, full nodes) and pods of a few recurring shapes (so classes
are reused), with tolerations, node selectors, preferred node affinity, host ports, spec.nodeName, and some pods
that no node-local plugin can cache (inter-pod anti-affinity, topology spread), arriving over time, running for a
while and leaving, some of higher priority (preemption, nominations): the whole default profile with each scoring
strategy, simulated once with the cache and once with every cycle filtering and scoring every node. The histories
and events must be identical.

A cycle through the cache may also fold the class's kept scores into its totals (``Framework.run_score`` without
details: one kept weighted sum per class, and a kept plugin that scores 0 everywhere counted as its normalised
value): the totals must be those of the plugin-by-plugin pass, and a kept score out of range must fail the cycle
exactly where the full pass does.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import make_config, make_profile, node, pod
from packsched.api.manifests import Cluster
from packsched.api.objects import (
    DO_NOT_SCHEDULE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    ContainerPort,
    LabelSelector,
    NodeAffinity,
    NodeImage,
    NodeSelectorTerm,
    PodAffinity,
    PodAffinityTerm,
    PreferredTerm,
    Requirement,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from packsched.config import default_config
from packsched.config.loader import load_config_data
from packsched.config.types import KubeSchedulerConfiguration, PluginRef
from packsched.framework.cycle_state import CycleState
from packsched.framework.equivalence import EquivalenceCache
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.runtime import Framework, ScoreResult
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.framework.status import Code
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import Scheduler
from packsched.sim.engine import Simulation
from tests_support import Actions

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
GPU = "nvidia.com/gpu"
GPU_TAINT = Taint(GPU, "present", NO_SCHEDULE)
SOFT_TAINT = Taint("spot", "true", PREFER_NO_SCHEDULE)

STRATEGIES: list[dict[str, Any]] = [
    {"type": "LeastAllocated"},
    {"type": "MostAllocated"},
    {
        "type": "RequestedToCapacityRatio",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": GPU, "weight": 3}],
        "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]},
    },
]


def config(
    strategy: dict[str, Any], percentage: int | None, disabled: tuple[str, ...] = ()
) -> KubeSchedulerConfiguration:
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}],
            }
        ],
    }
    if disabled:
        doc["profiles"][0]["plugins"] = {"multiPoint": {"disabled": [{"name": n} for n in disabled]}}
    if percentage is not None:
        doc["percentageOfNodesToScore"] = percentage
    return load_config_data(doc, "<test>", set(in_tree_registry()))


@st.composite
def clusters(draw: st.DrawFn, min_nodes: int = 2, max_nodes: int = 12) -> Cluster:
    nodes = []
    for i in range(draw(st.integers(min_nodes, max_nodes))):
        gpus = draw(st.sampled_from([0, 0, 4, 8]))
        nd = node(
            f"n{i:03d}",
            cpu=draw(st.sampled_from([2000, 4000, 8000])),
            memory=draw(st.sampled_from([4, 8, 16])) * 2**30,
            pods=draw(st.integers(2, 12)),
            extra={GPU: gpus} if gpus else None,
        )
        nd.labels[ZONE] = draw(st.sampled_from(["z0", "z1", "z2"]))
        if gpus:
            nd.taints.append(GPU_TAINT)
        if draw(st.integers(0, 4)) == 0:
            nd.taints.append(SOFT_TAINT)
        if draw(st.booleans()):
            nd.images = (NodeImage(("app:v1",), 400 * 2**20),)
        nodes.append(nd)
    shapes = draw(
        st.lists(
            st.tuples(st.sampled_from([0, 100, 500, 1500]), st.sampled_from([0, 1, 2]), st.sampled_from([0, 1, 2, 4])),
            min_size=1,
            max_size=4,
        )
    )
    pods = []
    for i in range(draw(st.integers(4, 40))):
        cpu, mem, gpus = draw(st.sampled_from(shapes))
        p = pod(f"p{i:03d}", cpu=cpu, memory=mem * 2**30, extra={GPU: gpus} if gpus else None)
        p.priority = draw(st.sampled_from([0, 0, 0, 100]))
        if gpus or draw(st.integers(0, 5)) == 0:
            p.tolerations = [Toleration(GPU, "Exists", "", NO_SCHEDULE)]
        kind = draw(st.integers(0, 11))
        if kind == 0:
            p.node_selector = {ZONE: draw(st.sampled_from(["z0", "z1"]))}
        elif kind == 1:
            term = NodeSelectorTerm((Requirement(ZONE, "In", ("z2",)),))
            p.node_affinity = NodeAffinity(preferred=(PreferredTerm(10, term),))
        elif kind == 2:
            p.containers[0].ports = [ContainerPort(80, host_port=8080)]
        elif kind == 3:
            p.labels = {"app": "anti"}
            term = PodAffinityTerm(HOST, LabelSelector((("app", "anti"),)))
            p.pod_anti_affinity = PodAffinity(required=(term,))
        elif kind == 4:
            p.labels = {"app": "spread"}
            p.topology_spread_constraints = (
                TopologySpreadConstraint(1, ZONE, DO_NOT_SCHEDULE, LabelSelector((("app", "spread"),))),
            )
        elif kind == 5 and nodes:
            p.node_name = draw(st.sampled_from(nodes)).name
        if draw(st.booleans()):
            p.containers[0].image = "app:v1"
        p.arrival_time = float(draw(st.integers(0, 20)))
        if draw(st.booleans()):
            p.run_duration = float(draw(st.integers(1, 15)))
        pods.append(p)
    return Cluster(nodes=nodes, pods=pods)


def run(cluster: Cluster, cfg: KubeSchedulerConfiguration, seed: int, incremental: bool) -> tuple[Any, ...]:
    # a simulation changes its pods (phase, nominations): each run gets its own copy
    sim = Simulation(copy.deepcopy(cluster), cfg, in_tree_registry(), seed)
    sim.scheduler.incremental = incremental
    result = sim.run()
    history = [
        (r.pod.key, r.phase, r.node, r.reason, r.started, r.finished, r.attempts, r.preempted_by) for r in sim.history
    ]
    events = [(e.time, e.kind, e.pod, e.node, e.by, e.reason) for e in result.events]
    return history, events


@settings(max_examples=60, deadline=None)
@given(clusters(), st.sampled_from(range(len(STRATEGIES))), st.integers(0, 2**16))
def test_the_cache_decides_as_the_full_pass(cluster: Cluster, strategy: int, seed: int) -> None:
    cfg = config(STRATEGIES[strategy], None)
    assert run(cluster, cfg, seed, True) == run(cluster, cfg, seed, False)


@settings(max_examples=8, deadline=None)
@given(clusters(min_nodes=110, max_nodes=140), st.sampled_from([None, 30]), st.integers(0, 2**16))
def test_the_cache_decides_as_the_full_pass_when_only_some_nodes_are_scored(
    cluster: Cluster, percentage: int | None, seed: int
) -> None:
    # from 100 nodes on, a cycle stops at the first feasible nodes in its round-robin window and scores those
    cfg = config(STRATEGIES[2], percentage)
    assert run(cluster, cfg, seed, True) == run(cluster, cfg, seed, False)


def test_only_the_nodes_whose_pods_changed_are_filtered_again() -> None:
    cluster = Cluster(nodes=[node(f"n{i}") for i in range(50)], pods=[])
    sim = Simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry(), 0)
    sched = sim.scheduler
    fwk = sched.frameworks["default-scheduler"]
    snap = sched.snapshot
    seen: list[int] = []
    fit = fwk.plugins["NodeResourcesFit"]
    original = fit.passes  # type: ignore[attr-defined]  # the verdicts alone: what the cache asks

    def counting(state: CycleState, p: Any, s: Any, sel: Any) -> Any:
        seen.append(s.n if isinstance(sel, slice) else len(sel))
        return original(state, p, s, sel)

    fit.passes = counting  # type: ignore[attr-defined]
    from packsched.framework.podinfo import make_pod_info

    infos = [make_pod_info(pod(f"p{i}", cpu=100), i, sched.config.kube_version) for i in range(3)]
    for info in infos:
        state = CycleState()
        assert fwk.run_pre_filter(state, info).ok
        alive = fwk.run_filters_cached(state, info)
        assert alive.all()
        snap.add_pod(info, 7)
    # the first cycle filters every node; each later one only the node the previous pod went to
    assert seen == [50, 1, 1]
    assert len(fwk.equivalence) == 1


def test_a_pod_of_another_shape_is_another_class() -> None:
    cluster = Cluster(nodes=[node("a"), node("b")], pods=[])
    sim = Simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry(), 0)
    fwk = sim.scheduler.frameworks["default-scheduler"]
    cache: EquivalenceCache = fwk.equivalence
    from packsched.framework.podinfo import make_pod_info

    version = sim.scheduler.config.kube_version
    small, big, small_again = (
        make_pod_info(pod("s", cpu=100), 0, version),
        make_pod_info(pod("b", cpu=3000), 1, version),
        make_pod_info(pod("s2", cpu=100), 2, version),
    )
    classes = []
    for info in (small, big, small_again):
        state = CycleState()
        assert fwk.run_pre_filter(state, info).ok
        classes.append(cache.lookup(state, info))
    assert classes[0] is classes[2]
    assert classes[0] is not classes[1]
    sim.scheduler.snapshot.add_pod(big, 0)  # node a is now too full for another big pod
    state = CycleState()
    fwk.run_pre_filter(state, big)
    assert np.array_equal(fwk.run_filters_cached(state, big), [False, True])


def test_a_new_snapshot_starts_every_class_again() -> None:
    # a node removed: the cache makes a new snapshot with the columns renumbered
    cluster = Cluster(nodes=[node("a", cpu=1000), node("b", cpu=4000), node("c", cpu=1000)], pods=[])
    sim = Simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry(), 0)
    sched = sim.scheduler
    fwk = sched.frameworks["default-scheduler"]
    from packsched.framework.podinfo import make_pod_info

    info = make_pod_info(pod("big", cpu=2000), 0, sched.config.kube_version)
    state = CycleState()
    fwk.run_pre_filter(state, info)
    assert np.array_equal(fwk.run_filters_cached(state, info), [False, True, False])
    sched.node_removed("a")
    state = CycleState()
    fwk.run_pre_filter(state, info)
    assert np.array_equal(fwk.run_filters_cached(state, info), [True, False])


def both_score_passes(sim: Simulation) -> dict[str, int]:
    """Make every Score of ``sim``'s default profile run twice, folded (as the simulator runs it) and then plugin
    by plugin on the same cycle: the totals must agree. Counts the cycles that folded (``folded``: some plugin
    left out of the per-plugin scores) and the ones that folded a plugin into one uniform value (``uniform``)."""
    fwk = sim.scheduler.frameworks["default-scheduler"]
    plain = Framework.run_score
    seen = {"folded": 0, "uniform": 0, "raw": 0}

    def checked(
        state: CycleState, p: PodInfo, cols: IntArray, *, details: bool = True, raw: bool = False
    ) -> ScoreResult:
        fast = plain(fwk, state, p, cols, details=details, raw=raw)
        full = plain(fwk, state, p, cols, details=True)
        assert fast.totals.tolist() == full.totals.tolist()
        assert fast.weights == full.weights
        for name, scores in fast.per_plugin.items():
            assert scores.tolist() == full.per_plugin[name].tolist()
        if raw:  # what a batch keeps: every plugin's raw scores, folded or not
            assert {k: v.tolist() for k, v in fast.raw.items()} == {k: v.tolist() for k, v in full.raw.items()}
            seen["raw"] += 1
        if set(fast.per_plugin) != set(full.per_plugin):
            seen["folded"] += 1
            if any(name in fwk.equivalence._zero_normalizing for name in set(full.per_plugin) - set(fast.per_plugin)):
                seen["uniform"] += 1
        return fast

    fwk.run_score = checked  # type: ignore[method-assign]
    return seen


@settings(max_examples=25, deadline=None)
@given(clusters(), st.sampled_from(range(len(STRATEGIES))), st.integers(0, 2**16))
def test_folded_totals_are_the_plugin_by_plugin_totals(cluster: Cluster, strategy: int, seed: int) -> None:
    sim = Simulation(copy.deepcopy(cluster), config(STRATEGIES[strategy], None), in_tree_registry(), seed)
    both_score_passes(sim)
    sim.run()


@settings(max_examples=25, deadline=None)
@given(clusters(), st.sampled_from(range(len(STRATEGIES))), st.integers(0, 2**16))
def test_a_signed_pods_folded_cycle_keeps_every_raw_score(cluster: Cluster, strategy: int, seed: int) -> None:
    """Without PodTopologySpread (whose default constraints leave no pod signed) the default profile batches: a
    signed pod's cycle folds the kept scores into the totals and still names every plugin's raw scores, those of
    the plugin-by-plugin pass."""
    cfg = config(STRATEGIES[strategy], None, disabled=("PodTopologySpread",))
    sim = Simulation(copy.deepcopy(cluster), cfg, in_tree_registry(), seed)
    both_score_passes(sim)
    sim.run()


def test_signed_pods_cycles_name_raw_scores_folded() -> None:
    """The property above is not empty: on a fixed cluster, signed pods' cycles ask for raw scores and fold."""
    nodes = [node(f"n{i}", cpu=4000 + 1000 * (i % 3)) for i in range(8)]
    pods = [pod(f"p{i}", cpu=100 * (1 + i % 2)) for i in range(20)]
    cfg = config(STRATEGIES[0], None, disabled=("PodTopologySpread",))
    sim = Simulation(Cluster(nodes=nodes, pods=pods), cfg, in_tree_registry(), 1)
    seen = both_score_passes(sim)
    sim.run()
    assert seen["raw"] > 0 and seen["folded"] > 0


def test_a_cycle_folds_kept_and_uniform_scores() -> None:
    # soft taints on two nodes: TaintToleration scores them, so it is not one uniform value; on the other nodes
    # alone it scores 0 everywhere and counts as its normalised value (100 on every node)
    nodes = [node(f"n{i}", cpu=4000 + 1000 * (i % 3)) for i in range(8)]
    for nd in nodes[:2]:
        nd.taints.append(SOFT_TAINT)
    for kept, uniform in ((nodes, False), (nodes[2:], True)):
        pods = [pod(f"p{i}", cpu=100 * (1 + i % 2)) for i in range(20)]
        sim = Simulation(Cluster(nodes=kept, pods=pods), config(STRATEGIES[0], None), in_tree_registry(), 1)
        seen = both_score_passes(sim)
        sim.run()
        assert seen["folded"] > 0
        assert (seen["uniform"] > 0) == uniform


class NodeLocalOutOfRange:
    """A node-local score plugin (no NormalizeScore) that scores 150 on the nodes whose names start with "bad",
    10 on the others."""

    name = "NodeLocalOutOfRange"
    score_reads_pods = False

    def equivalence_key(self, pod: PodInfo) -> tuple[()]:
        return ()

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        return np.array([150 if snap.nodes[c].name.startswith("bad") else 10 for c in cols.tolist()], dtype=np.int64)


def _out_of_range_cycle(bad_cpu: int, incremental: bool, details: bool) -> tuple[str | None, Code, str]:
    prof = make_profile()
    prof.plugins.at("score").enabled.append(PluginRef("NodeLocalOutOfRange", 1))
    registry = {**in_tree_registry(), "NodeLocalOutOfRange": lambda args, handle: NodeLocalOutOfRange()}
    snap = Snapshot([node("a"), node("b"), node("bad", cpu=bad_cpu)])
    sched = Scheduler(make_config(prof), registry, Actions(), snap)
    sched.incremental, sched.score_details = incremental, details
    result = sched.schedule_one(make_pod_info(pod("p", cpu=1000)))
    return result.node, result.status.code, result.status.message


@pytest.mark.parametrize("bad_cpu", [500, 4000])
def test_a_kept_score_out_of_range_fails_only_where_the_full_pass_fails(bad_cpu: int) -> None:
    # 500: the node with the bad score cannot hold the pod, so no cycle sees its score; 4000: every cycle does
    full = _out_of_range_cycle(bad_cpu, False, True)
    assert _out_of_range_cycle(bad_cpu, True, False) == full
    assert _out_of_range_cycle(bad_cpu, True, True) == full
    if bad_cpu == 500:
        assert full[1] == Code.SUCCESS and full[0] in ("a", "b")
    else:
        assert full[1] == Code.ERROR and "NodeLocalOutOfRange" in full[2]


class PodCountScore:
    """A node-local score plugin (no NormalizeScore) that reads placed pods: 40 per pod on the node, so a node
    goes out of range with its third pod and comes back when pods leave. Its rows are brought up to date one
    changed node at a time."""

    name = "PodCountScore"

    def equivalence_key(self, pod: PodInfo) -> tuple[()]:
        return ()

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        out: IntArray = snap.pod_count[cols] * 40
        return out


def _pod_count_history(incremental: bool) -> list[tuple[str | None, Code, str]]:
    prof = make_profile()
    prof.plugins.at("score").enabled.append(PluginRef("PodCountScore", 1))
    registry = {**in_tree_registry(), "PodCountScore": lambda args, handle: PodCountScore()}
    snap = Snapshot([node(f"n{i}") for i in range(8)])  # enough nodes that one changed is caught up alone
    sched = Scheduler(make_config(prof), registry, Actions(), snap)
    sched.incremental, sched.score_details = incremental, not incremental
    out = []
    for i in range(8):
        info = make_pod_info(pod(f"p{i}", cpu=100), i)
        result = sched.schedule_one(info)
        out.append((result.node, result.status.code, result.status.message))
        if result.node is None and i % 2:  # a failed cycle: a pod leaves the fullest node, its score drops back
            fullest = int(np.argmax(snap.pod_count))
            snap.remove_pod(next(iter(snap.pods_on[fullest].values())))
    return out


def test_a_kept_score_changed_one_node_at_a_time_fails_where_the_full_pass_fails() -> None:
    full = _pod_count_history(False)
    assert any(code == Code.ERROR and "PodCountScore" in message for _, code, message in full)
    assert any(code == Code.SUCCESS for _, code, _ in full[3:])
    assert _pod_count_history(True) == full
