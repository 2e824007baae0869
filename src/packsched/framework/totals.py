"""Per priority and per node column: how many pods, and what they hold of each resource.

Both the snapshot's pod table (placed pods, resources keyed by snapshot row) and the nominator (nominated pods,
resources keyed by name) keep these running sums, so that "the pods below (or at least at) this priority, node by
node" is a few array sums instead of a walk over the pods.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
K = TypeVar("K", bound=Hashable)


class _Level(Generic[K]):
    """The pods of one priority: per node column, how many and what they hold (by resource key)."""

    def __init__(self) -> None:
        self.count: IntArray = np.zeros(0, dtype=np.int64)
        self.amounts: dict[K, IntArray] = {}
        self.pods = 0  # over every node: whether the level holds any pod, without a pass over ``count``

    def add(self, col: int, cells: Iterable[tuple[K, int]], sign: int) -> None:
        self.pods += sign
        if col >= len(self.count):
            size = max(col + 1, 2 * len(self.count))
            self.count = _grown(self.count, size)
            self.amounts = {key: _grown(arr, size) for key, arr in self.amounts.items()}
        self.count[col] += sign
        for key, amount in cells:
            arr = self.amounts.get(key)
            if arr is None:
                arr = self.amounts[key] = np.zeros(len(self.count), dtype=np.int64)
            arr[col] += sign * amount


def _grown(arr: IntArray, size: int) -> IntArray:
    out: IntArray = np.concatenate([arr, np.zeros(size - len(arr), dtype=np.int64)])
    return out


class _Kept(Generic[K]):
    """A sum kept current: over ``n`` node columns, the pods of the priorities below ``bound`` (``below``) or at
    least ``bound``, and what they hold of each resource key of ``keys`` (a row per key)."""

    def __init__(self, below: bool, bound: int, keys: Sequence[K], count: IntArray, amounts: IntArray) -> None:
        self.below = below
        self.bound = bound
        self.index = {key: i for i, key in enumerate(keys)}
        self.n = len(count)
        self.count = count
        self.amounts = amounts
        view_count, view_amounts = count.view(), amounts.view()
        view_count.setflags(write=False)
        view_amounts.setflags(write=False)
        self.views = (view_count, view_amounts)

    def includes(self, priority: int) -> bool:
        return priority < self.bound if self.below else priority >= self.bound


class PriorityTotals(Generic[K]):
    """Running sums of pods by priority and node column. A priority whose pods all left keeps its arrays (pods
    come and go by the thousand in preemption's dry runs) but counts for nothing.

    The last few sums asked for by a priority bound (:meth:`below` and :meth:`at_least`) are kept and brought up
    to date by every :meth:`add`, so that asking again after a few pods came or went costs no pass over the
    nodes."""

    KEPT = 4  # sums kept, the least recently asked for dropped first

    def __init__(self) -> None:
        self._levels: dict[int, _Level[K]] = {}
        self._kept: dict[tuple[bool, int, tuple[K, ...], int], _Kept[K]] = {}

    def add(self, priority: int, col: int, cells: Iterable[tuple[K, int]], sign: int) -> None:
        """A pod of ``priority`` holding ``cells`` (resource key, amount) on node ``col`` comes (sign +1) or goes
        (-1)."""
        level = self._levels.get(priority)
        if level is None:
            level = self._levels[priority] = _Level()
        if self._kept:
            cells = tuple(cells)
            for kept in self._kept.values():
                if col < kept.n and kept.includes(priority):
                    kept.count[col] += sign
                    index = kept.index
                    for key, amount in cells:
                        i = index.get(key)
                        if i is not None:
                            kept.amounts[i, col] += sign * amount
        level.add(col, cells, sign)

    def any(self, include: Callable[[int], bool]) -> bool:
        """Whether some pod of a priority ``include`` accepts is counted."""
        return any(level.pods and include(priority) for priority, level in self._levels.items())

    def any_at_least(self, bound: int) -> bool:
        """Whether some pod of priority at least ``bound`` is counted (``any`` for that test, asked every cycle by
        the nominator: no call per priority)."""
        return any(level.pods and priority >= bound for priority, level in self._levels.items())

    def totals(self, keys: Sequence[K], n: int, include: Callable[[int], bool]) -> tuple[IntArray, IntArray]:
        """Over ``n`` node columns, for the priorities ``include`` accepts: the pods on each node, and what they
        hold of each resource of ``keys`` (a row per key). New arrays, summed over the priorities."""
        count = np.zeros(n, dtype=np.int64)
        amounts = np.zeros((len(keys), n), dtype=np.int64)
        for priority, level in self._levels.items():
            if not level.pods or not include(priority):
                continue
            m = min(n, len(level.count))
            count[:m] += level.count[:m]
            for i, key in enumerate(keys):
                arr = level.amounts.get(key)
                if arr is not None:
                    amounts[i, :m] += arr[:m]
        return count, amounts

    def below(self, bound: int, keys: Sequence[K], n: int) -> tuple[IntArray, IntArray]:
        """``totals`` for the priorities below ``bound``, from a kept sum: read-only arrays that hold the answer
        until the next :meth:`add` (which updates them in place)."""
        return self._kept_sum(True, bound, keys, n)

    def at_least(self, bound: int, keys: Sequence[K], n: int) -> tuple[IntArray, IntArray]:
        """``totals`` for the priorities at least ``bound``, as :meth:`below` keeps them."""
        return self._kept_sum(False, bound, keys, n)

    def _kept_sum(self, below: bool, bound: int, keys: Sequence[K], n: int) -> tuple[IntArray, IntArray]:
        asked = (below, bound, tuple(keys), n)
        kept = self._kept.pop(asked, None)
        if kept is None:
            count, amounts = self.totals(keys, n, (lambda p: p < bound) if below else (lambda p: p >= bound))
            kept = _Kept(below, bound, keys, count, amounts)
            if len(self._kept) >= self.KEPT:
                del self._kept[next(iter(self._kept))]
        self._kept[asked] = kept  # the most recently asked last
        return kept.views
