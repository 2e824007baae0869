"""RandomScore (the paper's Random policy): one feasible node, drawn uniformly, scores 100 and the others 0;
a GPU-sharing pod goes to a GPU drawn uniformly among those of the node that fit it."""

from __future__ import annotations

import numpy as np

from packsched.backend.gpu.table import device_table
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import MAX_NODE_SCORE, Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.framework.status import Status
from packsched.plugins.helper.gpu import CHOICE_KEY, check_no_args, read_demand

NAME = "RandomScore"
PICK_KEY = NAME + "/pick"


class RandomScore:
    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        check_no_args(NAME, args)
        self.handle = handle

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> Status:
        state.write(PICK_KEY, int(cols[int(self.handle.rng.integers(len(cols)))]) if len(cols) else -1)
        demand = read_demand(state, pod)
        if demand.sharing:
            table = device_table(snap)
            rng = self.handle.rng

            def choose(col: int) -> tuple[int, ...] | None:
                ok = np.flatnonzero(table.free[col, : table.count[col]] >= demand.milli)
                return (int(ok[int(rng.integers(len(ok)))]),) if len(ok) else None

            state.write(CHOICE_KEY, choose)
        return Status()

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        pick = state.read(PICK_KEY)
        if pick is None:
            self.pre_score(state, pod, snap, cols)
            pick = state.read(PICK_KEY)
        return np.where(cols == pick, MAX_NODE_SCORE, 0).astype(np.int64)


def new_random_score(args: PluginArgs | None, handle: Handle) -> RandomScore:
    return RandomScore(args, handle)
