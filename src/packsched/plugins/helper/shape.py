"""The piecewise-linear ("broken linear") shape function of RequestedToCapacityRatio and VolumeBinding's storage
capacity score (upstream's plugins/helper/shape_score.go)."""

from __future__ import annotations

from collections.abc import Sequence

from packsched.config.types import SEMANTICS_V1_16, UtilizationShapePoint
from packsched.framework.interface import MAX_NODE_SCORE

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10

Points = Sequence[tuple[int, int]]


def _trunc_div(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero (Python's // floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def broken_linear(points: Points, p: int) -> int:
    """The piecewise-linear shape function at utilisation ``p`` (points already on the score scale)."""
    for i, (u, s) in enumerate(points):
        if p <= u:
            if i == 0:
                return points[0][1]
            u0, s0 = points[i - 1]
            return s0 + _trunc_div((s - s0) * (p - u0), u - u0)
    return points[-1][1]


def scaled_points(shape: Sequence[UtilizationShapePoint], semantics: str) -> list[tuple[int, int]]:
    """Shape scores are configured on 0..10; since v1.17 they are multiplied by 10 (100 / 10, exact)."""
    factor = 1 if semantics == SEMANTICS_V1_16 else MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return [(p.utilization, p.score * factor) for p in shape]
