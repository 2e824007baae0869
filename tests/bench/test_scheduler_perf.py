"""Smoke test of bench/scheduler_perf.py at tiny sizes, so that the harness cannot rot: every workload of the
data file builds, loads and schedules, and the measured pods are counted and timed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from helpers import load_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "scheduler_perf.py"


def _module() -> Any:
    return load_script(SCRIPT, "scheduler_perf_bench")


perf = _module()


def _tiny(tmp_path: Path) -> str:
    """The real workloads with every size replaced by one tiny one: 10 nodes per node step, 4 pods per pod step
    (PreemptionBasic: 40 low-priority pods, enough to fill every node, so that the measured pods must preempt)."""
    data = perf.load_workloads()
    for w in data["workloads"].values():
        params = {k for s in w["sizes"] for k in s if k != "name"}
        node_params = {s["nodes"] for s in w["steps"] if "nodes" in s}
        w["sizes"] = [{"name": "tiny", **{k: 10 if k in node_params else 4 for k in params}}]
    data["workloads"]["PreemptionBasic"]["sizes"][0]["initPods"] = 40
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def test_the_data_file_names_upstream_workloads_and_sizes() -> None:
    data = perf.load_workloads()
    for name in (
        "SchedulingBasic",
        "SchedulingPodAntiAffinity",
        "SchedulingPodAffinity",
        "SchedulingPreferredPodAffinity",
        "SchedulingPreferredPodAntiAffinity",
        "SchedulingNodeAffinity",
        "TopologySpreading",
        "PreferredTopologySpreading",
        "SchedulingWithNodeInclusionPolicy",
        "MixedSchedulingBasePod",
        "PreemptionBasic",
        "Unschedulable",
        "SchedulingCSIPVs",
    ):
        w = data["workloads"][name]
        nodes = {perf.size_nodes(s, w["steps"]) for s in w["sizes"]}
        assert {500, 5000} <= nodes, name
        assert sum(1 for s in w["steps"] if s.get("measured")) == 1, name
        for step in w["steps"]:
            assert step.get("template", "plain") in (data["pods"] if "pods" in step else data["nodes"])
    assert ("SchedulingBasic", "50000Nodes") in perf.select_cases(data, ["SchedulingBasic"], [50000])
    with pytest.raises(SystemExit):
        perf.select_cases(data, ["NoSuchWorkload"], None)


def test_documents_of_a_case() -> None:
    data = perf.load_workloads()
    docs, measured = perf.build_documents(data, "SchedulingCSIPVs", "500Nodes")
    kinds: dict[str, int] = {}
    for d in docs:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    assert kinds == {"Node": 500, "CSINode": 500, "PersistentVolume": 1500, "PersistentVolumeClaim": 1500, "Pod": 1500}
    assert len(measured) == 1000
    docs, measured = perf.build_documents(data, "TopologySpreading", "500Nodes")
    zones = [d["metadata"]["labels"][perf.ZONE] for d in docs if d["kind"] == "Node"]
    assert zones[:4] == ["moon-1", "moon-2", "moon-3", "moon-1"]  # round robin, as upstream labels them
    pods = [d for d in docs if d["kind"] == "Pod" and f"default/{d['metadata']['name']}" in measured]
    assert len(pods) == 1000 and all("topologySpreadConstraints" in p["spec"] for p in pods)


def test_documents_of_the_dra_cases() -> None:
    """Upstream's dra/ workloads: a ResourceSlice of N devices per DRA node, the class, init claims allocated
    before the run (each device at most once, the same nodes for the same seed), pods sharing claims by name five
    to a claim, or one claim from the template each."""
    data = perf.load_workloads()
    docs, measured = perf.build_documents(data, "SchedulingWithResourceClaimTemplate", "2000pods_200nodes", seed=3)
    slices = [d for d in docs if d["kind"] == "ResourceSlice"]
    assert len(slices) == 200 and all(len(s["spec"]["devices"]) == 10 for s in slices)
    assert slices[0]["spec"]["nodeName"] == slices[0]["spec"]["pool"]["name"] == "node-00000"
    claims = [d for d in docs if d["kind"] == "ResourceClaim"]
    assert len(claims) == 1000
    taken = [(r["pool"], r["device"]) for c in claims for r in c["status"]["allocation"]["devices"]["results"]]
    assert len(set(taken)) == 1000  # no device twice
    again, _ = perf.build_documents(data, "SchedulingWithResourceClaimTemplate", "2000pods_200nodes", seed=3)
    assert [d for d in again if d["kind"] == "ResourceClaim"] == claims
    pods = [d for d in docs if d["kind"] == "Pod"]
    assert len(pods) == len(measured) == 1000
    assert pods[0]["spec"]["resourceClaims"] == [
        {"name": "resource", "resourceClaimTemplateName": "test-claim-template"}
    ]
    assert {d["kind"] for d in docs} >= {"DeviceClass", "ResourceClaimTemplate", "Namespace"}
    docs, measured = perf.build_documents(data, "SchedulingWithResourceClaim", "fast")
    names = [p["spec"]["resourceClaims"][0]["resourceClaimName"] for p in docs if p["kind"] == "Pod"]
    assert names == ["test-claim-0"] * 5 + ["test-claim-1"] * 5
    assert [c["metadata"]["name"] for c in docs if c["kind"] == "ResourceClaim"] == ["test-claim-0", "test-claim-1"]
    assert all("status" not in c for c in docs if c["kind"] == "ResourceClaim")


def test_documents_of_the_pod_group_cases() -> None:
    """podgroup/gangscheduling and basicscheduling: v1beta1 PodGroups, pod i in group i / podsPerGroup, and every
    size's measured pods exactly its groups' members."""
    data = perf.load_workloads()
    docs, measured = perf.build_documents(data, "GangScheduling", "10Nodes_3Gangs")
    groups = [d for d in docs if d["kind"] == "PodGroup"]
    assert [g["metadata"]["name"] for g in groups] == ["gang-0", "gang-1", "gang-2"]
    assert groups[0]["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert groups[0]["spec"] == {"schedulingPolicy": {"gang": {"minCount": 3}}}
    pods = [d for d in docs if d["kind"] == "Pod"]
    assert [p["spec"]["schedulingGroup"]["podGroupName"] for p in pods] == [f"gang-{i // 3}" for i in range(9)]
    assert len(measured) == 9
    docs, _ = perf.build_documents(data, "BasicScheduling", "10Nodes_3Groups")
    assert next(d for d in docs if d["kind"] == "PodGroup")["spec"] == {"schedulingPolicy": {"basic": {}}}
    for name in ("GangScheduling", "BasicScheduling"):
        w = data["workloads"][name]
        assert w["featureGates"] == {"GenericWorkload": True}
        for size in w["sizes"]:
            assert size["measurePods"] == size["initPodGroups"] * size["podsPerGroup"], size


def test_every_workload_runs_at_a_tiny_size(tmp_path: Path) -> None:
    path = _tiny(tmp_path)
    data = perf.load_workloads(path)
    for name in data["workloads"]:
        row = perf.run_case(name, "tiny", path=path)
        assert row["measured_pods"] == 4, name
        assert row["measured_attempts"] >= 1, name
        assert row["peak_rss_mib"] > 0
        assert row["measured_scheduled"] == row["measured_running_at_end"] == 4, name
    # what the profile lacks is named, never silently dropped
    row = perf.run_case("SchedulingCSIPVs", "tiny", path=path)
    for plugin in ("VolumeBinding", "NodeVolumeLimits"):
        if plugin in row["profile_plugins_absent"]:
            assert f"plugin {plugin} absent" in row["absent"]


def test_the_command_line_prints_a_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _tiny(tmp_path)
    args = ["--workloads-file", path, "--workloads", "SchedulingBasic,TopologySpreading", "--repeat", "2"]
    assert perf.main([*args, "--in-process"]) == 0
    out = capsys.readouterr().out
    assert "| SchedulingBasic | tiny | 4 | 4 |" in out
    assert "default-profile plugins packsched lacks" in out
    prof = tmp_path / "prof"
    assert perf.main([*args, "--in-process", "-o", "json", "--profile", str(prof), "--repeat", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [c["workload"] for c in report["cases"]] == ["SchedulingBasic", "TopologySpreading"]
    assert report["machine"]["numpy"]
    assert os.path.exists(prof / "SchedulingBasic-tiny.prof")


def test_a_case_in_its_own_process(tmp_path: Path) -> None:
    path = _tiny(tmp_path)
    row = perf.run_child("SchedulingBasic", "tiny", 1, None, 100, path)
    assert row["measured_scheduled"] == 4 and row["pods_per_s"] > 0
    failed = perf.run_child("NoSuchWorkload", "tiny", 1, None, 100, path)
    assert "error" in failed
    assert "NoSuchWorkload" in perf.markdown([{**failed, "loadavg_1m": 0.0}])


def test_gc_freeze_runs_the_case_with_its_objects_frozen(tmp_path: Path) -> None:
    """``--gc-freeze``: the case's objects leave the collector's generations before the run (undone here, so that
    this test process's objects do not stay frozen)."""
    import gc

    before = gc.get_freeze_count()
    try:
        out = perf.run_case("SchedulingWithResourceClaimTemplate", "tiny", path=_tiny(tmp_path), gc_freeze=True)
        frozen = gc.get_freeze_count()
    finally:
        gc.unfreeze()
    assert frozen > before
    assert out["gc_freeze"] is True
    assert out["measured_scheduled"] == out["measured_pods"] == 4
