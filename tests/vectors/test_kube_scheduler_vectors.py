"""Every decision kube-scheduler recorded in ``../shared/spec/kube-scheduler-vectors`` as one test: packsched's
``explain`` must give the same outcome, the same best-scored nodes, every plugin's weighted score and the same
message (see ``vector_cases.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vectors.vector_cases import VECTORS, Decision, decisions, differences, expected_failure, explain

PARAMS = [pytest.param(d, id=d.id) for d in decisions()]


@pytest.mark.skipif(not VECTORS.is_dir(), reason=f"the vectors are not at {VECTORS} (clone with shared/ beside)")
@pytest.mark.parametrize("decision", PARAMS)
def test_decision_matches_kube_scheduler(decision: Decision, tmp_path: Path) -> None:
    got = explain(decision, tmp_path)
    diffs = differences(decision, got)
    why = expected_failure(decision, got)
    if why is not None:
        # a strict expected failure, decided per decision (which nodes InterPodAffinity rules out is known only
        # next to what the other filters rule out): it must fail now, and fails the run once it agrees
        if diffs:
            pytest.xfail(why)
        pytest.fail(f"XPASS(strict): {why}, yet it agrees: remove the expected failure")
    assert not diffs, "\n".join(diffs)


@pytest.mark.skipif(not VECTORS.is_dir(), reason=f"the vectors are not at {VECTORS} (clone with shared/ beside)")
def test_every_recorded_decision_is_a_test() -> None:
    # 27 scenarios, about 680 decisions (README of the vectors); one test each, none dropped
    assert len(PARAMS) == sum(1 for _ in decisions()) >= 600
