"""The scheduling cycle: sampling, node order, host selection, messages, determinism."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import make_config, make_profile, node, pod
from packsched.api.manifests import Cluster
from packsched.api.objects import Node, Taint
from packsched.backend.queue import SchedulingQueue
from packsched.config.types import PluginRef, PluginSet, Profile
from packsched.framework.nodeorder import first_feasible
from packsched.framework.podinfo import make_pod_info
from packsched.framework.runtime import Framework, FrameworkError
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.framework.status import Status
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import (
    REGION_LABELS,
    ZONE_LABELS,
    CycleResult,
    Scheduler,
    num_feasible_nodes_to_find,
    zone_interleaved_order,
)
from packsched.sim.engine import Simulation


@pytest.mark.parametrize(
    ("percentage", "n", "expected"),
    [
        (None, 50, 50),  # small clusters: every node
        (0, 99, 99),
        (None, 100, 100),  # 49% of 100 is below the floor of 100 nodes
        (None, 1000, 420),  # adaptive: 50 - 1000/125 = 42%
        (None, 5000, 500),  # 50 - 40 = 10%
        (None, 6000, 300),  # 50 - 48 = 2% -> floor of 5%
        (30, 1000, 300),
        (1, 1000, 100),  # never fewer than 100
        (100, 5000, 5000),
    ],
)
def test_num_feasible_nodes_to_find(percentage: int | None, n: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, n) == expected


def test_zone_interleaved_order() -> None:
    nodes = [node(f"n{i}") for i in range(5)]
    for nd, zone in zip(nodes, ["a", "a", "a", "b", "b"], strict=True):
        nd.labels["topology.kubernetes.io/zone"] = zone
    assert zone_interleaved_order(Snapshot(nodes)).tolist() == [0, 3, 1, 4, 2]


def _zone_order_one_by_one(snap: Snapshot) -> list[int]:
    """The node tree's order node by node in Python, as kube-scheduler builds it."""
    zones: dict[str, list[int]] = {}
    for col, nd in enumerate(snap.nodes):
        region = next((nd.labels[k] for k in REGION_LABELS if k in nd.labels), "")
        zone = next((nd.labels[k] for k in ZONE_LABELS if k in nd.labels), "")
        zones.setdefault(f"{region}:\x00:{zone}" if region or zone else "", []).append(col)
    lists = list(zones.values())
    return [v[i] for i in range(max((len(v) for v in lists), default=0)) for v in lists if i < len(v)]


@settings(max_examples=150, deadline=None)
@given(
    labels=st.lists(
        st.dictionaries(st.sampled_from(REGION_LABELS + ZONE_LABELS), st.sampled_from(["", "a", "b", "c"])),
        max_size=30,
    ),
    changes=st.lists(st.tuples(st.integers(0, 29), st.dictionaries(st.sampled_from(ZONE_LABELS), st.just("d")))),
)
def test_the_zone_order_on_label_codes_is_the_node_trees(
    labels: list[dict[str, str]], changes: list[tuple[int, dict[str, str]]]
) -> None:
    """``zone_interleaved_order`` (numpy, on the snapshot's label codes) against the node tree built node by node:
    region and zone from either label (the first present one, even empty), zones in order of first appearance,
    round robin; also after nodes change their labels."""
    snap = Snapshot([Node(f"n{i}", dict(lab)) for i, lab in enumerate(labels)])
    assert zone_interleaved_order(snap).tolist() == _zone_order_one_by_one(snap)
    for col, lab in changes:
        if col < snap.n:
            snap.update_node(Node(snap.nodes[col].name, lab))
    assert zone_interleaved_order(snap).tolist() == _zone_order_one_by_one(snap)


def test_first_failing_plugin_owns_the_node_and_message_format() -> None:
    nodes = [node("a", cpu=1000), node("b", cpu=1000), node("c", cpu=1000)]
    nodes[1].taints = [Taint("k", "v", "NoSchedule")]
    nodes[2].taints = [Taint("k", "v", "NoSchedule")]
    sim = Simulation(Cluster(nodes=nodes, pods=[pod("big", cpu=2000)]), make_config(), in_tree_registry())
    rec = sim.run().records[0]
    assert rec.phase == "Pending"
    # tainted nodes are rejected by TaintToleration (before NodeResourcesFit), so they do not count as cpu
    assert rec.reason == "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s)."


def test_same_seed_same_placements_and_ties_use_the_seed() -> None:
    def run(seed: int) -> list[str | None]:
        nodes = [node(f"n{i}") for i in range(20)]
        pods = [pod(f"p{i}", cpu=100) for i in range(20)]
        result = Simulation(Cluster(nodes=nodes, pods=pods), make_config(), in_tree_registry(), seed=seed).run()
        return [r.node for r in result.records]

    assert run(1) == run(1)
    assert len({tuple(run(s)) for s in range(5)}) > 1  # equal nodes: the tie-break depends on the seed


def test_rotating_window_with_percentage_of_nodes_to_score() -> None:
    """With sampling, kube-scheduler scores only part of the feasible nodes, starting where the last cycle
    stopped: identical pods land on nodes spread across the window (kubernetes#95709). Opportunistic batching
    off: its hints keep such pods in the first window (tests/test_batching.py)."""
    nodes = [node(f"n{i:03d}", cpu=64000) for i in range(300)]
    pods = [pod(f"p{i}", cpu=1000) for i in range(3)]
    config = make_config(percentage=34)
    config.kube_version = config.kube_version.with_gates({"OpportunisticBatching": False})
    sim = Simulation(Cluster(nodes=nodes, pods=pods), config, in_tree_registry())
    cols: list[int] = []
    sim.scheduler.schedule_one  # noqa: B018 - the attribute exists
    result = sim.run()
    for rec in result.records:
        assert rec.node is not None
        cols.append(int(rec.node[1:]))
    # each cycle looks at 102 nodes starting where the previous one stopped
    assert sim.scheduler.next_start_node_index == (3 * 102) % 300
    assert cols[0] < 102 <= cols[1] < 204 <= cols[2]


@settings(max_examples=8, deadline=None)
@given(
    st.integers(100, 160),
    st.sampled_from([None, 5, 30, 100]),
    st.lists(st.sampled_from([100, 1500, 3000]), min_size=10, max_size=40),
    st.integers(0, 2**16),
    st.integers(0, 200),
)
def test_the_node_order_of_a_cluster_without_zones_is_rotated_as_any_order(
    n: int, percentage: int | None, cpus: list[int], seed: int, start: int
) -> None:
    """Without zones the node order is the columns' own (the fast path), and the cycle rotates it by slicing instead of
    gathering through the order: the same nodes in the same order (every decision the same, random ties too),
    from any start (with every node scored the start stays where another profile or a smaller cluster left it)."""

    def run(by_slicing: bool) -> tuple[list[str | None], int]:
        nodes = [node(f"n{i:03d}", cpu=4000 if i % 3 else 2000) for i in range(n)]
        pods = [pod(f"p{i}", cpu=c) for i, c in enumerate(cpus)]
        sim = Simulation(Cluster(nodes=nodes, pods=pods), make_config(percentage=percentage), in_tree_registry(), seed)
        sched = sim.scheduler
        plain = sched.node_order
        plain()
        assert sched._order_is_columns
        sched.next_start_node_index = start

        def order() -> IntArray:
            out = plain()
            sched._order_is_columns = by_slicing
            return out

        sched.node_order = order  # type: ignore[method-assign]
        result = sim.run()
        return [r.node for r in result.records], sched.next_start_node_index

    assert run(True) == run(False)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 5000),
    st.floats(0.0, 1.0),
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.integers(1, 3000),
    st.booleans(),
    st.sampled_from([None, 0.0, 0.3, 0.9, 1.0]),
)
def test_first_feasible_reads_the_rotated_order_as_a_full_pass_would(
    n: int, density: float, seed: int, start: int, k: int, by_columns: bool, passing: float | None
) -> None:
    """The stretch-by-stretch search for the first k feasible nodes gives the nodes, in the order, and the count
    of nodes looked at that reading the whole rotated order at once gives (stretches start at 1,024 places and
    double, so large clusters cross several)."""
    rng = np.random.default_rng(seed)
    alive = rng.random(n) < density
    order = np.arange(n, dtype=np.intp) if by_columns else rng.permutation(n).astype(np.intp)
    start %= n
    k = min(k, n - 1) if n > 1 else 1
    if k >= n:
        return
    # ``check``: the filters that are not kept per class, asked only of nodes ``alive`` passes, each once
    extra = rng.random(n) < passing if passing is not None else np.ones(n, dtype=bool)
    asked: list[int] = []

    def check(cols: IntArray) -> BoolArray:
        assert alive[cols].all()
        asked.extend(cols.tolist())
        return extra[cols]

    rotated = np.concatenate([order[start:], order[:start]])
    hits = np.flatnonzero((alive & extra)[rotated])
    want = (rotated[hits[:k]], int(hits[k - 1]) + 1) if len(hits) >= k else (rotated[hits], n)
    found, processed = first_feasible(
        alive, None if by_columns else order, start, k, check if passing is not None else None
    )
    assert found.tolist() == want[0].tolist()
    assert processed == want[1]
    assert len(asked) == len(set(asked))
    if passing is not None and len(hits) >= k:  # stopped early: nothing asked past the k-th one's stretch, which
        # is at most as long as everything read before it (fewer places than were looked at) plus the first one
        assert len(asked) <= 2 * processed + max(k + k // 4 + 16, 64)


def test_backoff_durations_double_up_to_the_max() -> None:
    q = SchedulingQueue(lambda p: (0,), 1.0, 10.0)
    assert [q.backoff_duration(a) for a in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_multipoint_expansion_order_and_overrides() -> None:
    prof = make_profile()
    prof.plugins.multi_point = PluginSet([PluginRef("TaintToleration", 3), PluginRef("NodeName")])
    prof.plugins.at("filter").enabled = [PluginRef("NodeResourcesFit"), PluginRef("NodeName")]
    prof.plugins.at("score").enabled = [PluginRef("NodeResourcesFit", 2)]
    fwk = Framework(prof, in_tree_registry(), _handle())
    # NodeName is named at filter too (an override, first), then the multiPoint ones, then the rest
    assert fwk.plugin_names("filter") == ["NodeName", "TaintToleration", "NodeResourcesFit"]
    assert fwk.weights() == {"TaintToleration": 3, "NodeResourcesFit": 2}
    prof.plugins.at("filter").disabled = [PluginRef("*")]
    fwk = Framework(prof, in_tree_registry(), _handle())
    assert fwk.plugin_names("filter") == ["NodeResourcesFit", "NodeName"]


def test_unknown_plugin_and_wrong_extension_point_are_errors() -> None:
    prof = make_profile()
    prof.plugins.at("filter").enabled.append(PluginRef("NoSuchPlugin"))
    with pytest.raises(FrameworkError, match="NoSuchPlugin"):
        Framework(prof, in_tree_registry(), _handle())
    prof = make_profile()
    prof.plugins.at("filter").enabled.append(PluginRef("PrioritySort"))
    with pytest.raises(FrameworkError, match="does not extend filter plugin"):
        Framework(prof, in_tree_registry(), _handle())


def test_no_score_plugins_means_every_node_scores_one() -> None:
    prof = make_profile(score={})
    sim = Simulation(
        Cluster(nodes=[node("a"), node("b")], pods=[pod("p")]),
        make_config(prof),
        in_tree_registry(),
        capture={"default/p"},
    )
    result = sim.run()
    cycle = result.captured["default/p"][-1]
    assert cycle.scores is not None and cycle.scores.totals.tolist() == [1, 1]


def test_empty_profile_list_is_rejected_by_framework_build() -> None:
    prof = Profile()
    with pytest.raises(FrameworkError):
        Framework(prof, in_tree_registry(), _handle())


def _handle() -> Simulation:
    sim = Simulation(Cluster(nodes=[node("x")]), make_config(), in_tree_registry())
    return sim.scheduler  # type: ignore[return-value]


def test_overflowing_amounts_score_exactly() -> None:
    huge = 2**62
    nodes = [node("a", memory=huge), node("b", memory=huge)]
    sim = Simulation(
        Cluster(nodes=nodes, pods=[pod("p", memory=huge // 2)]),
        make_config(),
        in_tree_registry(),
        capture={"default/p"},
    )
    result = sim.run()
    assert result.records[0].phase == "Running"
    assert sim.snapshot.big
    cycle = result.captured["default/p"][-1]
    assert cycle.scores is not None
    # LeastAllocated: cpu (4000 - 100) * 100 // 4000 = 97; memory (2**62 - 2**61) * 100 // 2**62 = 50, whose
    # product overflows int64; (97 + 50) // 2 = 73 on both nodes.
    assert cycle.scores.per_plugin["NodeResourcesFit"].tolist() == [73, 73]


# -- the loop the simulator and the live adapter share ----------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _scheduler(nodes: list[str], cleared: list[str] | None = None) -> tuple[Scheduler, _Clock]:
    from tests_support import Actions

    clock = _Clock()
    snap = Snapshot([node(n, cpu=1000) for n in nodes])
    sched = Scheduler(
        make_config(),
        in_tree_registry(),
        Actions(),
        snap,
        clock=clock,
        on_clear_nomination=None if cleared is None else (lambda info: cleared.append(info.key)),
    )
    return sched, clock


def test_enqueue_honours_the_nomination_the_pod_carries_and_the_pre_enqueue_gate() -> None:
    sched, _ = _scheduler(["a", "b"])
    nominated = make_pod_info(pod("n", cpu=100))
    nominated.pod.nominated_node_name = "b"
    assert sched.enqueue(nominated).ok
    assert sched.nominator.node_of("default/n") == 1
    gated = make_pod_info(pod("g"))
    gated.pod.scheduling_gates = ["example.com/wait"]
    assert not sched.enqueue(gated).ok and "default/g" in sched.queue.gated
    qp = sched.next_pod()
    assert qp is not None and qp.info is nominated and sched.next_pod() is None
    result = sched.schedule_one(qp.info)
    assert result.node == "b" and sched.nominator.node_of("default/n") is None
    assert sched.cache.node_of("default/n") == "b" and sched.cache.is_assumed("default/n")


def test_handle_failure_parks_unschedulable_pods_and_backs_errors_off() -> None:
    sched, clock = _scheduler(["a"])
    big = make_pod_info(pod("big", cpu=2000))
    sched.enqueue(big)
    qp = sched.next_pod()
    assert qp is not None
    result = sched.schedule_one(big)
    assert not result.scheduled
    result.nominated_node = "a"  # as preemption would say
    sched.handle_failure(qp, result)
    assert "default/big" in sched.queue.unschedulable and big.pod.nominated_node_name == "a"
    assert sched.nominator.node_of("default/big") == 0
    sched.move_all()
    # backoff: 0 s + 1 s = 1.0 s, window 1 s, flushed at 2 s; at 1 s the active queue is empty, so Pop takes the
    # backoff queue's head (SchedulerPopFromBackoffQ)
    clock.now += 1.0
    qp = sched.next_pod()
    assert qp is not None and qp.info is big
    failed = CycleResult(big, "default-scheduler", status=Status.error("boom"), nominated_node="")
    sched.handle_failure(qp, failed)
    assert "default/big" not in sched.queue.unschedulable and "default/big" in sched.queue  # backoff, at once
    assert sched.nominator.node_of("default/big") is None and big.pod.nominated_node_name == ""
    assert sched.next_pod() is None  # an error's backoff heap is never popped early
    # second attempt: 1 s + 2 s = 3.0 s, window 3 s, still backing off at 3 s, flushed at the 4 s tick
    clock.now += 2.0
    assert sched.next_pod() is None
    clock.now += 1.0
    qp = sched.next_pod()
    assert qp is not None
    sched.handle_failure(qp, failed, requeue=False)
    assert "default/big" not in sched.queue


def test_a_cluster_change_during_the_attempt_sends_the_pod_to_backoff_not_to_wait() -> None:
    sched, clock = _scheduler(["a"])
    big = make_pod_info(pod("big", cpu=2000))
    sched.enqueue(big)
    qp = sched.next_pod()
    assert qp is not None
    result = sched.schedule_one(big)
    sched.move_all()  # e.g. its victims left while it was being tried
    sched.handle_failure(qp, result)
    assert "default/big" not in sched.queue.unschedulable and "default/big" in sched.queue
    clock.now += 1.0
    assert sched.next_pod() is not None


def test_clear_nomination_tells_the_cluster_only_when_there_was_one() -> None:
    cleared: list[str] = []
    sched, _ = _scheduler(["a"], cleared)
    p = make_pod_info(pod("p"))
    p.pod.nominated_node_name = "a"
    sched.enqueue(p)
    sched.clear_nomination(p)
    assert sched.nominator.node_of("default/p") is None and p.pod.nominated_node_name == "" and cleared == ["default/p"]
    sched.clear_nomination(p)
    assert cleared == ["default/p"]


def test_node_removed_moves_nominations_to_their_nodes_new_columns() -> None:
    sched, _ = _scheduler(["a", "b", "c"])
    on_c = make_pod_info(pod("on-c"))
    on_c.pod.nominated_node_name = "c"
    on_a = make_pod_info(pod("on-a"))
    on_a.pod.nominated_node_name = "a"
    sched.enqueue(on_c)
    sched.enqueue(on_a)
    assert sched.node_removed("a") is sched.snapshot
    assert sched.snapshot is sched.cache.snapshot and [n.name for n in sched.snapshot.nodes] == ["b", "c"]
    assert sched.nominator.node_of("default/on-c") == 1 and sched.nominator.node_of("default/on-a") is None
    assert sched.node_removed("gone") is sched.snapshot  # an unknown node: nothing changes
