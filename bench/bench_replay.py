"""Time one replay of the default Alibaba GPU trace (Weng et al., USENIX ATC '23) per policy.

Targets (issue 4): one BestFit run under 10 s and one FGD run under 60 s on the 2-core development machine.

    .venv/bin/python bench/bench_replay.py [--data ../shared/data/alibaba-gpu-v2023] [--policies BestFit,FGD]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time
from pathlib import Path

import numpy as np

from packsched.plugins.registry import in_tree_registry
from packsched.sim.policies import policy_config
from packsched.sim.replay import replay, target_workload
from packsched.sim.trace import load_trace

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"BestFit": 10.0, "FGD": 60.0}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "alibaba-gpu-v2023"))
    ap.add_argument("--policies", default="BestFit,FGD")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    t0 = time.perf_counter()
    trace = load_trace(Path(args.data))
    load_s = time.perf_counter() - t0
    target = target_workload(trace)
    known = set(in_tree_registry())
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, numpy {np.__version__}; load average {os.getloadavg()}"
    )
    print(f"trace loaded in {load_s:.2f} s: {len(trace.nodes)} nodes, {len(trace.pods)} pods")
    for policy in args.policies.split(","):
        cfg = policy_config(policy, known, target)
        best = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            run = replay(trace, cfg, args.seed, label=policy, target=target)
            best = min(best, time.perf_counter() - t)
        goal = TARGETS.get(policy)
        verdict = "" if goal is None else f" (target < {goal:.0f} s: {'met' if best < goal else 'MISSED'})"
        print(
            f"{policy}: {best:.2f} s for {run.pods} pods ({run.pods / best:,.0f} pods/s), "
            f"unallocated GPU at 100% = {run.unallocated(100):.2f}%{verdict}"
        )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {rss:.0f} MiB")


if __name__ == "__main__":
    main()
