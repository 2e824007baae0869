"""bench/bench_affinity_spread.py at a tiny size: every case runs and is timed, and the JSON it prints names them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import load_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "bench_affinity_spread.py"


def _module() -> Any:
    return load_script(SCRIPT, "bench_affinity_spread")


def test_tiny_run_times_every_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert _module().main(["--nodes", "10", "--cycles", "1", "--repeat", "1", "-o", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    cases = [r["case"] for r in out["rows"]]
    assert len(cases) == 10 and len(set(cases)) == 10
    assert any(c.startswith("InterPodAffinity anti-affinity") for c in cases)
    assert all(r["us_per_cycle"] > 0 for r in out["rows"])
    assert out["meta"]["nodes"] == 10
