"""Benchmark: elastic quotas with preemption over a few thousand pods.

``--nodes`` GPU nodes (8 GPUs, 64 CPUs, 512 GiB each), ``--teams`` namespaces whose ElasticQuotas each guarantee
an equal share of the GPUs (min) and may borrow up to twice that (max). The first half of the teams floods the
cluster with small 1- and 2-GPU pods (borrowing the other teams' idle guarantees); then the other teams submit
their own pods (1, 2, 4 and 8 GPUs) and reclaim their guarantees by preemption. Bin packing
(RequestedToCapacityRatio) and CapacityScheduling as upstream configures it.

Run: ``.venv/bin/python bench/bench_quotas.py [--nodes N] [--pods N] [--teams N]``.
"""

from __future__ import annotations

import argparse
import platform
import resource
import time
from typing import Any

import numpy as np

from packsched.api.manifests import Cluster
from packsched.api.objects import Container, ElasticQuota, Node, OwnerRef, Pod
from packsched.config.loader import load_config_data
from packsched.plugins.capacityscheduling.capacity_scheduling import recommended_plugins
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import PENDING, PREEMPTED, RUNNING, Simulation

GiB = 1024**3
GPU = "nvidia.com/gpu"

CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {**recommended_plugins(), "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}},
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "RequestedToCapacityRatio",
                            "resources": [{"name": GPU, "weight": 5}, {"name": "cpu", "weight": 1}],
                            "requestedToCapacityRatio": {
                                "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                            },
                        }
                    },
                }
            ],
        }
    ],
}


def make_cluster(n_nodes: int, n_pods: int, n_teams: int, seed: int) -> Cluster:
    rng = np.random.default_rng(seed)
    alloc = {"cpu": 64_000, "memory": 512 * GiB, GPU: 8, "pods": 110}
    nodes = [Node(f"gpu-{i:04d}", {}, {}, dict(alloc), dict(alloc)) for i in range(n_nodes)]
    share = 8 * n_nodes // n_teams
    quotas = [
        ElasticQuota(
            f"team-{t}",
            f"team-{t}",
            {GPU: share, "cpu": share * 8_000, "memory": share * 64 * GiB},
            {GPU: 2 * share, "cpu": 2 * share * 8_000, "memory": 2 * share * 64 * GiB},
        )
        for t in range(n_teams)
    ]
    pods = []
    early = n_teams // 2
    for i in range(n_pods):
        if i < n_pods // 2:
            team = int(rng.integers(early))
            gpus = int(rng.choice([1, 1, 2]))
        else:
            team = early + int(rng.integers(n_teams - early))
            gpus = int(rng.choice([1, 2, 4, 8]))
        requests = {"cpu": gpus * 4_000, "memory": gpus * 32 * GiB, GPU: gpus}
        pods.append(
            Pod(
                f"p-{i:05d}",
                f"team-{team}",
                uid=f"p-{i:05d}",
                containers=[Container("main", requests)],
                owner=OwnerRef("Job", f"job-{i // 8}"),
            )
        )
    return Cluster(nodes=nodes, pods=pods, elastic_quotas=quotas)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=250)
    parser.add_argument("--pods", type=int, default=4000)
    parser.add_argument("--teams", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    registry = in_tree_registry()
    cfg = load_config_data(CONFIG, "bench-config", set(registry))
    cluster = make_cluster(args.nodes, args.pods, args.teams, args.seed)
    t0 = time.perf_counter()
    sim = Simulation(cluster, cfg, registry, seed=args.seed)
    result = sim.run()
    t1 = time.perf_counter()
    phases = [r.phase for r in result.records]
    attempts = sum(r.attempts for r in result.records)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"machine: {platform.machine()} python {platform.python_version()} numpy {np.__version__}")
    print(f"nodes={args.nodes} pods={args.pods} teams={args.teams}")
    print(
        f"simulated in {t1 - t0:.2f}s: {attempts} scheduling attempts, {phases.count(RUNNING)} running, "
        f"{phases.count(PENDING)} pending, {phases.count(PREEMPTED)} preempted"
    )
    print(f"throughput: {args.pods / (t1 - t0):.0f} pods/s, {attempts / (t1 - t0):.0f} attempts/s")
    print(f"peak RSS: {peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()
