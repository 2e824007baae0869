"""``explain`` runs the same simulation with one pod's cycle captured: the pod's placement, and every later one, must
be what ``simulate`` gives for the same seed (issue 24: explain scored every feasible node in column order, so it
broke ties among the top-scored nodes otherwise than the cycle it explained)."""

from __future__ import annotations

import pytest

from helpers import make_config, node, pod
from packsched.api.manifests import Cluster
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import run_simulation

NODES = 150  # over 100: percentageOfNodesToScore's adaptive sample leaves feasible nodes unscored


def _cluster() -> Cluster:
    return Cluster(
        nodes=[node(f"n{i:03d}") for i in range(NODES)],
        pods=[pod(f"p{i:02d}", cpu=500, memory=256 * 2**20) for i in range(40)],
    )


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("captured", ["default/p00", "default/p05", "default/p17"])
@pytest.mark.parametrize("batching", [False, True])
def test_explain_places_every_pod_where_simulate_does(seed: int, captured: str, batching: bool) -> None:
    """The profile signs pods (no PodTopologySpread): with opportunistic batching on (1.37's default), the equal
    pods after the first take the batch's hint; with it off, every cycle scores its sample."""
    config = make_config()
    config.kube_version = config.kube_version.with_gates({"OpportunisticBatching": batching})
    plain = run_simulation(_cluster(), config, in_tree_registry(), seed)
    explained = run_simulation(_cluster(), config, in_tree_registry(), seed, capture={captured})
    assert [(r.pod.key, r.node) for r in explained.records] == [(r.pod.key, r.node) for r in plain.records]
    (cycle,) = explained.captured[captured]
    assert cycle.node == next(r.node for r in plain.records if r.pod.key == captured)
    assert cycle.used_batch_hint == (batching and captured != "default/p00")
    if cycle.used_batch_hint:
        # the hinted node was taken without scoring: every feasible node is shown with explain's own scores
        assert cycle.sampled is not None and cycle.sampled.tolist() == [explained.snapshot.index[cycle.node]]
        assert cycle.scores is None
        assert cycle.unsampled_scores is not None and len(cycle.unsampled_scores.cols) == NODES
        assert cycle.top_nodes(explained.snapshot) == [cycle.node]
        return
    # the nodes past the sample are shown with scores of their own, never chosen from
    assert cycle.sampled is not None and len(cycle.sampled) < NODES
    assert cycle.unsampled_scores is not None and len(cycle.unsampled_scores.cols) == NODES - len(cycle.sampled)
    assert cycle.node in cycle.top_nodes(explained.snapshot)
