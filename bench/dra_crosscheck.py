"""DRA vs GPUShare cross-check (issue 19, scope 5): the GPU trace replayed three ways, same seeds, same policies:

- ``gpushare``: GPUShare picks each pod's GPUs (best fit, or the policy plugin's choice: FGD, FGDPack, Random);
- ``gpushare-ff``: GPUShare with ``gpuChoice: FirstFit`` (the lowest-indexed GPU that fits);
- ``dra``: ``replay --as-dra``, every GPU a DRA device with a 1,000-milli consumable capacity, each GPU pod a
  ResourceClaim, DynamicResources' allocator choosing the devices.

DRA's allocator takes the first device that fits, so ``dra`` must give exactly the figures (every curve of every
run) of ``gpushare-ff``; ``gpushare`` differs where a policy's or best fit's GPU choice differs from first fit.

The DRA runs try DRA's allocator node by node for every pod; the cost grows with nodes x pods, so the full
trace (1,213 nodes, 10,822 pods) would take about a hundred times a tenth of it. ``--step N`` replays every N-th
node of the node list (sorted by name) and the pods whose GPU models those nodes have, inflated to 1.3 x their
GPU capacity as the protocol does.

    PYTHONPATH=src python bench/dra_crosscheck.py --step 10 --seeds 42-46 --workers 2 \\
        --policies FGD,BestFit,LeastAllocated,MostAllocated,RequestedToCapacityRatio
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from packsched.plugins.registry import in_tree_registry
from packsched.sim.policies import policy_config
from packsched.sim.replay import replay, target_workload
from packsched.sim.trace import Trace, load_trace

MODES: dict[str, dict[str, Any]] = {
    "gpushare": {},
    "gpushare-ff": {"gpu_choice": "FirstFit"},
    "dra": {"as_dra": True},
}


def sampled_trace(data_dir: Path, step: int) -> Trace:
    full = load_trace(data_dir)
    nodes = tuple(sorted(full.nodes, key=lambda n: n.name)[::step])
    models = {n.model for n in nodes if n.model}
    pods = tuple(p for p in full.pods if all(m in models for m in p.models))
    return Trace(nodes, pods, full.node_file, full.pod_file)


def run(args: tuple[str, int, str, int, str]) -> dict[str, Any]:
    data_dir, step, policy, seed, mode = args
    trace = sampled_trace(Path(data_dir), step)
    target = target_workload(trace)
    kw = MODES[mode]
    cfg = policy_config(policy, set(in_tree_registry()), target, **kw)
    start = time.perf_counter()
    r = replay(trace, cfg, seed, target=target, as_dra=bool(kw.get("as_dra")))
    return {
        "policy": policy,
        "seed": seed,
        "mode": mode,
        "nodes": len(trace.nodes),
        "gpus": sum(n.gpus for n in trace.nodes),
        "pods": r.pods,
        "scheduled": r.scheduled,
        "unallocated_100": r.unallocated(100),
        "unallocated_130": r.unallocated(130),
        "frag_rate_80": r.at("frag_rate_pct", 80),
        "curves": r.curves,
        "seconds": time.perf_counter() - start,
    }


def parse_seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/data/alibaba-gpu-v2023")
    ap.add_argument("--step", type=int, default=10)
    ap.add_argument("--seeds", default="42-51")
    ap.add_argument("--policies", default="FGD,BestFit,LeastAllocated,MostAllocated,RequestedToCapacityRatio")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None, help="write every run here")
    a = ap.parse_args()
    jobs = [(a.data, a.step, p, s, m) for p in a.policies.split(",") for s in parse_seeds(a.seeds) for m in MODES]
    with ProcessPoolExecutor(a.workers) as pool:
        results = list(pool.map(run, jobs))
    by = {(r["policy"], r["seed"], r["mode"]): r for r in results}
    first = results[0]
    print(f"{first['nodes']} nodes, {first['gpus']} GPUs, every {a.step}th node; seeds {a.seeds}")
    print(
        "| policy | gpushare unalloc % @100 | gpushare-ff | dra | dra == gpushare-ff (all curves, all seeds) | "
        "frag rate @80 gpushare / dra | s/run gpushare / dra |"
    )
    print("|---|---:|---:|---:|---|---:|---:|")
    ok = True
    for p in a.policies.split(","):
        seeds = parse_seeds(a.seeds)

        def stat(mode: str, key: str, p: str = p, seeds: list[int] = seeds) -> str:
            vals = [by[(p, s, mode)][key] for s in seeds]
            return f"{np.mean(vals):.2f} ± {np.std(vals):.2f}"

        same = all(by[(p, s, "dra")]["curves"] == by[(p, s, "gpushare-ff")]["curves"] for s in seeds)
        ok &= same
        secs = [np.mean([by[(p, s, m)]["seconds"] for s in seeds]) for m in ("gpushare", "dra")]
        print(
            f"| {p} | {stat('gpushare', 'unallocated_100')} | {stat('gpushare-ff', 'unallocated_100')} | "
            f"{stat('dra', 'unallocated_100')} | {'yes' if same else 'NO'} | "
            f"{np.mean([by[(p, s, 'gpushare')]['frag_rate_80'] for s in seeds]):.2f} / "
            f"{np.mean([by[(p, s, 'dra')]['frag_rate_80'] for s in seeds]):.2f} | {secs[0]:.1f} / {secs[1]:.1f} |"
        )
    if a.json is not None:
        a.json.write_text(json.dumps([{k: v for k, v in r.items() if k != "curves"} for r in results], indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
