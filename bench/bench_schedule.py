"""Benchmark: 10,000 pods onto 5,000 nodes (cpu, memory, nvidia.com/gpu, pods) with RequestedToCapacityRatio.

Measures the scheduling loop (queue -> filter -> score -> select -> reserve -> bind for every pod) in pods per
second, and the peak resident memory of the whole process. Run: ``make bench`` or
``.venv/bin/python bench/bench_schedule.py [--nodes N] [--pods N] [--percentage P]``.
"""

from __future__ import annotations

import argparse
import platform
import resource
import time

import numpy as np

from packsched.api.objects import Container, Node, OwnerRef, Pod, Taint, Toleration
from packsched.config.loader import load_config_data
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import PENDING, RUNNING, Simulation

GiB = 1024**3


def make_cluster(n_nodes: int, n_pods: int, seed: int) -> tuple[list[Node], list[Pod]]:
    rng = np.random.default_rng(seed)
    nodes = []
    for i in range(n_nodes):
        gpu = i % 2 == 0
        alloc = {"cpu": 64_000, "memory": 256 * GiB, "pods": 110}
        if gpu:
            alloc["nvidia.com/gpu"] = 8
        labels = {"topology.kubernetes.io/zone": f"zone-{i % 3}", "pool": "gpu" if gpu else "cpu"}
        taints = [Taint("nvidia.com/gpu", "present", "NoSchedule")] if gpu else []
        nodes.append(Node(f"node-{i:05d}", labels, {}, dict(alloc), alloc, taints))
    pods = []
    gpu_choices = np.array([1, 1, 1, 2, 2, 4, 8])
    for i in range(n_pods):
        requests = {
            "cpu": int(rng.choice([250, 500, 1000, 2000, 4000])),
            "memory": int(rng.choice([1, 2, 4, 8, 16])) * GiB,
        }
        tolerations: list[Toleration] = []
        selector: dict[str, str] = {}
        if rng.random() < 0.4:
            requests["nvidia.com/gpu"] = int(rng.choice(gpu_choices))
            tolerations = [Toleration("nvidia.com/gpu", "Exists", "", "NoSchedule")]
            selector = {"pool": "gpu"}
        pod = Pod(
            f"pod-{i:05d}",
            containers=[Container("main", requests, {})],
            tolerations=tolerations,
            node_selector=selector,
            owner=OwnerRef("Job", f"job-{i // 10}"),
        )
        pods.append(pod)
    return nodes, pods


CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "RequestedToCapacityRatio",
                            "resources": [
                                {"name": "nvidia.com/gpu", "weight": 5},
                                {"name": "cpu", "weight": 1},
                                {"name": "memory", "weight": 1},
                            ],
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument(
        "--percentage",
        type=int,
        default=None,
        help="percentageOfNodesToScore (default: kube-scheduler's adaptive default)",
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    from packsched.api.manifests import Cluster

    config = dict(CONFIG)
    if args.percentage is not None:
        config["percentageOfNodesToScore"] = args.percentage
    registry = in_tree_registry()
    cfg = load_config_data(config, "bench-config", set(registry))
    nodes, pods = make_cluster(args.nodes, args.pods, args.seed)
    t0 = time.perf_counter()
    sim = Simulation(Cluster(nodes=nodes, pods=pods), cfg, registry, seed=args.seed)
    t1 = time.perf_counter()
    result = sim.run()
    t2 = time.perf_counter()
    running = sum(1 for r in result.records if r.phase == RUNNING)
    pending = sum(1 for r in result.records if r.phase == PENDING)
    attempts = sum(r.attempts for r in result.records)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()} "
        f"numpy {np.__version__}"
    )
    print(f"nodes={args.nodes} pods={args.pods} percentageOfNodesToScore={args.percentage or 'adaptive'}")
    print(
        f"setup {t1 - t0:.2f}s, scheduling {t2 - t1:.2f}s for {attempts} attempts "
        f"({running} running, {pending} pending)"
    )
    print(f"throughput: {args.pods / (t2 - t1):.0f} pods/s")
    print(f"peak RSS: {peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()
