"""Bad input a user actually gave the CLI: one error line naming the file (or the option), exit code 2, no traceback.

The deeply nested YAML runs in a subprocess: libyaml's composer used to overflow the C stack there, which would take
the test process down with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import write_small_trace
from packsched.api.errors import InputError
from packsched.api.nesting import MAX_NESTING, SAFE_LOADER, TOO_DEEP, yaml_too_deep
from packsched.cli.main import app
from packsched.plugins.registry import in_tree_registry
from packsched.sim.policies import file_config, policy_config
from packsched.sim.replay import replay
from packsched.sim.trace import Trace, TraceNode, TracePod

EX = Path(__file__).resolve().parents[2] / "examples"
runner = CliRunner()
DEPTH = 100_000

NODE = """apiVersion: v1
kind: Node
metadata: {name: n}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
"""

GPU_SHARE_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint: {enabled: [{name: GPUShare}]}
    score:
      disabled: [{name: '*'}]
      enabled: [{name: NodeResourcesFit}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: alibabacloud.com/gpu-milli, weight: 1}]
"""
NO_GPU_SHARE_CONFIG = GPU_SHARE_CONFIG.replace("    multiPoint: {enabled: [{name: GPUShare}]}\n", "")


def assert_input_error(result: object, *needles: str) -> None:
    code = getattr(result, "exit_code", None)
    if code is None:
        code = getattr(result, "returncode", None)
    output = getattr(result, "output", None) or (getattr(result, "stdout", "") + getattr(result, "stderr", ""))
    assert code == 2, output
    for crash in ("Traceback", "RecursionError", "UnicodeDecodeError", "OverflowError", "KeyError", "ValueError"):
        assert crash not in output, output
    for needle in needles:
        assert needle in output, output


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "packsched.cli.main", *args], capture_output=True, text=True, timeout=110, check=False
    )


@pytest.fixture
def trace_dir(tmp_path: Path) -> Path:
    return write_small_trace(tmp_path)


# -- 1. deeply nested YAML and JSON --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["[" * DEPTH, "- " * DEPTH + "x\n"], ids=["flow", "block"])
@pytest.mark.parametrize("command", ["simulate", "validate", "explain", "config"])
def test_deeply_nested_yaml_exits_2_naming_the_file(tmp_path: Path, command: str, text: str) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text(text, encoding="utf-8")
    args = {
        "simulate": ["simulate", str(deep)],
        "validate": ["validate", str(deep)],
        "explain": ["explain", str(deep), "--pod", "p"],
        "config": ["simulate", str(EX / "gpu-demo" / "nodes.yaml"), "--config", str(deep)],
    }[command]
    result = run_cli(*args)
    assert_input_error(result, f"error: {deep}: {TOO_DEEP}")


@pytest.mark.parametrize("text", ["[" * DEPTH + "]" * DEPTH, '{"a":' * DEPTH + "1" + "}" * DEPTH])
@pytest.mark.parametrize("command", ["simulate", "validate", "explain"])
def test_deeply_nested_json_manifest_exits_2_naming_the_file(tmp_path: Path, command: str, text: str) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(text, encoding="utf-8")
    args = [command, str(deep)] + (["--pod", "p"] if command == "explain" else [])
    assert_input_error(runner.invoke(app, args), f"error: {deep}: {TOO_DEEP}")


def test_nesting_check_counts_levels_and_lets_ordinary_files_through() -> None:
    assert not yaml_too_deep((EX / "gpu-demo" / "workloads.yaml").read_text(encoding="utf-8"), SAFE_LOADER)
    n = MAX_NESTING
    assert not yaml_too_deep("[" * n + "]" * n, SAFE_LOADER)
    assert yaml_too_deep("[" * (n + 1) + "]" * (n + 1), SAFE_LOADER)
    assert not yaml_too_deep("- " * n + "x\n", SAFE_LOADER)
    assert yaml_too_deep("- " * (n + 1) + "x\n", SAFE_LOADER)
    assert not yaml_too_deep("key: [1, 2\n" + "x" * 3000, SAFE_LOADER)  # a syntax error: the loader reports it


# -- 2. serve --port -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("port", ["99999", "65536", "-1"])
def test_serve_port_out_of_range_exits_2(port: str) -> None:
    result = runner.invoke(app, ["serve", "--port", port])
    assert_input_error(result, f"--port must be between 0 and 65535, got {port}")


# -- 3. serve --kubeconfig with a binary file ------------------------------------------------------------------


def test_serve_binary_kubeconfig_exits_2_before_any_network(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_bytes(b"\xff\xfe\x00\x81\x89PNG\r\n\x1a\n\x00\x00")
    result = runner.invoke(app, ["serve", "--kubeconfig", str(kubeconfig), "--no-leader-elect"])
    assert_input_error(result, f"error: {kubeconfig}: cannot read kubeconfig: the file is not UTF-8 text")


def test_serve_deeply_nested_kubeconfig_exits_2(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("[" * DEPTH, encoding="utf-8")
    result = runner.invoke(app, ["serve", "--kubeconfig", str(kubeconfig)])
    assert_input_error(result, f"error: {kubeconfig}: {TOO_DEEP}")


# -- 4. negative --limit (and --seed) --------------------------------------------------------------------------


def test_simulate_negative_limit_exits_2() -> None:
    result = runner.invoke(app, ["simulate", str(EX / "gpu-demo"), "--limit", "-1"])
    assert_input_error(result, "--limit must be 0 or more, got -1")


@pytest.mark.parametrize("command", ["simulate", "explain", "quotas", "demo"])
def test_negative_seed_exits_2(command: str) -> None:
    args = [command] + ([] if command == "demo" else [str(EX / "gpu-demo")])
    args += ["--pod", "p"] if command == "explain" else []
    result = runner.invoke(app, [*args, "--seed", "-1"])
    assert_input_error(result, "--seed must be 0 or more, got -1")


# -- 5. empty input --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["simulate", "validate", "explain", "quotas"])
@pytest.mark.parametrize("name", ["empty.yaml", "comments.yaml", "empty.json", "/dev/null"])
def test_empty_manifest_file_exits_2(tmp_path: Path, command: str, name: str) -> None:
    if name == "/dev/null":
        path = Path(name)
    else:
        path = tmp_path / name
        path.write_text("# nothing here\n---\n" if name == "comments.yaml" else "", encoding="utf-8")
    args = [command, str(path)] + (["--pod", "p"] if command == "explain" else [])
    result = runner.invoke(app, args)
    assert_input_error(result, f"error: {path}: ")
    assert "empty" in result.output


def test_empty_files_alone_exit_2_and_beside_good_manifests_hold_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("# placeholder\n", encoding="utf-8")
    result = runner.invoke(app, ["simulate", str(tmp_path)])
    assert_input_error(result, f"error: {tmp_path / 'a.yaml'}: the file is empty", f"{tmp_path / 'b.yaml'}: the file")
    (tmp_path / "node.yaml").write_text(NODE, encoding="utf-8")
    assert runner.invoke(app, ["simulate", str(tmp_path)]).exit_code == 0
    named = runner.invoke(app, ["simulate", str(tmp_path / "node.yaml"), str(tmp_path / "a.yaml")])
    assert named.exit_code == 0, named.output


def test_simulate_manifests_without_nodes_or_pods_exit_2(tmp_path: Path) -> None:
    (tmp_path / "ns.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n", encoding="utf-8")
    result = runner.invoke(app, ["simulate", str(tmp_path)])
    assert_input_error(result, "the manifests define no nodes and no pods")


@pytest.mark.parametrize("command", ["replay", "compare"])
def test_node_list_without_gpus_exits_2(trace_dir: Path, command: str) -> None:
    nodes = trace_dir / "openb_node_list_cpu.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,32000,131072,0,\n", encoding="utf-8")
    policy = ["--policy", "FGD"] if command == "replay" else ["--policies", "FGD,Random"]
    result = runner.invoke(app, [command, str(trace_dir), "--nodes", "cpu", *policy, "--seeds", "1"])
    assert_input_error(result, f"error: {nodes}: no node of the list has a GPU")


def test_pod_list_without_gpu_pods_exits_2(trace_dir: Path) -> None:
    pods = trace_dir / "openb_pod_list_cpu.csv"
    pods.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,64,0,0\n", encoding="utf-8")
    result = runner.invoke(app, ["replay", str(trace_dir), "--pods", "cpu", "--policy", "BestFit"])
    assert_input_error(result, f"error: {pods}: no pod of the list asks for a GPU")


@pytest.mark.parametrize("name", ["/dev/null", "empty.csv"])
def test_empty_or_null_trace_exits_2(trace_dir: Path, name: str) -> None:
    if name == "/dev/null":
        result = runner.invoke(app, ["replay", name, "--policy", "FGD"])
        assert_input_error(result, "error: /dev/null: the trace folder does not exist")
        return
    (trace_dir / name).write_text("", encoding="utf-8")
    result = runner.invoke(app, ["replay", str(trace_dir), "--pods", str(trace_dir / name), "--policy", "FGD"])
    assert_input_error(result, f"{trace_dir / name}: the file is empty")


def test_demo_on_a_folder_without_configs_exits_2(tmp_path: Path) -> None:
    (tmp_path / "nodes.yaml").write_text(NODE, encoding="utf-8")
    result = runner.invoke(app, ["demo", str(tmp_path)])
    assert_input_error(result, f"error: {tmp_path}: no config-*.yaml")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_input_error(runner.invoke(app, ["demo", str(empty)]), "no config-*.yaml")


# -- 6. replay / compare with a config without GPUShare --------------------------------------------------------


@pytest.mark.parametrize("command", ["replay", "compare"])
def test_config_without_gpu_share_is_refused(trace_dir: Path, tmp_path: Path, command: str) -> None:
    cfg = tmp_path / "nogpushare.yaml"
    cfg.write_text(NO_GPU_SHARE_CONFIG, encoding="utf-8")
    extra = ["--policies", ""] if command == "compare" else []
    result = runner.invoke(app, [command, str(trace_dir), "--config", str(cfg), *extra, "--seeds", "1"])
    assert_input_error(result, f"error: {cfg}: profiles[0].plugins: GPUShare is required")


def test_config_with_gpu_share_disabled_at_reserve_is_refused(trace_dir: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "noreserve.yaml"
    reserve_off = "    reserve: {disabled: [{name: GPUShare}]}\n    score:\n"
    cfg.write_text(GPU_SHARE_CONFIG.replace("    score:\n", reserve_off), encoding="utf-8")
    result = runner.invoke(app, ["replay", str(trace_dir), "--config", str(cfg)])
    assert_input_error(result, "GPUShare is required", "does not run at reserve")


def test_config_without_the_default_profile_is_refused(trace_dir: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "other.yaml"
    cfg.write_text(GPU_SHARE_CONFIG.replace("- plugins:", "- schedulerName: other\n  plugins:"), encoding="utf-8")
    result = runner.invoke(app, ["replay", str(trace_dir), "--config", str(cfg)])
    assert_input_error(result, f"error: {cfg}: profiles: no profile has schedulerName default-scheduler")


def test_replay_with_gpu_share_config_keeps_every_percentage_within_0_100(trace_dir: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "most.yaml"
    cfg.write_text(GPU_SHARE_CONFIG, encoding="utf-8")
    result = runner.invoke(app, ["replay", str(trace_dir), "--config", str(cfg), "--seeds", "1-3", "-o", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for run in data["runs"]:
        for curve in ("unallocated_gpu_pct", "gpu_alloc_pct", "frag_rate_pct", "frag_total_pct"):
            values = [v for v in run[curve].values() if v is not None]
            assert values and all(0.0 <= v <= 100.0 for v in values), (curve, run[curve])


def test_replay_library_refuses_a_config_without_gpu_share(tmp_path: Path) -> None:
    nodes = tuple(TraceNode(f"n{i}", 32000, 65536, g, "T4") for i, g in enumerate([1, 2, 4]))
    pods = tuple(TracePod(f"p{i}", 1000, 64, 1, 300) for i in range(20))
    trace = Trace(nodes, pods, "nodes.csv", "pods.csv")
    cfg_file = tmp_path / "nogpushare.yaml"
    cfg_file.write_text(NO_GPU_SHARE_CONFIG, encoding="utf-8")
    with pytest.raises(InputError, match="GPUShare is required"):
        replay(trace, file_config(str(cfg_file), set(in_tree_registry())), 1)
    cpu_only = Trace((TraceNode("c", 32000, 65536, 0, ""),), pods, "cpu.csv", "pods.csv")
    with pytest.raises(InputError, match="no node of the list has a GPU"):
        replay(cpu_only, policy_config("FGD", set(in_tree_registry())), 1)
