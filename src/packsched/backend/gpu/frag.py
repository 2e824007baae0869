"""FGD's fragmentation measure (Weng et al., USENIX ATC '23), over arrays of nodes.

The *target workload* is the popular pod shapes of a workload with their frequencies p_m. For a node n and a
shape m the fragment F_n(m) is all of the node's idle GPU milli when m wants no GPU, or m's CPU does not fit,
or m's GPUs do not fit, or the node's GPU model is not one m accepts; otherwise it is the idle milli on the GPUs
whose free amount is below m's per-GPU request. F_n = sum_m p_m F_n(m); the cluster fragment is sum_n F_n.

:class:`FragState` keeps, per node and shape, the two numbers F_n(m) is made of (the idle milli on GPUs below
the shape's request, and how many GPUs could take it) and refreshes only the nodes that changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from packsched.api.gpushare import MILLI, GpuDemand, parse_models
from packsched.api.resources import CPU
from packsched.backend.gpu.table import DeviceTable, device_table
from packsched.config.defaults import DEFAULT_FGD_PACK_DEMAND_FLOOR_MILLI
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot

FloatArray = npt.NDArray[np.float64]
DEFAULT_COVERAGE = 0.95


@dataclass(frozen=True, order=True)
class Shape:
    """A pod shape: CPU millicores, milli-GPU per GPU, GPU count and accepted GPU models."""

    cpu: int
    milli: int
    count: int
    models: tuple[str, ...] = ()

    @staticmethod
    def of(cpu: int, demand: GpuDemand) -> Shape:
        if not demand.wants_gpu:
            return Shape(cpu, 0, 0, ())
        return Shape(cpu, demand.milli, demand.count, demand.models)


@dataclass(frozen=True)
class TargetWorkload:
    shapes: tuple[Shape, ...]
    weights: tuple[float, ...]  # p_m, summing to 1

    @staticmethod
    def from_shapes(shapes: Iterable[Shape], coverage: float = DEFAULT_COVERAGE) -> TargetWorkload:
        """The most popular shapes until they cover ``coverage`` of the pods, frequencies renormalised.

        Shapes are ranked by count (most first; equal counts in shape order, so the result is deterministic)."""
        counts = Counter(shapes)
        if not counts:
            return TargetWorkload((), ())
        total = sum(counts.values())
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        kept: list[tuple[Shape, int]] = []
        covered = 0
        for shape, n in ranked:
            if covered >= coverage * total:
                break
            kept.append((shape, n))
            covered += n
        return TargetWorkload(tuple(s for s, _ in kept), tuple(n / covered for _, n in kept))

    def discounted(self, exponent: float, floor: int = DEFAULT_FGD_PACK_DEMAND_FLOOR_MILLI) -> TargetWorkload:
        """The same shapes, each weight p_m times d_m ** -exponent, renormalised: d_m is the shape's GPU demand in
        milli (count x per-GPU milli), at least ``floor``. With a positive exponent the small shares (and CPU-only
        shapes) weigh more and the multi-GPU shapes less; 0 leaves the weights as they are."""
        if exponent == 0 or not self.shapes:
            return self
        raw = [
            w * float(max(s.milli * s.count, floor)) ** -exponent
            for s, w in zip(self.shapes, self.weights, strict=True)
        ]
        total = sum(raw)
        return TargetWorkload(self.shapes, tuple(w / total for w in raw))

    def as_args(self) -> list[dict[str, Any]]:
        return [
            {"cpuMilli": s.cpu, "gpuMilli": s.milli, "gpuCount": s.count, "gpuModels": "|".join(s.models), "weight": w}
            for s, w in zip(self.shapes, self.weights, strict=True)
        ]

    @staticmethod
    def from_args(raw: object) -> TargetWorkload:
        """The ``targetWorkload`` list of FGDScore's args; raises ValueError naming the bad entry."""
        if not isinstance(raw, Sequence) or isinstance(raw, str):
            raise ValueError("targetWorkload must be a list of {cpuMilli, gpuMilli, gpuCount, gpuModels, weight}")
        shapes: list[Shape] = []
        weights: list[float] = []
        for i, item in enumerate(raw):
            where = f"targetWorkload[{i}]"
            if not isinstance(item, Mapping):
                raise ValueError(f"{where} must be a map")
            unknown = set(item) - {"cpuMilli", "gpuMilli", "gpuCount", "gpuModels", "weight"}
            if unknown:
                raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}")
            vals = {}
            for key in ("cpuMilli", "gpuMilli", "gpuCount"):
                v = item.get(key, 0)
                if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                    raise ValueError(f"{where}.{key} must be a non-negative integer, got {v!r}")
                vals[key] = v
            if vals["gpuMilli"] > MILLI:
                raise ValueError(f"{where}.gpuMilli must be at most {MILLI}, got {vals['gpuMilli']}")
            w = item.get("weight", 1)
            if not isinstance(w, int | float) or isinstance(w, bool) or not w > 0:
                raise ValueError(f"{where}.weight must be a positive number, got {w!r}")
            models = item.get("gpuModels", "")
            if not isinstance(models, str):
                raise ValueError(f"{where}.gpuModels must be a string like 'V100M16|V100M32'")
            gpu = vals["gpuMilli"] > 0 and vals["gpuCount"] > 0
            shapes.append(
                Shape(
                    vals["cpuMilli"],
                    vals["gpuMilli"] if gpu else 0,
                    vals["gpuCount"] if gpu else 0,
                    parse_models(models) if gpu else (),
                )
            )
            weights.append(float(w))
        total = sum(weights)
        return TargetWorkload(tuple(shapes), tuple(w / total for w in weights))


class ShapeArrays:
    """The target workload as arrays (one entry per shape), with each shape's model mask over the table's
    model codes."""

    def __init__(self, target: TargetWorkload, table: DeviceTable) -> None:
        self.target = target
        self.cpu: IntArray = np.array([s.cpu for s in target.shapes], dtype=np.int64)
        self.milli: IntArray = np.array([s.milli for s in target.shapes], dtype=np.int64)
        self.count: IntArray = np.array([s.count for s in target.shapes], dtype=np.int64)
        self.p: FloatArray = np.array(target.weights, dtype=np.float64)
        self.gpu = self.milli > 0
        self._table = table
        self._models_seen = -1
        self.model_ok = np.zeros((len(self.cpu), 1), dtype=bool)
        self.refresh_models()

    def refresh_models(self) -> None:
        """model_ok[m, code + 1]: shape m accepts model ``code`` (column 0: a node without a model label)."""
        n_models = len(self._table.models)
        if n_models == self._models_seen:
            return
        ok = np.ones((len(self.cpu), n_models + 1), dtype=bool)
        for i, shape in enumerate(self.target.shapes):
            if shape.models:
                ok[i, :] = False
                for m in shape.models:
                    code = self._table.models.get(m)
                    if code is not None:
                        ok[i, code + 1] = True
        self.model_ok = ok
        self._models_seen = n_models

    def node_model_ok(self, model_codes: IntArray) -> npt.NDArray[np.bool_]:
        """[K, M]: the node's GPU model is accepted by the shape."""
        return np.asarray(self.model_ok[:, model_codes + 1].T)


def shape_parts(free: IntArray, shapes: ShapeArrays) -> tuple[IntArray, IntArray]:
    """For nodes with per-GPU free milli ``free`` [K, G]: (below [K, M], able [K, M]) where below is the idle
    milli on GPUs with less free than the shape's per-GPU request and able the number of GPUs that could take it."""
    ge = free[:, None, :] >= shapes.milli[None, :, None]
    able = ge.sum(axis=2)
    below = np.where(ge, 0, free[:, None, :]).sum(axis=2)
    return able.astype(np.int64), below.astype(np.int64)


def fragment(
    idle: IntArray | FloatArray,
    cpu_free: IntArray,
    able: IntArray,
    below: IntArray | FloatArray,
    model_ok: npt.NDArray[np.bool_],
    shapes: ShapeArrays,
) -> FloatArray:
    """F_n for nodes given, per node, idle milli, free CPU, and per shape ``able``/``below`` (any leading
    dimensions, shapes last)."""
    fits = shapes.gpu & model_ok & (able >= shapes.count) & (cpu_free[..., None] >= shapes.cpu)
    per_shape = np.where(fits, below, idle[..., None])
    out: FloatArray = per_shape @ shapes.p
    return out


def cpu_free(snap: Snapshot) -> IntArray:
    row = snap.row.get(CPU)
    if row is None:
        return np.zeros(snap.n, dtype=np.int64)
    return snap.free(row)


class FragState:
    """Per-node F_n for one target workload, refreshed lazily for the nodes whose pods changed."""

    def __init__(self, snap: Snapshot, target: TargetWorkload) -> None:
        self.snap = snap
        self.table = device_table(snap)
        self.shapes = ShapeArrays(target, self.table)
        self._dirty: set[int] = set()
        self._all = True
        self._node_gen = -1
        n, m = snap.n, len(target.shapes)
        self.able: IntArray = np.zeros((n, m), dtype=np.int64)
        self.below: IntArray = np.zeros((n, m), dtype=np.int64)
        self.frag: FloatArray = np.zeros(n, dtype=np.float64)
        snap.listeners.append(self)
        self.table.on_change.append(self._mark)

    def set_target(self, target: TargetWorkload) -> None:
        """Measure against another target workload from now on (every node is recomputed)."""
        self.shapes = ShapeArrays(target, self.table)
        self._all = True

    def _mark(self, col: int) -> None:
        self._dirty.add(col)

    def pod_added(self, info: PodInfo, col: int) -> None:
        self._dirty.add(col)

    def pod_removed(self, info: PodInfo, col: int) -> None:
        self._dirty.add(col)

    def refresh(self) -> None:
        self.table.sync()
        if self._node_gen != self.snap.node_generation or len(self.frag) != self.snap.n:
            self._all = True
            self._node_gen = self.snap.node_generation
        self.shapes.refresh_models()
        if self._all:
            cols: IntArray | slice = slice(None)
            self.able, self.below = shape_parts(self.table.free, self.shapes)
            self.frag = np.zeros(self.snap.n, dtype=np.float64)
        elif self._dirty:
            cols = np.fromiter(self._dirty, dtype=np.int64)
            self.able[cols], self.below[cols] = shape_parts(self.table.free[cols], self.shapes)
        else:
            return
        table = self.table
        self.frag[cols] = fragment(
            table.free[cols].sum(axis=1),
            cpu_free(self.snap)[cols],
            self.able[cols],
            self.below[cols],
            self.shapes.node_model_ok(table.model[cols]),
            self.shapes,
        )
        self._dirty.clear()
        self._all = False

    def cluster_fragment(self) -> float:
        self.refresh()
        return float(self.frag.sum())


@dataclass
class FragChange:
    """What placing one pod does to the fragmentation of each node of ``cols`` (FGD's ``before`` and ``after``).

    A pod that takes whole GPUs (or none) changes a node one way: ``after`` has one entry per node and ``ok`` is
    None. A GPU-sharing pod may land on any GPU with room: ``after`` is [node, GPU] and ``ok`` says which GPUs
    have the room (and exist)."""

    before: FloatArray
    after: FloatArray
    ok: npt.NDArray[np.bool_] | None
    idle: IntArray  # free milli-GPU of each node now
    cpu_after: IntArray  # free CPU of each node with the pod placed


def fragment_change(fs: FragState, snap: Snapshot, cols: IntArray, cpu: int, demand: GpuDemand) -> FragChange:
    """The fragmentation of each node of ``cols`` before and after a pod asking ``cpu`` and ``demand`` lands
    there (FGDScore and FGDPackScore both rank nodes by it)."""
    table, shapes = fs.table, fs.shapes
    before = fs.frag[cols]
    free = table.free[cols]
    idle = free.sum(axis=1)
    cpu_after = cpu_free(snap)[cols] - cpu
    model_ok = shapes.node_model_ok(table.model[cols])
    able, below = fs.able[cols], fs.below[cols]
    if not demand.sharing:
        # k completely free GPUs go to 0 free: each shape loses k able GPUs, nothing changes below
        k = demand.count if demand.wants_gpu else 0
        after = fragment(idle - k * MILLI, cpu_after, able - k * shapes.gpu, below, model_ok, shapes)
        return FragChange(before, after, None, idle, cpu_after)
    s = demand.milli
    real = np.arange(free.shape[1])[None, :] < table.count[cols][:, None]
    ok = (free >= s) & real  # [K, G]
    f_old = free[:, :, None]  # [K, G, 1]
    f_new = f_old - s
    m_milli = shapes.milli[None, None, :]
    able_new = able[:, None, :] - (f_old >= m_milli) + (f_new >= m_milli)
    below_new = below[:, None, :] - np.where(f_old < m_milli, f_old, 0) + np.where(f_new < m_milli, f_new, 0)
    after = fragment(
        (idle - s)[:, None].astype(np.float64) + np.zeros(ok.shape),
        np.broadcast_to(cpu_after[:, None], ok.shape),
        able_new,
        below_new,
        model_ok[:, None, :],
        shapes,
    )  # [K, G]
    return FragChange(before, after, ok, idle, cpu_after)
