"""Benchmark: the default profile's fixed costs in one cycle of a plain pod (issue 23).

bench_schedule.py's cluster (``--nodes``, half with GPUs and a NoSchedule taint) and configuration, with
``--placed`` of its pods placed by the simulator first; then, for a few more of its pods (without tolerations, then
with the GPU toleration), each step of a cycle is called again and again on one cycle's state and timed with
``timeit`` (the minimum of ``--repeat`` repeats of ``--number`` calls, in microseconds a call):
``Framework.run_pre_filter`` (a new CycleState each call), ``EquivalenceCache.lookup`` (the same pod again: what
it keeps on the PodInfo is kept), ``Framework.run_filters_cached`` (lookup and catch-up), ``Framework.run_pre_score``
and ``Framework.run_score(details=False)`` (the folded Score the simulator runs). Printed: one row per step, the
pods' times and their median. Run: ``.venv/bin/python bench/bench_plain_cycle.py [--nodes 5000] [--placed 3000]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import timeit
from collections.abc import Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from bench_schedule import CONFIG, make_cluster  # noqa: E402

from packsched.api.manifests import Cluster  # noqa: E402
from packsched.config.loader import load_config_data  # noqa: E402
from packsched.framework.cycle_state import CycleState  # noqa: E402
from packsched.framework.podinfo import PodInfo, make_pod_info  # noqa: E402
from packsched.framework.runtime import Framework  # noqa: E402
from packsched.plugins.registry import in_tree_registry  # noqa: E402
from packsched.scheduler import TIE_NAME  # noqa: E402
from packsched.sim.engine import Simulation  # noqa: E402

STEPS = ("pre_filter", "lookup", "filters_cached", "pre_score", "score")


def measure(nodes: int, placed: int, number: int, repeat: int, seed: int) -> dict[str, list[float]]:
    """Per step, the microseconds a call for each of three plain pods and two tolerating ones."""
    registry = in_tree_registry()
    config = dict(CONFIG)
    config["percentageOfNodesToScore"] = 100
    cfg = load_config_data(config, "bench_plain_cycle", set(registry))
    cluster_nodes, pods = make_cluster(nodes, placed, seed)
    sim = Simulation(Cluster(nodes=cluster_nodes, pods=pods), cfg, registry, seed=seed)
    sim.scheduler.tie_break = TIE_NAME
    sim.run()
    fwk = sim.scheduler.frameworks["default-scheduler"]
    version = fwk.handle.kube_version
    _, extra = make_cluster(1, 40, seed + 1)
    infos = [make_pod_info(p, 0, version) for p in extra]
    chosen = [i for i in infos if not i.pod.tolerations][:3] + [i for i in infos if i.pod.tolerations][:2]

    out: dict[str, list[float]] = {step: [] for step in STEPS}
    for info in chosen:
        for step, took in _time_one(fwk, info, number, repeat).items():
            out[step].append(took)
    return out


def _time_one(fwk: Framework, info: PodInfo, number: int, repeat: int) -> dict[str, float]:
    """Each step's microseconds a call for one pod, on one cycle's state."""
    state = CycleState()
    fwk.run_pre_filter(state, info)
    cols = np.flatnonzero(fwk.run_filters_cached(state, info))
    fwk.run_pre_score(state, info, cols)
    calls: dict[str, Callable[[], object]] = {
        "pre_filter": lambda: fwk.run_pre_filter(CycleState(), info),
        "lookup": lambda: fwk.equivalence.lookup(state, info),
        "filters_cached": lambda: fwk.run_filters_cached(state, info),
        "pre_score": lambda: fwk.run_pre_score(CycleState(), info, cols),
        "score": lambda: fwk.run_score(state, info, cols, details=False),
    }
    return {step: min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6 for step, call in calls.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--placed", type=int, default=3000, help="bench pods placed before the timing")
    parser.add_argument("--number", type=int, default=2000, help="calls per repeat")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    result = measure(args.nodes, args.placed, args.number, args.repeat, args.seed)
    print(f"nodes={args.nodes:,} placed={args.placed:,}: us a call (3 pods without tolerations, 2 with one; median)")
    for step, times in result.items():
        print(f"{step:15s} {' '.join(f'{t:6.1f}' for t in times)}   median {statistics.median(times):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
