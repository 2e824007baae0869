"""bench/scheduler_perf/thresholds.yaml: upstream's CI thresholds beside the scheduler_perf rows. Every workload x
size of workloads.yaml has an entry or is listed as having none; the entries name real workloads and sizes; where
the upstream tree is unpacked (``.cache/gomod/k8s.io/kubernetes@<release>``, as ``make conformance`` leaves it),
every number and the choice of upstream workload are checked against upstream's performance-config.yaml files."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from helpers import load_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "scheduler_perf.py"
UPSTREAM = ROOT / ".cache" / "gomod" / "k8s.io"


def _module() -> Any:
    return load_script(SCRIPT, "scheduler_perf_bench_thresholds")


perf = _module()


def _raw() -> dict[str, Any]:
    with open(perf.THRESHOLDS_FILE, encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.safe_load(fh)
    return data


def _cases() -> list[tuple[str, str]]:
    return perf.select_cases(perf.load_workloads(), None, None)


def test_every_workload_and_size_is_listed_once() -> None:
    data = _raw()
    listed = [(e["testCase"], e["workload"]) for e in data["thresholds"] + data["none"]]
    assert len(listed) == len(set(listed)), "a workload x size listed twice"
    assert sorted(listed) == sorted(_cases())


def test_the_entries_name_workloads_and_sizes_that_exist() -> None:
    workloads = perf.load_workloads()["workloads"]
    data = _raw()
    for e in data["thresholds"] + data["none"]:
        assert e["testCase"] in workloads, e
        assert e["workload"] in [s["name"] for s in workloads[e["testCase"]]["sizes"]], e
    for e in data["thresholds"]:
        assert e["metric"] == "SchedulingThroughput", e
        assert isinstance(e["threshold"], int) and e["threshold"] > 0, e
        assert e["release"].startswith("v1."), e
        assert e["file"].startswith("test/integration/scheduler_perf/"), e
        assert e["file"].endswith("/performance-config.yaml"), e
        assert e["upstreamWorkload"], e


def _upstream(release: str) -> Path:
    path = UPSTREAM / f"kubernetes@{release}" / "test" / "integration" / "scheduler_perf"
    if not path.is_dir():
        kube = ".".join(release.lstrip("v").split(".")[:2])
        pytest.skip(f"the upstream tree {path} is not unpacked (make conformance KUBE={kube} unpacks it)")
    return path


def _upstream_cases(release: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Upstream's testCases by name: (file relative to the repository root, the testCase)."""
    base = _upstream(release)
    root = base.parents[2]
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for f in sorted(glob.glob(str(base / "**" / "performance-config.yaml"), recursive=True)):
        with open(f, encoding="utf-8") as fh:
            for tc in yaml.safe_load(fh):
                out[tc["name"]] = (str(Path(f).relative_to(root)), tc)
    return out


def _matches(ours: dict[str, Any], upstream: dict[str, Any]) -> bool:
    """The rule thresholds.yaml states: every parameter but measurePods equal, no feature gates, a threshold."""
    params = upstream.get("params") or {}
    same = all(params.get(k) == v for k, v in ours.items() if k not in ("name", "measurePods"))
    return same and not upstream.get("featureGates") and bool(upstream.get("threshold"))


def test_the_numbers_are_upstreams() -> None:
    data = _raw()
    workloads = perf.load_workloads()["workloads"]
    releases = {e["release"] for e in data["thresholds"]}
    upstream = {r: _upstream_cases(r) for r in releases}
    for e in data["thresholds"]:
        path, tc = upstream[e["release"]][e["testCase"]]
        assert path == e["file"], e
        found = {w["name"]: w for w in tc["workloads"]}[e["upstreamWorkload"]]
        # a number, or (the DRA workloads) a number per topic: scheduler_perf.go's thresholds by topic
        assert found["threshold"] == ({e["topic"]: e["threshold"]} if "topic" in e else e["threshold"]), e
        assert "thresholdMetricSelector" not in found and "defaultThresholdMetricSelector" not in tc, e
        ours = next(s for s in workloads[e["testCase"]]["sizes"] if s["name"] == e["workload"])
        assert [w["name"] for w in tc["workloads"] if _matches(ours, w)] == [e["upstreamWorkload"]], e
    for e in data["none"]:
        ours = next(s for s in workloads[e["testCase"]]["sizes"] if s["name"] == e["workload"])
        for r in releases:
            tc = upstream[r].get(e["testCase"])
            assert tc is None or not any(_matches(ours, w) for w in tc[1]["workloads"]), e


def test_the_earlier_release_numbers() -> None:
    data = _raw()
    earlier = {e["earlier"]["release"] for e in data["thresholds"] if "earlier" in e}
    upstream = {r: _upstream_cases(r) for r in earlier}
    for e in data["thresholds"]:
        if "earlier" not in e:
            continue
        _path, tc = upstream[e["earlier"]["release"]][e["testCase"]]
        found = {w["name"]: w for w in tc["workloads"]}[e["upstreamWorkload"]]
        assert found["threshold"] == e["earlier"]["threshold"], e


def test_rows_carry_their_threshold() -> None:
    thresholds = perf.load_thresholds()
    basic = perf.threshold_for(thresholds, "SchedulingBasic", "5000Nodes")
    assert basic["threshold"] == 680 and basic["upstream_workload"] == "SchedulingBasic/5000Nodes_10000Pods"
    assert basic["metric"] == "SchedulingThroughput" and basic["release"] == "v1.37.2"
    assert perf.threshold_for(thresholds, "SchedulingBasic", "500Nodes") is None
    assert perf.threshold_for(thresholds, "SchedulingBasic", "no-such-size") is None
    row = {"workload": "SchedulingBasic", "size": "5000Nodes", "error": "x", "loadavg_1m": 0.0}
    assert "| 680 (5000Nodes_10000Pods) |" in perf.markdown([{**row, "upstream_threshold": basic}])
    same = perf.threshold_for(thresholds, "SchedulingWithNodeInclusionPolicy", "5000Nodes")
    row = {**row, "workload": "SchedulingWithNodeInclusionPolicy"}
    assert "| 270 |" in perf.markdown([{**row, "upstream_threshold": same}])
    assert "| – | – | - |" in perf.markdown([{**row, "upstream_threshold": None}])


def test_the_table_and_json_say_what_the_thresholds_are(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = perf.load_workloads()
    w = data["workloads"]["SchedulingBasic"]
    w["sizes"] = [{"name": "5000Nodes", "initNodes": 10, "initPods": 4, "measurePods": 4}]
    data["workloads"] = {"SchedulingBasic": w}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    args = ["--workloads-file", str(path), "--in-process"]
    assert perf.main(args) == 0
    out = capsys.readouterr().out
    assert "for reference only" in out and "upstream threshold" in out
    assert "| 680 (5000Nodes_10000Pods) |" in out
    assert perf.main([*args, "-o", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "for reference only" in report["thresholds_note"]
    case = report["cases"][0]
    assert case["upstream_threshold"]["threshold"] == 680
    assert case["upstream_threshold"]["file"].endswith("misc/performance-config.yaml")
