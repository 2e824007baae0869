"""Score plugins that score 0 on every node in a cycle where their PreFilter skipped
(``scores_zero_if_pre_filter_skips``: VolumeBinding, DynamicResources for a pod without claims) are not called in
such a cycle (``Framework.run_score``). Checked against the slow path on clusters with and without claims: in
every Score of a simulation, each such plugin, called all the same, scores 0 on every node, and the totals (and
the scores named) are those of a pass that calls every plugin."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import node, pod
from packsched.api.manifests import Cluster, load_manifests
from packsched.api.objects import NO_SCHEDULE, Taint, Toleration
from packsched.config.loader import default_config
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import PodInfo
from packsched.framework.runtime import Framework, ScoreResult
from packsched.framework.snapshot import IntArray
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation

EX = Path(__file__).resolve().parents[2] / "examples"
GPU = "nvidia.com/gpu"


def check_every_score(sim: Simulation) -> dict[str, int]:
    """Make every Score of ``sim``'s default profile run twice: as the simulator runs it, then with the shortcut
    off and every plugin named. Counts the plugin cycles taken as zeros (``zero``) and the cycles where such a
    plugin was called (``called``)."""
    fwk = sim.scheduler.frameworks["default-scheduler"]
    plain = Framework.run_score
    names = {s.plugin.name for s in fwk.scores if getattr(s.plugin, "scores_zero_if_pre_filter_skips", False)}
    assert names == {"VolumeBinding", "DynamicResources"}
    seen = {"zero": 0, "called": 0}

    def checked(
        state: CycleState, p: PodInfo, cols: IntArray, *, details: bool = True, raw: bool = False
    ) -> ScoreResult:
        fast = plain(fwk, state, p, cols, details=details, raw=raw)
        snap = fwk.handle.snapshot
        for entry in fwk.scores:
            name = entry.plugin.name
            if name not in names or name in state.skip_score:
                continue
            if name in state.skip_filter:  # the shortcut's promise: called, it scores 0 everywhere
                assert not np.asarray(entry.plugin.score(state, p, snap, cols)).any(), name
                seen["zero"] += 1
            else:
                seen["called"] += 1
        shortcut = fwk._zero_if_skipped
        fwk._zero_if_skipped = frozenset()
        try:
            full = plain(fwk, state, p, cols, details=True)
        finally:
            fwk._zero_if_skipped = shortcut
        assert fast.totals.tolist() == full.totals.tolist()
        assert fast.weights == full.weights
        for name, scores in fast.per_plugin.items():
            assert scores.tolist() == full.per_plugin[name].tolist()
        if details:
            assert set(fast.per_plugin) == set(full.per_plugin)
            assert {k: v.tolist() for k, v in fast.raw.items()} == {k: v.tolist() for k, v in full.raw.items()}
        return fast

    fwk.run_score = checked  # type: ignore[method-assign]
    return seen


def simulate(cluster: Cluster, seed: int, details: bool) -> dict[str, int]:
    sim = Simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry(), seed)
    sim.scheduler.score_details = details
    seen = check_every_score(sim)
    sim.run()
    return seen


def test_claims_and_no_claims_score_as_the_plugins_do() -> None:
    # zonal-pv: pods with and without claims (VolumeBinding); dra-gpus: with and without resource claims
    for example in (EX / "zonal-pv" / "cluster.yaml", EX / "dra-gpus"):
        for details in (False, True):
            seen = simulate(load_manifests([str(example)]), 0, details)
            assert seen["zero"] > 0 and seen["called"] > 0, (example, seen)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([100, 500, 2000]), st.booleans()), min_size=2, max_size=12), st.booleans())
def test_plain_pods_score_as_the_plugins_do(shapes: list[tuple[int, bool]], details: bool) -> None:
    nodes = [node(f"n{i}", cpu=4000, extra={GPU: 4} if i % 2 else None) for i in range(6)]
    for nd in nodes[1::2]:
        nd.taints.append(Taint(GPU, "present", NO_SCHEDULE))
    pods = []
    for i, (cpu, gpu) in enumerate(shapes):
        p = pod(f"p{i}", cpu=cpu, extra={GPU: 1} if gpu else None)
        if gpu:
            p.tolerations = [Toleration(GPU, "Exists", "", NO_SCHEDULE)]
        pods.append(p)
    seen = simulate(copy.deepcopy(Cluster(nodes=nodes, pods=pods)), 1, details)
    assert seen["called"] == 0
