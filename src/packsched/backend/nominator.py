"""Nominations: pods that preemption promised a node to, not yet placed there."""

from __future__ import annotations

from packsched.framework.snapshot import PodInfo


class Nominator:
    def __init__(self) -> None:
        self._by_node: dict[int, dict[str, PodInfo]] = {}
        self._node_of: dict[str, int] = {}
        self._nodes: list[int] | None = None  # nodes() until the next change (it is asked for every filter call)

    def nominate(self, pod: PodInfo, col: int) -> None:
        self.clear(pod)
        self._by_node.setdefault(col, {})[pod.key] = pod
        self._node_of[pod.key] = col
        self._nodes = None

    def clear(self, pod: PodInfo) -> None:
        col = self._node_of.pop(pod.key, None)
        if col is not None:
            self._by_node[col].pop(pod.key, None)
            self._nodes = None

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
