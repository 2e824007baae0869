"""The profile runtime: plugins built from the registry, run per extension point."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import make_config, make_profile, node, pod
from packsched.config.types import PluginRef
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.framework.status import Code
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import Scheduler
from tests_support import Actions


class OutOfRangeScore:
    """A score plugin that answers ``value`` for every node but the first, which scores 50 (the most a node may
    score is 100, the least 0)."""

    name = "OutOfRange"

    def __init__(self, value: int) -> None:
        self.value = value

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        out = np.full(len(cols), self.value, dtype=np.int64)
        out[0] = 50
        return out


@pytest.mark.parametrize("value", [101, -1, -(2**62)])
def test_an_out_of_range_score_fails_the_cycle_with_an_error_status(value: int) -> None:
    """Upstream RunScorePlugins: a score outside [0, 100] after normalizing is an error status for the pod
    (schedule_one reports it; it does not raise)."""
    prof = make_profile(score={})
    prof.plugins.at("score").enabled = [PluginRef("OutOfRange", 1)]
    registry = {**in_tree_registry(), "OutOfRange": lambda args, handle: OutOfRangeScore(value)}
    snap = Snapshot([node("a"), node("b")])
    sched = Scheduler(make_config(prof), registry, Actions(), snap)
    result = sched.schedule_one(make_pod_info(pod("p", cpu=100)))
    assert result.node is None
    assert result.status.code == Code.ERROR
    assert result.status.message == (
        f"plugin 'OutOfRange' returns an invalid score {value}, it should in the range of [0, 100] after normalizing"
    )


class SmallScore:
    """A score plugin that answers 1 on odd columns and 0 on even ones (all 0 for a pod named ``zero-*``)."""

    name = "SmallScore"

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        if pod.pod.name.startswith("zero-"):
            return np.zeros(len(cols), dtype=np.int64)
        return np.asarray(cols % 2, dtype=np.int64)


@pytest.mark.parametrize("name", ["p", "zero-p"])
def test_the_totals_are_the_weighted_sums_of_every_plugins_scores(name: str) -> None:
    """run_score adds nothing for a plugin whose every score is 0 and skips multiplying by a weight of 1: the totals
    are still each node's sum of weight x normalised score over the plugins."""
    prof = make_profile()
    prof.plugins.at("score").enabled.append(PluginRef("SmallScore", 5))
    registry = {**in_tree_registry(), "SmallScore": lambda args, handle: SmallScore()}
    nodes = [node(f"n{i}", cpu=1000 * (i + 1), memory=(i + 1) * 2**30) for i in range(6)]
    snap = Snapshot(nodes)
    sched = Scheduler(make_config(prof), registry, Actions(), snap)
    result = sched.schedule_one(make_pod_info(pod(name, cpu=500, memory=2**28)))
    scores = result.scores
    assert result.node is not None and scores is not None
    assert {"SmallScore", "NodeResourcesFit"} <= set(scores.per_plugin)
    expected = sum(scores.per_plugin[p] * scores.weights[p] for p in scores.per_plugin)
    assert scores.totals.tolist() == np.asarray(expected).tolist()
    assert scores.weights["SmallScore"] == 5


def test_plugin_names_are_the_plugins_names_in_order() -> None:
    prof = make_profile()
    sched = Scheduler(make_config(prof), in_tree_registry(), Actions(), Snapshot([node("a")]))
    fwk = sched.frameworks["default-scheduler"]
    assert fwk.plugin_names("preFilter") == ["NodeAffinity", "NodePorts", "NodeResourcesFit"]
    assert fwk.plugin_names("queueSort") == ["PrioritySort"]
