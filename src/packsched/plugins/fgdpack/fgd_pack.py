"""FGDPackScore (ours, issue 14): FGD (Weng et al., USENIX ATC '23) plus a packing term.

A node's value (higher is better) is

    value = primary - packWeight * unit * left

- ``primary``: with ``resolution: sigmoid`` FGD's own integer score of the node's fragment decrease,
  int(100 * sigmoid((F_n before - F_n after) / sigmoidScale)) (``sigmoidScale`` 1000: FGDScore's; near zero one
  point is about 40 milli-GPU of fragment). ``hybrid`` (the default) scores the node the same way but picks a GPU
  share's GPU inside the node by the exact decrease (FGDScore: the lowest index among equal integer scores).
  With ``exact`` the primary is the decrease itself in milli-GPU, unrounded, for the node and the GPU.
- ``left``: BestFit's measure of what the node keeps after the pod, 0.5 * CPU left / 128 cores + 0.5 * GPU milli
  left / 8000 (0 = full, 1 = the largest node empty); ``unit`` is one score point (1000 milli-GPU with ``exact``).
  With ``packWeight`` below 1 the term only breaks FGD's ties; 2 (the default) lets a node that keeps less win over
  one up to two FGD points (about 80 milli-GPU of fragment) better.

For a GPU-sharing pod every GPU of the node that fits is tried, the node takes its best GPU (the lowest index among
equal values) and Reserve uses it, as FGDScore does. The node with the highest value scores 100 (every node sharing
it: the framework's tie-break decides, the smallest name in a replay); the others are stretched over 0-99, so the
order of the values decides the placement. The cost is FGDScore's: one fragment evaluation per node and GPU.

``demandExponent`` (0 by default: FGD's weights) reweighs the target workload before any of this: each shape's
frequency p_m is multiplied by its GPU demand d_m ** -demandExponent (d_m in milli, count x per-GPU milli, at
least ``demandFloor``, 100 by default, so a CPU-only shape counts as 100), then renormalised. Small shares and
CPU-only pods then weigh more, multi-GPU pods less, than by popularity alone. The weighting was found by
measurement on the Alibaba trace, not derived, and its gain depends on the floor (bench/RESULTS.md).
The ``FGDDemand`` policy is this plugin with ``demandExponent`` 0.5, ``packWeight`` 0 and ``resolution: sigmoid``:
FGDScore's choices (FGD's integer score, the lowest-indexed best GPU) under the reweighed workload.

Args: ``targetWorkload`` (as FGDScore's; a replay gives it the trace's; without it the plugin learns the shapes of
the pods it has scored, as FGDScore does), ``resolution``, ``packWeight`` (>= 0), ``sigmoidScale`` (> 0,
milli-GPU), ``demandExponent`` (>= 0) and ``demandFloor`` (an integer from 1 to 8000, milli-GPU).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np

from packsched.api.gpushare import MILLI
from packsched.backend.gpu.frag import (
    FloatArray,
    FragState,
    Shape,
    TargetWorkload,
    fragment_change,
)
from packsched.config.defaults import (
    DEFAULT_FGD_PACK_DEMAND_EXPONENT,
    DEFAULT_FGD_PACK_DEMAND_FLOOR_MILLI,
    DEFAULT_FGD_PACK_RESOLUTION,
    DEFAULT_FGD_PACK_SIGMOID_SCALE,
    DEFAULT_FGD_PACK_WEIGHT,
)
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import MAX_NODE_SCORE, Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.plugins.helper.gpu import CHOICE_KEY, MAX_SPEC_CPU, MAX_SPEC_GPU, pod_cpu, read_demand, sigmoid_score

NAME = "FGDPackScore"
RESOLUTIONS = ("exact", "sigmoid", "hybrid")
ARGS = ("targetWorkload", "resolution", "packWeight", "sigmoidScale", "demandExponent", "demandFloor")
MAX_DEMAND_FLOOR = 8 * MILLI
DECIMALS = 6  # values are rounded so that equal fragments computed in another order still tie


def rank_scores(values: FloatArray) -> IntArray:
    """100 for the highest value(s), the others (v - lowest) * 99 // (highest - lowest)."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    finite = np.isfinite(values)
    if not finite.any():
        return np.zeros(len(values), dtype=np.int64)
    v = np.round(np.where(finite, values, values[finite].min()), DECIMALS)
    hi, lo = float(v.max()), float(v.min())
    if hi == lo:
        return np.full(len(v), MAX_NODE_SCORE, dtype=np.int64)
    stretched = np.floor((v - lo) * (MAX_NODE_SCORE - 1) / (hi - lo)).astype(np.int64)
    out: IntArray = np.where(v == hi, MAX_NODE_SCORE, np.minimum(stretched, MAX_NODE_SCORE - 1))
    return out


class FGDPackScore:
    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        self.handle = handle
        self.target: TargetWorkload | None = None
        self.resolution = DEFAULT_FGD_PACK_RESOLUTION
        self.pack_weight = DEFAULT_FGD_PACK_WEIGHT
        self.sigmoid_scale = DEFAULT_FGD_PACK_SIGMOID_SCALE
        self.demand_exponent = DEFAULT_FGD_PACK_DEMAND_EXPONENT
        self.demand_floor = DEFAULT_FGD_PACK_DEMAND_FLOOR_MILLI
        if args:
            self._read_args(args)
        self._state: FragState | None = None
        self._snap: Snapshot | None = None
        self.seen: Counter[Shape] = Counter()
        self._learned: TargetWorkload | None = None
        self._source: TargetWorkload | None = None  # the workload given or learned, and the same reweighed
        self._weighted: TargetWorkload | None = None

    def _read_args(self, args: object) -> None:
        if not isinstance(args, Mapping):
            raise ValueError("args must be a map")
        unknown = set(args) - set(ARGS)
        if unknown:
            raise ValueError(f"unknown field(s) {sorted(unknown)}; the fields are {', '.join(ARGS)}")
        if "targetWorkload" in args:
            self.target = TargetWorkload.from_args(args["targetWorkload"])
            if not self.target.shapes:
                raise ValueError("targetWorkload must list at least one shape")
        res = args.get("resolution", self.resolution)
        if res not in RESOLUTIONS:
            raise ValueError(f"resolution must be one of {', '.join(RESOLUTIONS)}, got {res!r}")
        self.resolution = str(res)
        w = args.get("packWeight", self.pack_weight)
        if not isinstance(w, int | float) or isinstance(w, bool) or not w >= 0:
            raise ValueError(f"packWeight must be a number >= 0, got {w!r}")
        self.pack_weight = float(w)
        scale = args.get("sigmoidScale", self.sigmoid_scale)
        if not isinstance(scale, int | float) or isinstance(scale, bool) or not scale > 0:
            raise ValueError(f"sigmoidScale must be a number > 0, got {scale!r}")
        self.sigmoid_scale = float(scale)
        exponent = args.get("demandExponent", self.demand_exponent)
        if not isinstance(exponent, int | float) or isinstance(exponent, bool) or not exponent >= 0:
            raise ValueError(f"demandExponent must be a number >= 0, got {exponent!r}")
        self.demand_exponent = float(exponent)
        floor = args.get("demandFloor", self.demand_floor)
        if not isinstance(floor, int) or isinstance(floor, bool) or not 1 <= floor <= MAX_DEMAND_FLOOR:
            raise ValueError(f"demandFloor must be an integer from 1 to {MAX_DEMAND_FLOOR} (milli-GPU), got {floor!r}")
        self.demand_floor = floor

    def _learn(self, shape: Shape) -> None:
        """Without a targetWorkload: the shapes of the pods scored so far (95% most popular), as FGDScore does."""
        self.seen[shape] += 1
        if self._learned is None or shape not in self._learned.shapes or self.seen[shape] == 1:
            self._learned = TargetWorkload.from_shapes(self.seen.elements())

    def _frag(self, snap: Snapshot) -> FragState:
        source = self.target or self._learned
        assert source is not None
        if source is not self._source or self._weighted is None:
            self._source, self._weighted = source, source.discounted(self.demand_exponent, self.demand_floor)
        target = self._weighted
        if self._state is None or self._snap is not snap:
            self._state = FragState(snap, target)
            self._snap = snap
        elif self._state.shapes.target is not target:
            self._state.set_target(target)
        self._state.refresh()
        return self._state

    def _sigmoid(self, delta: FloatArray) -> FloatArray:
        """FGD's integer score of a fragment decrease, with the decrease in units of ``sigmoidScale`` milli."""
        out: FloatArray = sigmoid_score(delta * (MILLI / self.sigmoid_scale)).astype(np.float64)
        return out

    def _primary(self, before: FloatArray, after: FloatArray) -> FloatArray:
        if self.resolution != "exact":
            return self._sigmoid(before - after)
        out: FloatArray = before - after
        return out

    def _pack_term(self, cpu_after: IntArray, gpu_after: IntArray) -> FloatArray:
        left = 0.5 * cpu_after / MAX_SPEC_CPU + 0.5 * gpu_after / MAX_SPEC_GPU
        unit = float(MILLI) if self.resolution == "exact" else 1.0
        out: FloatArray = self.pack_weight * unit * left
        return out

    def values(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> FloatArray:
        """Each node's value (higher is better); for a GPU share it writes the chosen GPU per node."""
        demand = read_demand(state, pod)
        cpu = pod_cpu(pod)
        if self.target is None:
            self._learn(Shape.of(cpu, demand))
        change = fragment_change(self._frag(snap), snap, cols, cpu, demand)
        before, after, ok = change.before, change.after, change.ok
        pack = self._pack_term(change.cpu_after, change.idle - demand.total_milli)
        if ok is None:
            out: FloatArray = self._primary(before, after) - pack
            return out
        if self.resolution == "hybrid":  # the GPU by the exact decrease, the node by FGD's integer score of it
            exact = np.where(ok, np.round(before[:, None] - after, DECIMALS), -np.inf)
            best = exact.argmax(axis=1)  # first of the highest
            per_gpu = np.where(ok, self._sigmoid(before[:, None] - after), -np.inf)
        else:
            per_gpu = np.where(ok, np.round(self._primary(before[:, None], after), DECIMALS), -np.inf)
            best = per_gpu.argmax(axis=1)  # first of the highest
        picks = dict(zip(cols.tolist(), best.tolist(), strict=True))

        def choose(col: int) -> tuple[int, ...] | None:
            g = picks.get(col)
            return None if g is None else (int(g),)

        state.write(CHOICE_KEY, choose)
        node: FloatArray = per_gpu[np.arange(len(cols)), best] - pack
        return node

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        return rank_scores(self.values(state, pod, snap, cols))


def new_fgd_pack(args: PluginArgs | None, handle: Handle) -> FGDPackScore:
    return FGDPackScore(args, handle)
