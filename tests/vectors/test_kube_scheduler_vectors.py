"""Every decision kube-scheduler recorded in ``../shared/spec/kube-scheduler-vectors`` as one test: packsched's
``explain`` must give the same outcome, the same best-scored nodes, every plugin's weighted score and the same
message (see ``vector_cases.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vectors.vector_cases import VECTORS, Decision, decisions, differences, explain

PARAMS = [pytest.param(d, id=d.id) for d in decisions()]


@pytest.mark.skipif(not VECTORS.is_dir(), reason=f"the vectors are not at {VECTORS} (clone with shared/ beside)")
@pytest.mark.parametrize("decision", PARAMS)
def test_decision_matches_kube_scheduler(decision: Decision, tmp_path: Path) -> None:
    diffs = differences(decision, explain(decision, tmp_path))
    assert not diffs, "\n".join(diffs)


@pytest.mark.skipif(not VECTORS.is_dir(), reason=f"the vectors are not at {VECTORS} (clone with shared/ beside)")
def test_every_recorded_decision_is_a_test() -> None:
    # 27 scenarios, about 680 decisions (README of the vectors); one test each, none dropped
    assert len(PARAMS) == sum(1 for _ in decisions()) >= 600
