"""``compare --ray`` and ``tune --ray-address`` on a real (local) Ray instance: the same results as the local
process pool. Skipped where Ray is not installed (``pip install 'packsched[ray]'``; CI does not install it);
``tests/cli/test_unix_behaviour.py`` covers the connection errors and Ctrl-C with a fake ``ray`` module."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import write_small_trace
from packsched.cli.main import app

ray = pytest.importorskip("ray")
runner = CliRunner()

SPACE = """apiVersion: packsched.io/v1alpha1
kind: TuneSpace
spec:
  strategies: [LeastAllocated, MostAllocated]
  resources:
  - {name: cpu, weight: {min: 0, max: 3}}
  - {name: alibabacloud.com/gpu-milli, weight: {min: 1, max: 3}}
"""


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One local Ray instance for the module (starting one takes seconds); the commands find it initialized."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def trace_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_small_trace(tmp_path_factory.mktemp("trace"), nodes=12, pods=160)


def _json(result: Any) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _runs(data: Any) -> list[list[dict[str, Any]]]:
    return [[{k: v for k, v in r.items() if k != "seconds"} for r in p["runs"]] for p in data["policies"]]


def test_compare_on_ray_gives_the_local_results(trace_dir: Path, local_ray: None) -> None:
    args = ["compare", str(trace_dir), "--policies", "BestFit,FGD,LeastAllocated", "--seeds", "1-3", "-o", "json"]
    on_ray = _json(runner.invoke(app, [*args, "--ray"]))
    local = _json(runner.invoke(app, [*args, "--workers", "2"]))
    assert _runs(on_ray) == _runs(local)
    assert sum(len(p) for p in _runs(on_ray)) == 9


def test_tune_on_ray_finds_the_local_trials(trace_dir: Path, tmp_path: Path, local_ray: None) -> None:
    space = tmp_path / "space.yaml"
    space.write_text(SPACE, encoding="utf-8")
    common = ["tune", str(trace_dir), "--space", str(space), "--trials", "6", "--seeds", "1-2"]
    common += ["--holdout-seeds", "3-4", "--baselines", "BestFit", "--workers", "2", "-o", "json"]
    on_ray = _json(runner.invoke(app, [*common, "--ray-address", "auto", "--out-dir", str(tmp_path / "ray")]))
    local = _json(runner.invoke(app, [*common, "--out-dir", str(tmp_path / "local")]))

    def trials(out: str) -> list[dict[str, str]]:
        with (tmp_path / out / "trials.csv").open(encoding="utf-8") as fh:
            return [{k: v for k, v in row.items() if k not in ("run_seconds", "config")} for row in csv.DictReader(fh)]

    def holdout(data: Any) -> list[tuple[Any, Any]]:
        return [(h["label"], h["values"]) for h in data["holdout"]]

    assert trials("ray") == trials("local")
    assert [row["state"] for row in trials("ray")] == ["COMPLETE"] * 6
    assert on_ray["best"] == local["best"]
    assert holdout(on_ray) == holdout(local)
    assert [label for label, _ in holdout(on_ray)] == ["tuned", "BestFit"]
