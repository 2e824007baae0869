"""Reading nodes in a cycle's order until enough are feasible (upstream findNodesThatPassFilters with
``numFeasibleNodesToFind``): the order rotated to the cycle's start, read a stretch at a time."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from packsched.framework.snapshot import BoolArray, IntArray


def rotated_feasible(alive: BoolArray, start: int) -> IntArray:
    """Every feasible column (``alive``) in the columns' own order rotated to ``start``: all of them, where
    :func:`first_feasible` looks for fewer than the nodes."""
    found = np.flatnonzero(alive)
    if not start:
        return found
    split = int(np.searchsorted(found, start))
    return np.concatenate([found[split:], found[:split]])


def first_feasible(
    alive: BoolArray,
    order: IntArray | None,
    start: int,
    k: int,
    check: Callable[[IntArray], BoolArray] | None = None,
) -> tuple[IntArray, int]:
    """The first ``k`` (fewer than the nodes) feasible columns in the node ``order`` (None: the columns' own)
    rotated to ``start``, and how many places of that order were looked at to find them (all when fewer are
    feasible). A node is feasible when ``alive`` says so and, with ``check``, when ``check`` passes it too:
    ``check`` is asked of the nodes ``alive`` lets through, a stretch at a time in the order, and only until
    ``k`` are found (upstream stops filtering there). The first stretch is ``2k`` places (with ``check``:
    ``k + k / 4``, most of which pass on a cluster with room), each next one as long as everything read before it
    plus the first (so they double), so that a large cluster with many feasible nodes is not read in full each
    cycle, and at most twice the places looked at plus the first stretch are read."""
    n = len(alive)
    parts: list[IntArray] = []
    got = 0
    first = max(k + k // 4 + 16, 64) if check is not None else max(2 * k, 1024)
    read = 0  # places read so far (the wrap at the end of the order cuts a stretch short)
    for lo, hi in ((start, n), (0, start)):
        pos = lo
        while pos < hi:
            end = min(pos + read + first, hi)
            hits = np.flatnonzero(alive[pos:end] if order is None else alive[order[pos:end]])
            if len(hits):
                cols = hits + pos if order is None else order[hits + pos]
                if check is not None:
                    passed = check(cols)
                    hits, cols = hits[passed], cols[passed]
            if len(hits):
                if got + len(hits) >= k:
                    hits, cols = hits[: k - got], cols[: k - got]
                    parts.append(cols)
                    last = int(hits[-1]) + pos  # its place in the order, before the rotation
                    processed = last - start + 1 if last >= start else n - start + last + 1
                    return (np.concatenate(parts) if len(parts) > 1 else parts[0]), processed
                parts.append(cols)
                got += len(hits)
            read += end - pos
            pos = end
    return (np.concatenate(parts) if parts else np.zeros(0, dtype=np.intp)), n
