"""bench/bench_requests.py at a tiny size: every bind and event reaches the fake API server (the run checks the
cluster and the recorder's count itself), and the figures it reports are positive."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "bench_requests.py"


def _module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_requests", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_a_tiny_run_binds_every_pod_and_sends_every_event() -> None:
    bind_cpu, bind_ms, event_cpu, event_ms = _module().one_run(12, 0.0)
    assert bind_cpu > 0 and bind_ms > 0 and event_cpu > 0 and event_ms > 0
