"""bench/bench_plain_cycle.py at a tiny size: every step is timed for each of the five pods, in positive
microseconds."""

from __future__ import annotations

from pathlib import Path

from helpers import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "bench_plain_cycle.py"


def test_a_tiny_run_times_every_step_of_every_pod() -> None:
    module = load_script(SCRIPT, "bench_plain_cycle")
    result = module.measure(nodes=20, placed=10, number=2, repeat=1, seed=1)
    assert list(result) == list(module.STEPS)
    assert all(len(times) == 5 and all(t > 0 for t in times) for times in result.values())
