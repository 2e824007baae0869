"""PrioritySort: higher priority first; equal priority in the order pods entered the queue."""

from __future__ import annotations

from packsched.config.types import PluginArgs
from packsched.framework.interface import Handle
from packsched.framework.podinfo import PodInfo

NAME = "PrioritySort"


class PrioritySort:
    name = NAME

    def less(self, a: PodInfo, b: PodInfo) -> bool:
        return a.priority > b.priority or (a.priority == b.priority and a.arrival < b.arrival)

    def sort_key(self, pod: PodInfo) -> tuple[int, int]:
        """The same order as :meth:`less`, as a key for heaps."""
        return (-pod.priority, pod.arrival)


def new_priority_sort(args: PluginArgs | None, handle: Handle) -> PrioritySort:
    return PrioritySort()
