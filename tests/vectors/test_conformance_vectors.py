"""kube-scheduler 1.35 and 1.37's own decisions, recorded by ``conformance/`` (the real scheduler on upstream's
fake clientset, ``make conformance``) into ``tests/data/conformance/<version>/``, replayed through ``packsched
explain`` one decision at a time, as ``test_kube_scheduler_vectors.py`` replays the v1.31 vectors: outcome,
best-scored nodes, every plugin's weighted score, feasible count, every rejected node's plugin and reasons
(``filter_status``), the message word for word.

Each release's decisions are replayed with its own ``--kube-version`` (at most ``NEWEST``). Where packsched
differs the case is an xfail(strict=True) naming why (``KNOWN``); docs/reference/conformance.md lists the
differences. When packsched learns one, its cases pass, strict xfail fails, and the entry goes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from packsched.config.versions import NEWEST
from vectors.vector_cases import Decision, differences, explain

DATA = Path(__file__).resolve().parents[1] / "data" / "conformance"

BALANCE_137 = (
    "1.37: NodeResourcesBalancedAllocation scores the change in the node's balance, 50 + (50 + with - without) / 2 "
    "(balanced_allocation.go balancedResourceScorer); packsched scores the balance with the pod, as 1.34-1.35"
)
VOLUME_SCORE_137 = (
    "1.37: StorageCapacityScoring is beta and on, so VolumeBinding is a score plugin (0 for a pod without "
    "volumes); packsched gives it no score"
)
TOP_FROM_BALANCE_137 = "1.37: the best-scored nodes differ because of the BalancedAllocation change"

# decision ("<version>/<file>#<index>") -> why packsched differs
KNOWN: dict[str, tuple[str, ...]] = {
    "1.37/resources-res0100.json#0": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0100.json#2": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0100.json#4": (VOLUME_SCORE_137,),
    "1.37/resources-res0100.json#8": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0101.json#0": (VOLUME_SCORE_137,),
    "1.37/resources-res0101.json#1": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0101.json#2": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0101.json#3": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0101.json#4": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0101.json#5": (VOLUME_SCORE_137,),
    "1.37/resources-res0101.json#6": (BALANCE_137, VOLUME_SCORE_137, TOP_FROM_BALANCE_137),
    "1.37/resources-res0101.json#7": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0101.json#8": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0101.json#9": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0101.json#10": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0101.json#12": (BALANCE_137, VOLUME_SCORE_137, TOP_FROM_BALANCE_137),
    "1.37/resources-res0101.json#13": (BALANCE_137, VOLUME_SCORE_137, TOP_FROM_BALANCE_137),
    "1.37/resources-res0102.json#0": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0102.json#1": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0102.json#2": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0102.json#3": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0102.json#4": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0102.json#5": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0102.json#6": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0102.json#7": (VOLUME_SCORE_137,),
    "1.37/resources-res0102.json#9": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/resources-res0102.json#10": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0100.json#0": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0100.json#1": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0100.json#3": (BALANCE_137, VOLUME_SCORE_137, TOP_FROM_BALANCE_137),
    "1.37/spread-spr0100.json#4": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0100.json#5": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0100.json#6": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0100.json#7": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0100.json#8": (BALANCE_137, VOLUME_SCORE_137, TOP_FROM_BALANCE_137),
    "1.37/spread-spr0100.json#10": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0100.json#11": (BALANCE_137, VOLUME_SCORE_137, TOP_FROM_BALANCE_137),
    "1.37/spread-spr0100.json#12": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0100.json#13": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0100.json#14": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#0": (BALANCE_137, VOLUME_SCORE_137, TOP_FROM_BALANCE_137),
    "1.37/spread-spr0101.json#1": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#2": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#3": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#4": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#5": (BALANCE_137, VOLUME_SCORE_137, TOP_FROM_BALANCE_137),
    "1.37/spread-spr0101.json#6": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#7": (BALANCE_137, VOLUME_SCORE_137, TOP_FROM_BALANCE_137),
    "1.37/spread-spr0101.json#8": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#9": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#10": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#11": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#12": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#13": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#14": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0101.json#15": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0102.json#0": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0102.json#1": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0102.json#2": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0102.json#3": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0102.json#4": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0102.json#5": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0102.json#6": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0102.json#8": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0102.json#9": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0102.json#10": (BALANCE_137, VOLUME_SCORE_137),
    "1.37/spread-spr0102.json#11": (BALANCE_137, VOLUME_SCORE_137),
}


def _version_dirs() -> list[Path]:
    return sorted(p for p in DATA.iterdir() if p.is_dir()) if DATA.is_dir() else []


def _params() -> list[Any]:
    params = []
    for vdir in _version_dirs():
        for path in sorted(vdir.glob("*.json")):
            scenario = json.loads(path.read_text())
            for i, res in enumerate(scenario["results"]):
                if res["outcome"] not in ("bound", "unschedulable"):
                    continue  # refused by the API server's validation: nothing was decided
                key = f"{vdir.name}/{path.name}#{i}"
                marks = [pytest.mark.xfail(strict=True, reason="; ".join(KNOWN[key]))] if key in KNOWN else []
                params.append(pytest.param(vdir.name, scenario, i, id=f"{key}-{res['pod']}", marks=marks))
    return params


PARAMS = _params()


def packsched_version(recorded: str) -> str:
    minor = int(recorded.split(".")[1])
    return f"1.{min(minor, NEWEST)}"


@pytest.mark.parametrize(("version", "scenario", "index"), PARAMS)
def test_decision_matches_kube_scheduler(version: str, scenario: dict[str, Any], index: int, tmp_path: Path) -> None:
    assert scenario["kubernetes_version"].startswith(version + ".")
    d = Decision(scenario, index)
    diffs = differences(d, explain(d, tmp_path, packsched_version(scenario["kubernetes_version"])))
    assert not diffs, "\n".join(diffs)


def test_every_known_difference_is_a_recorded_decision() -> None:
    ids = {str(p.id).split("-c", 1)[0] for p in PARAMS}  # "<version>/<file>#<index>-<ns>/<pod>", ns "c..."
    assert set(KNOWN) <= ids


def test_recordings_cover_both_versions_and_areas() -> None:
    # a few dozen decisions per area and version: both generators, both pinned releases
    per: dict[tuple[str, str], int] = {}
    for version, scenario, _ in (p.values for p in PARAMS):
        area = str(scenario["family"]).split("-")[0]
        per[(version, area)] = per.get((version, area), 0) + 1
    assert {v for v, _ in per} == {"1.35", "1.37"}
    assert all(n >= 24 for n in per.values()), per
