"""examples/real-cluster-export: a folder exported from a real cluster (nodes, a Deployment and a StatefulSet read back
with their pods, a DaemonSet as the raw API returns it, a CronJob, Services, a PVC, a LimitRange, a ResourceQuota and
cert-manager custom resources) simulates in one command (issue 24; golden test)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from packsched.cli.main import app

EXPORT = Path(__file__).resolve().parents[1] / "examples" / "real-cluster-export"
runner = CliRunner()
SKIPPED = "skipped 3 objects of kinds packsched does not model: Certificate (2), Issuer (1)"


def test_the_export_simulates_in_one_command() -> None:
    result = runner.invoke(app, ["simulate", str(EXPORT), "-o", "json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    placements = {p["pod"]: (p["node"], p["phase"], p["created"], p["started"]) for p in data["placements"]}
    assert placements == {
        # the DaemonSet's pods (its raw DaemonSetList held none): one per Linux node whose taints it tolerates, so
        # none on the control plane
        "kube-system/node-exporter-worker-1": ("worker-1", "Running", 0.0, 0.0),
        "kube-system/node-exporter-worker-2": ("worker-2", "Running", 0.0, 0.0),
        # read back: bound where they run
        "shop/web-5d7f9c8b6-8k2lq": ("worker-1", "Running", 0.0, 0.0),
        "shop/web-5d7f9c8b6-r4m9t": ("worker-2", "Running", 0.0, 0.0),
        "shop/db-0": ("worker-1", "Running", 0.0, 0.0),
        # the CronJob's Job at 02:00 (7200 s after the epoch): three pods that say no requests get the LimitRange's
        # 500m; the quota (3 CPUs, 2 taken by the pods above) admits two; the Job controller makes its third
        # completion's pod once those finish
        "shop/nightly-report-120-0": ("worker-2", "Succeeded", 7200.0, 7200.0),
        "shop/nightly-report-120-1": ("worker-2", "Succeeded", 7200.0, 7200.0),
        "shop/nightly-report-120-2": (None, "Rejected", 7200.0, None),
        "shop/nightly-report-120-3": ("worker-2", "Succeeded", 8400.0, 8400.0),
    }
    rejected = next(p for p in data["placements"] if p["phase"] == "Rejected")
    assert rejected["reason"] == (
        'pods "nightly-report-120-2" is forbidden: exceeded quota: shop-quota, requested: requests.cpu=500m, '
        "used: requests.cpu=3, limited: requests.cpu=3"
    )
    assert data["summary"] == {"pods": 9, "running": 5, "succeeded": 3, "rejected": 1}
    assert SKIPPED in data["warnings"]


def test_the_table_output_warns_once_about_the_custom_resources() -> None:
    result = runner.invoke(app, ["simulate", str(EXPORT)])
    assert result.exit_code == 0, result.output
    assert result.output.count("skipped 3 objects") == 1
    assert "Certificate (2), Issuer (1)" in result.output


def test_strict_refuses_the_custom_resources_naming_the_files() -> None:
    result = runner.invoke(app, ["simulate", str(EXPORT), "--strict"])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 3
    assert all("cert-manager.yaml: items[" in line for line in errors)
    assert '"Certificate" is not one packsched models' in errors[0]


def test_validate_lists_the_skipped_kinds_among_its_warnings() -> None:
    result = runner.invoke(app, ["validate", str(EXPORT)])
    assert result.exit_code == 0, result.output
    assert SKIPPED in result.output.replace("\n", " ")
    assert runner.invoke(app, ["validate", str(EXPORT), "--strict"]).exit_code == 2
