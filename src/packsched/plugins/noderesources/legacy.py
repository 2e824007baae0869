"""The v1beta1-era score plugins NodeResourcesLeastAllocated, NodeResourcesMostAllocated and
RequestedToCapacityRatio: each scores with one strategy (today they are NodeResourcesFit's scoringStrategy).
They are what v1beta1 configurations and legacy Policy files name."""

from __future__ import annotations

from packsched.config.types import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    PluginArgs,
    ResourceSpec,
    ScoreOnlyResourceArgs,
    ScoringStrategy,
)
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.plugins.noderesources.scoring import Scorer

LEAST_ALLOCATED_NAME = "NodeResourcesLeastAllocated"
MOST_ALLOCATED_NAME = "NodeResourcesMostAllocated"
RTCR_NAME = "RequestedToCapacityRatio"


class ResourceScorePlugin:
    def __init__(self, name: str, args: PluginArgs | None, handle: Handle) -> None:
        if not isinstance(args, ScoreOnlyResourceArgs):
            raise TypeError(f"want args to be of type ScoreOnlyResourceArgs, got {type(args).__name__}")
        self.name = name
        self.handle = handle
        self.strategy = args.scoring_strategy
        self.scorer = Scorer(args.scoring_strategy)

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        return self.scorer.score(snap, pod, cols)


def _default(kind: str) -> ScoreOnlyResourceArgs:
    return ScoreOnlyResourceArgs(ScoringStrategy(kind, [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]))


def new_least_allocated(args: PluginArgs | None, handle: Handle) -> ResourceScorePlugin:
    return ResourceScorePlugin(LEAST_ALLOCATED_NAME, args or _default(LEAST_ALLOCATED), handle)


def new_most_allocated(args: PluginArgs | None, handle: Handle) -> ResourceScorePlugin:
    return ResourceScorePlugin(MOST_ALLOCATED_NAME, args or _default(MOST_ALLOCATED), handle)


def new_requested_to_capacity_ratio(args: PluginArgs | None, handle: Handle) -> ResourceScorePlugin:
    return ResourceScorePlugin(RTCR_NAME, args, handle)
