"""Opportunistic batching (kube-scheduler 1.35+, KEP-5598, the ``OpportunisticBatching`` gate): one profile's memory
of the last cycle's sorted scores, reused for the next pod with the same signature.

A cycle that scored its nodes keeps the ones it did not choose, best first (:class:`SortedNodes`). When the next
cycle of the same profile comes right after it (the scheduler's cycle counter moved by one), its pod has the same
signature, the list is younger than :data:`MAX_BATCH_AGE` on the scheduler's clock, and the node the previous pod
took no longer fits this pod, the head of the list is the *hint*: the scheduler tries that one node the way it
tries a nominated node (filters on it alone; taken without scoring when it passes). From 1.37 a last node that
still fits is not a reason to give up: it is filtered, scored again (PreScore over it and the cached nodes, Score
on it alone), its fresh raw scores are normalized together with the cached nodes' raw scores, and the list is
rebuilt before the head is taken, so it may be the hint again.

Which node a hint names can differ from what a full cycle would choose (the cached scores are those of the earlier
cycle; nodes that became feasible since are not in the list); that is upstream's behaviour, reproduced here.

``OpportunisticBatch`` only decides; the scheduler calls :meth:`OpportunisticBatch.get_node_hint` after PreFilter
and :meth:`OpportunisticBatch.store_schedule_results` once a node is chosen, as upstream's schedulePod and
findNodesThatFitPod do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import RejectGroup
from packsched.framework.interface import NodeSel
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray
from packsched.framework.status import Code, PluginError, Status

FloatArray = npt.NDArray[np.float64]
NameArray = npt.NDArray[np.object_]  # node names (str)

# A batch is given up after this long on the scheduler's clock (upstream maxBatchAge: 500 ms of wall time).
MAX_BATCH_AGE = 0.5

# Why a batch could not be used (upstream's scheduler_batch_cache_flushed_total reasons).
POD_SKIPPED = "pod_skipped"  # another cycle (another profile's pod, a failed attempt) came in between
POD_FAILED = "pod_failed"
POD_NOMINATED = "pod_nominated"  # 1.37: a pod with a nominated node does not use a batch
POD_INCOMPATIBLE = "pod_incompatible"  # another signature, or none
EXPIRED = "expired"
NODE_MISSING = "node_missing"
NODE_NOT_FULL = "node_not_full"  # 1.35-1.36: the last chosen node still fits (or its filters failed)
FILTER_ERROR = "filter_error"  # 1.37
PRESCORE_ERROR = "prescore_error"
RESCORE_ERROR = "rescore_error"
NORMALIZE_ERROR = "normalize_error"
POD_NOT_BATCHABLE = "pod_not_batchable"  # the cycle's pod had no signature: nothing kept
EMPTY_LIST = "empty_list"  # the cycle left no other node: nothing kept


class BatchProfile(Protocol):
    """What a batch needs of its profile (``packsched.framework.runtime.Framework`` has it)."""

    def run_filters(self, state: CycleState, pod: PodInfo, sel: NodeSel) -> tuple[BoolArray, list[RejectGroup]]: ...

    def run_pre_score(self, state: CycleState, pod: PodInfo, cols: IntArray) -> Status: ...

    def run_raw_score(self, state: CycleState, pod: PodInfo, cols: IntArray) -> dict[str, IntArray]: ...

    def normalize_scores(
        self, state: CycleState, pod: PodInfo, cols: IntArray, raw: Mapping[str, IntArray]
    ) -> IntArray: ...

    def top_normalized(self, state: CycleState) -> list[str] | None: ...

    def rescored_total(
        self, state: CycleState, pod: PodInfo, raw: Mapping[str, int], tops: Mapping[str, int]
    ) -> int: ...


@dataclass(frozen=True)
class TieOrder:
    """How nodes with equal totals are ordered in a list: ``keys`` gives each node column a key, lower first.
    ``per_node``: the key belongs to the node (its name's rank), so a rebuilt list asks again for every node;
    otherwise (a random draw per node, upstream's Randomizer) a cached node keeps the key it was given and only a
    node put back into the list gets a new one."""

    keys: Callable[[IntArray], FloatArray]
    per_node: bool


@dataclass
class SortedNodes:
    """Scored nodes, best first: highest total, then lowest tie key (upstream's heap of NodePluginScores).
    ``raw``: each Score plugin's raw (not normalized) score per node, for 1.37's re-normalization.

    A cycle's list is sorted only when first read (most are replaced before any pod uses them): until then
    ``names`` holds every column's name and ``cols`` the scored columns, in the cycle's order."""

    names: NameArray
    totals: IntArray
    ties: FloatArray
    raw: dict[str, IntArray]
    pos: int = 0  # the nodes before it were popped (or taken by the cycle itself)
    cols: IntArray | None = None  # not sorted yet: the columns the other arrays follow, ``names`` by column
    head: int = 0  # not sorted yet: the position of the node the cycle chose, which the sorted list starts with
    # once sorted: each node's column in the snapshot whose name index is ``index`` (valid while that index is the
    # scheduler's: a node added keeps the columns, a node removed makes a new snapshot and index)
    node_cols: IntArray | None = None
    index: Mapping[str, int] | None = None
    # not sorted yet: how to draw every node's tie key (drawn when first read: most lists are never read)
    tie_keys: Callable[[IntArray], FloatArray] | None = None
    # how many names ``index`` held when the list was made (the same index and size: the same nodes, so a key
    # that is a node's name rank is still that node's key)
    index_size: int = -1
    # each plugin's highest raw score among the nodes whose totals were normalized together (the cycle's scored
    # nodes, or a rebuilt list's): what a NormalizeScore by the top read (None: not known)
    tops: dict[str, int] | None = None

    def __post_init__(self) -> None:
        if self.index is not None and self.index_size < 0:
            self.index_size = len(self.index)

    @classmethod
    def build(
        cls,
        names: NameArray,
        totals: IntArray,
        ties: FloatArray,
        raw: Mapping[str, IntArray],
        node_cols: IntArray | None = None,
        index: Mapping[str, int] | None = None,
    ) -> SortedNodes:
        order = best_first(totals, ties)
        by_col = node_cols[order] if node_cols is not None else None
        return cls(
            names[order], totals[order], ties[order], {k: v[order] for k, v in raw.items()}, 0, None, 0, by_col, index
        )

    def _sorted(self) -> None:
        cols = self.cols
        if cols is None:
            return
        if self.tie_keys is not None:
            self.ties = self.tie_keys(cols)
            self.tie_keys = None
        self.tops = {k: int(v.max()) for k, v in self.raw.items()}  # the cycle normalized these nodes together
        order = best_first(self.totals, self.ties)
        if int(order[0]) != self.head:  # only where another node has the same total and key
            order = np.concatenate([[self.head], order[order != self.head]])
        self.node_cols = cols[order]
        self.names = self.names[self.node_cols]
        self.totals = self.totals[order]
        self.ties = self.ties[order]
        self.raw = {k: v[order] for k, v in self.raw.items()}
        self.cols = None

    def __len__(self) -> int:
        return len(self.totals) - self.pos

    def pop(self) -> str:
        self._sorted()
        name = str(self.names[self.pos])
        self.pos += 1
        return name

    def put_back(self, name: str, col: int, total: int, key: float, raw: Mapping[str, int]) -> None:
        """Insert a node into the sorted list (``pos`` > 0: its head was taken), in place: after every node with a
        higher total, or the same total and a key not above its own (where a stable sort of the list with the
        node last puts it); the nodes ahead of it move one place toward the front."""
        totals, ties = self.totals, self.ties
        lo = _place(totals, ties, self.pos, len(totals), total, key)
        first = self.pos - 1
        assert first >= 0 and self.node_cols is not None and self.cols is None
        rows: list[tuple[npt.NDArray[Any], object]] = [
            (self.names, name), (totals, total), (ties, key), (self.node_cols, col)
        ]  # fmt: skip
        rows += [(self.raw[k], v) for k, v in raw.items()]
        for array, value in rows:
            array[first : lo - 1] = array[first + 1 : lo]  # overlapping: numpy copies as if through a buffer
            array[lo - 1] = value
        self.pos = first

    def remaining(self) -> SortedNodes:
        self._sorted()
        p = self.pos
        by_col = self.node_cols[p:] if self.node_cols is not None else None
        raw = {k: v[p:] for k, v in self.raw.items()}
        return SortedNodes(
            self.names[p:], self.totals[p:], self.ties[p:], raw, 0, None, 0, by_col, self.index, tops=self.tops
        )


def _place(totals: IntArray, ties: FloatArray, lo: int, hi: int, total: int, key: float) -> int:
    """Where a node with ``total`` and ``key`` goes among positions [lo, hi) of a list in order (highest total
    first, then lowest key): after every node with a higher total, or the same total and a key not above its own,
    as a stable sort of the list with the node last puts it. A binary search."""
    while lo < hi:
        mid = (lo + hi) // 2
        t = totals.item(mid)
        if t > total or (t == total and ties.item(mid) <= key):
            lo = mid + 1
        else:
            hi = mid
    return lo


def best_first(totals: IntArray, ties: FloatArray) -> IntArray:
    """``np.lexsort((ties, -totals))``: highest total first, then lowest tie key, equal pairs in their order. When
    no two keys are equal, as a sort of the keys and a stable sort of the totals in that order (a radix sort where
    the totals span fewer than 2**16 values), about four times faster than the lexsort at 30,000 nodes."""
    if len(totals) < 2:
        return np.arange(len(totals), dtype=np.int64)
    by_key = np.argsort(ties)
    keys = ties[by_key]
    if (keys[1:] == keys[:-1]).any():  # equal keys: the quicksort left them in no set order
        return np.lexsort((ties, -totals)).astype(np.int64)
    t = totals[by_key]
    top, span = int(t.max()), int(t.max()) - int(t.min())
    below = (top - t).astype(np.uint16) if span < 1 << 16 else top - t
    out: IntArray = by_key[np.argsort(below, kind="stable")]
    return out


def sort_scored(
    names: NameArray,
    cols: IntArray,
    totals: IntArray,
    raw: Mapping[str, IntArray],
    ties: TieOrder,
    index: Mapping[str, int] | None = None,
) -> tuple[int, SortedNodes]:
    """A scored cycle's choice and the rest, best first (upstream sorts its scores in a heap and pops the head):
    the node with the highest total, equal totals ordered by tie key (uniformly at random when the keys are
    random draws). ``names``: every node's name, by column (the rest is sorted when first read)."""
    tied = np.flatnonzero(totals == totals.max())
    head = int(tied[int(np.argmin(ties.keys(cols[tied])))]) if len(tied) > 1 else int(tied[0])
    rest = SortedNodes(
        names, totals, np.zeros(0), dict(raw), pos=1, cols=cols, head=head, index=index, tie_keys=ties.keys
    )
    return int(cols[head]), rest


@dataclass
class _BatchState:
    signature: str
    nodes: SortedNodes
    created: float


@dataclass
class _LastCycle:
    cycle: int = -1
    chosen: str = ""
    succeeded: bool = False


@dataclass
class OpportunisticBatch:
    """One profile's batch. ``rescore``: 1.37's re-scoring of a last node that still fits (1.35-1.36 give up).
    ``same_cycle``: 1.37 with GenericWorkload, where the pods of one pod-group cycle share a cycle number and may
    use each other's batch. ``nominated_gives_up``: 1.37, a pod with a nominated node does not use the batch (1.35-
    1.36 take the hint out of the list all the same, and try the nominated node)."""

    rescore: bool = False
    same_cycle: bool = False
    nominated_gives_up: bool = False
    state: _BatchState | None = None
    last: _LastCycle = field(default_factory=_LastCycle)
    batched_pods: int = 0  # pods placed on their hint
    hints: int = 0
    unusable: Counter[str] = field(default_factory=Counter)

    def get_node_hint(
        self,
        profile: BatchProfile,
        state: CycleState,
        pod: PodInfo,
        signature: str | None,
        cycle: int,
        now: float,
        index: Mapping[str, int],
        ties: TieOrder,
    ) -> str:
        """The node to try first for ``pod`` (upstream GetNodeHint), "" when the batch cannot be used. Called
        after PreFilter; ``index`` maps the snapshot's node names to columns."""
        if not self._compatible(pod, signature, cycle, now):
            return ""
        batch = self.state
        assert batch is not None
        col = index.get(self.last.chosen)
        if col is None:
            return self._give_up(NODE_MISSING)
        try:
            alive, groups = profile.run_filters(state, pod, np.array([col], dtype=np.int64))
        except PluginError:
            return self._give_up(FILTER_ERROR if self.rescore else NODE_NOT_FULL)
        if any(g.code == Code.ERROR for g in groups):
            return self._give_up(FILTER_ERROR if self.rescore else NODE_NOT_FULL)
        if bool(alive[0]):
            if not self.rescore:
                return self._give_up(NODE_NOT_FULL)
            if not self._rescore_last(profile, state, pod, col, batch, index, ties):
                return ""
        self.hints += 1
        return batch.nodes.pop()

    def store_schedule_results(
        self, signature: str | None, hinted: str, chosen: str, rest: SortedNodes | None, cycle: int, now: float
    ) -> None:
        """A cycle chose ``chosen`` (upstream StoreScheduleResults): the batch is kept when the cycle took its hint,
        replaced by ``rest`` (the scored nodes not chosen, best first) when the pod has a signature and ``rest``
        is not empty, dropped otherwise."""
        self.last = _LastCycle(cycle, chosen, True)
        if hinted == chosen:
            self.batched_pods += 1
            return
        if signature is not None and rest is not None and len(rest) > 0:
            self.state = _BatchState(signature, rest, now)
            return
        self.unusable[POD_NOT_BATCHABLE if rest is not None and len(rest) > 0 else EMPTY_LIST] += 1
        self.state = None

    def _give_up(self, reason: str) -> str:
        # Upstream only counts it: the state stays until the cycle stores its own results (or is never used,
        # the cycle counter having moved on).
        self.unusable[reason] += 1
        return ""

    def _compatible(self, pod: PodInfo, signature: str | None, cycle: int, now: float) -> bool:
        batch = self.state
        if batch is None or len(batch.nodes) == 0:
            return False
        if cycle != self.last.cycle + 1 and not (self.same_cycle and cycle == self.last.cycle):
            self._give_up(POD_SKIPPED)
            return False
        if not self.last.succeeded:
            self._give_up(POD_FAILED)
            return False
        if self.nominated_gives_up and pod.pod.nominated_node_name:
            self._give_up(POD_NOMINATED)
            return False
        if signature is None or signature != batch.signature:
            self._give_up(POD_INCOMPATIBLE)
            return False
        if now > batch.created + MAX_BATCH_AGE:
            self._give_up(EXPIRED)
            return False
        return True

    def _rescore_last(
        self,
        profile: BatchProfile,
        state: CycleState,
        pod: PodInfo,
        col: int,
        batch: _BatchState,
        index: Mapping[str, int],
        ties: TieOrder,
    ) -> bool:
        """1.37: the last chosen node still fits; score it again and rebuild the list with it (upstream
        rescoreHintedNode). False (and the batch not used) when a cached node is gone or a step fails.

        Where the re-normalization cannot change a cached node's total (every Score plugin of this cycle has no
        NormalizeScore or normalizes by its top raw score, and that top stands: ``_tops_stand``; the same plugins
        scored the cached nodes) and the list's keys still hold (the same nodes), the node is put back into the
        list where it belongs, in place: the list that sorting them all would give, at the cost of a binary search
        and of moving the nodes ahead of it."""
        nodes = batch.nodes
        nodes._sorted()
        # the same snapshot's names: every cached node is still there, at the same column
        same_cols = nodes.node_cols is not None and nodes.index is index
        in_place = same_cols and nodes.index_size == len(index) and nodes.pos > 0
        cached: SortedNodes | None = None
        if same_cols:
            assert nodes.node_cols is not None
            cand = np.append(nodes.node_cols[nodes.pos :], col).astype(np.int64)
        else:
            cached = nodes.remaining()
            cols: list[int] = []
            for name in cached.names.tolist():
                c = index.get(name)
                if c is None:
                    self._give_up(NODE_MISSING)
                    return False
                cols.append(c)
            cand = np.array([*cols, col], dtype=np.int64)
        side = state.clone()  # what the re-scoring writes stays out of the cycle's state
        try:
            if not profile.run_pre_score(side, pod, cand).ok:
                self._give_up(PRESCORE_ERROR)
                return False
        except PluginError:
            self._give_up(PRESCORE_ERROR)
            return False
        one = np.array([col], dtype=np.int64)
        try:
            fresh = profile.run_raw_score(side, pod, one)
        except PluginError:
            self._give_up(RESCORE_ERROR)
            return False
        raw_one = {k: int(v[0]) for k, v in fresh.items()}
        if in_place and fresh.keys() == nodes.raw.keys() and _tops_stand(profile.top_normalized(side), nodes, raw_one):
            try:  # the other nodes' totals stand: they were checked when the list was made
                total = profile.rescored_total(side, pod, raw_one, nodes.tops or {})
            except PluginError:
                self._give_up(NORMALIZE_ERROR)
                return False
            key = float(ties.keys(one)[0])
            nodes.put_back(self.last.chosen, col, total, key, raw_one)
            return True
        if cached is None:
            cached = nodes.remaining()
        n = len(cached)
        # a plugin the cached nodes were not scored by counts 0 for them (upstream's zero NodeScore)
        raw = {k: np.concatenate([cached.raw.get(k, np.zeros(n, dtype=np.int64)), v]) for k, v in fresh.items()}
        try:
            totals = profile.normalize_scores(side, pod, cand, raw)
        except PluginError:
            self._give_up(NORMALIZE_ERROR)
            return False
        if ties.per_node:
            keys = ties.keys(cand)
        else:
            keys = np.concatenate([cached.ties, ties.keys(np.array([col], dtype=np.int64))])
        # the cached nodes kept their totals and keys: they are still in the list's order
        kept = bool(np.array_equal(totals[:n], cached.totals) and np.array_equal(keys[:n], cached.ties))
        at = _insertion(totals, keys, kept)
        tops = {k: int(v.max()) for k, v in raw.items()}  # these nodes were normalized together
        if at is None:
            names = np.append(cached.names, np.array([self.last.chosen], dtype=object))
            batch.nodes = SortedNodes.build(names, totals, keys, raw, cand, index)
            batch.nodes.tops = tops
            return True

        def put(a: npt.NDArray[Any]) -> npt.NDArray[Any]:  # the cached nodes' array, the last node's value at ``at``
            return _inserted(a[:n], at, a[n])

        batch.nodes = SortedNodes(
            _inserted(cached.names, at, self.last.chosen), put(totals), put(keys), {k: put(v) for k, v in raw.items()},
            0, None, 0, put(cand), index, tops=tops,
        )  # fmt: skip
        return True


def _tops_stand(normalized: list[str] | None, nodes: SortedNodes, raw: Mapping[str, int]) -> bool:
    """Whether scoring one node again (``raw``) and normalizing it with the rest of ``nodes`` leaves the others'
    totals as they are: every plugin of the cycle either has no NormalizeScore or normalizes by the highest raw
    score (``normalized``, not None), and that highest score, over the list's nodes and this one, is the one the
    list was normalized with."""
    if normalized is None:
        return False
    if not normalized:
        return True
    tops = nodes.tops
    if tops is None:
        return False
    for name in normalized:
        top = tops.get(name)
        if top is None or max(int(nodes.raw[name][nodes.pos :].max()), raw[name]) != top:
            return False
    return True


def _inserted(a: npt.NDArray[Any], at: int, value: object) -> npt.NDArray[Any]:
    """``a`` with ``value`` inserted at position ``at`` (a new array, one longer)."""
    out = np.empty(len(a) + 1, dtype=a.dtype)
    out[:at], out[at], out[at + 1 :] = a[:at], value, a[at:]
    return out


def _insertion(totals: IntArray, keys: FloatArray, in_order: bool = False) -> int | None:
    """Where the last node goes when the others are already in order: the list ``SortedNodes.build`` would make
    from these arrays (a stable lexsort, highest total first, then lowest key) is then the others' order with the
    last node put after every node it does not beat. None when the others are not in that order (their totals
    changed with the re-normalization): the caller sorts them all. ``in_order``: the caller knows they are (a
    sorted list's, unchanged), so it is not checked. O(n) where the sort is O(n log n): in a profile without
    NormalizeScore, or where the rescored node moved no maximum, nothing else changes."""
    n = len(totals) - 1
    if n < 1:
        return 0
    if not in_order:
        step = np.diff(totals[:n])
        if (step > 0).any() or ((step == 0) & (np.diff(keys[:n]) < 0)).any():
            return None
    return _place(totals, keys, 0, n, int(totals[n]), float(keys[n]))
