"""Score normalisation shared by plugins (upstream's DefaultNormalizeScore)."""

from __future__ import annotations

import numpy as np

from packsched.framework.interface import MAX_NODE_SCORE
from packsched.framework.snapshot import IntArray


def default_normalize_score(scores: IntArray, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> IntArray:
    """Scale so that the highest raw score becomes ``max_priority`` (integer division); ``reverse`` flips it.
    All raw scores zero: unchanged, or all ``max_priority`` when reversed."""
    top = int(scores.max()) if len(scores) else 0
    if top <= 0:
        return np.full(len(scores), max_priority, dtype=np.int64) if reverse else scores.copy()
    out = max_priority * scores // top
    return (max_priority - out) if reverse else out
