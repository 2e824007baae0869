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
    victim_rows: IntArray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))  # table rows, -1: none
    is_victim: BoolArray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))  # (candidate, position)

    def __len__(self) -> int:
        return len(self.cols)

    def victims(self, i: int) -> list[PodInfo]:
        """The victims of candidate ``i``, the most important first (read before the snapshot changes)."""
        if self.snap.generation != self.generation:
            raise RuntimeError("the snapshot changed since the dry run: its table rows may hold other pods")
        rows = self.victim_rows[i][self.is_victim[i]]
        infos = self.snap.table.infos
        return [p for p in (infos[r] for r in rows.tolist()) if p is not None]

    def pick(self) -> int:
        """Upstream pickOneNodeForPreemption (no PDB violations here): the index of the chosen candidate."""
        keep = np.arange(len(self))
        scores = [
            -self.top_priority,
            -self.priority_sum,
            -self.n_victims,
            self.first_start,  # the latest start among the highest-priority victims wins
            self.first_seq,
        ]
        for score in scores:
            if len(keep) == 1:
                break
            sc = score[keep]
            keep = keep[sc == sc.max()]
        return int(keep[0])


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
) -> Found | None:
    """The first ``num_candidates`` candidates among the nodes of ``order`` (node columns, in the dry run's
    order), each node judged as SelectVictimsOnNode would with every lower-priority pod a potential victim.
    None when a node needs the per-pod path (it fits without evicting anything: upstream reports an error).

    Every node is first judged with all its potential victims off, from the pod table's per-priority totals (no
    pod is looked at); then only the first ``num_candidates`` nodes where the pod fits so go through the
    reprieve, their victims in order."""
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
    # the nominated pods the filters count on each node (equal or higher priority, not ``pod``)
    nominated = handle.nominated_totals(pod, [snap.resources[r] for r in rows.tolist()])
    low_count, low_amounts = table.below(pod.priority, rows, snap.n)
    # over every node in the snapshot's order (whole rows are cheaper than gathers), then in the dry run's order
    used_all = snap.requested[rows] - low_amounts
    count_all = snap.pod_count - low_count
    if nominated is not None:
        count_all += nominated[0]
        used_all += nominated[1]
    ok_static = np.ones(snap.n, dtype=bool)
    for p in the_plan.static:
        for rej in p.filter(state, pod, snap, slice(None)):
            ok_static &= ~rej.mask
    free_all = snap.alloc[rows]
    playing = _fits(ok_static, snap.allowed_pods, free_all, amounts, used_all, count_all) & (low_count > 0)
    cand = cols[np.flatnonzero(playing[cols])[:num_candidates]]
    if len(cand) == 0:
        return found
    return _reprieve(
        found,
        pod,
        cand,
        rows,
        amounts,
        used_all[:, cand],
        count_all[cand],
        free_all[:, cand],
        snap.allowed_pods[cand],
        ok_static[cand],
    )


def _reprieve(
    found: Found,
    pod: PodInfo,
    cols: IntArray,
    rows: IntArray,
    amounts: IntArray,
    used: IntArray,
    count: IntArray,
    free: IntArray,
    room: IntArray,
    ok_static: BoolArray,
) -> Found | None:
    """The reprieve on nodes ``cols`` (where the pod fits with every potential victim off: ``used`` and ``count``
    say so): their potential victims come back one position at a time, the most important first, and each one
    the pod no longer fits beside is a victim. Fills ``found`` with the candidates."""
    snap = found.snap
    table = snap.table
    m = len(cols)
    in_cand = np.zeros(snap.n, dtype=bool)
    in_cand[cols] = True
    prows = table.rows_on(in_cand, pod.priority)
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
    depth = int(per_node.max())
    held = np.zeros((len(rows), m, depth), dtype=np.int64)
    held[:, at, k] = table.requests[np.ix_(rows, prows)]
    present = np.zeros((m, depth), dtype=bool)
    present[at, k] = True
    victim = np.zeros((m, depth), dtype=bool)
    for j in range(depth):
        back = present[:, j]
        trial = used + held[:, :, j]
        ok = _fits(ok_static, room, free, amounts, trial, count + 1)
        stays = back & ok
        used = np.where(stays, trial, used)
        count = count + stays
        victim[:, j] = back & ~ok
    n_victims = victim.sum(axis=1)
    if (n_victims == 0).any():
        return None  # the pod fits there as the node is: the per-pod path reports it as upstream does
    grid_rows = np.full((m, depth), -1, dtype=np.int64)
    grid_rows[at, k] = prows
    grid_prio = np.zeros((m, depth), dtype=np.int64)
    grid_prio[at, k] = prio
    grid_start = np.zeros((m, depth), dtype=np.float64)
    grid_start[at, k] = start
    grid_seq = np.zeros((m, depth), dtype=np.int64)
    grid_seq[at, k] = seq
    first = victim.argmax(axis=1)  # victims keep the importance order: the first is the most important
    every = np.arange(m)
    found.cols = cols.astype(np.int64)
    found.top_priority = grid_prio[every, first]
    found.priority_sum = (grid_prio * victim).sum(axis=1) + PRIORITY_SHIFT * n_victims
    found.n_victims = n_victims
    found.first_start = grid_start[every, first]
    found.first_seq = grid_seq[every, first]
    found.victim_rows = grid_rows
    found.is_victim = victim
    return found


def _fits(
    ok_static: BoolArray, room: IntArray, free: IntArray, amounts: IntArray, used: IntArray, count: IntArray
) -> BoolArray:
    """NodeResourcesFit's verdict (room for one more pod, each demanded amount free) and the static filters'."""
    out: BoolArray = ok_static & (count + 1 <= room) & np.all(amounts <= free - used, axis=0)
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
