"""The placed pods as rows of arrays: node, priority, placement order and requested amounts.

The snapshot keeps one :class:`PodTable` beside its per-node pod dictionaries. Preemption's vectorised dry run
(:mod:`packsched.framework.preemption`) reads it to find every potential victim of many nodes, and what each one
holds, with a few numpy calls instead of a Python call per pod. Rows are reused once their pod leaves; ``order``
numbers the pods of a node in the order the node's dictionary holds them (the order upstream's NodeInfo lists
them), so that ties between equally important pods break the same way as on the per-pod path. A placed
PodInfo points at its table, which it tells when its start time or start order is set (either field, or
``PodInfo.set_started``); a pod placed in two snapshots at once is mirrored by the last one only.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from packsched.framework.journal import Journal
from packsched.framework.podinfo import PodInfo
from packsched.framework.totals import PriorityTotals

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_FIRST_SIZE = 64


class PodTable:
    """Row ``i`` is one placed pod (``alive[i]``), or a free row waiting for the next one."""

    def __init__(self, n_resources: int) -> None:
        size = _FIRST_SIZE
        self.node: IntArray = np.full(size, -1, dtype=np.int64)
        self.priority: IntArray = np.zeros(size, dtype=np.int64)
        self.order: IntArray = np.zeros(size, dtype=np.int64)
        self.start: npt.NDArray[np.float64] = np.zeros(size, dtype=np.float64)  # PodInfo.start_time
        self.start_seq: IntArray = np.zeros(size, dtype=np.int64)  # PodInfo.start_seq
        self.alive: BoolArray = np.zeros(size, dtype=bool)
        self.requests: IntArray = np.zeros((n_resources, size), dtype=np.int64)
        self.infos: list[PodInfo | None] = [None] * size
        self.cells: list[tuple[tuple[int, int], ...]] = [()] * size  # each row's (resource row, amount) pairs
        self.row_of: dict[int, int] = {}  # by id() of the PodInfo
        self._free: list[int] = list(range(size - 1, -1, -1))
        self._next_order = 0
        self._by_priority: PriorityTotals[int] = PriorityTotals()  # resources keyed by snapshot row
        # A journal of the node columns whose rows changed (a pod of the node came, went, started or was
        # renumbered), in order, for caches of per-node results (vector_dry_run.ReprieveCache); see
        # ``changed_since``.
        self.journal = Journal()

    def __len__(self) -> int:
        return len(self.row_of)

    def _stamp(self, col: int) -> None:
        """Node ``col``'s rows changed."""
        self.journal.add(col)

    @property
    def clock(self) -> int:
        """How many times some node's rows changed so far: ``changed_since`` of it answers the nodes changed after
        this moment."""
        return self.journal.end

    def changed_since(self, clock: int) -> list[int] | None:
        """The node columns whose rows changed (a pod of the node placed, removed, started or renumbered) since
        ``clock`` was read, in order, repeats possible; None when the journal no longer reaches back that far."""
        return self.journal.since(clock)

    def _grow(self) -> None:
        old = len(self.node)
        size = old * 2
        self.node = np.concatenate([self.node, np.full(size - old, -1, dtype=np.int64)])
        self.priority = np.concatenate([self.priority, np.zeros(size - old, dtype=np.int64)])
        self.order = np.concatenate([self.order, np.zeros(size - old, dtype=np.int64)])
        self.start = np.concatenate([self.start, np.zeros(size - old, dtype=np.float64)])
        self.start_seq = np.concatenate([self.start_seq, np.zeros(size - old, dtype=np.int64)])
        self.alive = np.concatenate([self.alive, np.zeros(size - old, dtype=bool)])
        self.requests = np.hstack([self.requests, np.zeros((self.requests.shape[0], size - old), dtype=np.int64)])
        self.infos.extend([None] * (size - old))
        self.cells.extend([()] * (size - old))
        self._free.extend(range(size - 1, old - 1, -1))

    def ensure_resources(self, n_resources: int) -> None:
        """Room for ``n_resources`` resource rows (the snapshot adds rows as it meets new resources)."""
        have = self.requests.shape[0]
        if n_resources > have:
            width = self.requests.shape[1]
            self.requests = np.vstack([self.requests, np.zeros((n_resources - have, width), dtype=np.int64)])

    def add(self, info: PodInfo, col: int, cells: tuple[tuple[int, int], ...]) -> None:
        """The pod is placed on node ``col``, holding ``amount`` of each (resource row, amount) of ``cells``."""
        if not self._free:
            self._grow()
        i = self._free.pop()
        self.row_of[id(info)] = i
        self.infos[i] = info
        self.node[i] = col
        self.priority[i] = info.pod.priority
        self.order[i] = self._next_order
        self._next_order += 1
        self.alive[i] = True
        self.start[i] = info.start_time
        self.start_seq[i] = info.start_seq
        info.__dict__["_table"] = self  # PodInfo's mirrored fields keep start and start_seq current
        if cells:
            top = max(cells)[0]  # the highest row (tuples compare their row first)
            if top >= self.requests.shape[0]:
                self.ensure_resources(top + 1)
        for r, amount in cells:
            self.requests[r, i] = amount
        self.cells[i] = cells
        self._by_priority.add(info.pod.priority, col, cells, +1)
        self._stamp(col)

    def remove(self, info: PodInfo) -> None:
        i = self.row_of.pop(id(info))
        if info.__dict__.get("_table") is self:
            del info.__dict__["_table"]
        self._by_priority.add(int(self.priority[i]), int(self.node[i]), self.cells[i], -1)
        self._stamp(int(self.node[i]))
        self.cells[i] = ()
        self.infos[i] = None
        self.alive[i] = False
        self.node[i] = -1
        self.requests[:, i] = 0
        self._free.append(i)

    def below(self, priority: int, rows: IntArray, n: int) -> tuple[IntArray, IntArray]:
        """Over ``n`` node columns: how many placed pods of priority below ``priority`` each node holds, and what
        they request of each resource row of ``rows`` (a row per entry). Read-only arrays, valid until the
        table next changes."""
        return self._by_priority.below(priority, rows.tolist(), n)

    def started(self, info: PodInfo) -> None:
        """The placed pod's start time or start order changed."""
        i = self.row_of.get(id(info))
        if i is None or self.infos[i] is not info:
            return  # a copy of a placed pod: not in the table
        self.start[i] = info.start_time
        self.start_seq[i] = info.start_seq
        self._stamp(int(self.node[i]))

    def renumber(self, infos: list[PodInfo]) -> None:
        """The pods of one node now stand in this order (after a dry run put some back at the end)."""
        for info in infos:
            i = self.row_of[id(info)]
            self.order[i] = self._next_order
            self._next_order += 1
            self._stamp(int(self.node[i]))

    def rows_on(self, node_mask: BoolArray, below_priority: int) -> IntArray:
        """The rows of placed pods whose node is in ``node_mask`` (one entry per node column) and whose priority
        is below ``below_priority``."""
        mask = np.append(node_mask, False)  # a free row's node is -1: the last entry, False
        out: IntArray = np.flatnonzero(mask[self.node] & (self.priority < below_priority)).astype(np.int64)
        return out
