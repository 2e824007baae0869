"""kube-scheduler 1.34, 1.35, 1.36 and 1.37's own decisions (1.34 with scheduler-plugins' CapacityScheduling and
Coscheduling too),
recorded by ``conformance/`` (the real scheduler on upstream's fake clientset, ``make conformance``) into
``tests/data/conformance/<version>/``, replayed through ``packsched explain`` one decision at a time, as
``test_kube_scheduler_vectors.py`` replays the v1.31 vectors: outcome, best-scored nodes, every plugin's weighted
score, feasible count, every rejected node's plugin and reasons (``filter_status``), the message word for word.

Each release's decisions are replayed with its own ``--kube-version`` (at most ``NEWEST``). Where packsched
differs the case is an xfail(strict=True) naming why (``KNOWN``); docs/reference/conformance.md lists the
differences. When packsched learns one, its cases pass, strict xfail fails, and the entry goes.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from packsched.config.versions import NEWEST
from vectors import gang_cases
from vectors.vector_cases import Decision, differences, explain

DATA = Path(__file__).resolve().parents[1] / "data" / "conformance"

# decision ("<version>/<file>#<index>") -> why packsched differs. Empty: every recorded decision matches (the 1.37
# ones since packsched models BalancedAllocation's change in balance and StorageCapacityScoring).
KNOWN: dict[str, tuple[str, ...]] = {}


def _version_dirs() -> list[Path]:
    return sorted(p for p in DATA.iterdir() if p.is_dir()) if DATA.is_dir() else []


def _params() -> list[Any]:
    params = []
    for vdir in _version_dirs():
        for path in sorted(vdir.glob("*.json")):
            scenario = json.loads(path.read_text())
            if gang_cases.is_gang_scenario(scenario):
                continue  # GANG_PARAMS
            for i, res in enumerate(scenario["results"]):
                if res["outcome"] not in ("bound", "unschedulable") or res.get("timed_out"):
                    continue  # refused by the API server's validation, or no decision within the timeout
                key = f"{vdir.name}/{path.name}#{i}"
                marks = [pytest.mark.xfail(strict=True, reason="; ".join(KNOWN[key]))] if key in KNOWN else []
                params.append(pytest.param(vdir.name, scenario, i, id=f"{key}-{res['pod']}", marks=marks))
    return params


PARAMS = _params()

# gang scenarios: pod ("<version>/<file>#<index>") -> why packsched's final state differs from the recording's
GANG_KNOWN: dict[str, tuple[str, ...]] = {}


def _gang_params() -> list[Any]:
    params = []
    for vdir in _version_dirs():
        for path in sorted(vdir.glob("*.json")):
            scenario = json.loads(path.read_text())
            if not gang_cases.is_gang_scenario(scenario):
                continue
            for i in gang_cases.compared(scenario["results"]):
                key = f"{vdir.name}/{path.name}#{i}"
                marks = [pytest.mark.xfail(strict=True, reason="; ".join(GANG_KNOWN[key]))] if key in GANG_KNOWN else []
                pod = scenario["results"][i]["pod"]
                params.append(pytest.param(vdir.name, path.name, i, id=f"{key}-{pod}", marks=marks))
    return params


GANG_PARAMS = _gang_params()


@cache
def _gang_run(version: str, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A gang scenario's recording and packsched's simulation of it (once per file)."""
    scenario = json.loads((DATA / version / name).read_text())
    return scenario, gang_cases.simulate(scenario, packsched_version(scenario["kubernetes_version"]))


def packsched_version(recorded: str) -> str:
    minor = int(recorded.split(".")[1])
    return f"1.{min(minor, NEWEST)}"


@pytest.mark.parametrize(("version", "scenario", "index"), PARAMS)
def test_decision_matches_kube_scheduler(version: str, scenario: dict[str, Any], index: int, tmp_path: Path) -> None:
    assert scenario["kubernetes_version"].startswith(version + ".")
    d = Decision(scenario, index)
    diffs = differences(d, explain(d, tmp_path, packsched_version(scenario["kubernetes_version"])))
    assert not diffs, "\n".join(diffs)


@pytest.mark.parametrize(("version", "name", "index"), GANG_PARAMS)
def test_gang_pod_matches_kube_scheduler(version: str, name: str, index: int) -> None:
    scenario, got = _gang_run(version, name)
    assert scenario["kubernetes_version"].startswith(version + ".")
    diffs = gang_cases.differences(scenario["results"][index], got[index])
    assert not diffs, "\n".join(diffs)


def test_gang_recordings_cover_the_releases_that_model_gangs() -> None:
    per: dict[tuple[str, str], int] = {}
    for version, name, _ in (p.values for p in GANG_PARAMS):
        area = name.split("-")[0]
        per[(version, area)] = per.get((version, area), 0) + 1
    # kube-scheduler's gang scheduling from 1.35; scheduler-plugins' Coscheduling where the recorder has it (1.34)
    want = {("1.35", "gangs"), ("1.36", "gangs"), ("1.37", "gangs"), ("1.34", "coscheduling")}
    assert set(per) == want, per
    assert all(n >= 24 for n in per.values()), per
    assert set(GANG_KNOWN) <= {str(p.id).split("-c", 1)[0] for p in GANG_PARAMS}


def test_every_known_difference_is_a_recorded_decision() -> None:
    ids = {str(p.id).split("-c", 1)[0] for p in PARAMS}  # "<version>/<file>#<index>-<ns>/<pod>", ns "c..."
    assert set(KNOWN) <= ids


def test_recordings_cover_every_version_and_area() -> None:
    # a few dozen decisions per area and version: every generator, every pinned release
    per: dict[tuple[str, str], int] = {}
    for version, scenario, _ in (p.values for p in PARAMS):
        area = str(scenario["family"]).split("-")[0]
        per[(version, area)] = per.get((version, area), 0) + 1
    assert {v for v, _ in per} == {"1.34", "1.35", "1.36", "1.37"}
    in_tree = {"resources", "spread", "dra", "preemption"}
    # volumes: committed for 1.35 and 1.37 only (the suite's time; 1.34 and 1.36 agree as well, conformance.md)
    volumes = {"1.35", "1.37"}
    for version in ("1.34", "1.35", "1.36", "1.37"):
        # scheduler-plugins' areas only where the recorder has them (conformance/generate.py RELEASES_OF)
        out_of_tree = {"quotas"} if version == "1.34" else set()
        more = {"volumes"} if version in volumes else set()
        assert {a for v, a in per if v == version} == in_tree | out_of_tree | more, version
    assert all(n >= 24 for n in per.values()), per


def test_a_different_volume_binding_is_a_difference(tmp_path: Path) -> None:
    # 1.37/volumes-vol0100.json #3: kube-scheduler bound claim local-6 to the static volume local-1 (the smallest that
    # fits on the node it chose); a recording that said another volume, or a provisioned one, would differ
    scenario = json.loads((DATA / "1.37" / "volumes-vol0100.json").read_text())
    d = Decision(scenario, 3)
    got = explain(d, tmp_path, "1.37")
    assert d.result["volumes"] == [{"claim": "cvol0100/local-6", "volume": "local-1"}]
    assert not differences(d, got)
    d.result["volumes"] = [{"claim": "cvol0100/local-6", "volume": "local-0"}]
    assert any(x.startswith("volumes on ") for x in differences(d, got))
    d.result["volumes"] = [
        {"claim": "cvol0100/local-6", "volume": "pvc-x", "provisioned": {"kind": "PersistentVolume"}}
    ]
    assert any(x.startswith("volumes on ") for x in differences(d, got))
