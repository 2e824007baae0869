"""A large cluster snapshot read back and a what-if run on it (issue 12's targets).

Makes a snapshot directory as ``packsched snapshot`` writes it (``<plural>.json`` Lists): ``--nodes`` nodes in
zones, ``--pods`` running pods bound to them (owned by ReplicaSets of Deployments, with topology spread on some),
then times (1) reading it with packsched's manifest reader and (2) a Scenario that creates ``--what-if`` pods on it
and schedules them with the default profile. Targets on the 2-core machine: 5,000 nodes and 50,000 pods load in
under 10 s; a 1,000-pod what-if in under 10 s.

Run: ``.venv/bin/python bench/bench_snapshot.py [--nodes 5000] [--pods 50000] [--what-if 1000] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from typing import Any

import numpy as np
import yaml

from packsched.api.manifests import load_manifests
from packsched.plugins.registry import in_tree_registry
from packsched.sim.scenario import load_scenario, run_scenario

CREATED = "2026-01-01T00:00:00Z"


def make_snapshot(out: str, n_nodes: int, n_pods: int, seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    nodes = []
    for i in range(n_nodes):
        name = f"node-{i:05d}"
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "creationTimestamp": CREATED,
                    "labels": {
                        "kubernetes.io/hostname": name,
                        "topology.kubernetes.io/zone": f"zone-{i % 3}",
                        "pool": f"pool-{i % 10}",
                    },
                },
                "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}},
            }
        )
    apps = 500
    rsets, deployments, pods = [], [], []
    for a in range(apps):
        labels = {"app": f"app-{a}"}
        template = {
            "metadata": {"labels": labels},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": f"img-{a % 50}:1",
                        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                    }
                ]
            },
        }
        meta = {"namespace": f"ns-{a % 20}", "creationTimestamp": CREATED}
        deployments.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"app-{a}", **meta},
                "spec": {"replicas": n_pods // apps, "selector": {"matchLabels": labels}, "template": template},
            }
        )
        rsets.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": f"app-{a}-7d9f",
                    **meta,
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "name": f"app-{a}",
                            "uid": f"d{a}",
                            "controller": True,
                        }
                    ],
                },
                "spec": {"replicas": n_pods // apps, "selector": {"matchLabels": labels}, "template": template},
            }
        )
    where = rng.integers(0, n_nodes, n_pods)
    for i in range(n_pods):
        a = i % apps
        spec: dict[str, Any] = {
            "nodeName": f"node-{int(where[i]):05d}",
            "containers": [
                {"name": "c", "image": f"img-{a % 50}:1", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}
            ],
        }
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"app-{a}-7d9f-{i:06d}",
                    "namespace": f"ns-{a % 20}",
                    "labels": {"app": f"app-{a}"},
                    "creationTimestamp": CREATED,
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "ReplicaSet",
                            "name": f"app-{a}-7d9f",
                            "uid": f"r{a}",
                            "controller": True,
                        }
                    ],
                },
                "spec": spec,
                "status": {"phase": "Running"},
            }
        )
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns-{k}", "creationTimestamp": CREATED}}
        for k in range(20)
    ]
    os.makedirs(out, exist_ok=True)
    for plural, items in (
        ("nodes", nodes),
        ("namespaces", namespaces),
        ("deployments", deployments),
        ("replicasets", rsets),
        ("pods", pods),
    ):
        with open(os.path.join(out, f"{plural}.json"), "w", encoding="utf-8") as fh:
            json.dump({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}, fh, separators=(",", ":"))


def write_scenario(snapshot: str, path: str, count: int) -> None:
    doc = {
        "apiVersion": "packsched.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "bench"},
        "spec": {
            "base": os.path.abspath(snapshot),
            "steps": [
                {
                    "name": f"{count} pods arrive",
                    "at": "0s",
                    "createPods": {
                        "count": count,
                        "namePrefix": "whatif",
                        "template": {
                            "metadata": {"namespace": "ns-0", "labels": {"app": "whatif"}},
                            "spec": {
                                "containers": [
                                    {
                                        "name": "c",
                                        "image": "x",
                                        "resources": {"requests": {"cpu": "2", "memory": "4Gi"}},
                                    }
                                ],
                                "topologySpreadConstraints": [
                                    {
                                        "maxSkew": 5,
                                        "topologyKey": "topology.kubernetes.io/zone",
                                        "whenUnsatisfiable": "DoNotSchedule",
                                        "labelSelector": {"matchLabels": {"app": "whatif"}},
                                    }
                                ],
                            },
                        },
                    },
                }
            ],
        },
    }
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(doc, fh)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--what-if", type=int, default=1000)
    parser.add_argument("--keep", help="make the snapshot here and keep it")
    opts = parser.parse_args()
    work = opts.keep or tempfile.mkdtemp(prefix="bench-snapshot-")
    t0 = time.perf_counter()
    make_snapshot(work, opts.nodes, opts.pods)
    made = time.perf_counter() - t0
    t0 = time.perf_counter()
    cluster = load_manifests([work])
    load_s = time.perf_counter() - t0
    scenario_path = os.path.join(tempfile.mkdtemp(prefix="bench-scenario-"), "scenario.yaml")
    write_scenario(work, scenario_path, opts.what_if)
    t0 = time.perf_counter()
    reports = run_scenario(load_scenario(scenario_path), in_tree_registry())
    run_s = time.perf_counter() - t0
    last = reports[-1]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load = os.getloadavg()[0]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, load {load:.2f}")
    print(f"snapshot: {len(cluster.nodes)} nodes, {len(cluster.pods)} pods (made in {made:.1f} s)")
    print(f"load (manifest reader): {load_s:.2f} s")
    print(
        f"what-if ({opts.what_if} pods, load included): {run_s:.2f} s; running {last.running}, pending {last.pending}"
    )
    print(f"peak RSS: {rss:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
