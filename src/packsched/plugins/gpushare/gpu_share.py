"""GPUShare: per-GPU feasibility and GPU assignment for pods that ask for GPUs in annotations.

PreFilter reads the pod's demand (and skips the filter for pods that want no GPU). Filter rejects nodes whose
GPU model the pod does not accept, nodes with too few GPUs, and nodes where no single GPU has the share free (or
fewer than k GPUs are completely free). Reserve picks the GPU(s): the choice a policy plugin left in the cycle
state for that node when it has one, otherwise best fit (the fullest GPU that fits a share; the lowest-indexed
free GPUs for whole GPUs); it records them in the pod's ``alibabacloud.com/gpu-index`` annotation.

Args: ``gpuChoice: FirstFit`` instead takes the lowest-indexed GPU that fits, whatever a policy plugin proposes:
the choice of DRA's allocator for a device with consumable capacity (``replay --as-dra`` is checked against it).
"""

from __future__ import annotations

from collections.abc import Mapping

from packsched.api.gpushare import GPU_INDEX, GpuAnnotationError, format_gpu_index, pod_gpu_demand
from packsched.backend.gpu.table import DeviceTable, device_table
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle, NodeSel, Rejection
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code, Status
from packsched.plugins.helper.gpu import CHOICE_KEY, DEMAND_KEY, GPU_SHARE, GpuChoice, read_demand

NAME = GPU_SHARE
BEST_FIT, FIRST_FIT = "BestFit", "FirstFit"
GPU_CHOICES = (BEST_FIT, FIRST_FIT)


class GPUShare:
    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        self.first_fit = False
        if args:
            if not isinstance(args, Mapping) or set(args) - {"gpuChoice"}:
                raise ValueError(f"{NAME} takes only gpuChoice, got {sorted(args) if isinstance(args, dict) else args}")
            choice = args.get("gpuChoice", BEST_FIT)
            if choice not in GPU_CHOICES:
                raise ValueError(f"gpuChoice must be one of {', '.join(GPU_CHOICES)}, got {choice!r}")
            self.first_fit = choice == FIRST_FIT
        self.handle = handle

    @property
    def table(self) -> DeviceTable:
        return device_table(self.handle.snapshot)

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        try:
            demand = pod_gpu_demand(pod.pod)
        except GpuAnnotationError as exc:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [f"pod {pod.key}: {exc}"])
        state.write(DEMAND_KEY, demand)
        if not demand.wants_gpu:
            return Status(Code.SKIP)
        return Status()

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        demand = read_demand(state, pod)
        if not demand.wants_gpu:
            return []
        table = self.table
        out: list[Rejection] = []
        count = table.count[sel]
        too_few = count < demand.count
        if demand.models:
            wrong = ~table.models_mask(demand.models)[sel]
            if wrong.any():
                out.append(Rejection(wrong, "GPU model not accepted by the pod", Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
            too_few &= ~wrong
        if too_few.any():
            out.append(Rejection(too_few, "Insufficient GPUs", Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
        short = ~table.fits(sel, demand) & ~too_few
        for r in out:
            short &= ~r.mask
        if short.any():
            reason = "no GPU with enough free share" if demand.sharing else "not enough completely free GPUs"
            out.append(Rejection(short, reason, Code.UNSCHEDULABLE))
        return out

    def reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        demand = read_demand(state, pod)
        if not demand.wants_gpu:
            return Status()
        table = self.table
        col = self.handle.snapshot.index[node]
        if pod.key in table.assigned:
            table.release(pod.key)
        ids: tuple[int, ...] | None = None
        choose: GpuChoice | None = None if self.first_fit else state.read(CHOICE_KEY)
        if self.first_fit:
            ids = table.first_fit(col, demand)
        elif choose is not None:
            ids = choose(col)
            if ids is not None and not table.valid_choice(col, demand, ids):
                ids = None
        if ids is None and not self.first_fit:
            ids = table.best_fit(col, demand)
        if ids is None:
            return Status(Code.UNSCHEDULABLE, [f"node {node}: no GPU left for the pod"])
        table.assign(pod, col, demand, ids)
        pod.pod.annotations[GPU_INDEX] = format_gpu_index(ids)
        return Status()

    def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        if pod.key in self.table.assigned:
            self.table.release(pod.key)
            pod.pod.annotations.pop(GPU_INDEX, None)


def new_gpu_share(args: PluginArgs | None, handle: Handle) -> GPUShare:
    return GPUShare(args, handle)
