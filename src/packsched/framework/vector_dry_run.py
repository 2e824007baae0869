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
from packsched.framework.nodeorder import first_feasible, rotated_feasible
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


# a kept outcome's row: where the victims' table rows start
_VICTIMS = 4


class _Kept:
    """A :class:`ReprieveCache` entry: one kind of preemptor's view of every node column, kept current between dry
    runs. ``fits``: whether the node has a potential victim and the pod fits its free amounts and room once every
    potential victim is off (nominated pods counted); where ``fresh``, the reprieve's outcome on the node, computed
    since the node last changed. :meth:`sync` brings both up to date from the journals of the pod table (a pod of
    the node placed, removed, started or renumbered) and of the nominations: only the columns named there are
    judged again, and their outcomes are no longer fresh."""

    def __init__(self, n_rows: int) -> None:
        self.synced = False
        self.n = 0  # node columns held
        self.node_generation = -1
        self.table_clock = 0  # the pod table's stamp clock when last synced
        self.nominations_pos = 0  # the nominations' journal position when last synced
        # the last preemptor's own nominated column, judged with that pod's totals (its own nomination left out):
        # judged again for the next one
        self.own = -1
        self.fits: BoolArray = np.zeros(0, dtype=bool)
        self.fresh: BoolArray = np.zeros(0, dtype=bool)
        self.free_seen: IntArray = np.zeros((n_rows, 0), dtype=np.int64)  # the demanded rows' allocatable
        self.room_seen: IntArray = np.zeros(0, dtype=np.int64)  # each node's pod room
        # the outcome, a row per column: top_priority, priority_sum, n_victims, first_seq, then the victims' table
        # rows (-1 after the last), so that one gather reads the candidates' rows; and first_start
        self.ints: IntArray = np.zeros((0, _VICTIMS), dtype=np.int64)
        self.first_start: npt.NDArray[np.float64] = np.zeros(0)

    def sync(
        self,
        handle: Handle,
        snap: Snapshot,
        pod: PodInfo,
        rows: IntArray,
        amounts: IntArray,
        low: tuple[IntArray, IntArray],
        nominated: tuple[IntArray, IntArray] | None,
    ) -> None:
        """Bring ``fits`` and ``fresh`` up to date for ``pod`` (of this entry's kind): ``low`` and ``nominated``
        are its dry run's totals (the pods below its priority; the nominated pods counted for it)."""
        n = snap.n
        changed = snap.table.changed_since(self.table_clock)
        nominations, nominations_end = handle.nominations_changed_since(self.nominations_pos)
        own = handle.nominated_col(pod)
        own = -1 if own is None or own >= n else own
        if not self.synced or n != self.n or changed is None or nominations is None:
            # everything again: the first time, nodes added, or a journal that no longer reaches back
            self.fits = _fits_without_victims(snap, rows, amounts, low, nominated, slice(None))
            self.fresh = np.zeros(n, dtype=bool)
            self.free_seen, self.room_seen = snap.alloc[rows], snap.allowed_pods.copy()
            if n != self.n:
                self.ints = np.full((n, self.ints.shape[1]), -1, dtype=np.int64)
                self.first_start = np.zeros(n)
        else:
            dirty = changed + nominations
            if self.own >= 0:
                dirty.append(self.own)
            if own >= 0:
                dirty.append(own)
            # (a nomination to a column past the nodes counts nowhere)
            cols = np.array(sorted({col for col in dirty if col < n}), dtype=np.intp)
            if self.node_generation != snap.node_generation:
                # nodes changed (labels, taints, allocatable): every verdict again; outcomes stay where the
                # demanded allocatable and the pod room did not change
                free, room = snap.alloc[rows], snap.allowed_pods
                moved = (free != self.free_seen).any(axis=0) | (room != self.room_seen)
                self.free_seen, self.room_seen = free, room.copy()
                self.fresh &= ~moved
                self.fits = _fits_without_victims(snap, rows, amounts, low, nominated, slice(None))
            elif len(cols) * 4 > n:  # many: whole rows cost less than gathers
                self.fits = _fits_without_victims(snap, rows, amounts, low, nominated, slice(None))
            elif len(cols):
                self.fits[cols] = _fits_without_victims(snap, rows, amounts, low, nominated, cols)
            self.fresh[cols] = False
        self.synced = True
        self.n = n
        self.node_generation = snap.node_generation
        self.table_clock = snap.table.clock
        self.nominations_pos = nominations_end
        self.own = own

    def keep(self, cols: IntArray, out: _Outcome) -> None:
        """The outcomes on ``cols`` (distinct), computed now: fresh until the nodes change."""
        end = _VICTIMS + out.victim_rows.shape[1]
        if end > self.ints.shape[1]:
            pad = np.full((self.n, end - self.ints.shape[1]), -1, dtype=np.int64)
            self.ints = np.hstack([self.ints, pad])
        block = np.full((len(cols), self.ints.shape[1]), -1, dtype=np.int64)
        block[:, :_VICTIMS] = np.stack([out.top_priority, out.priority_sum, out.n_victims, out.first_seq], axis=1)
        block[:, _VICTIMS:end] = out.victim_rows
        self.ints[cols] = block
        self.first_start[cols] = out.first_start
        self.fresh[cols] = True

    def outcome(self, cols: IntArray) -> _Outcome:
        """The kept outcomes on ``cols`` (each fresh), gathered."""
        ints = self.ints.take(cols, axis=0)
        return _Outcome(ints[:, 0], ints[:, 1], ints[:, 2], self.first_start.take(cols), ints[:, 3], ints[:, _VICTIMS:])


class ReprieveCache:
    """Per kind of preemptor (priority, demanded resource rows and amounts), every node's verdict with its
    potential victims off and the reprieve's outcome, kept between dry runs (:class:`_Kept`): preemptors of one
    kind find the same victims on a node whose pods, nominations and allocatable have not changed, so a dry run
    judges again only the nodes named in the journals since the last one of its kind. Kept for a few kinds at a
    time, for one snapshot's pod table."""

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
            entry = _Kept(len(rows))
            if len(self._kinds) >= self.KINDS:
                del self._kinds[next(iter(self._kinds))]  # the least recently used kind
        self._kinds[key] = entry
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
    potential: IntArray,
    offset: int,
    num_candidates: int,
    cache: ReprieveCache | None = None,
) -> Found | None:
    """The first ``num_candidates`` candidates among the nodes of ``potential`` (node columns in ascending order,
    as ``preemption.potential_nodes`` gives them) from the one at ``offset`` round (the dry run's order), each node
    judged as SelectVictimsOnNode would with every lower-priority pod a potential victim. None when a node needs
    the per-pod path (it fits without evicting anything: upstream reports an error).

    Every node is first judged with all its potential victims off, from the pod table's per-priority totals (no
    pod is looked at); then only the first ``num_candidates`` nodes where the pod fits so go through the
    reprieve, their victims in order. With ``cache``, both come from what it keeps for the pod's kind, brought up
    to date on the nodes changed since (the static filters still judge every node)."""
    snap = handle.snapshot
    table = snap.table
    table.ensure_resources(len(snap.resources))
    demand = the_plan.fit.fit_demand(state, pod, snap)
    rows = np.array([r for r, _ in demand], dtype=np.intp)
    amounts = np.array([a for _, a in demand], dtype=np.int64)[:, None]
    found = Found(snap=snap, generation=snap.generation)
    if len(potential) == 0:
        return found
    # the nominated pods the filters count on each node (equal or higher priority, not ``pod``), asked for the
    # demanded resources as the cycle's filters asked just before (the nominator answers that again without a pass)
    nominated = handle.nominated_totals(pod, [snap.resources[r] for r, _ in demand])
    low = table.below(pod.priority, rows, snap.n)
    kept = cache.kept(snap, pod, rows, amounts) if cache is not None else None
    if kept is None:
        playing = _fits_without_victims(snap, rows, amounts, low, nominated, slice(None))
    else:
        kept.sync(handle, snap, pod, rows, amounts, low, nominated)
        playing = kept.fits.copy() if the_plan.static else kept.fits
    for p in the_plan.static:
        for rej in p.filter(state, pod, snap, slice(None)):
            playing &= ~rej.mask
    cand = _first_playing(playing, potential, offset, num_candidates)
    if len(cand) == 0:
        return found
    # a candidate passes every static filter (it plays), so the reprieve depends on its inputs and the node's
    # pods alone
    if kept is None:
        out = _reprieve(snap, pod, cand, rows, amounts, *_inputs(snap, rows, low, nominated, cand))
    else:
        stale = cand[~kept.fresh[cand]]
        if len(stale):
            kept.keep(stale, _reprieve(snap, pod, stale, rows, amounts, *_inputs(snap, rows, low, nominated, stale)))
        out = kept.outcome(cand)
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


def _first_playing(playing: BoolArray, potential: IntArray, offset: int, k: int) -> IntArray:
    """The first ``k`` columns where ``playing`` in the order of ``potential`` (ascending columns) rotated to
    ``offset``: the columns' own order from ``potential[offset]`` round, over the columns of ``potential`` only, read
    a stretch at a time (``nodeorder.first_feasible``) instead of gathering every node's verdict."""
    n = len(playing)
    if len(potential) < n:
        among = np.zeros(n, dtype=bool)
        among[potential] = True
        playing = playing & among
    start = int(potential[offset])
    if k < n:
        return first_feasible(playing, None, start, k)[0].astype(np.intp, copy=False)
    return rotated_feasible(playing, start)[:k]


def _fits_without_victims(
    snap: Snapshot,
    rows: IntArray,
    amounts: IntArray,
    low: tuple[IntArray, IntArray],
    nominated: tuple[IntArray, IntArray] | None,
    at: IntArray | slice,
) -> BoolArray:
    """On the nodes ``at`` (columns, or every node): whether the node holds a potential victim and the pod fits
    its room and the demanded amounts once every potential victim is off (``low``: how many pods below the pod's
    priority each node holds, and what they request of ``rows``), ``nominated`` pods counted. The static filters
    are not asked. Whole rows a resource at a time for every node (cheaper than gathers)."""
    low_count, low_amounts = low
    count = snap.pod_count[at] - low_count[at]
    if nominated is not None:
        count += nominated[0][at]
    ok: BoolArray = (count + 1 <= snap.allowed_pods[at]) & (low_count[at] > 0)
    requested, alloc = snap.requested, snap.alloc
    for i, row in enumerate(rows.tolist()):
        used = requested[row, at] - low_amounts[i, at]
        if nominated is not None:
            used += nominated[1][i, at]
        ok &= amounts[i] <= alloc[row, at] - used
    return ok


def _inputs(
    snap: Snapshot,
    rows: IntArray,
    low: tuple[IntArray, IntArray],
    nominated: tuple[IntArray, IntArray] | None,
    cols: IntArray,
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """What the reprieve reads of nodes ``cols`` with every potential victim off: the demanded amounts used (a
    row per demanded resource) and the pod count, nominated pods counted; the allocatable and the pod room."""
    low_count, low_amounts = low
    used = snap.requested.take(cols, axis=1)[rows] - low_amounts.take(cols, axis=1)
    count = snap.pod_count[cols] - low_count[cols]
    if nominated is not None:
        used += nominated[1].take(cols, axis=1)
        count += nominated[0][cols]
    return used, count, snap.alloc.take(cols, axis=1)[rows], snap.allowed_pods[cols]


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
