"""Check that two source trees make exactly the same decisions: every event and every pod's final state.

Runs each scenario in a subprocess per source tree (``PYTHONPATH=<tree>/src``) and compares the dumps:
bench_quotas.py's and bench_timeline.py's scenarios, smaller versions of both with other seeds, and random
mixes of quota'd and quota-less namespaces with varied priorities, run durations and PodDisruptionBudgets (these
reach the code paths the two benchmarks do not: same-namespace preemption over min, quota-less preemptors,
PDB-violating victims).

Run: ``.venv/bin/python bench/check_same_history.py --old /tmp/main-copy [--new .] [--quick]``. ``--kube-version
1.35`` runs both trees as that release; ``--new-feature-gates Name=false`` sets gates in the new tree only (a gate the
old tree does not know yet: e.g. that the new tree with its new gate off decides as the old one did).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# (name, builder, args): the builder runs inside the child process, see _child.
FULL = [
    ("quotas-default", "quotas", {"nodes": 250, "pods": 4000, "teams": 8, "seed": 1}),
    ("timeline-urgent30", "timeline", {"nodes": 200, "scale": 1, "seed": 1, "urgent": 30}),
    ("timeline-urgent66", "timeline", {"nodes": 200, "scale": 1, "seed": 1, "urgent": 66}),
]
SMALL = (
    [(f"quotas-small-{s}", "quotas", {"nodes": 40, "pods": 700, "teams": 5, "seed": s}) for s in (2, 3, 4)]
    + [(f"timeline-small-{s}", "timeline", {"nodes": 40, "scale": 1, "seed": s, "urgent": 12}) for s in (2, 3)]
    + [(f"mixed-{s}", "mixed", {"seed": s}) for s in range(1, 9)]
)


def _mixed_cluster(seed: int) -> tuple[Any, Any]:
    """Quota'd and quota-less namespaces, priorities 0-3, some pods finishing, PDBs on some apps."""
    import numpy as np
    from bench_quotas import CONFIG, GPU, GiB

    from packsched.api.manifests import Cluster
    from packsched.api.objects import (
        Container,
        ElasticQuota,
        LabelSelector,
        Node,
        OwnerRef,
        Pod,
        PodDisruptionBudget,
    )

    rng = np.random.default_rng(seed)
    n_nodes = int(rng.integers(6, 30))
    nodes = []
    for i in range(n_nodes):
        gpus = int(rng.choice([4, 8]))
        alloc = {"cpu": gpus * 8_000, "memory": gpus * 64 * GiB, GPU: gpus, "pods": 110}
        nodes.append(Node(f"n-{i:03d}", {}, {}, dict(alloc), dict(alloc)))
    total = sum(int(n.allocatable[GPU]) for n in nodes)
    teams = int(rng.integers(2, 6))
    quotas = []
    for t in range(teams):
        share = max(1, total // (teams + 1) + int(rng.integers(-2, 3)))
        top = share * int(rng.choice([1, 2, 3]))
        quotas.append(
            ElasticQuota(
                f"q-{t}",
                f"team-{t}",
                {GPU: share, "cpu": share * 8_000, "memory": share * 64 * GiB},
                {GPU: top, "cpu": top * 8_000, "memory": top * 64 * GiB},
            )
        )
    spaces = [f"team-{t}" for t in range(teams)] + ["free-a", "free-b"]
    pods = []
    for i in range(int(rng.integers(total // 2, total * 2))):
        ns = spaces[int(rng.integers(len(spaces)))]
        gpus = int(rng.choice([1, 1, 2, 4]))
        app = f"app-{int(rng.integers(4))}"
        pod = Pod(
            f"p-{i:04d}",
            ns,
            uid=f"{ns}-{i}",
            labels={"app": app},
            containers=[Container("main", {"cpu": gpus * 4_000, "memory": gpus * 32 * GiB, GPU: gpus})],
            priority=int(rng.integers(4)),
            owner=OwnerRef("Job", f"job-{i // 5}"),
        )
        pod.arrival_time = float(rng.integers(0, 600))
        pod.run_duration = None if rng.random() < 0.5 else float(rng.integers(60, 900))
        pods.append(pod)
    pdbs = [
        PodDisruptionBudget(f"pdb-{ns}-{a}", ns, LabelSelector((("app", a),)), min_available=int(rng.integers(1, 4)))
        for ns in spaces
        for a in ("app-0", "app-1")
        if rng.random() < 0.5
    ]
    return Cluster(nodes=nodes, pods=pods, elastic_quotas=quotas, pdbs=pdbs), CONFIG


def _child(kind: str, args: dict[str, Any]) -> None:
    """Build the scenario, run it with the ``packsched`` on sys.path and print its history as JSON."""
    sys.path.insert(0, str(HERE))
    from packsched.config import default_config
    from packsched.config.features import parse_feature_gates
    from packsched.config.loader import load_config_data
    from packsched.config.versions import parse_kube_version
    from packsched.plugins.registry import in_tree_registry
    from packsched.sim.engine import Simulation

    registry = in_tree_registry()
    version = parse_kube_version(args["kube_version"]) if args.get("kube_version") else None
    gates = parse_feature_gates([args["gates"]]) if args.get("gates") else None
    if kind == "quotas":
        import bench_quotas

        cluster = bench_quotas.make_cluster(args["nodes"], args["pods"], args["teams"], args["seed"])
        cfg = load_config_data(
            bench_quotas.CONFIG, "bench-config", set(registry), kube_version=version, feature_gates=gates
        )
    elif kind == "timeline":
        import bench_timeline

        cluster = bench_timeline.make_cluster(args["nodes"], args["scale"], args["seed"], args["urgent"])
        cfg = default_config(set(registry), version, gates)
    else:
        cluster, raw = _mixed_cluster(args["seed"])
        cfg = load_config_data(raw, "bench-config", set(registry), kube_version=version, feature_gates=gates)
    t0 = time.perf_counter()
    result = Simulation(cluster, cfg, registry, seed=args["seed"]).run()
    seconds = time.perf_counter() - t0
    events = [[e.time, e.kind, e.pod, e.node, e.by, e.reason] for e in result.events]
    records = [
        [
            r.pod.key,
            r.phase,
            r.node,
            r.reason,
            r.attempts,
            r.preempted_by,
            r.started,
            r.finished,
            r.replaces,
            r.pod.nominated_node_name,
        ]
        for r in result.records
    ]
    json.dump({"events": events, "records": records, "end": result.end_time, "seconds": seconds}, sys.stdout)


def _run(tree: Path, kind: str, args: dict[str, Any]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, json.dumps(args)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def _digest(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps([data["events"], data["records"], data["end"]]).encode()).hexdigest()[:16]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--old", type=Path, required=False)
    parser.add_argument("--new", type=Path, default=HERE.parent)
    parser.add_argument("--quick", action="store_true", help="only the smaller scenarios")
    parser.add_argument("--kube-version", default="", help="the release both trees imitate (default: the newest)")
    parser.add_argument("--new-feature-gates", default="", help="Name=bool,... set in the new tree only")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        _child(opts.child[0], json.loads(opts.child[1]))
        return 0
    if opts.old is None:
        parser.error("--old is required")
    scenarios = SMALL if opts.quick else SMALL + FULL
    bad = 0
    for name, kind, args in scenarios:
        args = dict(args, kube_version=opts.kube_version)
        old, new = _run(opts.old, kind, args), _run(opts.new, kind, dict(args, gates=opts.new_feature_gates))
        same = old["events"] == new["events"] and old["records"] == new["records"] and old["end"] == new["end"]
        bad += not same
        print(
            f"{name:20s} {'same' if same else 'DIFFERENT':9s} events={len(new['events']):6d} "
            f"pods={len(new['records']):5d} digest={_digest(new)} "
            f"old {old['seconds']:.2f}s new {new['seconds']:.2f}s",
            flush=True,
        )
        if not same:
            for i, (a, b) in enumerate(zip(old["events"], new["events"], strict=False)):
                if a != b:
                    print(f"  first differing event #{i}:\n    old {a}\n    new {b}")
                    break
    print("ALL IDENTICAL" if not bad else f"{bad} scenario(s) DIFFER")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
