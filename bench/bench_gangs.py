"""Benchmark: gangs (Coscheduling with PodGroups) on a large GPU cluster, against the same pods scheduled one by one.

``--nodes`` nodes with 8 GPUs, 64 CPUs and 512 GiB each; ``--jobs`` training jobs of ``--workers`` workers each (a
PodGroup with ``minMember`` = workers), every worker asking 1, 2, 4 or 8 GPUs (the same within a job), all created at
time 0 (a burst: the worst case for the queue). The same pods are then scheduled without Coscheduling, in the same
process: the ratio is the cost of gangs (waiting at Permit, the group bookkeeping). Both runs use
RequestedToCapacityRatio bin packing of GPUs. The simulator's own setup (building the cluster) is timed apart.

Run: ``.venv/bin/python bench/bench_gangs.py [--nodes N] [--jobs N] [--workers N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import platform
import resource
import statistics
import time
from typing import Any

import numpy as np

from packsched.api.gangs import POD_GROUP_LABEL, PodGroup
from packsched.api.manifests import Cluster
from packsched.api.objects import Container, Node, Pod
from packsched.config.loader import load_config_data
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import RUNNING, SCHEDULED, Simulation
from packsched.sim.jobgen import config_document

GiB = 1024**3
GPU = "nvidia.com/gpu"


def config(gangs: bool) -> dict[str, Any]:
    """The configurations ``packsched gen-jobs`` writes: RequestedToCapacityRatio bin packing of GPUs (weights GPU
    5, cpu and memory 1), with Coscheduling or without."""
    return config_document(gangs)


def make_cluster(n_nodes: int, n_jobs: int, workers: int, seed: int, gangs: bool) -> Cluster:
    rng = np.random.default_rng(seed)
    alloc = {"cpu": 64_000, "memory": 512 * GiB, GPU: 8, "pods": 110}
    nodes = [Node(f"gpu-{i:05d}", {}, {}, dict(alloc), dict(alloc)) for i in range(n_nodes)]
    pods: list[Pod] = []
    groups: list[PodGroup] = []
    for j in range(n_jobs):
        gpus = int(rng.choice([1, 2, 4, 8]))
        requests = {"cpu": gpus * 4_000, "memory": gpus * 32 * GiB, GPU: gpus}
        name = f"job-{j:05d}"
        groups.append(PodGroup(name, "default", workers))
        for w in range(workers):
            labels = {POD_GROUP_LABEL: name} if gangs else {}
            pods.append(
                Pod(f"{name}-{w}", "default", labels=labels, uid=f"{name}-{w}", containers=[Container("w", requests)])
            )
    return Cluster(nodes=nodes, pods=pods, pod_groups=groups if gangs else [])


def run(args: argparse.Namespace, gangs: bool) -> tuple[float, int, int]:
    registry = in_tree_registry()
    cfg = load_config_data(config(gangs), "bench-config", set(registry))
    cluster = make_cluster(args.nodes, args.jobs, args.workers, args.seed, gangs)
    sim = Simulation(cluster, cfg, registry, seed=args.seed)
    t0 = time.perf_counter()
    result = sim.run()
    elapsed = time.perf_counter() - t0
    bound = sum(1 for e in result.events if e.kind == SCHEDULED)
    running = sum(1 for r in result.records if r.phase == RUNNING)
    return elapsed, bound, running


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    pods = args.jobs * args.workers
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.repeat):  # alternate, so that both see the same machine load
        for gangs in (True, False):
            elapsed, bound, running = run(args, gangs)
            times[gangs].append(elapsed)
            label = "gangs" if gangs else "one by one"
            print(f"{label:>10}: {elapsed:.2f}s, {bound} bound, {running} running ({pods / elapsed:.0f} pods/s)")
    g, s = statistics.median(times[True]), statistics.median(times[False])
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"machine: {platform.machine()} python {platform.python_version()} numpy {np.__version__}")
    print(f"nodes={args.nodes} jobs={args.jobs} workers={args.workers} pods={pods}")
    print(f"median: gangs {pods / g:.0f} pods/s, one by one {pods / s:.0f} pods/s, ratio {g / s:.2f}x the time")
    print(f"peak RSS: {peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()
