"""A Simulation leaves the Cluster it is given as it was: it works on its own copies of the pods, so the same
Cluster object simulated twice gives the same history (it changed phases and nominations in place before, and the
second run then started from the first one's end)."""

from __future__ import annotations

import copy
from pathlib import Path

from packsched.api.manifests import load_manifests
from packsched.config.loader import load_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation, run_simulation

DEMO = Path(__file__).resolve().parents[2] / "examples" / "capacity-scheduling-demo"


def test_the_same_cluster_simulated_twice_gives_the_same_history() -> None:
    registry = in_tree_registry()
    config = load_config(str(DEMO / "config.yaml"), set(registry))
    cluster = load_manifests([str(DEMO / "cluster.yaml"), str(DEMO / "workloads.yaml")])
    before = copy.deepcopy(cluster.pods)

    first = run_simulation(cluster, config, registry, 0)
    assert any(e.kind == "preempted" for e in first.events), "the demo must preempt for this test to mean anything"
    assert cluster.pods == before  # phases, nominations, ... of the input untouched
    second = run_simulation(cluster, config, registry, 0)

    def history(result: object) -> list[tuple[str, str | None, str]]:
        return [(r.pod.key, r.node, r.phase) for r in result.records]  # type: ignore[attr-defined]

    assert history(second) == history(first)
    assert [(e.kind, e.pod) for e in second.events] == [(e.kind, e.pod) for e in first.events]


def test_the_simulation_pods_are_its_own() -> None:
    registry = in_tree_registry()
    config = load_config(str(DEMO / "config.yaml"), set(registry))
    cluster = load_manifests([str(DEMO / "cluster.yaml"), str(DEMO / "workloads.yaml")])
    sim = Simulation(cluster, config, registry, 0)
    assert [p.key for p in sim.cluster.pods] == [p.key for p in cluster.pods]
    assert all(a is not b for a, b in zip(sim.cluster.pods, cluster.pods, strict=True))
