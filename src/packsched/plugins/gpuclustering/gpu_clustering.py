"""GpuClusteringScore (the paper's Clustering): keep pods of one GPU class (a GPU share, or k whole GPUs)
together. Four tiers of 25 points: nodes holding only pods of the pod's class (75-100), nodes holding that class
among others (50-75), nodes with no GPU pod (25-50), nodes holding only other classes (0-25); inside a tier,
25 * (8000 - GPU milli left) // 8000 is added, so fuller nodes win. Pods that want no GPU score 0 everywhere."""

from __future__ import annotations

import numpy as np

from packsched.backend.gpu.table import class_tag, device_table
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import MAX_NODE_SCORE, Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.plugins.helper.gpu import MAX_SPEC_GPU, check_no_args, gpu_left, read_demand

NAME = "GpuClusteringScore"
QUARTER = MAX_NODE_SCORE // 4


class GpuClusteringScore:
    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        check_no_args(NAME, args)

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        demand = read_demand(state, pod)
        if not demand.wants_gpu:
            return np.zeros(len(cols), dtype=np.int64)
        table = device_table(snap)
        base = QUARTER * (MAX_SPEC_GPU - gpu_left(table, cols)) // MAX_SPEC_GPU
        tags = table.tag_count[cols] > 0
        classes = tags.sum(axis=1)
        idx = table.tags.get(class_tag(demand))
        mine = tags[:, idx] if idx is not None else np.zeros(len(cols), dtype=bool)
        tier = np.where(mine, np.where(classes == 1, 3, 2), np.where(classes == 0, 1, 0))
        out: IntArray = (base + tier * QUARTER).astype(np.int64)
        return out


def new_gpu_clustering(args: PluginArgs | None, handle: Handle) -> GpuClusteringScore:
    return GpuClusteringScore(args, handle)
