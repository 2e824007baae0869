"""``packsched serve`` as a user runs it: the guide's command in a process of its own, SIGTERM, exit codes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import yaml
from typer.testing import CliRunner

from live.fakeapi import FakeApiServer
from live.harness import DEPLOY, ROOT, all_bound, node
from live.test_deploy import guide_serve_command
from packsched.cli.main import app

runner = CliRunner()


def test_the_guides_serve_command_schedules_the_example_pod_and_stops_on_sigterm(
    api: FakeApiServer, tmp_path: Path
) -> None:
    kubeconfig = api.kubeconfig(str(tmp_path / "kubeconfig"))
    api.create("nodes", node("worker-1"))
    api.create("pods", yaml.safe_load((DEPLOY / "example-pod.yaml").read_text()))
    # The guide's command line, with the test's kubeconfig and any free port (10251 may be taken here).
    args = guide_serve_command()[1:]
    args[args.index("~/.kube/config")] = kubeconfig
    args[args.index("--port") + 1] = "0"
    proc = subprocess.Popen(
        [sys.executable, "-m", "packsched.cli.main", *args],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert api.wait_for(all_bound(["hello-packsched"]), 30), "the example pod was not bound"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0, stderr
    logs = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    assert any(rec["msg"] == "scheduling" and rec["profiles"] == ["packsched"] for rec in logs)
    assert logs[-1]["msg"] == "stopped" and logs[-1]["bound"] == 1
    assert all({"ts", "level", "logger", "msg"} <= rec.keys() for rec in logs)
    assert [r for r in logs if r["level"] != "info"] == []  # a clean run, a clean shutdown
    assert api.get("pods", "default", "hello-packsched")["spec"]["nodeName"] == "worker-1"


def test_bad_kubeconfig_is_exit_2_naming_file_and_field(tmp_path: Path) -> None:
    kc = tmp_path / "kc"
    kc.write_text("current-context: prod\ncontexts: []\n")
    result = runner.invoke(app, ["serve", "--config", str(DEPLOY / "packsched-config.yaml"), "--kubeconfig", str(kc)])
    assert result.exit_code == 2
    assert f"{kc}: current-context: context 'prod' is not defined under contexts" in result.output


def test_bad_leader_election_config_is_exit_2(tmp_path: Path) -> None:
    data = yaml.safe_load((DEPLOY / "packsched-config.yaml").read_text())
    data["leaderElection"]["leaseDuration"] = "5s"
    data["leaderElection"]["retryPeriod"] = "often"
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["serve", "--config", str(cfg), "--kubeconfig", str(tmp_path / "unused")])
    assert result.exit_code == 2
    assert f"{cfg}: leaderElection.leaseDuration: Invalid value: LeaseDuration must be greater than RenewDeadline" in (
        result.output
    )
    assert f'{cfg}: leaderElection.retryPeriod: Invalid value: "often": must be a duration such as "15s"' in (
        result.output
    )


def test_no_kubeconfig_outside_a_cluster_is_exit_2(monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    result = runner.invoke(app, ["serve", "--config", str(DEPLOY / "packsched-config.yaml")])
    assert result.exit_code == 2
    assert "no --kubeconfig given and not running in a cluster" in result.output


def test_bad_option_is_exit_2(tmp_path: Path) -> None:
    for flag in ("--preemption-mode", "--preemption-removal"):  # the documented name and the old one
        result = runner.invoke(app, ["serve", flag, "kill"])
        assert result.exit_code == 2
        assert "--preemption-mode must be one of evict, delete" in result.output


def test_binding_workers_must_be_positive(tmp_path: Path) -> None:
    result = runner.invoke(app, ["serve", "--binding-workers", "0"])
    assert result.exit_code == 2
    assert "--binding-workers must be at least 1" in result.output
