"""Per-node counts of the placed pods that match a pod filter, kept up to date as pods come and go.

PodTopologySpread (and InterPodAffinity) ask, in every cycle, "how many placed pods matching this selector sit in
each topology domain". Walking every placed pod per cycle costs O(pods); here each distinct question is a
:class:`PodFilter` registered once per snapshot, and its answer is one int64 row over the nodes that the snapshot's
pod listeners keep right (binding, preemption, dry runs, nominated pods added for a filter pass). Summing a row
per topology domain is one ``np.bincount`` over the label index (:func:`domain_sums`).

API:

- ``PodFilter(namespaces, selector, skip_terminating)``: which pods count. ``namespaces`` is a frozenset of
  namespace names, or ``None`` for every namespace; ``selector`` a :class:`LabelSelector` (empty matches every
  pod); ``skip_terminating``: pods with a deletionTimestamp do not count (PodTopologySpread skips them,
  InterPodAffinity does not).
- ``pod_counts(snap)``: the snapshot's :class:`PodCountIndex` (made on first use, kept in ``snap.extensions``,
  registered as a pod listener).
- ``PodCountIndex.counts(filt)``: the filter's per-node counts (int64, length ``snap.n``; do not write to it). The
  first call for a filter walks the placed pods once; afterwards every add and remove updates the row of each
  registered filter in O(1) numpy work plus one selector match.
- ``domain_sums(per_node, codes, eligible, n_domains)``: per topology-domain sums of a per-node row over the
  eligible nodes (``codes``: the label index column of the topology key; nodes without the key have -1 and are
  left out).

Rows are kept for as long as the snapshot lives; a filter not asked for in ``IDLE_CYCLES`` lookups of other
filters is dropped (its row would only cost updates).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from packsched.api.objects import LabelSelector, Pod
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot

INDEX_KEY = "packsched.backend.podcounts"
IDLE_CYCLES = 10_000


@dataclass(frozen=True)
class PodFilter:
    namespaces: frozenset[str] | None
    selector: LabelSelector
    skip_terminating: bool = False

    def matches(self, pod: Pod) -> bool:
        if self.skip_terminating and pod.terminating:
            return False
        if self.namespaces is not None and pod.namespace not in self.namespaces:
            return False
        return self.selector.matches(pod.labels)


class PodCountIndex:
    """Registered filters and, per filter, how many matching pods each node holds."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.filters: dict[PodFilter, int] = {}  # filter -> row
        self.rows: IntArray = np.zeros((0, snap.n), dtype=np.int64)
        self._last_used: list[int] = []
        self._clock = 0
        snap.listeners.append(self)

    def _fit_width(self) -> None:
        n = self.snap.n
        if self.rows.shape[1] < n:
            grow = np.zeros((self.rows.shape[0], n - self.rows.shape[1]), dtype=np.int64)
            self.rows = np.hstack([self.rows, grow])

    def counts(self, filt: PodFilter) -> IntArray:
        self._fit_width()
        self._clock += 1
        row = self.filters.get(filt)
        if row is None:
            self._drop_idle()
            row = self._register(filt)
        self._last_used[row] = self._clock
        out: IntArray = self.rows[row]
        return out

    def _register(self, filt: PodFilter) -> int:
        counts = np.zeros(self.snap.n, dtype=np.int64)
        for info in self.snap.pods.values():
            if filt.matches(info.pod):
                counts[info.node] += 1
        row = len(self.filters)
        self.filters[filt] = row
        self.rows = np.vstack([self.rows, counts[None, :]])
        self._last_used.append(self._clock)
        return row

    def _drop_idle(self) -> None:
        idle = [f for f, r in self.filters.items() if self._clock - self._last_used[r] > IDLE_CYCLES]
        if not idle:
            return
        keep = [f for f in self.filters if f not in set(idle)]
        rows = [self.filters[f] for f in keep]
        self.rows = self.rows[rows]
        self._last_used = [self._last_used[r] for r in rows]
        self.filters = {f: i for i, f in enumerate(keep)}

    def _update(self, info: PodInfo, col: int, sign: int) -> None:
        if not self.filters:
            return
        self._fit_width()
        pod = info.pod
        for filt, row in self.filters.items():
            if filt.matches(pod):
                self.rows[row, col] += sign

    def pod_added(self, info: PodInfo, col: int) -> None:
        self._update(info, col, +1)

    def pod_removed(self, info: PodInfo, col: int) -> None:
        self._update(info, col, -1)


def pod_counts(snap: Snapshot) -> PodCountIndex:
    """The snapshot's count index (one per snapshot; it goes away with the snapshot)."""
    index = snap.extensions.get(INDEX_KEY)
    if not isinstance(index, PodCountIndex):
        index = PodCountIndex(snap)
        snap.extensions[INDEX_KEY] = index
    return index


def domain_sums(
    per_node: IntArray, codes: npt.NDArray[np.int32] | IntArray, eligible: BoolArray, n_domains: int
) -> IntArray:
    """Sum of ``per_node`` over the eligible nodes of each domain (code 0 .. n_domains-1)."""
    take = eligible & (codes >= 0)
    out: IntArray = np.bincount(codes[take], weights=per_node[take], minlength=n_domains).astype(np.int64)
    return out
