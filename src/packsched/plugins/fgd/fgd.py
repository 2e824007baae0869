"""FGDScore (the paper's FGD, fragmentation gradient descent): place the pod where it increases the node's
fragment F_n (see :mod:`packsched.backend.gpu.frag`) the least.

Score = int(100 * sigmoid((F_n before - F_n after) / 1000)). For a GPU-sharing pod every GPU of the node that
fits is tried and the node scores its best GPU (the lowest index among equal scores); Reserve then uses that GPU.
Whole GPUs are the lowest-indexed free ones, as everywhere.

Args: ``targetWorkload``, a list of ``{cpuMilli, gpuMilli, gpuCount, gpuModels, weight}``. Without it the plugin
uses the shapes of the pods it has scored so far (the 95% most popular).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np

from packsched.api.gpushare import MILLI
from packsched.backend.gpu.frag import FragState, Shape, TargetWorkload, cpu_free, fragment
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle
from packsched.framework.snapshot import IntArray, PodInfo, Snapshot
from packsched.plugins.helper.gpu import CHOICE_KEY, pod_cpu, read_demand, sigmoid_score

NAME = "FGDScore"


class FGDScore:
    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        self.handle = handle
        self.fixed: TargetWorkload | None = None
        if args:
            if not isinstance(args, Mapping):
                raise ValueError("args must be a map")
            unknown = set(args) - {"targetWorkload"}
            if unknown:
                raise ValueError(f"unknown field(s) {sorted(unknown)}; the only one is targetWorkload")
            if "targetWorkload" in args:
                self.fixed = TargetWorkload.from_args(args["targetWorkload"])
                if not self.fixed.shapes:
                    raise ValueError("targetWorkload must list at least one shape")
        self.seen: Counter[Shape] = Counter()
        self._state: FragState | None = None
        self._snap: Snapshot | None = None
        self._learned: TargetWorkload | None = None

    def _frag(self, snap: Snapshot) -> FragState:
        target = self.fixed or self._learned
        assert target is not None
        if self._state is None or self._snap is not snap:
            self._state = FragState(snap, target)
            self._snap = snap
        elif self._state.shapes.target is not target:
            self._state.set_target(target)  # the learned workload changed: same listener, new shapes
        self._state.refresh()
        return self._state

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        demand = read_demand(state, pod)
        cpu = pod_cpu(pod)
        if self.fixed is None:
            shape = Shape.of(cpu, demand)
            self.seen[shape] += 1
            if self._learned is None or shape not in self._learned.shapes or self.seen[shape] == 1:
                self._learned = TargetWorkload.from_shapes(self.seen.elements())
        fs = self._frag(snap)
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
            return sigmoid_score(before - after)
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
        per_gpu = np.where(ok, sigmoid_score(before[:, None] - after), -1)
        best = per_gpu.argmax(axis=1)  # first of the highest
        scores: IntArray = per_gpu[np.arange(len(cols)), best].astype(np.int64)
        picks = dict(zip(cols.tolist(), best.tolist(), strict=True))

        def choose(col: int) -> tuple[int, ...] | None:
            g = picks.get(col)
            return None if g is None else (int(g),)

        state.write(CHOICE_KEY, choose)
        return np.maximum(scores, 0)


def new_fgd(args: PluginArgs | None, handle: Handle) -> FGDScore:
    return FGDScore(args, handle)
