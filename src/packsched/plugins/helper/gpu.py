"""What the GPU plugins share: GPUShare's cycle-state keys (the pod's demand, a policy plugin's GPU choice), the
node vectors the policy plugins read and their normalisation constants.

The paper's policies measure a node by [CPU left, GPU milli left] (node totals) and normalise by the largest
node shape of the trace: 128 cores and 8 GPUs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from packsched.api.gpushare import NO_GPU, GpuAnnotationError, GpuDemand, pod_gpu_demand
from packsched.api.resources import CPU
from packsched.backend.gpu.table import DeviceTable
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import MAX_NODE_SCORE
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot

MAX_SPEC_CPU = 128_000  # millicores
MAX_SPEC_GPU = 8_000  # milli-GPU

GPU_SHARE = "GPUShare"
DEMAND_KEY = GPU_SHARE + "/demand"
# A policy plugin that wants to pick the GPU itself writes a function (node column -> GPU indexes or None).
CHOICE_KEY = GPU_SHARE + "/choice"

GpuChoice = Callable[[int], "tuple[int, ...] | None"]


def read_demand(state: CycleState, pod: PodInfo) -> GpuDemand:
    """The pod's GPU demand as GPUShare's PreFilter recorded it (read from the pod when it did not run)."""
    demand: GpuDemand | None = state.read(DEMAND_KEY)
    if demand is None:
        try:
            demand = pod_gpu_demand(pod.pod)
        except GpuAnnotationError:
            demand = NO_GPU
        state.write(DEMAND_KEY, demand)
    return demand


def cpu_left(snap: Snapshot, cols: IntArray) -> IntArray:
    row = snap.ensure_resource(CPU)
    out: IntArray = snap.alloc[row, cols] - snap.requested[row, cols]
    return out


def gpu_left(table: DeviceTable, cols: IntArray) -> IntArray:
    out: IntArray = table.free[cols].sum(axis=1)
    return out


def pod_cpu(pod: PodInfo) -> int:
    return int(pod.requests.get(CPU, 0))


def check_no_args(name: str, args: object) -> None:
    if args:
        raise ValueError(f"{name} takes no args")


def sigmoid_score(delta: npt.NDArray[np.float64]) -> IntArray:
    """FGD's node score: int(100 * sigmoid(delta / 1000)) for a fragment decrease ``delta`` (negative: an
    increase). Shared by FGDScore and FGDPackScore."""
    with np.errstate(over="ignore"):
        s = 1.0 / (1.0 + np.exp(-(delta / 1000.0)))
    out: IntArray = np.trunc(s * MAX_NODE_SCORE).astype(np.int64)
    return out
