"""Nominations: pods that preemption promised a node to, not yet placed there.

Beside the pods themselves, the nominator keeps per priority the number of nominated pods and their requested
amounts on each node (framework.totals.PriorityTotals), updated as nominations come and go, so that "the
nominated pods of equal or higher priority than this pod" (what the filters count on a node) is a few array sums
instead of a walk over every nominated pod (:meth:`Nominator.totals`).
"""

from __future__ import annotations

from collections.abc import Sequence

from packsched.framework.journal import Journal
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray
from packsched.framework.totals import PriorityTotals


class Nominator:
    def __init__(self) -> None:
        self._by_node: dict[int, dict[str, PodInfo]] = {}
        self._node_of: dict[str, int] = {}
        self._nodes: list[int] | None = None  # nodes() until the next change (it is asked for every filter call)
        self._totals: PriorityTotals[str] = PriorityTotals()  # resources keyed by name
        self._counted: dict[str, tuple[PodInfo, int, int]] = {}  # what each nomination added: pod, column, priority
        # the last answer of totals() with what it was asked, until nominations change (a failed cycle asks it
        # for its filters and again for preemption's dry run); its arrays are read-only
        self._last: tuple[tuple[str, int, int, tuple[str, ...]], tuple[IntArray, IntArray] | None] | None = None
        # the node columns whose nominations changed, in order (``changed_since``)
        self.journal = Journal()

    def nominate(self, pod: PodInfo, col: int) -> None:
        self.clear(pod)
        self._by_node.setdefault(col, {})[pod.key] = pod
        self._node_of[pod.key] = col
        self._nodes = None
        self._last = None
        priority = pod.priority
        self._totals.add(priority, col, pod.requests.items(), +1)
        self._counted[pod.key] = (pod, col, priority)
        self.journal.add(col)

    def clear(self, pod: PodInfo) -> None:
        col = self._node_of.pop(pod.key, None)
        if col is not None:
            self._by_node[col].pop(pod.key, None)
            self._nodes = None
            self._last = None
            counted, at, priority = self._counted.pop(pod.key)
            self._totals.add(priority, at, counted.requests.items(), -1)
            self.journal.add(at)

    def changed_since(self, pos: int) -> tuple[list[int] | None, int]:
        """The node columns (repeats possible) where a nomination came or went since journal position ``pos``
        (None when the journal no longer reaches back that far), and the journal's position now."""
        return self.journal.since(pos), self.journal.end

    def col_of(self, pod: PodInfo) -> int | None:
        """The node column ``pod``'s nomination is counted on (what ``totals`` leaves out for it), if any."""
        mine = self._counted.get(pod.key)
        return mine[1] if mine is not None else None

    def on_node(self, col: int) -> list[PodInfo]:
        return list(self._by_node.get(col, {}).values())

    def any(self) -> bool:
        """Whether some pod is nominated anywhere (what ``bool(nodes())`` answers, without building the list)."""
        return bool(self._node_of)

    def nodes(self) -> list[int]:
        """Node columns that have at least one nominated pod (the same list until nominations change: callers
        must not modify it)."""
        if self._nodes is None:
            self._nodes = [col for col, pods in self._by_node.items() if pods]
        return self._nodes

    def node_of(self, key: str) -> int | None:
        return self._node_of.get(key)

    def totals(self, pod: PodInfo, n: int, names: Sequence[str]) -> tuple[IntArray, IntArray] | None:
        """Over ``n`` node columns: how many pods of priority at least ``pod``'s (``pod`` itself left out) are
        nominated to each node, and what they request of each resource of ``names`` (one row per name); None
        when no pod of such a priority is nominated anywhere (the common case: nothing to add). The arrays are
        read-only and hold the answer until nominations change (they may be sums kept current)."""
        asked = (pod.key, pod.priority, n, tuple(names))
        if self._last is not None and self._last[0] == asked:
            return self._last[1]
        answer = self._totals_for(pod, n, names)
        self._last = (asked, answer)
        return answer

    def _totals_for(self, pod: PodInfo, n: int, names: Sequence[str]) -> tuple[IntArray, IntArray] | None:
        if not self._totals.any_at_least(pod.priority):
            return None
        count, amounts = self._totals.at_least(pod.priority, names, n)
        mine = self._counted.get(pod.key)
        if mine is not None and mine[1] < n:
            counted, col, _ = mine
            count, amounts = count.copy(), amounts.copy()  # the kept sums are read-only
            count[col] -= 1
            for i, name in enumerate(names):
                amounts[i, col] -= counted.requests.get(name, 0)
            count.setflags(write=False)
            amounts.setflags(write=False)
        return count, amounts
