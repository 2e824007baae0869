"""BestFitScore (the paper's BestFit): the node that is left with the least, in units of the largest node:
0.5 * (CPU left after) / 128 cores + 0.5 * (GPU milli left after) / 8000, turned into int(100 * (1 - that)) and
then stretched min-max over the scored nodes to 0-100 (integer arithmetic). It applies to pods that want no GPU
too, so they go where GPUs are already used. GPUs inside the node: best fit (GPUShare's default)."""

from __future__ import annotations

import numpy as np

from packsched.backend.gpu.table import device_table
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import MAX_NODE_SCORE, Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.plugins.helper.gpu import (
    MAX_SPEC_CPU,
    MAX_SPEC_GPU,
    check_no_args,
    cpu_left,
    gpu_left,
    pod_cpu,
    read_demand,
)

NAME = "BestFitScore"


def min_max_normalize(scores: IntArray) -> IntArray:
    """(s - lowest) * 100 // (highest - lowest); every node 0 when all are equal."""
    if len(scores) == 0:
        return scores
    lo, hi = int(scores.min()), int(scores.max())
    if hi == lo:
        return np.zeros(len(scores), dtype=np.int64)
    out: IntArray = ((scores - lo) * MAX_NODE_SCORE // (hi - lo)).astype(np.int64)
    return out


class BestFitScore:
    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        check_no_args(NAME, args)

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        demand = read_demand(state, pod)
        cpu_after = (cpu_left(snap, cols) - pod_cpu(pod)).astype(np.float64)
        gpu_after = (gpu_left(device_table(snap), cols) - demand.total_milli).astype(np.float64)
        left = (0.0 + cpu_after / MAX_SPEC_CPU * 0.5) + gpu_after / MAX_SPEC_GPU * 0.5
        return np.trunc((1.0 - left) * MAX_NODE_SCORE).astype(np.int64)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        return min_max_normalize(scores)


def new_best_fit(args: PluginArgs | None, handle: Handle) -> BestFitScore:
    return BestFitScore(args, handle)
