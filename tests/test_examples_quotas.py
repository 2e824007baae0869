"""The elastic-quota examples under examples/, run through the command line (golden tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from packsched.cli.main import app

EX = Path(__file__).resolve().parents[1] / "examples"
runner = CliRunner()


def simulate(folder: str, *files: str, config: str = "config.yaml") -> dict[str, Any]:
    result = runner.invoke(
        app, ["simulate", *(str(EX / folder / f) for f in files), "--config", str(EX / folder / config), "-o", "json"]
    )
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def phases(data: dict[str, Any]) -> dict[str, str]:
    return {p["pod"]: p["phase"] for p in data["placements"]}


def running_cpu(data: dict[str, Any], ns: str, per_pod: int) -> int:
    return per_pod * sum(1 for pod, ph in phases(data).items() if pod.startswith(ns + "/") and ph == "Running")


def test_upstream_readme_demo_end_state() -> None:
    """quota1 and quota2 (min 4, max 6 CPUs) on 8 CPUs: quota1's 4 replicas -> 3 run (its max), then quota2's 2
    replicas: one fits, the other reclaims by preempting one quota1 pod. End: each quota runs 4 CPUs."""
    data = simulate("capacity-scheduling-demo", "cluster.yaml", "workloads.yaml")
    assert running_cpu(data, "quota1", 2) == 4
    assert running_cpu(data, "quota2", 2) == 4
    ph = phases(data)
    assert ph["quota2/nginx-0"] == ph["quota2/nginx-1"] == "Running"
    preempted = [p for p, s in ph.items() if s == "Preempted"]
    assert len(preempted) == 1 and preempted[0].startswith("quota1/")
    events = [e for e in data["events"] if e["kind"] == "preempted"]
    assert [(e["pod"], e["by"]) for e in events] == [(preempted[0], "quota2/nginx-1")]
    pending = [p for p, s in ph.items() if s == "Pending"]
    assert "quota1/nginx-3" in pending  # the one that hit quota1's max, still waiting
    assert all(p.startswith("quota1/") for p in pending)


def test_kep_story_1() -> None:
    ph = phases(simulate("kep-9-story-1", "cluster.yaml"))
    assert ph == {
        "a/a-1": "Running",
        "a/a-2": "Running",
        "b/b-1": "Running",
        "a/a-3": "Preempted",  # the 2-GPU pod that borrowed from B's min
        "a/a-4": "Pending",  # would take A over its max, later over the sum of mins
        "b/b-2": "Running",
    }


def test_kep_story_2() -> None:
    ph = phases(simulate("kep-9-story-2", "cluster.yaml"))
    assert ph.pop("a/a-4") == "Preempted"  # taken from A (over its min), not from C (at its min)
    assert set(ph.values()) == {"Running"}


def test_gpu_quotas_with_bin_packing_honour_the_guarantee_and_spreading_does_not() -> None:
    packed = simulate("gpu-quotas", "cluster.yaml", "workloads.yaml", config="config-binpack.yaml")
    ph = phases(packed)
    assert ph["prod/train-0"] == ph["prod/train-1"] == "Running"
    research = [s for p, s in ph.items() if p.startswith("research/")]
    # back at its min (16 GPUs); the Deployment's 4 replacements wait: research may not borrow any more
    assert (research.count("Running"), research.count("Preempted"), research.count("Pending")) == (8, 4, 4)
    spread = simulate("gpu-quotas", "cluster.yaml", "workloads.yaml", config="config-spread.yaml")
    ph = phases(spread)
    assert sorted(s for p, s in ph.items() if p.startswith("prod/")) == ["Pending", "Running"]
    # no node can be emptied for the second 8-GPU pod; the replacements of the 3 preempted research pods take
    # the GPUs left free, so research ends at its max (24) and prod below its min
    research = [s for p, s in ph.items() if p.startswith("research/")]
    assert (research.count("Running"), research.count("Preempted")) == (12, 3)
