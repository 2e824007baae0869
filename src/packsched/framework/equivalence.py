"""Work proportional to what changed: per class of equivalent pods, every node's filter verdict and score kept
between cycles, and only the nodes whose pods changed computed again.

Two pods are equivalent for a profile when every node-local plugin (:class:`NodeLocalPlugin`: its verdict and score
on a node read that node and the pod's ``equivalence_key`` only) gives them the same key. For such a class the cache
keeps, over all nodes, the conjunction of the node-local filters' verdicts and each node-local score plugin's score
before normalisation. Between two cycles of the class it asks the snapshot's journal which nodes had pods placed or
removed (``Snapshot.touched_since``) and recomputes those nodes only; a change to the nodes themselves (labels,
taints, allocatable: ``node_generation``), a new snapshot (a node removed), or a journal that no longer reaches back
recomputes everything. Plugins that are not node-local (spread and inter-pod affinity read other nodes' pods,
DynamicResources reads devices) still run in every cycle, the filters over the nodes the cached verdicts let
through, the scores over the feasible nodes; normalisation and weights are applied per cycle as before. So the
decisions are those of the full pass: ``tests/framework/test_equivalence.py`` compares both on random clusters.

A class also keeps, for the cycle's Score, the weighted per-node sum of its kept scores of plugins without
NormalizeScore (updated on the changed nodes with their rows), the columns where a kept score is out of range, and,
for plugins whose NormalizeScore maps a row of zeros to one value, the columns where it is not 0:
``Framework.run_score`` folds them into the totals (``kept_totals``, ``all_zero``).

What a cached cycle does not keep: the reasons of the nodes the cached filters reject. The scheduler uses the cache
only where those are not needed (a pod that fits somewhere, not explained); a pod that fits nowhere is filtered
again in full for its FitError.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    FilterPlugin,
    NodeLocalPlugin,
    NodeSel,
    ScorePlugin,
    filter_reads_pods,
    score_reads_pods,
    zeros_normalize_uniformly,
)
from packsched.framework.nodeorder import first_feasible
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot

# in a class key, between the filters' parts and the scores'
_SCORES = ("scores",)

# Bytes of per-node arrays the classes of one profile may hold together, and how many classes: the least recently
# used class is dropped beyond either (5,000 nodes: about 140 KB a class for the default profile).
_BUDGET = 1 << 28
_MAX_CLASSES = 1024


@dataclass(eq=False)
class PodClass:
    """One class's per-node state, valid for ``snap`` at ``node_generation`` and journal position ``pos``."""

    static_filters: list[FilterPlugin]  # node-local filters (not skipped) whose verdicts read no placed pod
    pod_filters: list[FilterPlugin]  # the other node-local filters (not skipped): they read the node's pods
    other_filters: list[FilterPlugin]  # the cycle's other filters (not skipped), run in every cycle
    cached_scores: frozenset[str]  # the score plugins whose scores are kept here
    # the snapshot it was computed for, weakly (live mode makes a new snapshot when a node goes: a class not used
    # since must not keep the old one alive)
    snap: weakref.ref[Snapshot] | None = None
    node_generation: int = -1
    pos: int = 0
    static_alive: BoolArray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # the static filters' verdicts
    alive: BoolArray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # every node-local filter's verdict
    # Per score plugin: its score on every node ``static_alive`` lets through (a score that reads no placed pod) or
    # ``alive`` lets through (one that does, except the nodes listed in ``stale``, changed since).
    rows: dict[str, IntArray] = field(default_factory=dict)
    # per pod-reading score plugin: the columns changed since its row was last brought up to date (sorted arrays)
    stale: dict[str, list[IntArray]] = field(default_factory=dict)
    # per score plugin: the columns where its kept score lies outside [MIN_NODE_SCORE, MAX_NODE_SCORE], and, for a
    # plugin that ``zeros_normalize_uniformly``, those where it is not 0 (both usually empty)
    nonzero: dict[str, set[int]] = field(default_factory=dict)
    invalid: dict[str, set[int]] = field(default_factory=dict)
    # the weighted sum of some plugins' kept scores (``total_of``: their names and weights), kept up to date with
    # their rows: the cycle's Score reads it in one gather (``EquivalenceCache.kept_totals``)
    total: IntArray | None = None
    total_of: tuple[tuple[str, int], ...] = ()

    def nbytes(self) -> int:
        arrays = self.static_alive.nbytes + self.alive.nbytes
        if self.total is not None:
            arrays += self.total.nbytes
        return int(arrays + sum(r.nbytes for r in self.rows.values()))

    def forget_scores(self) -> None:
        """Every kept score (and what is derived from them) let go: the nodes changed beyond catching up."""
        self.rows.clear()
        self.stale.clear()
        self.nonzero.clear()
        self.invalid.clear()
        self.total = None
        self.total_of = ()


class EquivalenceCache:
    """The pod classes of one profile, most recently used last."""

    def __init__(self, filters: Sequence[FilterPlugin], scores: Sequence[ScorePlugin]) -> None:
        # each filter: the plugin, its name, its equivalence_key (None: not node-local), whether it reads pods
        self._filters: list[tuple[FilterPlugin, str, Callable[[PodInfo], Hashable | None] | None, bool]] = [
            (p, p.name, p.equivalence_key if isinstance(p, NodeLocalPlugin) else None, filter_reads_pods(p))
            for p in filters
        ]
        self._scores = [p for p in scores if isinstance(p, NodeLocalPlugin)]
        self._score_keys = [(p.name, p.equivalence_key) for p in self._scores]
        self._pod_scores = frozenset(p.name for p in self._scores if score_reads_pods(p))
        self._zero_normalizing = frozenset(p.name for p in self._scores if zeros_normalize_uniformly(p))
        self._classes: OrderedDict[Hashable, PodClass] = OrderedDict()
        self._bytes = 0  # what the classes' arrays take together

    def __len__(self) -> int:
        return len(self._classes)

    def lookup(self, state: CycleState, pod: PodInfo) -> PodClass:
        """The pod's class (after PreFilter: filters it skipped are left out), made empty the first time."""
        skip = state.skip_filter
        keys: dict[str, Hashable] = {}  # the filters' keys (not None)
        # the class key, flat: each cached filter's name and key, a mark, each cached score's name and key
        parts: list[Hashable] = []
        other: list[FilterPlugin] = []
        for p, name, key_of, _ in self._filters:
            if name in skip:
                continue
            key = key_of(pod) if key_of is not None else None
            if key is None:
                other.append(p)
            else:
                keys[name] = key
                parts += (name, key)
        mark = len(parts)
        parts.append(_SCORES)
        for name, key_of in self._score_keys:
            key = keys[name] if name in keys else key_of(pod)
            if key is not None:
                parts += (name, key)
        class_key = tuple(parts)
        # taken out and put back last (most recently used): one comparison of the keys, where a lookup and a
        # move to the end would compare them twice
        cls = self._classes.pop(class_key, None)
        if cls is None:
            static = [p for p, name, _, reads_pods in self._filters if name in keys and not reads_pods]
            reading = [p for p, name, _, reads_pods in self._filters if name in keys and reads_pods]
            cached = frozenset(n for n in class_key[mark + 1 :: 2] if isinstance(n, str))
            cls = PodClass(static, reading, other, cached)
        else:
            cls.other_filters = other  # which of them run may depend on the cluster (InterPodAffinity)
        self._classes[class_key] = cls
        return cls

    def feasible(self, cls: PodClass, state: CycleState, pod: PodInfo, snap: Snapshot) -> BoolArray:
        """Every node's verdict for the pod (a new array): the class's cached node-local verdicts, brought up to
        date, then the other filters over the nodes those let through."""
        self._sync(cls, state, pod, snap)
        alive = cls.alive.copy()
        if cls.other_filters and alive.any():
            cols = np.flatnonzero(alive).astype(np.intp)
            alive[cols] = _verdicts(cls.other_filters, state, pod, snap, cols)
        return alive

    def feasible_first(
        self,
        cls: PodClass,
        state: CycleState,
        pod: PodInfo,
        snap: Snapshot,
        order: IntArray | None,
        start: int,
        k: int,
    ) -> tuple[IntArray, int]:
        """The first ``k`` (fewer than the nodes) feasible nodes in the cycle's ``order`` (None: the columns')
        rotated to ``start``, and how many places of the order were looked at (``nodeorder.first_feasible``):
        the class's cached node-local verdicts, brought up to date, then the other filters over the nodes those
        let through, a stretch of the order at a time, only until ``k`` pass (as upstream stops filtering)."""
        self._sync(cls, state, pod, snap)
        others = cls.other_filters
        if not others:
            return first_feasible(cls.alive, order, start, k)

        def check(cols: IntArray) -> BoolArray:
            return _verdicts(others, state, pod, snap, cols.astype(np.intp, copy=False))

        return first_feasible(cls.alive, order, start, k, check)

    def scores(
        self, cls: PodClass, plugin: ScorePlugin, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray
    ) -> IntArray:
        """``plugin``'s scores (before normalisation) on ``cols`` (nodes the class's verdicts let through): the
        first time over every such node, then only over the nodes changed since."""
        out: IntArray = self._row(cls, plugin, state, pod, snap).take(cols)
        return out

    def all_zero(self, cls: PodClass, plugin: ScorePlugin, state: CycleState, pod: PodInfo, snap: Snapshot) -> bool:
        """Whether ``plugin`` (one that ``zeros_normalize_uniformly``: the class tracks its nonzero scores) scores
        0 on every node the class's verdicts let through, its row brought up to date first."""
        if plugin.name not in self._zero_normalizing:
            return False
        self._row(cls, plugin, state, pod, snap)
        return not cls.nonzero[plugin.name]

    def kept_totals(
        self,
        cls: PodClass,
        kept: Sequence[tuple[ScorePlugin, int]],
        state: CycleState,
        pod: PodInfo,
        snap: Snapshot,
        cols: IntArray,
    ) -> IntArray | None:
        """The weighted sum of the ``kept`` plugins' scores (not normalised: plugins without NormalizeScore) on
        ``cols`` (a new array), from a per-node sum the class keeps up to date as their rows change, so one gather
        instead of one pass per plugin. None when a kept score on some node lies outside [MIN_NODE_SCORE,
        MAX_NODE_SCORE]: the caller then goes plugin by plugin, and fails as upstream does when such a node is among
        ``cols``."""
        for plugin, _ in kept:
            self._row(cls, plugin, state, pod, snap)
            if cls.invalid[plugin.name]:
                return None
        of = tuple((p.name, w) for p, w in kept)
        if cls.total is None or cls.total_of != of:
            before = cls.nbytes()
            total = np.zeros(snap.n, dtype=np.int64)
            for name, weight in of:
                total += cls.rows[name] if weight == 1 else cls.rows[name] * weight
            cls.total, cls.total_of = total, of
            self._grown(cls.nbytes() - before)
        out: IntArray = cls.total.take(cols)  # a new array (take: cheaper than indexing for many columns)
        return out

    def _row(self, cls: PodClass, plugin: ScorePlugin, state: CycleState, pod: PodInfo, snap: Snapshot) -> IntArray:
        """``plugin``'s kept row, up to date on every node the class's verdicts let through."""
        name = plugin.name
        row = cls.rows.get(name)
        if row is None:
            row = cls.rows[name] = np.zeros(snap.n, dtype=np.int64)
            cls.invalid[name] = set()
            if name in self._zero_normalizing:
                cls.nonzero[name] = set()
            if name in self._pod_scores:
                cls.stale[name] = []
                todo = np.flatnonzero(cls.alive)
            else:  # read once for every node that may become feasible before the class starts again
                todo = np.flatnonzero(cls.static_alive)
            self._grown(row.nbytes)
        else:
            stale = cls.stale.get(name)
            if not stale:
                return row
            changed = stale[0] if len(stale) == 1 else np.unique(np.concatenate(stale))
            todo = changed[cls.alive[changed]]
            stale.clear()
        if len(todo):
            self._write(cls, name, row, todo, np.asarray(plugin.score(state, pod, snap, todo), dtype=np.int64))
        return row

    @staticmethod
    def _write(cls: PodClass, name: str, row: IntArray, todo: IntArray, values: IntArray) -> None:
        """Put ``values`` in ``row`` at ``todo`` (sorted, distinct), keeping the class's sums and its sets of
        invalid (and, where kept, nonzero) columns right."""
        if len(todo) == 1:  # most cycles: the node the last pod went to (in Python: numpy costs more for one)
            _write_one(cls, name, row, int(todo[0]), int(values[0]))
            return
        invalid = cls.invalid[name]
        if invalid:
            invalid.difference_update(todo.tolist())
        if MIN_NODE_SCORE != 0 or int(values.view(np.uint64).max()) > MAX_NODE_SCORE:  # a negative reads huge
            invalid.update(todo[(values < MIN_NODE_SCORE) | (values > MAX_NODE_SCORE)].tolist())
        nonzero = cls.nonzero.get(name)
        if nonzero is not None:
            if nonzero:
                nonzero.difference_update(todo.tolist())
            if values.any():
                nonzero.update(todo[values != 0].tolist())
        if cls.total is not None:
            weight = next((w for n, w in cls.total_of if n == name), 0)
            if weight:
                delta = values - row[todo]
                cls.total[todo] += delta if weight == 1 else delta * weight
        row[todo] = values

    def _sync(self, cls: PodClass, state: CycleState, pod: PodInfo, snap: Snapshot) -> None:
        changed = None
        if cls.snap is not None and cls.snap() is snap and cls.node_generation == snap.node_generation:
            changed = snap.touched_since(cls.pos)
        if changed is None or len(changed) * 4 > snap.n:
            before = cls.nbytes()
            cls.snap = weakref.ref(snap)
            cls.node_generation = snap.node_generation
            cls.static_alive = _verdicts(cls.static_filters, state, pod, snap, slice(None))
            cls.alive = cls.static_alive.copy()
            if cls.pod_filters:
                cols = np.flatnonzero(cls.static_alive).astype(np.intp)
                if len(cols) * 4 > snap.n:  # most nodes: every node read in order costs less than a gather
                    cls.alive &= _verdicts(cls.pod_filters, state, pod, snap, slice(None))
                else:
                    cls.alive[cols] = _verdicts(cls.pod_filters, state, pod, snap, cols)
            cls.forget_scores()
            self._grown(cls.nbytes() - before)
        elif changed:
            touched = np.array(sorted(set(changed)), dtype=np.intp)
            cols = touched[cls.static_alive[touched]]
            if len(cols) and cls.pod_filters:
                cls.alive[cols] = _verdicts(cls.pod_filters, state, pod, snap, cols)
            for stale in cls.stale.values():
                stale.append(touched)
        cls.pos = snap.touched_end

    def _grown(self, nbytes: int) -> None:
        """The class in use (the most recently used) grew by ``nbytes``: drop the least recently used classes
        beyond the budget."""
        self._bytes += nbytes
        while len(self._classes) > 1 and (self._bytes > _BUDGET or len(self._classes) > _MAX_CLASSES):
            _, old = self._classes.popitem(last=False)
            self._bytes -= old.nbytes()


def _write_one(cls: PodClass, name: str, row: IntArray, col: int, value: int) -> None:
    """``EquivalenceCache._write`` for one column."""
    if MIN_NODE_SCORE <= value <= MAX_NODE_SCORE:
        cls.invalid[name].discard(col)
    else:
        cls.invalid[name].add(col)
    nonzero = cls.nonzero.get(name)
    if nonzero is not None:
        if value:
            nonzero.add(col)
        else:
            nonzero.discard(col)
    if cls.total is not None:
        weight = next((w for n, w in cls.total_of if n == name), 0)
        if weight:
            cls.total[col] += (value - int(row[col])) * weight
    row[col] = value


def _verdicts(
    filters: Sequence[FilterPlugin], state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel
) -> BoolArray:
    """Whether each selected node passes every one of ``filters`` (the reasons are not kept)."""
    size = snap.n if isinstance(sel, slice) else len(sel)
    alive = np.ones(size, dtype=bool)
    for p in filters:
        passes = getattr(p, "passes", None)  # a VerdictFilter (an isinstance test of a protocol costs more)
        if passes is not None:
            alive &= passes(state, pod, snap, sel)
        else:
            for r in p.filter(state, pod, snap, sel):
                alive &= ~r.mask
        if not alive.any():
            break
    return alive
