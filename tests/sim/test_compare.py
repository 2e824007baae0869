"""``packsched demo`` (``packsched.sim.compare``) in process: the bundled GPU demo, whose known outcome is that
LeastAllocated strands the eight-GPU training pods and RequestedToCapacityRatio bin-packing places everything, and
a small CPU-only folder for the table's pending-pod list and a cluster without GPUs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from packsched.cli.main import app
from packsched.sim.compare import DEMO_SCHEMA, ComparisonRow, print_comparison

runner = CliRunner()
DEMO = Path(__file__).resolve().parents[2] / "examples" / "gpu-demo"

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
"""


def test_the_gpu_demo_as_json() -> None:
    result = runner.invoke(app, ["demo", str(DEMO), "-o", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["schema"] == DEMO_SCHEMA
    least, rtcr = data["configs"]
    assert (least["config"], rtcr["config"]) == ("least-allocated", "rtcr-binpack")
    for row in (least, rtcr):
        assert row["pods"] == 40 + 16 + 30 + 8 + 6 == row["running"] + row["pending"]
        assert (row["gpu_total"], row["gpu_nodes"]) == (192, 24)
        assert row["gpu_allocation_pct"] == round(100 * row["gpu_allocated"] / 192, 2)
        assert len(row["pending_pods"]) == row["pending"]
        assert sum(row["pending_by_gpus"].values()) == row["pending"]
    # packing places all 152 GPUs asked for and leaves whole nodes free; spreading strands 8-GPU pods
    assert rtcr["pending"] == 0 and rtcr["gpu_allocated"] == 152 and rtcr["fully_free_gpu_nodes"] > 0
    assert least["pending"] > 0 and set(least["pending_by_gpus"]) == {"8"}
    assert least["gpu_allocated"] == 152 - 8 * least["pending"]
    assert all(p["reason"] for p in least["pending_pods"])


def test_the_gpu_demo_as_a_table() -> None:
    result = runner.invoke(app, ["demo", str(DEMO)])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "Same cluster, same pods, different scoring" in text
    assert "least-allocated" in text and "rtcr-binpack" in text
    assert "8-GPU:" in text and "least-allocated: pending pods" in text
    assert "152/192 (79.2%)" in text  # rtcr-binpack places every GPU pod


@pytest.fixture
def cpu_folder(tmp_path: Path) -> Path:
    """One CPU-only node with 2 cores; a Deployment of 14 one-core pods: 2 run, 12 wait."""
    (tmp_path / "config-default.yaml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "cluster.yaml").write_text(
        """apiVersion: v1
kind: Node
metadata: {name: small}
status:
  allocatable: {cpu: "2", memory: 8Gi, pods: "110"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 14
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: main
        resources: {requests: {cpu: "1"}}
""",
        encoding="utf-8",
    )
    return tmp_path


def test_a_cluster_without_gpus_and_many_pending_pods(cpu_folder: Path) -> None:
    result = runner.invoke(app, ["demo", str(cpu_folder), "-o", "json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["configs"]
    assert row["config"] == "default"
    assert (row["running"], row["pending"], row["pending_by_gpus"]) == (2, 12, {"0": 12})
    assert (row["gpu_total"], row["gpu_allocated"], row["gpu_allocation_pct"], row["gpu_nodes"]) == (0, 0, 0.0, 0)
    table = runner.invoke(app, ["demo", str(cpu_folder)])
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert "CPU-only: 12" in table.stdout and "0/0 (0.0%)" in table.stdout
    assert "default: pending pods" in lines
    listed = [line for line in lines if line.startswith("  default/web-")]
    assert len(listed) == 10  # the first ten, then how many more
    assert "  ... 2 more" in lines


def test_print_comparison_without_pending_pods() -> None:
    row = ComparisonRow("x", pods=1, running=1, pending=0, gpu_allocated=1, gpu_total=4, gpu_nodes=1, free_gpu_nodes=0)
    assert row.gpu_allocation_pct == 25.0
    console = Console(width=200, record=True, force_terminal=False)
    with console.capture() as captured:
        print_comparison(console, [row])
    text = captured.get()
    assert "1/4 (25.0%)" in text and "pending pods" not in text
    assert " - " in text  # nothing pending by GPUs


@pytest.mark.parametrize(
    ("keep", "message"),
    [("config-default.yaml", "no manifests (*.yaml)"), ("cluster.yaml", "no config-*.yaml")],
)
def test_a_folder_missing_configs_or_manifests_exits_2(cpu_folder: Path, keep: str, message: str) -> None:
    for path in cpu_folder.glob("*.yaml"):
        if path.name != keep:
            path.unlink()
    result = runner.invoke(app, ["demo", str(cpu_folder)])
    assert result.exit_code == 2 and message in result.output
