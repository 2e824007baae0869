"""bench/bench_affinity_spread.py at a tiny size: every case runs and is timed, and the JSON it prints names them."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "bench_affinity_spread.py"


def _module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_affinity_spread", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_tiny_run_times_every_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert _module().main(["--nodes", "10", "--cycles", "1", "--repeat", "1", "-o", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    cases = [r["case"] for r in out["rows"]]
    assert len(cases) == 10 and len(set(cases)) == 10
    assert any(c.startswith("InterPodAffinity anti-affinity") for c in cases)
    assert all(r["us_per_cycle"] > 0 for r in out["rows"])
    assert out["meta"]["nodes"] == 10
