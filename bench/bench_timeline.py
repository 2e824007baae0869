"""Benchmark: the simulator over time, with arrivals, completions, preemption and controllers replacing pods.

N nodes (16 CPUs, 64 GiB each, three zones; default 200). Always-on Deployments (priority 1000, 20 of them with
N/10 replicas) take about 15% of the CPUs. N batch Jobs (priority 100, 1, 2 or 4 CPUs, 30-minute pods, 20
completions each, parallelism 5) arrive over the first 30 minutes and fill the cluster. Urgent Jobs (priority
10000, four 8-CPU pods for 20 minutes; N/20 of them, or ``--urgent``) arrive in the second hour and preempt batch
pods, which their Jobs replace. Measures the whole simulation: seconds, pods seen, events, pods per second.
Run: ``.venv/bin/python bench/bench_timeline.py [--nodes N] [--scale K] [--urgent J]``.
"""

from __future__ import annotations

import argparse
import platform
import resource
import time
from collections import Counter

import numpy as np

from packsched.api.manifests import Cluster, Workload, instantiate
from packsched.api.objects import Container, Node, Pod
from packsched.config import default_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation

GiB = 1024**3


def template(cpu: int, memory_gib: int, priority: int, arrival: float, run: float | None) -> Pod:
    pod = Pod("", containers=[Container("main", {"cpu": cpu, "memory": memory_gib * GiB})], priority=priority)
    pod.arrival_time, pod.run_duration = arrival, run
    return pod


def make_cluster(n_nodes: int, scale: int, seed: int, urgent: int | None = None) -> Cluster:
    rng = np.random.default_rng(seed)
    nodes = [
        Node(
            f"node-{i:04d}",
            {"topology.kubernetes.io/zone": f"zone-{i % 3}"},
            {},
            {"cpu": 16_000, "memory": 64 * GiB, "pods": 110},
            {"cpu": 16_000, "memory": 64 * GiB, "pods": 110},
        )
        for i in range(n_nodes)
    ]
    cluster = Cluster(nodes=nodes)

    def add(kind: str, name: str, tmpl: Pod, count: int, completions: int | None = None) -> None:
        initial = count if completions is None else min(count, completions)
        cluster.workloads.append(
            Workload(kind, name, "default", initial, tmpl, "bench", completions, count if kind == "Job" else 0)
        )
        cluster.pods += [instantiate(tmpl, kind, name, i) for i in range(initial)]

    for d in range(20):  # about 2.3 CPUs per node of services
        add(
            "Deployment",
            f"svc-{d}",
            template(int(rng.choice([500, 1000, 2000])), 2, 1000, 0.0, None),
            max(1, n_nodes // 10),
        )
    for j in range(n_nodes * scale):  # up to 5 pods of ~2.3 CPUs at once each: the cluster fills up
        arrival = float(rng.integers(0, 1800))
        add("Job", f"batch-{j}", template(int(rng.choice([1000, 2000, 4000])), 4, 100, arrival, 1800.0), 5, 20)
    for j in range(max(1, n_nodes * scale // 20) if urgent is None else urgent):
        arrival = float(rng.integers(3600, 7200))
        add("Job", f"urgent-{j}", template(8000, 16, 10000, arrival, 1200.0), 4, 4)
    return cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--scale", type=int, default=1, help="multiplies the number of workloads")
    parser.add_argument("--urgent", type=int, default=None, help="urgent Jobs (default: nodes * scale / 20)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    registry = in_tree_registry()
    cfg = default_config(set(registry))
    cluster = make_cluster(args.nodes, args.scale, args.seed, args.urgent)
    t0 = time.perf_counter()
    sim = Simulation(cluster, cfg, registry, seed=args.seed)
    t1 = time.perf_counter()
    result = sim.run()
    t2 = time.perf_counter()
    phases = Counter(r.phase for r in result.records)
    kinds = Counter(e.kind for e in result.events)
    attempts = sum(r.attempts for r in result.records)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()} "
        f"numpy {np.__version__}"
    )
    print(
        f"nodes={args.nodes} manifest pods={len(cluster.pods)} pods seen={len(result.records)} "
        f"virtual end={result.end_time:.0f}s"
    )
    print("phases: " + ", ".join(f"{k} {v}" for k, v in sorted(phases.items())))
    print("events: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    print(f"setup {t1 - t0:.2f}s, simulation {t2 - t1:.2f}s for {attempts} attempts")
    print(f"throughput: {len(result.records) / (t2 - t1):.0f} pods/s, {len(result.events) / (t2 - t1):.0f} events/s")
    print(f"peak RSS: {peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()
