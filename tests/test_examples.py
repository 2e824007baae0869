"""Every example under examples/ run through the command line, as a user runs it (golden tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from packsched.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples"
runner = CliRunner()


def _json(*args: str) -> Any:
    result = runner.invoke(app, [*args, "-o", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _scores(data: dict[str, Any], plugin: str = "NodeResourcesFit") -> dict[str, int]:
    return {n["node"]: n["scores"][plugin] for n in data["nodes"]}


def test_docs_example_today_scores_60_and_69() -> None:
    data = _json(
        "explain",
        str(EX / "docs-two-node" / "cluster.yaml"),
        "--pod",
        "default/incoming",
        "--config",
        str(EX / "docs-two-node" / "config.yaml"),
    )
    assert _scores(data) == {"node1": 60, "node2": 69}
    assert {n["node"]: n["total"] for n in data["nodes"]} == {"node1": 60, "node2": 69}
    assert data["selected"] == "node2"


def test_docs_example_with_v116_semantics_scores_5_and_7() -> None:
    data = _json(
        "explain",
        str(EX / "docs-two-node" / "cluster.yaml"),
        "--pod",
        "default/incoming",
        "--config",
        str(EX / "docs-two-node" / "config.yaml"),
        "--rtcr-semantics",
        "v1.16",
    )
    assert _scores(data) == {"node1": 5, "node2": 7}
    assert data["selected"] == "node2"


def test_docs_example_with_v117_semantics_scores_60_and_69() -> None:
    data = _json(
        "explain",
        str(EX / "docs-two-node" / "cluster.yaml"),
        "--pod",
        "default/incoming",
        "--config",
        str(EX / "docs-two-node" / "config.yaml"),
        "--rtcr-semantics",
        "v1.17",
    )
    assert _scores(data) == {"node1": 60, "node2": 69}


def test_docs_example_as_legacy_policy() -> None:
    data = _json(
        "explain",
        str(EX / "docs-two-node" / "cluster.yaml"),
        "--pod",
        "default/incoming",
        "--config",
        str(EX / "docs-two-node" / "policy.json"),
    )
    assert _scores(data, "RequestedToCapacityRatio") == {"node1": 60, "node2": 69}
    assert data["selected"] == "node2"
    legacy = _json(
        "explain",
        str(EX / "docs-two-node" / "cluster.yaml"),
        "--pod",
        "default/incoming",
        "--config",
        str(EX / "docs-two-node" / "policy.json"),
        "--rtcr-semantics",
        "v1.16",
    )
    assert _scores(legacy, "RequestedToCapacityRatio") == {"node1": 5, "node2": 7}


def _phases(data: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {p["pod"]: (p["phase"], p["node"]) for p in data["placements"]}


def test_kep_964_story_default_spreading_leaves_the_two_device_pod_pending() -> None:
    data = _json("simulate", str(EX / "kep-964-story" / "cluster.yaml"))
    phases = _phases(data)
    assert phases["default/needs-two-fpgas"] == ("Pending", None)
    assert phases["default/small-0"][1] != phases["default/small-1"][1]  # spread over both nodes
    reason = next(p["reason"] for p in data["placements"] if p["pod"] == "default/needs-two-fpgas")
    assert reason.startswith("0/2 nodes are available: 2 Insufficient example.com/fpga.")


def test_kep_964_story_bin_packing_places_every_pod() -> None:
    data = _json(
        "simulate",
        str(EX / "kep-964-story" / "cluster.yaml"),
        "--config",
        str(EX / "kep-964-story" / "config-binpack.yaml"),
    )
    phases = _phases(data)
    assert all(phase == "Running" for phase, _ in phases.values()), phases
    assert phases["default/small-0"][1] == phases["default/small-1"][1]  # packed on one node


def test_gpu_demo_bin_packing_beats_least_allocated() -> None:
    rows = {r["config"]: r for r in _json("demo", str(EX / "gpu-demo"))["configs"]}
    least, packed = rows["least-allocated"], rows["rtcr-binpack"]
    assert least["pending_by_gpus"].get("8", 0) > 0  # the 8-GPU training pods do not fit when spread
    assert packed["pending"] == 0
    assert packed["fully_free_gpu_nodes"] > least["fully_free_gpu_nodes"]
    assert packed["gpu_allocated"] == 152 and packed["gpu_total"] == 192


def test_timeline_urgent_job_preempts_then_etl_finishes() -> None:
    data = _json("simulate", str(EX / "timeline"))
    events = [(e["time"], e["kind"], e["pod"], e["by"]) for e in data["events"] if e["kind"] != "unschedulable"]
    preempted = [e for e in events if e[1] == "preempted"]
    assert preempted == [
        (300.0, "preempted", "default/etl-1", "default/train-0"),
        (300.0, "preempted", "default/etl-0", "default/train-1"),
    ]
    assert [e["reason"] for e in data["events"] if e["kind"] == "preempted"] == [
        "Job default/etl creates default/etl-3",
        "Job default/etl creates default/etl-4",
    ]
    # in backoff after preempting (to the 302 s flush: 300 + 1 = 301.0 s, window 301 s), but once the new etl pods
    # are rejected nothing is active: Pop takes them from the backoff queue at 300 s (SchedulerPopFromBackoffQ)
    assert [(t, p) for t, k, p, _ in events if k == "scheduled" and p.startswith("default/train")] == [
        (300.0, "default/train-0"),
        (300.0, "default/train-1"),
    ]
    assert [(t, p) for t, k, p, _ in events if k == "completed"] == [
        (1200.0, "default/train-0"),
        (1200.0, "default/train-1"),
        (1800.0, "default/etl-2"),
        (1800.0, "default/etl-3"),
        (2400.0, "default/etl-4"),
        (2400.0, "default/etl-5"),
        (3000.0, "default/etl-6"),
        (3000.0, "default/etl-7"),
    ]
    placements = {p["pod"]: p for p in data["placements"]}
    assert {k: (p["phase"], p["node"]) for k, p in placements.items() if k.startswith("default/web")} == {
        "default/web-0": ("Running", "node-b"),
        "default/web-1": ("Running", "node-a"),
    }
    assert (placements["default/etl-0"]["phase"], placements["default/etl-0"]["node"]) == ("Preempted", None)
    assert placements["default/etl-3"]["replaces"] == "default/etl-1"
    assert placements["default/etl-7"]["owner"] == "Job/etl"
    assert data["summary"] == {"pods": 12, "running": 2, "preempted": 2, "succeeded": 8}
    assert data["end_time"] == 3000.0  # the last ETL completion (the training pods started at 300 s, not 301 s)


def test_gpu_share_example_fits_shares_inside_one_gpu() -> None:
    data = _json(
        "simulate", str(EX / "gpu-share" / "cluster.yaml"), "--config", str(EX / "gpu-share" / "config-bestfit.yaml")
    )
    got = {p["pod"]: (p["phase"], p["node"], p["gpu_index"]) for p in data["placements"]}
    assert got == {
        "default/notebook-a": ("Running", "t4-node", "0"),
        "default/notebook-b": ("Running", "t4-node", "1"),
        "default/train-v100": ("Running", "v100-node", "0-1"),
        "default/half-gpu-t4": ("Pending", None, None),
        "default/small-infer-t4": ("Running", "t4-node", "0"),
    }
    reason = next(p["reason"] for p in data["placements"] if p["pod"] == "default/half-gpu-t4")
    assert reason.startswith(
        "0/2 nodes are available: 1 GPU model not accepted by the pod, 1 no GPU with enough free share."
    )


def test_gpu_share_bad_annotation_is_an_input_error(tmp_path: Path) -> None:
    bad = tmp_path / "pod.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
        "  annotations: {alibabacloud.com/gpu-milli: lots}\n"
        "spec:\n  containers: [{name: c, image: i}]\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["simulate", str(EX / "gpu-share" / "cluster.yaml"), str(bad)])
    assert result.exit_code == 2
    assert f"{bad}: default/p: metadata.annotations[alibabacloud.com/gpu-milli]" in result.output
    assert "Traceback" not in result.output


def test_fgd_args_from_a_config_file_reach_the_plugin(tmp_path: Path) -> None:
    cfg = tmp_path / "fgd.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- plugins:\n    multiPoint: {enabled: [{name: GPUShare}]}\n    score:\n      disabled: [{name: '*'}]\n"
        "      enabled: [{name: FGDScore}]\n  pluginConfig:\n  - name: FGDScore\n    args:\n"
        "      targetWorkload: [{cpuMilli: 1000, gpuMilli: 5000, gpuCount: 1}]\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["simulate", str(EX / "gpu-share" / "cluster.yaml"), "--config", str(cfg)])
    assert result.exit_code == 2  # the args were read (and 5000 milli rejected), not silently dropped
    assert "targetWorkload[0].gpuMilli must be at most 1000" in result.output


def test_zonal_pv_example_places_pods_with_their_volumes() -> None:
    data = _json("simulate", str(EX / "zonal-pv" / "cluster.yaml"))
    phases = _phases(data)
    assert phases["default/db"] == ("Running", "node-b")  # its volume is in zone-b, though node-b is the fullest
    assert {phases["default/cache-0"], phases["default/cache-1"]} == {("Running", "node-a"), ("Running", "node-c")}
    assert phases["default/cache-2"] == ("Pending", None)
    reason = next(p["reason"] for p in data["placements"] if p["pod"] == "default/cache-2")
    assert reason.startswith("0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind.")


def test_zonal_pv_example_explains_the_volume_conflict() -> None:
    data = _json("explain", str(EX / "zonal-pv" / "cluster.yaml"), "--pod", "default/db")
    assert data["selected"] == "node-b"
    rejected = {n["node"]: (n["rejected_by"], n["reasons"]) for n in data["nodes"] if not n["feasible"]}
    conflict = ("VolumeBinding", ["node(s) didn't match PersistentVolume's node affinity"])  # 1.33+
    assert rejected == {"node-a": conflict, "node-c": conflict}
    assert "VolumeBinding" not in data["omitted_default_plugins"]


def test_zone_spread_deployment_puts_one_web_pod_on_every_node() -> None:
    # maxSkew 1 on zone and on hostname: whatever the seed breaks ties with, two web pods per zone, one per node,
    # and the node that already runs the batch pod (least free) is the one left for the last replica
    cluster = str(EX / "zone-spread-deployment" / "cluster.yaml")
    for seed in ("0", "1", "7"):
        data = _json("simulate", cluster, "--seed", seed)
        web = {p["pod"]: p["node"] for p in data["placements"] if p["pod"].startswith("default/web-")}
        assert sorted(web.values()) == ["a1", "a2", "b1", "b2", "c1", "c2"]
        assert web["default/web-5"] == "a1"
        assert data["warnings"] == []
    data = _json("explain", cluster, "--pod", "default/web-5")
    assert data["selected"] == "a1"
    rejected = {n["node"]: n["reasons"] for n in data["nodes"] if not n["feasible"]}
    assert rejected == {
        n: ["node(s) didn't match pod topology spread constraints"] for n in ("a2", "b1", "b2", "c1", "c2")
    }
    assert "PodTopologySpread" not in data["omitted_default_plugins"]


def test_shipped_tuned_configurations_validate() -> None:
    # The configurations `packsched tune` wrote for the tuning guide are what users copy into deploy/.
    found = sorted((EX / "tune").glob("best-config-*.yaml"))
    assert [p.name for p in found] == ["best-config-default-trace.yaml", "best-config-gpuspec33.yaml"]
    for path in found:
        result = runner.invoke(app, ["validate", str(path)])
        assert result.exit_code == 0, result.output
        assert "ok: 1 config file(s)" in result.stdout


def test_the_bin_packing_configs_the_tutorial_and_readme_validate_warn_about_nothing() -> None:
    """Issue 24: `validate` on the tutorial's own bin-packing example warned three times that other score plugins
    could outvote NodeResourcesFit (the configuration's weight was 1)."""
    for folder in ("kep-964-story", "gpu-demo"):
        result = runner.invoke(app, ["validate", str(EX / folder)])
        assert result.exit_code == 0, result.output
        assert "warning" not in result.output and "ok: " in result.stdout, result.output


def test_dra_gpus_example_places_pods_on_their_gpus() -> None:
    """examples/dra-gpus: GPUs published as ResourceSlices, claims from ResourceClaimTemplates; the pod asking
    for three A100s (gpu-a has two) waits."""
    data = _json("simulate", str(EX / "dra-gpus"))
    placed = {p["pod"]: p["node"] for p in data["placements"]}
    assert placed == {
        "default/train-2gpu": "gpu-b",
        "default/infer-1": "gpu-a",
        "default/infer-2": "gpu-a",
        "default/big-a100": None,
    }
    [reason] = [p["reason"] for p in data["placements"] if p["pod"] == "default/big-a100"]
    assert reason.startswith("0/2 nodes are available: 2 cannot allocate all claims.")
