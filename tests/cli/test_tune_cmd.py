"""``packsched tune``'s command-line paths in process (``tests/sim/test_tune.py`` checks the search itself): the
table output and its held-out table, the --html page, the Ray path, option checks, and a failing study database
as one line with exit code 2. A tiny trace (``helpers.write_small_trace``) keeps every run short."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import write_small_trace
from packsched.cli import tune_cmd
from packsched.cli.main import app
from packsched.sim import sweep
from packsched.sim.sweep import RunSpec, run_local
from packsched.sim.tune import Tuner

runner = CliRunner()
SPACE = """apiVersion: packsched.io/v1alpha1
kind: TuneSpace
spec:
  strategies: [LeastAllocated, MostAllocated]
  resources:
  - {name: cpu, weight: 1}
  - {name: alibabacloud.com/gpu-milli, weight: 1}
"""


@pytest.fixture
def args(tmp_path: Path) -> list[str]:
    trace = write_small_trace(tmp_path / "trace")
    space = tmp_path / "space.yaml"
    space.write_text(SPACE, encoding="utf-8")
    return ["tune", str(trace), "--space", str(space), "--seeds", "1", "--holdout-seeds", "2", "--workers", "1",
            "--trials", "2", "--baselines", "LeastAllocated", "--out-dir", str(tmp_path / "out")]  # fmt: skip


def test_table_output_names_the_best_trial_the_held_out_table_and_the_files(args: list[str], tmp_path: Path) -> None:
    page = tmp_path / "tune.html"
    result = runner.invoke(app, [*args, "--html", str(page)])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    best = data["best"]
    text = result.stdout
    assert "study packsched-tune: 2 finished trial(s) (2 now, 0 failed)" in text
    assert f"best: trial {best['trial']}, " in text and "(mean over seeds 1)" in text
    assert "Held-out seeds 2" in text
    assert f"tuned (trial {best['trial']})" in text and "LeastAllocated" in text
    tuned = next(g for g in data["holdout"] if g["label"] == "tuned")
    assert f"{tuned['mean']:.2f} ± {tuned['sd']:.2f}" in text
    for name, path in data["outputs"].items():
        assert f"{name}: {path}" in text.replace("\n", "")
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") or html.lstrip().lower().startswith("<!doctype html")
    best_yaml = (tmp_path / "out" / "best-config.yaml").read_text(encoding="utf-8")
    assert "KubeSchedulerConfiguration" in best_yaml
    assert "KubeSchedulerConfiguration" in html  # the page holds the whole best configuration


def test_without_held_out_seeds_no_held_out_table(args: list[str]) -> None:
    result = runner.invoke(app, [*args, "--holdout-seeds", ""])
    assert result.exit_code == 0, result.output
    assert "best: trial" in result.stdout and "Held-out seeds" not in result.stdout


def test_print_table_without_a_finished_trial() -> None:
    data = {
        "study": {"name": "s", "complete": 0, "finished_now": 0, "failed": 2},
        "best": None,
        "metric": {},
    }
    with tune_cmd.out.capture() as captured:
        tune_cmd._print_table(data)
    assert captured.get().splitlines() == [
        "study s: 0 finished trial(s) (0 now, 2 failed)",
        "no finished trial: nothing to report",
    ]


def test_a_cell_without_values_is_a_dash() -> None:
    assert tune_cmd._cell({"mean": None, "sd": None}) == "-"
    assert tune_cmd._cell({"x": {"mean": 1.234, "sd": 0.5}}, "x") == "1.23 ± 0.50"


def test_ray_address_runs_the_replays_on_ray(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    connected: list[tuple[str | None, float]] = []
    batches: list[int] = []

    def fake_connect(address: str | None, timeout: float) -> None:
        connected.append((address, timeout))

    def fake_run_ray(specs: Sequence[RunSpec], address: str | None, on_done: Any = None, timeout: float = 0) -> Any:
        assert (address, timeout) == ("ray://head:10001", 7.5)
        batches.append(len(specs))
        return run_local(specs, 1, on_done)

    def no_local(*_: object, **__: object) -> Any:
        raise AssertionError("ran locally with --ray-address")

    monkeypatch.setattr(sweep, "connect_ray", fake_connect)
    monkeypatch.setattr(sweep, "run_ray", fake_run_ray)
    monkeypatch.setattr(sweep, "run_local", no_local)
    result = runner.invoke(app, [*args, "--ray-address", "ray://head:10001", "--ray-timeout", "7.5", "-o", "json"])
    assert result.exit_code == 0, result.output
    assert connected == [("ray://head:10001", 7.5)]
    # two trials of one seed each, then the tuned configuration and one baseline on one held-out seed
    assert sum(batches) == 2 + 2
    assert json.loads(result.stdout)["study"]["complete"] == 2


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--ray-timeout", "0"], "--ray-timeout must be a number of seconds above 0, got 0.0"),
        (["--ray-timeout", "inf"], "--ray-timeout must be a number of seconds above 0, got inf"),
        (["--seeds", ""], "--seeds: at least one seed"),
        (["--seeds", " "], "--seeds: at least one seed"),
    ],
)
def test_bad_options_exit_2_before_anything_runs(
    args: list[str], tmp_path: Path, extra: list[str], message: str
) -> None:
    result = runner.invoke(app, [*args, *extra])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "out").exists()


def test_a_failing_study_database_is_one_line_naming_it(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(self: Tuner, run_batch: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Tuner, "search", full_disk)
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    db = tmp_path / "out" / "study.db"
    assert f"error: {db}: cannot write: database or disk is full" in result.output.replace("\n", "")
    assert "Traceback" not in result.output


def test_another_error_is_not_taken_for_the_database(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def bug(self: Tuner, run_batch: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(Tuner, "search", bug)
    result = runner.invoke(app, args)
    assert isinstance(result.exception, RuntimeError) and str(result.exception) == "a bug"
