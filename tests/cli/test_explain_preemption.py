"""``explain -o json``'s ``preemption`` (the attempt that preempted: node, victims, message) and ``status.startTime``
of bound pods deciding which node preemption takes when the candidates tie (upstream MoreImportantPod: of two pods
of one priority the one that started earlier is more important, so the node whose victim started last is chosen).
Shapes from the conformance recordings of kube-scheduler 1.35.4 and 1.37.2 (preemption area)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from packsched.cli.main import app

runner = CliRunner()


def node(name: str) -> str:
    return f"""---
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "2", memory: 4Gi, pods: "110"}}}}
"""


def pod(name: str, cpu: str, priority: int, node_name: str = "", started: str = "") -> str:
    bound = f"nodeName: {node_name}, " if node_name else ""
    status = f"\nstatus: {{startTime: '{started}'}}" if started else ""
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec: {{{bound}priority: {priority}, terminationGracePeriodSeconds: 0,
  containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}{status}
"""


def explain(tmp_path: Path, text: str, target: str, *args: str) -> dict[str, Any]:
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    run = runner.invoke(app, ["explain", str(path), "--pod", target, "-o", "json", *args])
    assert run.exit_code == 0, run.output
    out: dict[str, Any] = json.loads(run.stdout)
    return out


@pytest.mark.parametrize(
    ("a_started", "b_started", "chosen"), [("00:00:01", "00:00:02", "b"), ("00:00:02", "00:00:01", "a")]
)
def test_the_node_whose_victim_started_last_is_preempted(
    tmp_path: Path, a_started: str, b_started: str, chosen: str
) -> None:
    text = (
        node("a")
        + node("b")
        + pod("old-a", "2", 100, "a", f"2024-01-01T{a_started}Z")
        + pod("old-b", "2", 100, "b", f"2024-01-01T{b_started}Z")
        + pod("new", "1", 1000)
    )
    for seed in ("0", "1", "2", "3"):  # not the seeded tie-break: the start times decide
        data = explain(tmp_path, text, "default/new", "--seed", seed, "--kube-version", "1.35")
        assert data["selected"] == chosen
        pre = data["preemption"]
        assert (pre["attempt"], pre["nominated_node"], pre["victims"]) == (1, chosen, [f"default/old-{chosen}"])
        assert pre["message"] == "0/2 nodes are available: 2 Insufficient cpu."
    # 1.37 words the successful preemption in the message
    pre = explain(tmp_path, text, "default/new", "--kube-version", "1.37")["preemption"]
    assert pre["message"] == (
        f"0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node "
        f"{chosen}, preempting 1 victims"
    )


def test_no_preemption_no_block(tmp_path: Path) -> None:
    data = explain(tmp_path, node("a") + pod("p", "1", 0), "default/p")
    assert "preemption" not in data


def test_a_start_time_that_is_not_a_time_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(node("a") + pod("p", "1", 0, "a", "yesterday"))
    run = runner.invoke(app, ["explain", str(path), "--pod", "default/p", "-o", "json"])
    assert run.exit_code == 2
    assert "status.startTime" in run.output and "not an RFC 3339 time" in run.output
