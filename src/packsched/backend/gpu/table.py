"""The per-node GPU device table: for every node, how many GPUs it has, their model, and each GPU's free
milli-GPU, as numpy arrays (DESIGN.md "Devices": never in the generic resource vectors).

One table belongs to one snapshot (:func:`device_table`). It follows the snapshot through the snapshot's pod
listeners: a pod that comes back with a recorded ``gpu-index`` annotation (bound in a manifest, or restored by a
preemption dry run) takes its GPUs again; a pod that leaves frees them. New pods get their GPUs in Reserve.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from packsched.api.gpushare import (
    GPU_INDEX,
    MILLI,
    NO_GPU,
    GpuAnnotationError,
    GpuDemand,
    node_gpus,
    parse_gpu_index,
    pod_gpu_demand,
)
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot

SHARE_TAG = "share"


def class_tag(demand: GpuDemand) -> str:
    """The pod's GPU class as the Clustering policy groups pods: a GPU share, or k whole GPUs."""
    return SHARE_TAG if demand.sharing else f"{demand.count}-gpu"


def safe_demand(info: PodInfo) -> GpuDemand:
    try:
        return pod_gpu_demand(info.pod)
    except GpuAnnotationError:
        return NO_GPU


class DeviceTable:
    """Free milli-GPU per (node, GPU), GPU counts and model codes per node, GPU pod classes per node."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.count: IntArray = np.zeros(0, dtype=np.int64)
        self.free: IntArray = np.zeros((0, 1), dtype=np.int64)
        self.model: IntArray = np.zeros(0, dtype=np.int64)  # code into self.models; -1: no model label
        self.models: dict[str, int] = {}
        self.tags: dict[str, int] = {}
        self.tag_count: IntArray = np.zeros((0, 0), dtype=np.int64)
        # pod key -> (node column, GPU indexes, milli per GPU, class tag)
        self.assigned: dict[str, tuple[int, tuple[int, ...], int, str]] = {}
        self.version = 0
        self._node_gen = -1
        self.on_change: list[Callable[[int], None]] = []
        snap.listeners.append(self)
        self.sync()

    # -- nodes ----------------------------------------------------------------------------------------

    @property
    def width(self) -> int:
        return int(self.free.shape[1])

    def sync(self) -> None:
        """Rebuild after nodes were added or changed (keeping every pod's GPUs)."""
        if self._node_gen == self.snap.node_generation and len(self.count) == self.snap.n:
            return
        n = self.snap.n
        counts = np.zeros(n, dtype=np.int64)
        model = np.full(n, -1, dtype=np.int64)
        for col, node in enumerate(self.snap.nodes):
            c, m = node_gpus(node)
            counts[col] = c
            if m:
                model[col] = self.models.setdefault(m, len(self.models))
        width = max(1, int(counts.max()) if n else 1)
        self.count = counts
        self.model = model
        self.free = np.where(np.arange(width)[None, :] < counts[:, None], MILLI, 0).astype(np.int64)
        self.tag_count = np.zeros((n, len(self.tags)), dtype=np.int64)
        old = self.assigned
        self.assigned = {}
        self._node_gen = self.snap.node_generation
        for key, (col, ids, milli, tag) in old.items():
            if col < n and all(i < counts[col] for i in ids) and (self.free[col, list(ids)] >= milli).all():
                self._take(key, col, ids, milli, tag)
        for info in self.snap.pods.values():  # pods placed before the table existed
            if info.key not in self.assigned:
                self.pod_added(info, info.node)
        self.version += 1

    def models_mask(self, models: tuple[str, ...]) -> BoolArray:
        """Nodes whose GPU model is one of ``models`` (every node when ``models`` is empty)."""
        if not models:
            return np.ones(len(self.model), dtype=bool)
        codes = [self.models[m] for m in models if m in self.models]
        return np.isin(self.model, np.asarray(codes, dtype=np.int64))

    # -- choosing GPUs --------------------------------------------------------------------------------

    def fits(self, cols: IntArray | slice, demand: GpuDemand) -> BoolArray:
        """Per-GPU fit: a share fits inside one GPU; k whole GPUs need k completely free GPUs."""
        free = self.free[cols]
        if demand.sharing:
            return np.asarray((free >= demand.milli).any(axis=1))
        return np.asarray((free >= MILLI).sum(axis=1) >= demand.count)

    def best_fit(self, col: int, demand: GpuDemand) -> tuple[int, ...] | None:
        """The fullest GPU that still fits a share (lowest index on ties), or the lowest-indexed free GPUs."""
        free = self.free[col, : self.count[col]]
        if demand.sharing:
            ok = np.flatnonzero(free >= demand.milli)
            if len(ok) == 0:
                return None
            return (int(ok[int(np.argmin(free[ok]))]),)  # argmin: the first of equals
        whole = np.flatnonzero(free >= MILLI)
        if len(whole) < demand.count:
            return None
        return tuple(int(i) for i in whole[: demand.count])

    def first_fit(self, col: int, demand: GpuDemand) -> tuple[int, ...] | None:
        """The lowest-indexed GPU that fits a share, or the lowest-indexed free GPUs (DRA's allocator takes
        devices in this order)."""
        free = self.free[col, : self.count[col]]
        need = demand.milli if demand.sharing else MILLI
        ok = np.flatnonzero(free >= need)
        if len(ok) < demand.count:
            return None
        return tuple(int(i) for i in ok[: demand.count])

    def valid_choice(self, col: int, demand: GpuDemand, ids: tuple[int, ...]) -> bool:
        if len(ids) != demand.count or len(set(ids)) != len(ids):
            return False
        if any(i < 0 or i >= self.count[col] for i in ids):
            return False
        return bool((self.free[col, list(ids)] >= demand.milli).all())

    # -- accounting -----------------------------------------------------------------------------------

    def _tag_col(self, tag: str) -> int:
        idx = self.tags.get(tag)
        if idx is None:
            idx = len(self.tags)
            self.tags[tag] = idx
            self.tag_count = np.hstack([self.tag_count, np.zeros((len(self.count), 1), dtype=np.int64)])
        return idx

    def _take(self, key: str, col: int, ids: tuple[int, ...], milli: int, tag: str) -> None:
        self.free[col, list(ids)] -= milli
        tag_idx = self._tag_col(tag)  # may grow (replace) tag_count: look it up after
        self.tag_count[col, tag_idx] += 1
        self.assigned[key] = (col, ids, milli, tag)
        self.version += 1
        for fn in self.on_change:
            fn(col)

    def assign(self, info: PodInfo, col: int, demand: GpuDemand, ids: tuple[int, ...]) -> None:
        if not self.valid_choice(col, demand, ids):
            raise ValueError(f"GPUs {ids} of node column {col} cannot take pod {info.key}")
        self._take(info.key, col, ids, demand.milli, class_tag(demand))

    def release(self, key: str) -> None:
        entry = self.assigned.pop(key, None)
        if entry is None:
            return
        col, ids, milli, tag = entry
        self.free[col, list(ids)] += milli
        self.tag_count[col, self.tags[tag]] -= 1
        self.version += 1
        for fn in self.on_change:
            fn(col)

    # -- snapshot listener ----------------------------------------------------------------------------

    def pod_added(self, info: PodInfo, col: int) -> None:
        """A pod that already names its GPUs (``gpu-index``) takes them; others get GPUs in Reserve."""
        if info.key in self.assigned or col >= len(self.count):
            return
        raw = info.pod.annotations.get(GPU_INDEX)
        if raw is None:
            return
        demand = safe_demand(info)
        if not demand.wants_gpu:
            return
        ids = parse_gpu_index(raw)
        if ids is None or not self.valid_choice(col, demand, ids):
            ids = self.best_fit(col, demand)  # a bad or stale record: place it as Reserve would
        if ids is not None:
            self._take(info.key, col, ids, demand.milli, class_tag(demand))

    def pod_removed(self, info: PodInfo, col: int) -> None:
        self.release(info.key)


TABLE_KEY = "GPUShare/device-table"


def device_table(snap: Snapshot) -> DeviceTable:
    """The snapshot's device table (created, and filled from the pods already placed, on first use). It lives
    in the snapshot's ``extensions``, so it goes away with the snapshot."""
    table = snap.extensions.get(TABLE_KEY)
    if not isinstance(table, DeviceTable):
        table = DeviceTable(snap)
        snap.extensions[TABLE_KEY] = table
    else:
        table.sync()
    return table
