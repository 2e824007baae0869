"""The golden example (examples/anti-affinity-statefulset) and a property: with only required terms, no placement
the simulator makes ever breaks a required affinity or anti-affinity (of the pod placed, or of a pod already
there)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from helpers import node
from packsched.api.manifests import Cluster
from packsched.api.objects import Container, LabelSelector, Pod, PodAffinity, PodAffinityTerm
from packsched.cli.main import app
from packsched.config.loader import default_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import run_simulation

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "anti-affinity-statefulset" / "cluster.yaml"
ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"


def test_anti_affinity_statefulset_example() -> None:
    result = CliRunner().invoke(app, ["simulate", str(EXAMPLE), "-o", "json"])
    assert result.exit_code == 0, result.output
    placed = {p["pod"]: (p["phase"], p["node"], p["reason"]) for p in json.loads(result.stdout)["placements"]}
    nodes = [placed[f"default/db-{i}"][1] for i in range(6)]
    assert all(placed[f"default/db-{i}"][0] == "Running" for i in range(6))
    assert sorted(nodes) == ["a1", "a2", "b1", "b2", "c1", "c2"]  # one replica per node
    assert len({n[0] for n in nodes[:3]}) == 3  # the first three in three zones
    assert placed["default/db-6"] == (
        "Pending",
        None,
        "0/6 nodes are available: 6 node(s) didn't match pod anti-affinity rules. "
        "preemption: 0/6 nodes are available: 6 No preemption victims found for incoming pod.",
    )


APPS = ("a", "b", "c")


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    nodes = []
    for i in range(draw(st.integers(1, 6))):
        n = node(f"n{i}", cpu=4000)
        if draw(st.integers(0, 4)):  # now and then a node without a zone
            n.labels[ZONE] = f"z{draw(st.integers(0, 2))}"
        nodes.append(n)
    pods = []
    for i in range(draw(st.integers(1, 14))):
        terms = {}
        for kind in ("aff", "anti"):
            if draw(st.integers(0, 2)) == 0:
                sel = LabelSelector((("app", draw(st.sampled_from(APPS))),))
                terms[kind] = PodAffinity(required=(PodAffinityTerm(draw(st.sampled_from([ZONE, HOST])), sel),))
        pods.append(
            Pod(
                f"p{i}",
                labels={"app": draw(st.sampled_from(APPS))},
                containers=[Container("c", {"cpu": 100})],
                pod_affinity=terms.get("aff"),
                pod_anti_affinity=terms.get("anti"),
                priority_set=True,
            )
        )
    return Cluster(nodes=nodes, pods=pods)


def _domain(labels_of: dict[str, dict[str, str]], node_name: str, key: str) -> str | None:
    return labels_of[node_name].get(key)


@settings(max_examples=60, deadline=None)
@given(clusters())
def test_required_terms_are_never_broken(cluster: Cluster) -> None:
    result = run_simulation(cluster, default_config(in_tree_registry()), in_tree_registry(), seed=3)
    labels_of = {n.name: n.labels for n in cluster.nodes}
    running = [(r.pod, r.node) for r in result.records if r.phase == "Running" and r.node is not None]
    for pod, where in running:
        for term in pod.pod_anti_affinity.required if pod.pod_anti_affinity else ():
            mine = _domain(labels_of, where, term.topology_key)
            if mine is None:
                continue
            assert term.label_selector is not None
            clash = [
                q.name
                for q, there in running
                if q is not pod
                and _domain(labels_of, there, term.topology_key) == mine
                and term.label_selector.matches(q.labels)
            ]
            assert clash == [], f"{pod.name} on {where} shares {term.topology_key}={mine} with {clash}"
        for term in pod.pod_affinity.required if pod.pod_affinity else ():
            mine = _domain(labels_of, where, term.topology_key)
            assert mine is not None, f"{pod.name} on {where} lacks {term.topology_key}"
            assert term.label_selector is not None
            assert any(
                _domain(labels_of, there, term.topology_key) == mine and term.label_selector.matches(q.labels)
                for q, there in running
            ), f"{pod.name} on {where}: no pod matching its affinity in {mine}"
