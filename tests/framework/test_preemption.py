"""The preemption evaluator: its batched dry run (many nodes judged by one filter call per reprieve step) agrees
with the node-by-node dry run (each node alone with its own cycle state, as upstream) on random clusters, for
DefaultPreemption and for CapacityScheduling; and the copy-on-write quota snapshots the dry run relies on."""

from __future__ import annotations

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from helpers import capacity_config, make_config, make_profile, node
from packsched.api.manifests import Cluster
from packsched.api.objects import Container, ElasticQuota, LabelSelector, Pod, PodDisruptionBudget
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis, RejectGroup
from packsched.framework.podinfo import make_pod_info
from packsched.framework.preemption import DryRunResult, Evaluator, potential_nodes
from packsched.framework.status import Code
from packsched.plugins.capacityscheduling.capacity_scheduling import CapacityScheduling
from packsched.plugins.capacityscheduling.elastic_quota import QuotaInfo, QuotaInfos
from packsched.plugins.defaultpreemption.default_preemption import DefaultPreemption
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation

NAMESPACES = ("a", "b", "c", "free")  # "free" has no quota


@st.composite
def clusters(draw: st.DrawFn, with_quotas: bool) -> Cluster:
    n_nodes = draw(st.integers(1, 7))
    nodes = [
        node(f"n{i}", cpu=draw(st.sampled_from([1000, 2000, 4000])), pods=draw(st.integers(1, 8)))
        for i in range(n_nodes)
    ]
    quotas = []
    if with_quotas:
        for ns in NAMESPACES[:3]:
            if draw(st.booleans()) or ns == "a":
                lo = draw(st.integers(0, 12)) * 500
                quotas.append(ElasticQuota(ns, ns, {"cpu": lo}, {"cpu": lo + draw(st.integers(0, 8)) * 500}))
    pods = []
    for i in range(draw(st.integers(0, 24 if with_quotas else 30))):
        ns = draw(st.sampled_from(NAMESPACES)) if with_quotas else "default"
        p = Pod(
            f"p{i}",
            ns,
            uid=f"{ns}-p{i}",
            labels={"app": draw(st.sampled_from(["x", "y"]))},
            containers=[Container("c", {"cpu": draw(st.sampled_from([0, 250, 500, 1000]))})],
            priority=draw(st.sampled_from([-10, 0, 100, 1000])),
        )
        p.node_name = f"n{draw(st.integers(0, n_nodes - 1))}"
        pods.append(p)
    pdbs = [
        PodDisruptionBudget("pdb-x", ns, LabelSelector((("app", "x"),)), min_available=draw(st.integers(0, 3)))
        for ns in ({"default"} if not with_quotas else set(NAMESPACES))
    ]
    return Cluster(nodes=nodes, pods=pods, elastic_quotas=quotas, pdbs=pdbs)


def summary(found: DryRunResult) -> tuple[object, ...]:
    return (
        [(c.name, [v.key for v in c.victims], c.num_pdb_violations) for c in found.candidates],
        {col: (st.code, st.reasons) for col, st in found.statuses.items()},
        found.errors,
    )


def compare_dry_runs(sim: Simulation, evaluator: Evaluator, preemptors: list[Pod], offset_seed: int) -> int:
    """Both dry runs for each preemptor; returns how many found candidates (to see the test is not vacuous)."""
    fwk = sim.scheduler.frameworks["default-scheduler"]
    snap = sim.snapshot
    pdbs = list(sim.scheduler.pdbs())
    before = (snap.requested.copy(), snap.pod_count.copy(), [list(d) for d in snap.pods_on])
    rng = np.random.default_rng(offset_seed)
    with_candidates = 0
    for preemptor in preemptors:
        info = make_pod_info(preemptor)
        state = CycleState()
        st_pre = fwk.run_pre_filter(state, info)
        if st_pre.ok:
            alive, groups = fwk.run_filters_with_nominated(state, info, slice(None))
            diag = Diagnosis(snap.n, alive, groups)
        else:
            diag = Diagnosis.all_rejected(snap.n, st_pre)
        potential = potential_nodes(diag) if rng.random() < 0.5 else np.arange(snap.n, dtype=np.int64)
        if len(potential) == 0:
            continue
        offset = int(rng.integers(len(potential)))
        num = int(rng.integers(1, len(potential) + 1))
        one = evaluator.dry_run(fwk, state, info, potential, pdbs, offset, num, batched=False)
        many = evaluator.dry_run(fwk, state, info, potential, pdbs, offset, num, batched=True)
        assert summary(one) == summary(many)
        with_candidates += bool(one.candidates)
        # the snapshot is exactly as it was, pod order on every node included
        assert np.array_equal(snap.requested, before[0]) and np.array_equal(snap.pod_count, before[1])
        assert [list(d) for d in snap.pods_on] == before[2]
    return with_candidates


def preemptors(draw: st.DrawFn, namespaces: tuple[str, ...]) -> list[Pod]:
    return [
        Pod(
            f"x{i}",
            draw(st.sampled_from(namespaces)),
            uid=f"x{i}",
            containers=[Container("c", {"cpu": draw(st.sampled_from([250, 500, 1000, 2000]))})],
            priority=draw(st.sampled_from([0, 100, 1000, 5000])),
        )
        for i in range(4)
    ]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_default_preemption_batched_equals_node_by_node(data: st.DataObject) -> None:
    cluster = data.draw(clusters(with_quotas=False))
    config = make_config(make_profile(post_filter=["DefaultPreemption"]))
    sim = Simulation(cluster, config, in_tree_registry())
    plugin = sim.scheduler.frameworks["default-scheduler"].plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    found = compare_dry_runs(sim, plugin.evaluator, preemptors(data.draw, ("default",)), data.draw(st.integers(0, 99)))
    event(f"preemptors with candidates: {found}")


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_capacity_scheduling_batched_equals_node_by_node(data: st.DataObject) -> None:
    cluster = data.draw(clusters(with_quotas=True))
    sim = Simulation(cluster, capacity_config(), in_tree_registry())
    plugin = sim.scheduler.frameworks["default-scheduler"].plugins["CapacityScheduling"]
    assert isinstance(plugin, CapacityScheduling)
    found = compare_dry_runs(sim, plugin.evaluator, preemptors(data.draw, NAMESPACES), data.draw(st.integers(0, 99)))
    event(f"preemptors with candidates: {found}")


def test_the_dry_runs_find_candidates_in_most_examples() -> None:
    """A guard against a vacuous comparison: on a fixed crowded cluster both dry runs find candidates."""
    pods = []
    for i in range(4):  # b (min 0) fills both nodes; a is within its min and reclaims
        p = Pod(f"p{i}", "b", uid=f"p{i}", containers=[Container("c", {"cpu": 1000})], priority=0)
        p.node_name = f"n{i % 2}"
        pods.append(p)
    quotas = [ElasticQuota("a", "a", {"cpu": 6000}, {"cpu": 12000}), ElasticQuota("b", "b", {"cpu": 0}, {"cpu": 12000})]
    sim = Simulation(
        Cluster(nodes=[node(f"n{i}", cpu=2000) for i in range(2)], pods=pods, elastic_quotas=quotas),
        capacity_config(),
        in_tree_registry(),
    )
    plugin = sim.scheduler.frameworks["default-scheduler"].plugins["CapacityScheduling"]
    assert isinstance(plugin, CapacityScheduling)
    x = [Pod("x", "a", uid="x", containers=[Container("c", {"cpu": 2000})], priority=0)]
    assert compare_dry_runs(sim, plugin.evaluator, x, 0) == 1


# -- copy-on-write quota snapshots ----------------------------------------------------------------------------


def quota_infos() -> QuotaInfos:
    a = QuotaInfo("a", {"cpu": 1000}, {"cpu": 4000}, {"cpu": 1500}, {"a1", "a2"})
    b = QuotaInfo("b", {"cpu": 2000}, {"cpu": 2000}, {"cpu": 500}, {"b1"})
    return QuotaInfos({"a": a, "b": b})


def test_clone_is_copy_on_write_and_keeps_sums() -> None:
    base = quota_infos()
    clone = base.clone()
    assert clone["a"] is base["a"]  # shared until written
    clone.uncount("a", "a1", {"cpu": 1000})
    assert clone["a"] is not base["a"]
    assert (base["a"].used, clone["a"].used) == ({"cpu": 1500}, {"cpu": 500})
    assert base["a"].tracks("a1") and not clone["a"].tracks("a1")
    assert clone.sums() == ({"cpu": 1000}, {"cpu": 3000})
    assert base.sums() == ({"cpu": 2000}, {"cpu": 3000})
    # counting a pod the record already counts, or a namespace without a record, changes nothing
    clone.count("a", "a2", {"cpu": 9999})
    clone.count("zzz", "z", {"cpu": 9999})
    assert clone.sums() == ({"cpu": 1000}, {"cpu": 3000})
    # the original, written after the clone, copies its record too: the clone does not see the change
    base.count("b", "b2", {"cpu": 700})
    assert (base["b"].used, clone["b"].used) == ({"cpu": 1200}, {"cpu": 500})
    # a clone of a clone
    again = clone.clone()
    again.count("a", "a1", {"cpu": 1000})
    assert (clone["a"].used, again["a"].used) == ({"cpu": 500}, {"cpu": 1500})
    # the kept sums equal sums recomputed from the records
    for q in (base, clone, again):
        fresh = QuotaInfos(q)
        assert fresh.sums() == q.sums()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_potential_nodes_are_the_nodes_whose_status_is_unschedulable(data: st.DataObject) -> None:
    """NodesForStatusCode(Unschedulable) over random diagnoses (groups of every code, nodes rejected without a
    group): both ways of computing it (all groups Unschedulable, or some other code) agree with each node's
    status."""
    n = data.draw(st.integers(1, 12))
    feasible = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    codes = st.sampled_from([Code.UNSCHEDULABLE] * 3 + [Code.ERROR, Code.UNSCHEDULABLE_AND_UNRESOLVABLE])
    groups = []
    for i in range(data.draw(st.integers(0, 4))):
        mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool) & ~feasible
        groups.append(RejectGroup(f"P{i}", mask, f"reason {i}", data.draw(codes)))
    diag = Diagnosis(n, feasible, groups)
    want = [col for col in range(n) if diag.node_status(col).code == Code.UNSCHEDULABLE]
    assert potential_nodes(diag).tolist() == want
