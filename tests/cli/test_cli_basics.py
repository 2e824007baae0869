"""The command line's basics as users reported them missing: --version, -h, ``python -m packsched``, ``-`` for
standard input, whole tables in a pipe, warnings on stderr and once each, names and int32 fields checked as the
API server checks them, and shipped configurations that pass packsched's own advice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from packsched.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
DEPLOY = ROOT / "deploy"
runner = CliRunner()

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
"""
POD = """---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
"""
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, "
    "and end with an alphanumeric character"
)


def _validate(tmp_path: Path, text: str) -> tuple[int, str, Path]:
    f = tmp_path / "m.yaml"
    f.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["validate", str(f)])
    return result.exit_code, result.stderr, f


# -- 1. --version, -h, python -m packsched, - for standard input ------------------------------------------------


def test_version_prints_the_package_version_and_exits_0() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"packsched {version('packsched')}\n"


def _commands() -> list[str]:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    return sorted(group.commands)


@pytest.mark.parametrize("command", [[], *([c] for c in _commands())], ids=lambda c: " ".join(c) or "top")
def test_h_is_help_on_the_top_level_and_every_subcommand(command: list[str]) -> None:
    short = runner.invoke(app, [*command, "-h"])
    assert short.exit_code == 0, short.output
    assert "Usage:" in short.stdout
    assert short.stdout == runner.invoke(app, [*command, "--help"]).stdout


def test_python_m_packsched_runs_the_cli() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "packsched", "--version"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"packsched {version('packsched')}\n"


def test_dash_reads_the_manifests_from_standard_input_in_simulate_and_explain() -> None:
    cluster = (EX / "kep-964-story" / "cluster.yaml").read_text(encoding="utf-8")
    from_file = runner.invoke(app, ["simulate", str(EX / "kep-964-story" / "cluster.yaml"), "-o", "json"])
    from_stdin = runner.invoke(app, ["simulate", "-", "-o", "json"], input=cluster)
    assert from_stdin.exit_code == 0, from_stdin.output
    assert json.loads(from_stdin.stdout)["placements"] == json.loads(from_file.stdout)["placements"]
    explained = runner.invoke(app, ["explain", "-", "--pod", "default/small-1", "-o", "json"], input=cluster)
    assert explained.exit_code == 0, explained.output
    assert json.loads(explained.stdout)["selected"]


def test_dash_in_validate_reads_a_config_or_manifests_and_names_stdin_in_messages() -> None:
    config = (EX / "gpu-demo" / "config-least-allocated.yaml").read_text(encoding="utf-8")
    result = runner.invoke(app, ["validate", "-", str(EX / "gpu-demo" / "nodes.yaml")], input=config)
    assert result.exit_code == 0, result.output
    assert "ok: 1 config file(s), 1 manifest file(s)" in result.stdout
    bad = runner.invoke(app, ["validate", "-"], input=NODE + POD.replace("name: p}", "name: Bad_Pod}"))
    assert bad.exit_code == 2
    assert '<stdin>: document 2: metadata.name: Invalid value: "Bad_Pod"' in bad.stderr


# -- 2. piped output is whole ---------------------------------------------------------------------------------


def test_piped_tables_are_full_width_and_plain() -> None:
    # eight columns: at 80 columns rich used to cut the node names to "fpga-nod…"
    result = runner.invoke(
        app, ["explain", str(EX / "kep-964-story" / "cluster.yaml"), "--pod", "default/small-1"], env={"COLUMNS": "80"}
    )
    assert result.exit_code == 0, result.output
    assert "fpga-node-1" in result.stdout and "fpga-node-2" in result.stdout
    assert "NodeResourcesBalancedAllocation (x1)" in result.stdout
    assert "…" not in result.stdout
    assert "\x1b[" not in result.stdout  # no colour or style codes


def test_piped_simulate_keeps_long_names_whole(tmp_path: Path) -> None:
    name = "a-very-long-node-name-" + "x" * 120
    f = tmp_path / "c.yaml"
    f.write_text(NODE.replace("name: n1", f"name: {name}") + POD, encoding="utf-8")
    result = runner.invoke(app, ["simulate", str(f)])
    assert result.exit_code == 0, result.output
    assert any(name in line for line in result.stdout.splitlines())
    assert "…" not in result.stdout


# -- 3. warnings on stderr, once each -------------------------------------------------------------------------


def test_validate_prints_warnings_on_stderr_once_each_for_the_readme_command() -> None:
    demo = EX / "gpu-demo"
    # the README's command: the shell's *.yaml names config-rtcr-binpack.yaml a second time; under 1.30 the
    # non-CSI volume-limit plugins are left out of both configurations' profiles (a warning each)
    files = [demo / "config-rtcr-binpack.yaml", *sorted(demo.glob("*.yaml"))]
    result = runner.invoke(app, ["validate", "--kube-version", "1.30", *map(str, files)])
    assert result.exit_code == 0, result.output
    assert "warning:" not in result.stdout
    assert result.stdout.startswith("ok: 2 config file(s), 2 manifest file(s)")
    lines = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert lines, result.stderr
    assert len(lines) == len(set(lines)), lines
    assert f"{len(lines)} warning(s)" in result.stdout


def test_simulate_table_prints_warnings_on_stderr() -> None:
    demo = EX / "capacity-scheduling-demo"
    result = runner.invoke(app, ["simulate", str(demo / "cluster.yaml"), str(demo / "workloads.yaml")])
    assert result.exit_code == 0, result.output
    assert "not enforced" in result.stderr
    assert "warning:" not in result.stdout
    assert "Summary:" in result.stdout


# -- 4. as the API server validates ---------------------------------------------------------------------------


def test_an_invalid_pod_name_is_rejected_with_the_file_and_field_path(tmp_path: Path) -> None:
    code, stderr, f = _validate(tmp_path, NODE + POD.replace("name: p}", "name: My_Pod}"))
    assert code == 2
    assert f'{f}: document 2: metadata.name: Invalid value: "My_Pod": {SUBDOMAIN_MSG}' in stderr


@pytest.mark.parametrize(
    ("document", "path", "message"),
    [
        (NODE.replace("name: n1", "name: Node_1"), "metadata.name", SUBDOMAIN_MSG),
        ("apiVersion: v1\nkind: Namespace\nmetadata: {name: team.a}\n", "metadata.name", LABEL_MSG),
        ("apiVersion: v1\nkind: Service\nmetadata: {name: 1web}\nspec: {}\n", "metadata.name", DNS1035_MSG),
        (POD.replace("{name: p}", "{name: p, namespace: Team_A}"), "metadata.namespace", LABEL_MSG),
        (
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: High}\nvalue: 10\n",
            "metadata.name",
            SUBDOMAIN_MSG,
        ),
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web_app}\n"
            "spec:\n  selector: {matchLabels: {a: b}}\n"
            "  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c}]}\n",
            "metadata.name",
            SUBDOMAIN_MSG,
        ),
        ("apiVersion: v1\nkind: Node\nmetadata: {name: " + "n" * 254 + "}\n", "metadata.name", "no more than 253"),
    ],
    ids=["node", "namespace-label", "service-dns1035", "namespace-field", "priorityclass", "deployment", "too-long"],
)
def test_names_follow_the_rule_of_each_kind(tmp_path: Path, document: str, path: str, message: str) -> None:
    code, stderr, _ = _validate(tmp_path, document)
    assert code == 2
    assert f"{path}: Invalid value: " in stderr and message in stderr


def test_valid_names_of_each_rule_load(tmp_path: Path) -> None:
    text = (
        NODE.replace("name: n1", "name: node-1.example.com")
        + POD.replace("{name: p}", "{name: 0p.x, namespace: team-a}")
        + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n"
        + "---\napiVersion: v1\nkind: Service\nmetadata: {name: web-1, namespace: team-a}\nspec: {}\n"
    )
    code, stderr, _ = _validate(tmp_path, text)
    assert code == 0, stderr


@pytest.mark.parametrize("value", [2**31, -(2**31) - 1])
def test_pod_priority_outside_int32_is_rejected(tmp_path: Path, value: int) -> None:
    code, stderr, _ = _validate(tmp_path, NODE + POD.replace("spec: {", f"spec: {{priority: {value}, "))
    assert code == 2
    assert f"document 2: spec.priority: Invalid value: {value}: must fit in a 32-bit integer" in stderr


def test_pod_priority_at_the_int32_bounds_loads(tmp_path: Path) -> None:
    code, stderr, _ = _validate(tmp_path, NODE + POD.replace("spec: {", f"spec: {{priority: {2**31 - 1}, "))
    assert code == 0, stderr


@pytest.mark.parametrize("name", ["system-huge", "huge"])
def test_priority_class_value_outside_int32_is_rejected(tmp_path: Path, name: str) -> None:
    doc = f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: 3000000000\n"
    code, stderr, _ = _validate(tmp_path, doc)
    assert code == 2
    assert "value: Invalid value: 3000000000: must fit in a 32-bit integer" in stderr


def test_a_document_without_apiversion_says_it_is_missing(tmp_path: Path) -> None:
    code, stderr, f = _validate(tmp_path, "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n")
    assert code == 2
    assert f"{f}: apiVersion: Required value: apiVersion is missing (a Pod has apiVersion v1)" in stderr
    assert "None" not in stderr


# -- 5. the shipped configurations follow packsched's advice ----------------------------------------------------


def _shipped_configs(tmp_path: Path) -> list[Path]:
    configmap = yaml.safe_load((DEPLOY / "configmap.yaml").read_text(encoding="utf-8"))
    embedded = tmp_path / "configmap-config.yaml"
    embedded.write_text(configmap["data"]["config.yaml"], encoding="utf-8")
    # policy.json is a legacy Policy: that format has no percentageOfNodesToScore to set
    return [DEPLOY / "packsched-config.yaml", embedded, *sorted(EX.glob("*/config*.yaml"))]


def test_shipped_configs_draw_no_percentage_of_nodes_to_score_warning(tmp_path: Path) -> None:
    configs = _shipped_configs(tmp_path)
    assert len(configs) >= 6
    for config in configs:
        result = runner.invoke(app, ["validate", str(config)])
        assert result.exit_code == 0, (config, result.output)
        assert "percentageOfNodesToScore" not in result.output, (config, result.output)


def test_deploy_configs_draw_no_bin_packing_warning(tmp_path: Path) -> None:
    for config in _shipped_configs(tmp_path)[:2]:
        result = runner.invoke(app, ["validate", str(config)])
        assert result.exit_code == 0, result.output
        warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
        # only packsched's own note that it does not simulate DynamicResources
        assert all("default plugins packsched does not simulate yet" in w for w in warnings), warnings


def test_the_package_runs_as_a_module_in_process(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import runpy

    monkeypatch.setattr(sys, "argv", ["packsched", "--version"])
    with pytest.raises(SystemExit) as info:
        runpy.run_module("packsched", run_name="__main__")
    assert info.value.code in (0, None)
    assert capsys.readouterr().out.startswith("packsched ")


def test_shell_completion_script_is_offered() -> None:
    run = subprocess.run(
        [str(Path(sys.executable).parent / "packsched"), "--show-completion", "bash"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"},
    )
    assert run.returncode == 0, run.stderr
    assert "_packsched_completion" in run.stdout and "complete" in run.stdout


def test_a_config_passed_with_config_is_not_also_reported_as_skipped_among_the_manifests() -> None:
    """Issue 24: the README's own capacity-scheduling command said "KubeSchedulerConfiguration skipped ... pass it
    with --config" although it was passed."""
    demo = Path(__file__).resolve().parents[2] / "examples" / "capacity-scheduling-demo"
    given = CliRunner().invoke(app, ["simulate", str(demo), "--config", str(demo / "config.yaml")])
    assert given.exit_code == 0 and "pass it with --config" not in given.output
    other = CliRunner().invoke(app, ["simulate", str(demo)])
    assert other.exit_code == 0 and "config.yaml: KubeSchedulerConfiguration skipped" in other.output


def test_help_shows_metavars_not_python_types_and_keeps_brackets() -> None:
    """Issue 24: --help showed `<list[Path]>`, `<str>` and `<bool>` beside options, and Rich ate `[ray]` in
    `pip install 'packsched[ray]'`."""
    import re

    commands = [c.name or c.callback.__name__ for c in app.registered_commands if c.callback is not None]
    assert "compare" in commands
    for name in commands:
        shown = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "200"})
        assert shown.exit_code == 0, name
        assert not re.search(r"<(?:list\[)?(?:int|float|str|bool|path|Path)\]?>", shown.output), (name, shown.output)
        usage = next(line for line in shown.output.splitlines() if "Usage:" in line)
        assert "{" not in usage, usage  # typer's {data_dir}: DATA_DIR, as Unix tools and cli.md write it
    compare = CliRunner().invoke(app, ["compare", "--help"], env={"COLUMNS": "200"}).output
    assert "pip install 'packsched[ray]'" in compare and re.search(r"--workers\s+N\s", compare)
    assert "compare [OPTIONS] DATA_DIR" in compare
    simulate = CliRunner().invoke(app, ["simulate", "--help"], env={"COLUMNS": "200"}).output
    assert "simulate [OPTIONS] PATHS..." in simulate


def test_a_missing_argument_is_named_as_the_usage_line_names_it() -> None:
    """typer said "Missing argument 'data_dir'." under a usage line reading DATA_DIR."""
    result = CliRunner().invoke(app, ["compare"], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "Missing argument 'DATA_DIR'." in result.output, result.output
    assert "data_dir" not in result.output


def test_defaults_written_in_a_help_text_are_shown() -> None:
    """A help text's own "[default: ...]" (where typer's would be wrong: the value depends on other options) was
    taken by rich for markup and vanished."""
    shown = CliRunner().invoke(app, ["gen-jobs", "--help"], env={"COLUMNS": "200"}).output
    assert "[default: 0.9]" in shown and "[default: 0]" in shown
