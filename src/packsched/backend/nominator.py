"""Nominations: pods that preemption promised a node to, not yet placed there.

Beside the pods themselves, the nominator keeps per priority the number of nominated pods and their requested
amounts on each node, updated as nominations come and go, so that "the nominated pods of equal or higher
priority than this pod" (what the filters count on a node) is a few array sums instead of a walk over every
nominated pod (:meth:`Nominator.totals`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from packsched.framework.snapshot import IntArray, PodInfo


class _Level:
    """The nominated pods of one priority: per node column, how many and what they request."""

    def __init__(self) -> None:
        self.count: IntArray = np.zeros(0, dtype=np.int64)
        self.amounts: dict[str, IntArray] = {}

    def add(self, pod: PodInfo, col: int, sign: int) -> None:
        if col >= len(self.count):
            size = max(col + 1, 2 * len(self.count))
            self.count = _grown(self.count, size)
            self.amounts = {name: _grown(arr, size) for name, arr in self.amounts.items()}
        self.count[col] += sign
        for name, amount in pod.requests.items():
            arr = self.amounts.get(name)
            if arr is None:
                arr = self.amounts[name] = np.zeros(len(self.count), dtype=np.int64)
            arr[col] += sign * amount


def _grown(arr: IntArray, size: int) -> IntArray:
    out: IntArray = np.concatenate([arr, np.zeros(size - len(arr), dtype=np.int64)])
    return out


class Nominator:
    def __init__(self) -> None:
        self._by_node: dict[int, dict[str, PodInfo]] = {}
        self._node_of: dict[str, int] = {}
        self._nodes: list[int] | None = None  # nodes() until the next change (it is asked for every filter call)
        self._levels: dict[int, _Level] = {}  # by priority
        self._counted: dict[str, tuple[PodInfo, int, int]] = {}  # what each nomination added: pod, column, priority

    def nominate(self, pod: PodInfo, col: int) -> None:
        self.clear(pod)
        self._by_node.setdefault(col, {})[pod.key] = pod
        self._node_of[pod.key] = col
        self._nodes = None
        priority = pod.priority
        self._levels.setdefault(priority, _Level()).add(pod, col, +1)
        self._counted[pod.key] = (pod, col, priority)

    def clear(self, pod: PodInfo) -> None:
        col = self._node_of.pop(pod.key, None)
        if col is not None:
            self._by_node[col].pop(pod.key, None)
            self._nodes = None
            counted, at, priority = self._counted.pop(pod.key)
            level = self._levels[priority]
            level.add(counted, at, -1)
            if not level.count.any():
                del self._levels[priority]

    def on_node(self, col: int) -> list[PodInfo]:
        return list(self._by_node.get(col, {}).values())

    def nodes(self) -> list[int]:
        """Node columns that have at least one nominated pod (the same list until nominations change: callers
        must not modify it)."""
        if self._nodes is None:
            self._nodes = [col for col, pods in self._by_node.items() if pods]
        return self._nodes

    def node_of(self, key: str) -> int | None:
        return self._node_of.get(key)

    def totals(self, pod: PodInfo, n: int, names: Sequence[str]) -> tuple[IntArray, IntArray]:
        """Over ``n`` node columns: how many pods of priority at least ``pod``'s (``pod`` itself left out) are
        nominated to each node, and what they request of each resource of ``names`` (one row per name)."""
        count = np.zeros(n, dtype=np.int64)
        amounts = np.zeros((len(names), n), dtype=np.int64)
        if not self._levels:
            return count, amounts
        for priority, level in self._levels.items():
            if priority < pod.priority:
                continue
            m = min(n, len(level.count))
            count[:m] += level.count[:m]
            for i, name in enumerate(names):
                arr = level.amounts.get(name)
                if arr is not None:
                    amounts[i, :m] += arr[:m]
        mine = self._counted.get(pod.key)
        if mine is not None and mine[1] < n:
            counted, col, _ = mine
            count[col] -= 1
            for i, name in enumerate(names):
                amounts[i, col] -= counted.requests.get(name, 0)
        return count, amounts
