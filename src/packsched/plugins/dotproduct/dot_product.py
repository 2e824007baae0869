"""DotProductScore (the paper's DotProd, after Tetris): the node vector [CPU left, GPU milli left] and the pod's
request [CPU, total GPU milli], both divided by (128 cores, 8 GPUs); the smaller their mean product, the higher
the score: int(100 * (1 - (a.b) / 2)). GPUs inside the node: best fit (GPUShare's default)."""

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

NAME = "DotProductScore"


class DotProductScore:
    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        check_no_args(NAME, args)

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        demand = read_demand(state, pod)
        node_cpu = cpu_left(snap, cols) / float(MAX_SPEC_CPU)
        node_gpu = gpu_left(device_table(snap), cols) / float(MAX_SPEC_GPU)
        req_cpu = pod_cpu(pod) / float(MAX_SPEC_CPU)
        req_gpu = demand.total_milli / float(MAX_SPEC_GPU)
        dot = (node_cpu * req_cpu + node_gpu * req_gpu) / 2.0
        return np.trunc(MAX_NODE_SCORE * (1.0 - dot)).astype(np.int64)


def new_dot_product(args: PluginArgs | None, handle: Handle) -> DotProductScore:
    return DotProductScore(args, handle)
