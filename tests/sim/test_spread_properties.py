"""Property: with only hard (DoNotSchedule) spread constraints, no placement the scheduler makes ever breaks
maxSkew. Random clusters (zones, nodes without a zone, full nodes) and groups of pods, each group spread on zone
and/or hostname, scheduled by kube-scheduler's default profile."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import node, pod
from packsched.api.manifests import Cluster
from packsched.api.objects import DO_NOT_SCHEDULE, LabelSelector, TopologySpreadConstraint
from packsched.config import default_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import RUNNING, Simulation

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


@st.composite
def spread_clusters(draw: st.DrawFn) -> Cluster:
    nodes = []
    for i in range(draw(st.integers(2, 9))):
        nd = node(f"n{i}", cpu=draw(st.integers(1000, 8000)), pods=draw(st.integers(1, 6)))
        zone = draw(st.sampled_from(["z0", "z1", "z2", None]))
        nd.labels = {HOST: nd.name} | ({ZONE: zone} if zone else {})
        nodes.append(nd)
    pods = []
    for g in range(draw(st.integers(1, 3))):
        keys = draw(st.sampled_from([(ZONE,), (HOST,), (ZONE, HOST)]))
        constraints = tuple(
            TopologySpreadConstraint(
                draw(st.integers(1, 3)),
                key,
                DO_NOT_SCHEDULE,
                LabelSelector((("app", f"g{g}"),)),
                min_domains=draw(st.sampled_from([None, None, 2, 4])),
            )
            for key in keys
        )
        for i in range(draw(st.integers(1, 12))):
            p = pod(f"g{g}-{i}", cpu=draw(st.sampled_from([100, 500, 1500])))
            p.labels = {"app": f"g{g}"}
            p.topology_spread_constraints = constraints
            pods.append(p)
    order = draw(st.permutations(pods))
    return Cluster(nodes=nodes, pods=list(order))


@settings(max_examples=60, deadline=None)
@given(spread_clusters(), st.integers(0, 2**16))
def test_hard_spread_constraints_are_never_broken(cluster: Cluster, seed: int) -> None:
    sim = Simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry(), seed)
    sim.run()
    placed = {r.pod.key: r.node for r in sim.history if r.phase == RUNNING}
    by_name = {n.name: n for n in cluster.nodes}
    groups = {p.labels["app"]: p.topology_spread_constraints for p in cluster.pods}
    for app, constraints in groups.items():
        # every constraint's key present, no node selector or taints: the eligible nodes
        eligible = [n for n in cluster.nodes if all(c.topology_key in n.labels for c in constraints)]
        for c in constraints:
            counts: Counter[str] = Counter({n.labels[c.topology_key]: 0 for n in eligible})
            for p in cluster.pods:
                where = placed.get(p.key)
                if p.labels["app"] == app and where is not None:
                    assert c.topology_key in by_name[where].labels, f"{p.key} on {where}, which lacks {c.topology_key}"
                    counts[by_name[where].labels[c.topology_key]] += 1
            if counts:
                low = min(counts.values()) if len(counts) >= (c.min_domains or 1) else 0
                assert max(counts.values()) - low <= c.max_skew, (app, c, dict(counts))
