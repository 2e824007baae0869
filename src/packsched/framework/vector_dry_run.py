"""Preemption's dry run on arrays, for the common case: victims are the node's lower-priority pods and only their
requests matter.

When every filter of the cycle judges a node either by its free resources and pod count (a
:class:`~packsched.framework.interface.ResourceFitFilter`: NodeResourcesFit) or without looking at placed pods at
all (``filter_reads_pods = False``: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity), no PreFilter
extension is active and no PodDisruptionBudget exists, upstream's SelectVictimsOnNode reduces to arithmetic on
each node's amounts: take every lower-priority pod off, check the pod fits, then put the pods back one at a time,
the most important first, keeping each one the pod still fits beside. :func:`run` does exactly that for every
potential node at once, reading the victims from the snapshot's pod table, with one numpy step per reprieve position
instead of a filter call and a snapshot update per pod; it never changes the snapshot. Nominated pods of equal or higher
priority count on their nodes, as in ``Framework.run_filters_with_nominated``.

The per-pod path (:meth:`packsched.framework.preemption.Evaluator.dry_run`) stays the reference: it handles every
other case, and whatever this path cannot settle (no candidate anywhere, whose message needs each node's status).
A property test runs both on random clusters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import FilterPlugin, Handle, ProfileRuntime, ResourceFitFilter
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot

# pickOneNodeForPreemption adds MaxInt32+1 to every priority before summing, so that a node with a few
# negative-priority victims is not preferred over a node with fewer victims of the same negative priority.
PRIORITY_SHIFT = 2**31


@dataclass
class Plan:
    """The filters of this cycle, split as the vectorised dry run needs them."""

    fit: ResourceFitFilter
    static: list[FilterPlugin]


_NONE = np.zeros(0, dtype=np.int64)


@dataclass
class Found:
    """The candidates in the order the dry run met them (one entry per candidate), with what
    pickOneNodeForPreemption compares; a candidate's victims (most important first) are made into a list only
    when asked for, and only while the snapshot is as the dry run saw it."""

    snap: Snapshot
    generation: int  # the snapshot's when the dry run ran: victims() is valid only while it holds
    cols: IntArray = field(default_factory=lambda: _NONE)
    top_priority: IntArray = field(default_factory=lambda: _NONE)  # the highest victim priority (the first's)
    priority_sum: IntArray = field(default_factory=lambda: _NONE)  # victims' priorities, each shifted, summed
    n_victims: IntArray = field(default_factory=lambda: _NONE)
    first_start: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))  # the first victim's start
    first_seq: IntArray = field(default_factory=lambda: _NONE)  # ... and its start order
    victim_rows: IntArray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))  # table rows, -1 after

    def __len__(self) -> int:
        return len(self.cols)

    def victims(self, i: int) -> list[PodInfo]:
        """The victims of candidate ``i``, the most important first (read before the snapshot changes)."""
        if self.snap.generation != self.generation:
            raise RuntimeError("the snapshot changed since the dry run: its table rows may hold other pods")
        rows = self.victim_rows[i]
        infos = self.snap.table.infos
        return [p for p in (infos[r] for r in rows[rows >= 0].tolist()) if p is not None]

    def pick(self) -> int:
        """Upstream pickOneNodeForPreemption (no PDB violations here): the index of the chosen candidate."""
        keep: IntArray | None = None  # the candidates still tied; None: every one
        # (score, whether the lowest wins): each narrows the candidates still tied, until one is left
        scores: list[tuple[npt.NDArray[np.int64] | npt.NDArray[np.float64], bool]] = [
            (self.top_priority, True),
            (self.priority_sum, True),
            (self.n_victims, True),
            (self.first_start, False),  # the latest start among the highest-priority victims wins
            (self.first_seq, False),
        ]
        for score, lowest in scores:
            if keep is not None and len(keep) == 1:
                break
            sc = score if keep is None else score[keep]
            best = sc == (sc.min() if lowest else sc.max())
            if keep is not None:
                keep = keep[best]
            elif not best.all():  # (all tied on this score: every candidate stays, no gather)
                keep = np.flatnonzero(best)
        return int(keep[0]) if keep is not None else 0


@dataclass
class _Outcome:
    """The reprieve's result on some nodes, one entry per node: what pickOneNodeForPreemption compares, and the
    victims' table rows (the most important first, -1 after the last)."""

    top_priority: IntArray
    priority_sum: IntArray
    n_victims: IntArray
    first_start: npt.NDArray[np.float64]
    first_seq: IntArray
    victim_rows: IntArray


class _Kept:
    """A :class:`ReprieveCache` entry: one kind of preemptor's outcomes on every node column, each with the inputs
    it was computed from (the node's table stamp; its used and free amounts of the demanded resources, pod count
    and room, as the dry run saw them)."""

    def __init__(self, n_inputs: int) -> None:
        self.stamp: IntArray = np.zeros(0, dtype=np.int64)  # -1: not computed
        self.inputs: IntArray = np.zeros((n_inputs, 0), dtype=np.int64)
        self.top_priority: IntArray = np.zeros(0, dtype=np.int64)
        self.priority_sum: IntArray = np.zeros(0, dtype=np.int64)
        self.n_victims: IntArray = np.zeros(0, dtype=np.int64)
        self.first_start: npt.NDArray[np.float64] = np.zeros(0)
        self.first_seq: IntArray = np.zeros(0, dtype=np.int64)
        self.victim_rows: IntArray = np.zeros((0, 0), dtype=np.int64)

    def grow(self, n: int) -> None:
        have = len(self.stamp)
        if n <= have:
            return
        size = max(n, 2 * have)
        self.stamp = np.concatenate([self.stamp, np.full(size - have, -1, dtype=np.int64)])
        self.inputs = np.hstack([self.inputs, np.zeros((len(self.inputs), size - have), dtype=np.int64)])
        self.top_priority = np.concatenate([self.top_priority, np.zeros(size - have, dtype=np.int64)])
        self.priority_sum = np.concatenate([self.priority_sum, np.zeros(size - have, dtype=np.int64)])
        self.n_victims = np.concatenate([self.n_victims, np.zeros(size - have, dtype=np.int64)])
        self.first_start = np.concatenate([self.first_start, np.zeros(size - have)])
        self.first_seq = np.concatenate([self.first_seq, np.zeros(size - have, dtype=np.int64)])
        self.victim_rows = np.vstack(
            [self.victim_rows, np.full((size - have, self.victim_rows.shape[1]), -1, dtype=np.int64)]
        )

    def keep(self, cols: IntArray, stamps: IntArray, inputs: IntArray, out: _Outcome) -> None:
        depth = out.victim_rows.shape[1]
        if depth > self.victim_rows.shape[1]:
            pad = np.full((len(self.stamp), depth - self.victim_rows.shape[1]), -1, dtype=np.int64)
            self.victim_rows = np.hstack([self.victim_rows, pad])
        self.stamp[cols] = stamps
        self.inputs[:, cols] = inputs
        self.top_priority[cols] = out.top_priority
        self.priority_sum[cols] = out.priority_sum
        self.n_victims[cols] = out.n_victims
        self.first_start[cols] = out.first_start
        self.first_seq[cols] = out.first_seq
        self.victim_rows[cols, :depth] = out.victim_rows
        self.victim_rows[cols, depth:] = -1


class ReprieveCache:
    """The reprieve's outcome per node column, kept between dry runs: preemptors of the same priority demanding
    the same amounts find the same victims on a node whose pods (its pod table stamp), used and free amounts,
    pod count and room have not changed, so only the nodes that changed go through the reprieve again. Kept for
    a few kinds of preemptor at a time, for one snapshot's pod table."""

    KINDS = 8

    def __init__(self) -> None:
        self._table: object | None = None
        self._kinds: dict[tuple[int, tuple[int, ...], tuple[int, ...]], _Kept] = {}

    def kept(self, snap: Snapshot, pod: PodInfo, rows: IntArray, amounts: IntArray) -> _Kept:
        if self._table is not snap.table:
            self._table = snap.table
            self._kinds.clear()
        key = (pod.priority, tuple(rows.tolist()), tuple(amounts.ravel().tolist()))
        entry = self._kinds.pop(key, None)
        if entry is None:
            entry = _Kept(2 * len(rows) + 2)
            if len(self._kinds) >= self.KINDS:
                del self._kinds[next(iter(self._kinds))]  # the least recently used kind
        self._kinds[key] = entry
        entry.grow(snap.n)
        return entry


def plan(fwk: ProfileRuntime, state: CycleState, pdbs: Sequence[object]) -> Plan | None:
    """The vectorised dry run's view of this cycle's filters (``ProfileRuntime.arithmetic_filters``), or None
    where it does not apply: a PreFilter extension is active, a PodDisruptionBudget exists, or a filter reads
    more than amounts and pod counts."""
    if pdbs or fwk.has_active_extensions(state):
        return None
    split = fwk.arithmetic_filters(state)
    return Plan(*split) if split is not None else None


def run(
    handle: Handle,
    the_plan: Plan,
    state: CycleState,
    pod: PodInfo,
    order: IntArray,
    num_candidates: int,
    cache: ReprieveCache | None = None,
) -> Found | None:
    """The first ``num_candidates`` candidates among the nodes of ``order`` (node columns, in the dry run's
    order), each node judged as SelectVictimsOnNode would with every lower-priority pod a potential victim.
    None when a node needs the per-pod path (it fits without evicting anything: upstream reports an error).

    Every node is first judged with all its potential victims off, from the pod table's per-priority totals (no
    pod is looked at); then only the first ``num_candidates`` nodes where the pod fits so go through the
    reprieve, their victims in order (with ``cache``, only those whose outcome it does not hold)."""
    snap = handle.snapshot
    table = snap.table
    table.ensure_resources(len(snap.resources))
    demand = the_plan.fit.fit_demand(state, pod, snap)
    rows = np.array([r for r, _ in demand], dtype=np.intp)
    amounts = np.array([a for _, a in demand], dtype=np.int64)[:, None]
    found = Found(snap=snap, generation=snap.generation)
    cols = np.asarray(order, dtype=np.intp)
    if len(cols) == 0:
        return found
    # the nominated pods the filters count on each node (equal or higher priority, not ``pod``), asked for the
    # demanded resources as the cycle's filters asked just before (the nominator answers that again without a pass)
    nominated = handle.nominated_totals(pod, [snap.resources[r] for r, _ in demand])
    low_count, low_amounts = table.below(pod.priority, rows, snap.n)
    # over every node in the snapshot's order (whole rows are cheaper than gathers), then in the dry run's order:
    # _fits's verdict a resource row at a time
    count_all = snap.pod_count - low_count
    if nominated is not None:
        count_all += nominated[0]
    playing = np.ones(snap.n, dtype=bool)
    for p in the_plan.static:
        for rej in p.filter(state, pod, snap, slice(None)):
            playing &= ~rej.mask
    playing &= count_all + 1 <= snap.allowed_pods
    requested, alloc = snap.requested, snap.alloc
    for i, row in enumerate(rows.tolist()):
        used_row = requested[row] - low_amounts[i]
        if nominated is not None:
            used_row += nominated[1][i]
        playing &= amounts[i] <= alloc[row] - used_row
    playing &= low_count > 0
    cand = cols[np.flatnonzero(playing[cols])[:num_candidates]]
    if len(cand) == 0:
        return found
    # a candidate passes every static filter (it plays), so the reprieve depends on these inputs and the node's
    # pods alone; the same sums at the candidates
    used = requested.take(cand, axis=1)[rows] - low_amounts.take(cand, axis=1)
    if nominated is not None:
        used += nominated[1].take(cand, axis=1)
    count, free, room = count_all[cand], alloc.take(cand, axis=1)[rows], snap.allowed_pods[cand]
    if cache is None:
        out = _reprieve(snap, pod, cand, rows, amounts, used, count, free, room)
    else:
        kept = cache.kept(snap, pod, rows, amounts)
        stamps = table.stamps(cand)
        changed = kept.stamp[cand] != stamps
        # the inputs row by row, as _Kept.inputs holds them: used, free, count, room
        for i, now in enumerate([*used, *free, count, room]):
            changed |= kept.inputs[i, cand] != now
        stale = np.flatnonzero(changed)
        if len(stale):
            at = stale if len(stale) < len(cand) else slice(None)
            used_at, free_at, count_at, room_at = used[:, at], free[:, at], count[at], room[at]
            computed = _reprieve(snap, pod, cand[at], rows, amounts, used_at, count_at, free_at, room_at)
            inputs = np.vstack([used_at, free_at, count_at[None, :], room_at[None, :]])
            kept.keep(cand[at], stamps[at], inputs, computed)
        out = _Outcome(
            kept.top_priority[cand],
            kept.priority_sum[cand],
            kept.n_victims[cand],
            kept.first_start[cand],
            kept.first_seq[cand],
            kept.victim_rows[cand],
        )
    if (out.n_victims == 0).any():
        return None  # the pod fits there as the node is: the per-pod path reports it as upstream does
    found.cols = cand.astype(np.int64)
    found.top_priority = out.top_priority
    found.priority_sum = out.priority_sum
    found.n_victims = out.n_victims
    found.first_start = out.first_start
    found.first_seq = out.first_seq
    found.victim_rows = out.victim_rows
    return found


# up to this many nodes, their potential victims' rows come from the nodes' own pods instead of a pass over the
# whole pod table
FEW_NODES = 32


def _potential_rows(snap: Snapshot, cols: IntArray, below_priority: int) -> IntArray:
    """The pod table rows of the pods on nodes ``cols`` whose priority is below ``below_priority`` (in no
    particular order)."""
    table = snap.table
    if len(cols) > FEW_NODES:
        in_cand = np.zeros(snap.n, dtype=bool)
        in_cand[cols] = True
        return table.rows_on(in_cand, below_priority)
    row_of, pods_on = table.row_of, snap.pods_on
    every = np.array([row_of[id(p)] for col in cols.tolist() for p in pods_on[col].values()], dtype=np.int64)
    out: IntArray = every[table.priority[every] < below_priority]
    return out


def _reprieve(
    snap: Snapshot,
    pod: PodInfo,
    cols: IntArray,
    rows: IntArray,
    amounts: IntArray,
    used: IntArray,
    count: IntArray,
    free: IntArray,
    room: IntArray,
) -> _Outcome:
    """The reprieve on nodes ``cols`` (where the pod passes the static filters and fits with every potential
    victim off: ``used`` and ``count`` say so): their potential victims come back one position at a time, the
    most important first, and each one the pod no longer fits beside is a victim."""
    table = snap.table
    m = len(cols)
    prows = _potential_rows(snap, cols, pod.priority)
    where = np.full(snap.n, -1, dtype=np.int64)
    where[cols] = np.arange(m)
    at = where[table.node[prows]]
    prio = table.priority[prows]
    start = table.start[prows]
    seq = table.start_seq[prows]
    # each node's potential victims, the most important first (higher priority, earlier start), then in the
    # node's own order: upstream's stable sort of the node's pod list by MoreImportantPod
    idx = importance_order([at, -prio, start, seq, table.order[prows]])
    prows, at, prio, start, seq = prows[idx], at[idx], prio[idx], start[idx], seq[idx]
    per_node = np.bincount(at, minlength=m)
    k = np.arange(len(prows)) - (np.cumsum(per_node) - per_node)[at]
    depth = int(per_node.max()) if m else 0
    held = np.zeros((len(rows), m, depth), dtype=np.int64)
    held[:, at, k] = table.requests[np.ix_(rows, prows)]
    present = np.zeros((m, depth), dtype=bool)
    present[at, k] = True
    victim = np.zeros((m, depth), dtype=bool)
    passes = np.ones(m, dtype=bool)
    for j in range(depth):
        back = present[:, j]
        trial = used + held[:, :, j]
        ok = _fits(passes, room, free, amounts, trial, count + 1)
        stays = back & ok
        used = np.where(stays, trial, used)
        count = count + stays
        victim[:, j] = back & ~ok
    n_victims = victim.sum(axis=1)
    grid_prio = np.zeros((m, depth), dtype=np.int64)
    grid_prio[at, k] = prio
    grid_start = np.zeros((m, depth), dtype=np.float64)
    grid_start[at, k] = start
    grid_seq = np.zeros((m, depth), dtype=np.int64)
    grid_seq[at, k] = seq
    first = victim.argmax(axis=1)  # victims keep the importance order: the first is the most important
    every = np.arange(m)
    # the victims' rows, packed to the left in the importance order
    grid_rows = np.full((m, depth), -1, dtype=np.int64)
    grid_rows[at, k] = prows
    vi, vj = np.nonzero(victim)
    victim_rows = np.full((m, int(n_victims.max()) if m else 0), -1, dtype=np.int64)
    victim_rows[vi, (np.cumsum(victim, axis=1) - 1)[vi, vj]] = grid_rows[vi, vj]
    return _Outcome(
        top_priority=grid_prio[every, first],
        priority_sum=(grid_prio * victim).sum(axis=1) + PRIORITY_SHIFT * n_victims,
        n_victims=n_victims,
        first_start=grid_start[every, first],
        first_seq=grid_seq[every, first],
        victim_rows=victim_rows,
    )


def _fits(
    ok_static: BoolArray, room: IntArray, free: IntArray, amounts: IntArray, used: IntArray, count: IntArray
) -> BoolArray:
    """NodeResourcesFit's verdict (room for one more pod, each demanded amount free) and the static filters'."""
    out: BoolArray = ok_static & (count + 1 <= room)
    for i in range(len(amounts)):  # a resource at a time (a reduction over the rows costs more)
        out &= amounts[i] <= free[i] - used[i]
    return out


def importance_order(keys: Sequence[np.ndarray]) -> IntArray:
    """``np.lexsort`` of ``keys`` given most significant first, the last one unique: the keys are packed into
    one int64 (each as its offset from its minimum; a float key as its rank) and sorted once, which is several
    times faster than a lexsort of five keys; a lexsort where the packed value would not fit."""
    packed = np.zeros(len(keys[0]), dtype=np.int64)
    span = 1
    for key in keys:
        if len(key) == 0:
            break
        if key.dtype.kind == "f":
            if key.min() == key.max():
                continue
            key = np.unique(key, return_inverse=True)[1].astype(np.int64)
        low = int(key.min())
        width = int(key.max()) - low + 1
        span *= width
        if span >= 2**62:
            out: IntArray = np.lexsort(tuple(reversed(keys))).astype(np.int64)
            return out
        if width > 1:
            packed = packed * width + (key - low)
    order: IntArray = np.argsort(packed, kind="stable").astype(np.int64)
    return order
