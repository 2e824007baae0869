"""``packsched replay`` and ``packsched compare`` end to end on a small synthetic trace folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import write_small_trace
from packsched.cli.main import app
from packsched.cli.trace_cmds import parse_seeds

runner = CliRunner()


def _no_time(runs: list[dict[str, object]]) -> list[dict[str, object]]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in runs]


@pytest.fixture
def trace_dir(tmp_path: Path) -> Path:
    return write_small_trace(tmp_path)


def test_replay_json_has_runs_mean_sd(trace_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "replay",
            str(trace_dir),
            "--pods",
            "default",
            "--policy",
            "FGD",
            "--seeds",
            "42-44",
            "-o",
            "json",
            "--out-dir",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [r["seed"] for r in data["runs"]] == [42, 43, 44]
    for run in data["runs"]:
        assert set(run["unallocated_gpu_pct"]) == {"100", "130"}
    assert set(data["mean"]) == {"100", "130"} and set(data["sd"]) == {"100", "130"}
    vals = [r["unallocated_gpu_pct"]["100"] for r in data["runs"]]
    assert data["mean"]["100"] == pytest.approx(sum(vals) / 3, abs=1e-3)
    assert data["published"] is None  # no fgd-expected-results in this folder
    for name in ("runs.csv", "summary.json", "allocation.png", "fragmentation.png"):
        assert (out / name).stat().st_size > 0
    lines = (out / "runs.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("label,seed,arrived_pct,unallocated_gpu_pct,gpu_alloc_pct,frag_rate_pct")
    assert len(lines) == 1 + 3 * 131
    again = runner.invoke(app, ["replay", str(trace_dir), "--policy", "FGD", "--seeds", "42-44", "-o", "json"])
    assert _no_time(json.loads(again.stdout)["runs"]) == _no_time(data["runs"])  # same seeds, same results


def test_compare_runs_policies_and_configs_in_parallel(trace_dir: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "most.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- plugins:\n    multiPoint: {enabled: [{name: GPUShare}]}\n    score:\n      disabled: [{name: '*'}]\n"
        "      enabled: [{name: NodeResourcesFit}]\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
        "      scoringStrategy:\n        type: MostAllocated\n"
        "        resources: [{name: cpu, weight: 1}, {name: alibabacloud.com/gpu-milli, weight: 1}]\n",
        encoding="utf-8",
    )
    out = tmp_path / "cmp"
    result = runner.invoke(
        app,
        [
            "compare",
            str(trace_dir),
            "--policies",
            "BestFit,Random",
            "--config",
            str(cfg),
            "--seeds",
            "1-2",
            "--workers",
            "2",
            "-o",
            "json",
            "--out-dir",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [p["label"] for p in data["policies"]] == ["BestFit", "Random", "most"]
    assert all(len(p["runs"]) == 2 for p in data["policies"])
    assert (out / "comparison.png").stat().st_size > 0
    serial = runner.invoke(
        app,
        [
            "compare",
            str(trace_dir),
            "--policies",
            "BestFit,Random",
            "--config",
            str(cfg),
            "--seeds",
            "1-2",
            "--workers",
            "1",
            "-o",
            "json",
        ],
    )
    assert [_no_time(p["runs"]) for p in json.loads(serial.stdout)["policies"]] == [
        _no_time(p["runs"]) for p in data["policies"]
    ]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--policy", "Nope"], "unknown policy 'Nope'"),
        (["--policy", "FGD", "--seeds", "51-42"], "--seeds: '51-42'"),
        (["--policy", "FGD", "--seeds", "x"], "--seeds: 'x'"),
        (["--policy", "FGD", "--pods", "missing"], "openb_pod_list_missing.csv: no such file"),
        ([], "give exactly one of --policy NAME or --config FILE"),
        (["--policy", "FGD", "--tie-break", "coin"], "--tie-break must be one of"),
    ],
)
def test_replay_bad_input_exits_2(trace_dir: Path, args: list[str], needle: str) -> None:
    result = runner.invoke(app, ["replay", str(trace_dir), *args])
    assert result.exit_code == 2
    assert needle in result.output
    assert "Traceback" not in result.output


def test_bad_csv_row_names_file_row_and_column(trace_dir: Path) -> None:
    path = trace_dir / "openb_pod_list_bad.csv"
    path.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,one,100\n", encoding="utf-8")
    result = runner.invoke(app, ["replay", str(trace_dir), "--pods", "bad", "--policy", "BestFit"])
    assert result.exit_code == 2
    assert f"{path}: row 2, column num_gpu: must be a whole number, got 'one'" in result.output


def test_a_trace_csv_with_a_byte_order_mark_reads_as_without(trace_dir: Path) -> None:
    """Issue 24: a CSV saved by a spreadsheet starts with a UTF-8 BOM, which made the header's first column
    unknown."""
    for name in ("openb_node_list_gpu_node.csv", "openb_pod_list_default.csv"):
        path = trace_dir / name
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    result = runner.invoke(app, ["replay", str(trace_dir), "--policy", "BestFit", "--seeds", "1", "-o", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["runs"][0]["scheduled"] > 0


def test_a_gpu_model_no_node_has_is_an_input_error(trace_dir: Path) -> None:
    """Issue 24: a pod asking for an unknown GPU model was accepted, and silently never placed."""
    path = trace_dir / "openb_pod_list_typo.csv"
    path.write_text(
        ",".join(("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase"))
        + ",creation_time,deletion_time,scheduled_time\n"
        + "p0,1000,256,1,500,T4,LS,Running,0,10,0\np1,1000,256,1,500,V100M23|T4,LS,Running,0,10,0\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["replay", str(trace_dir), "--pods", "typo", "--policy", "BestFit", "--seeds", "1"])
    assert result.exit_code == 2
    assert f"{path}: pod p1, column gpu_spec: GPU model 'V100M23' is on no node" in result.output
    assert "(its models: T4)" in result.output and "Traceback" not in result.output


def test_compare_bad_config_is_an_input_error(trace_dir: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- plugins:\n    score:\n      enabled: [{name: NoSuchPlugin}]\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["compare", str(trace_dir), "--config", str(cfg), "--policies", "", "--seeds", "1"])
    assert result.exit_code == 2
    assert "NoSuchPlugin" in result.output and str(cfg) in result.output


def test_parse_seeds() -> None:
    assert parse_seeds("42-51") == list(range(42, 52))
    assert parse_seeds("1,5,7-8") == [1, 5, 7, 8]


def test_a_metric_out_of_its_range_is_never_printed(trace_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from packsched.sim import sweep

    real = sweep.replay

    def broken(*args: object, **kwargs: object) -> object:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        result.curves["frag_rate_pct"][100] = 206.0  # what a replay without GPUShare used to print
        return result

    monkeypatch.setattr(sweep, "replay", broken)
    result = runner.invoke(
        app, ["replay", str(trace_dir), "--policy", "BestFit", "--seeds", "42", "--workers", "1", "-o", "json"]
    )
    assert result.exit_code == 1
    assert "frag_rate_pct is 206 at 100 % arrived, outside its range 0-100" in result.output
    assert result.stdout == ""


def test_replay_as_dra_equals_gpushare_first_fit(trace_dir: Path) -> None:
    def runs(*extra: str) -> list[dict[str, object]]:
        args = ["replay", str(trace_dir), "--policy", "BestFit", "--seeds", "42-43", "--workers", "1", "-o", "json"]
        result = runner.invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert data["as_dra"] == ("--as-dra" in extra)
        return _no_time(data["runs"])

    assert runs("--as-dra") == runs("--gpu-choice", "FirstFit")
    bad = runner.invoke(app, ["replay", str(trace_dir), "--policy", "FGD", "--as-dra", "--gpu-choice", "FirstFit"])
    assert bad.exit_code == 2
    assert "--gpu-choice" in bad.output
