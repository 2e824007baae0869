"""GpuPackingScore (the paper's Packing), three tiers by the state of the GPUs the pod would use (best fit):
(1) it fits on GPUs already partly used: 100 - (sum of their free percent) // 10, at least 50;
(2) it needs completely free GPUs on a node whose GPUs are partly in use: 50 - (free GPUs it takes), at least 33;
(3) every GPU of the node is free: max(33 - GPUs on the node, GPUs on the node), so smaller nodes first.
Pods that want no GPU score 0 everywhere."""

from __future__ import annotations

import numpy as np

from packsched.api.gpushare import MILLI
from packsched.backend.gpu.table import device_table
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import MAX_NODE_SCORE, Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.plugins.helper.gpu import check_no_args, read_demand

NAME = "GpuPackingScore"


class GpuPackingScore:
    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        check_no_args(NAME, args)

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        demand = read_demand(state, pod)
        if not demand.wants_gpu:
            return np.zeros(len(cols), dtype=np.int64)
        table = device_table(snap)
        free = table.free[cols]
        count = table.count[cols]
        real = np.arange(free.shape[1])[None, :] < count[:, None]
        fully = ((free == MILLI) & real).sum(axis=1)
        empty = fully == count
        tier3 = np.maximum(MAX_NODE_SCORE // 3 - fully, fully)
        if demand.sharing:
            # the fullest GPU that fits: partly used -> tier 1, completely free -> tier 2
            fit = (free >= demand.milli) & real
            best = np.where(fit, free, MILLI + 1).min(axis=1)
            uses_free = best >= MILLI
            tier1 = np.maximum(MAX_NODE_SCORE - (best * 100 // MILLI) // 10, MAX_NODE_SCORE // 2)
            tier2 = np.maximum(MAX_NODE_SCORE // 2 - 1, MAX_NODE_SCORE // 3)
            used = np.where(uses_free, tier2, tier1)
        else:
            # whole GPUs are always completely free ones
            used = np.maximum(MAX_NODE_SCORE // 2 - demand.count, MAX_NODE_SCORE // 3) + np.zeros(len(cols), np.int64)
        out: IntArray = np.where(empty, tier3, used).astype(np.int64)
        return out


def new_gpu_packing(args: PluginArgs | None, handle: Handle) -> GpuPackingScore:
    return GpuPackingScore(args, handle)
