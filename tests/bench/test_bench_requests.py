"""bench/bench_requests.py at a tiny size: every bind and event reaches the fake API server (the run checks the
cluster and the recorder's count itself), and the figures it reports are positive."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import load_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "bench_requests.py"


def _module() -> Any:
    return load_script(SCRIPT, "bench_requests")


def test_a_tiny_run_binds_every_pod_and_sends_every_event() -> None:
    bind_cpu, bind_ms, event_cpu, event_ms = _module().one_run(12, 0.0)
    assert bind_cpu > 0 and bind_ms > 0 and event_cpu > 0 and event_ms > 0
