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

from packsched.backend.gpu.frag import FragState, Shape, TargetWorkload, fragment_change
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
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
        change = fragment_change(self._frag(snap), snap, cols, cpu, demand)
        before, after, ok = change.before, change.after, change.ok
        if ok is None:
            return sigmoid_score(before - after)
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
