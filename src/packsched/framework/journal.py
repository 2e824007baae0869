"""A journal of node columns: the nodes something changed on, in order, for caches that bring only those nodes up to
date (the equivalence cache reads the snapshot's, preemption's dry run the pod table's and the nominator's).

A reader keeps the position ``end`` answered when it last caught up and asks ``since`` it later. The journal is
dropped whole once it holds more than ``limit`` entries: readers behind that point get None and start again."""

from __future__ import annotations

from collections.abc import Iterable

# entries a journal holds before it is dropped
JOURNAL_LIMIT = 1 << 16


class Journal:
    def __init__(self, limit: int = JOURNAL_LIMIT) -> None:
        self.limit = limit
        self._entries: list[int] = []
        self._base = 0  # the position of the first entry held

    @property
    def end(self) -> int:
        """The position after the last entry."""
        return self._base + len(self._entries)

    def add(self, col: int) -> None:
        self._entries.append(col)
        if len(self._entries) > self.limit:
            self._drop()

    def extend(self, cols: Iterable[int]) -> None:
        self._entries.extend(cols)
        if len(self._entries) > self.limit:
            self._drop()

    def since(self, pos: int) -> list[int] | None:
        """The columns (repeats possible) added since position ``pos``; None when the journal no longer reaches
        back that far (then anything may have changed)."""
        if pos < self._base:
            return None
        return self._entries[pos - self._base :]

    def _drop(self) -> None:
        """Forget it all: readers behind this point start again."""
        self._base += len(self._entries)
        self._entries.clear()
