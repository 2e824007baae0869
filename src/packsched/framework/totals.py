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


class PriorityTotals(Generic[K]):
    """Running sums of pods by priority and node column. A priority whose pods all left keeps its arrays (pods
    come and go by the thousand in preemption's dry runs) but counts for nothing."""

    def __init__(self) -> None:
        self._levels: dict[int, _Level[K]] = {}

    def add(self, priority: int, col: int, cells: Iterable[tuple[K, int]], sign: int) -> None:
        """A pod of ``priority`` holding ``cells`` (resource key, amount) on node ``col`` comes (sign +1) or goes
        (-1)."""
        level = self._levels.get(priority)
        if level is None:
            level = self._levels[priority] = _Level()
        level.add(col, cells, sign)

    def any(self, include: Callable[[int], bool]) -> bool:
        """Whether some pod of a priority ``include`` accepts is counted."""
        return any(level.pods and include(priority) for priority, level in self._levels.items())

    def totals(self, keys: Sequence[K], n: int, include: Callable[[int], bool]) -> tuple[IntArray, IntArray]:
        """Over ``n`` node columns, for the priorities ``include`` accepts: the pods on each node, and what they
        hold of each resource of ``keys`` (a row per key)."""
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
