"""What the GPU policy plugins share: the node vectors they read and the normalisation constants.

The paper's policies measure a node by [CPU left, GPU milli left] (node totals) and normalise by the largest
node shape of the trace: 128 cores and 8 GPUs.
"""

from __future__ import annotations

from packsched.api.resources import CPU
from packsched.framework.snapshot import IntArray, PodInfo, Snapshot
from packsched.plugins.gpushare.table import DeviceTable

MAX_SPEC_CPU = 128_000  # millicores
MAX_SPEC_GPU = 8_000  # milli-GPU


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
