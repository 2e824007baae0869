"""Every scoring case of shared/spec/requested-to-capacity-ratio-cases.json (upstream's own test tables, plus the
derived cases), run against our scorers. Validation cases are run by tests/config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from packsched.api.objects import Container, Node, Pod
from packsched.config.types import (
    SEMANTICS_CURRENT,
    SEMANTICS_V1_16,
    SEMANTICS_V1_17,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from packsched.framework.podinfo import make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import PluginError
from packsched.plugins.helper.shape import broken_linear
from packsched.plugins.noderesources.scoring import (
    ResourceColumns,
    Scorer,
    scaled_utilization,
)

# A copy of shared/spec/requested-to-capacity-ratio-cases.json, kept in the repository so CI always has it.
SPEC = Path(__file__).resolve().parents[2] / "data" / "spec" / "requested-to-capacity-ratio-cases.json"
CASES: list[dict[str, Any]] = json.loads(SPEC.read_text())["cases"]

# strategy in the data -> (our strategy type, semantics)
STRATEGIES = {
    "RequestedToCapacityRatio": ("RequestedToCapacityRatio", SEMANTICS_CURRENT),
    "MostAllocated": ("MostAllocated", SEMANTICS_CURRENT),
    "LeastAllocated": ("LeastAllocated", SEMANTICS_CURRENT),
    "LegacyRTCRPriority": ("RequestedToCapacityRatio", SEMANTICS_V1_16),
    "RTCRv117": ("RequestedToCapacityRatio", SEMANTICS_V1_17),
}


def _of(kind: str) -> list[Any]:
    return [pytest.param(c, id=c["id"]) for c in CASES if c["kind"] == kind]


def _pod(raw: dict[str, Any], name: str) -> Pod:
    return Pod(
        name=name,
        containers=[Container(f"c{i}", dict(c.get("requests", {}))) for i, c in enumerate(raw.get("containers", []))],
    )


def _strategy(case: dict[str, Any]) -> ScoringStrategy:
    kind, semantics = STRATEGIES[case["strategy"]]
    args = case["args"]
    resources = args.get("resources")
    if resources is None and semantics != SEMANTICS_CURRENT:
        resources = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]  # legacy default
    shape = args.get("shape")
    return ScoringStrategy(
        kind,
        [ResourceSpec(r["name"], r["weight"]) for r in resources or []],
        RequestedToCapacityRatioParam([UtilizationShapePoint(p["utilization"], p["score"]) for p in shape])
        if shape is not None
        else None,
        semantics,
    )


@pytest.mark.parametrize("case", _of("score"))
def test_score_case(case: dict[str, Any]) -> None:
    snap = Snapshot(
        [Node(n["name"], allocatable=dict(n["allocatable"]), capacity=dict(n["allocatable"])) for n in case["nodes"]]
    )
    for i, raw in enumerate(case["existingPods"]):
        if raw.get("node"):  # unbound placeholders affect nothing
            snap.add_pod(make_pod_info(_pod(raw, f"existing-{i}")), snap.index[raw["node"]])
    pod = make_pod_info(_pod(case["pod"], "incoming"))
    scorer = Scorer(_strategy(case))
    cols = np.arange(snap.n, dtype=np.int64)
    if case.get("expectStatus") == "Error":
        with pytest.raises(PluginError, match="resources not found"):
            scorer.score(snap, pod, cols)
        return
    got = dict(zip(snap.node_names(cols.tolist()), scorer.score(snap, pod, cols).tolist(), strict=True))
    assert got == case["expected"]


@pytest.mark.parametrize("case", _of("brokenLinear"))
def test_broken_linear_case(case: dict[str, Any]) -> None:
    points = [(p["utilization"], p["score"]) for p in case["points"]]
    for a in case["assertions"]:
        assert broken_linear(points, a["p"]) == a["expected"], a


@pytest.mark.parametrize("case", _of("scorerDirect"))
def test_scorer_direct_case(case: dict[str, Any]) -> None:
    # Case data sit near 2**63: Python integers compute them exactly (the overflow-safe newest behaviour).
    shape = [UtilizationShapePoint(p["utilization"], p["score"] // 10) for p in case["scaledShape"]]
    assert all(p["score"] % 10 == 0 for p in case["scaledShape"])
    strategy = ScoringStrategy(
        "RequestedToCapacityRatio",
        [ResourceSpec(r["name"], r["weight"]) for r in case["resources"]],
        RequestedToCapacityRatioParam(shape),
    )
    columns = [
        ResourceColumns(r["name"], r["weight"], np.array([a], dtype=np.int64), np.array([q], dtype=np.int64))
        for r, a, q in zip(case["resources"], case["allocatable"], case["requested"], strict=True)
    ]
    assert Scorer(strategy).combine(columns, 1, exact=True).tolist() == [case["expected"]]


@pytest.mark.parametrize("case", _of("scaledUtilization"))
def test_scaled_utilization_case(case: dict[str, Any]) -> None:
    assert scaled_utilization(case["requested"], case["capacity"], case["max"]) == case["expected"]


def test_every_case_kind_is_exercised() -> None:
    kinds = {c["kind"] for c in CASES}
    assert kinds <= {
        "score",
        "brokenLinear",
        "scorerDirect",
        "scaledUtilization",
        "validation",
        "constructorValidation",
    }
