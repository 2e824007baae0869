"""PriorityTotals' kept sums (``below``, ``at_least``): brought up to date by every pod that comes or goes, they
must answer what a fresh sum over the priorities answers."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from packsched.framework.totals import PriorityTotals

KEYS = ("cpu", "memory", "gpu")
# a few questions, asked again and again between changes (more than the sums kept: some are dropped and made anew)
QUESTIONS = [
    (below, bound, keys, n) for below in (True, False) for bound in (0, 2) for keys, n in ((KEYS, 10), (KEYS[1:], 8))
]

_step = st.tuples(
    st.booleans(),  # take a placed pod off (if any) rather than place one
    st.integers(0, 1000),  # which placed pod
    st.integers(-1, 3),  # priority
    st.integers(0, 11),  # node column (some past the columns asked for)
    st.lists(st.tuples(st.sampled_from(KEYS), st.integers(0, 1000)), unique_by=lambda c: c[0], max_size=3),
    st.lists(st.integers(0, len(QUESTIONS) - 1), max_size=2),  # questions asked after the change
)


@settings(max_examples=40, deadline=None)
@given(st.lists(_step, min_size=1, max_size=40))
def test_kept_sums_answer_as_fresh_sums(
    steps: list[tuple[bool, int, int, int, list[tuple[str, int]], list[int]]],
) -> None:
    totals: PriorityTotals[str] = PriorityTotals()
    placed: list[tuple[int, int, tuple[tuple[str, int], ...]]] = []
    for take_off, which, priority, col, cells, asked in steps:
        if take_off and placed:
            p, c, held = placed.pop(which % len(placed))
            totals.add(p, c, held, -1)
        else:
            totals.add(priority, col, tuple(cells), +1)
            placed.append((priority, col, tuple(cells)))
        for q in asked:
            below, bound, keys, n = QUESTIONS[q]
            count, amounts = totals.below(bound, keys, n) if below else totals.at_least(bound, keys, n)
            want_count, want_amounts = totals.totals(
                keys, n, (lambda p, b=bound: p < b) if below else (lambda p, b=bound: p >= b)
            )
            assert count.tolist() == want_count.tolist()
            assert np.asarray(amounts).tolist() == want_amounts.tolist()
            assert not count.flags.writeable and not amounts.flags.writeable
            assert totals.any_at_least(bound) == totals.any(lambda p, b=bound: p >= b)
