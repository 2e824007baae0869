"""What InterPodAffinity and PodTopologySpread cost one scheduling cycle on a large snapshot (issue 23).

Builds snapshots shaped like scheduler_perf's workloads (``--nodes`` nodes, one zone or three, placed pods carrying
the same terms or labels) and times each plugin's extension points for one incoming pod of the workload's template,
called directly: PreFilter and Filter over every node, PreScore, Score and NormalizeScore over every node, and for
InterPodAffinity a placed pod added to and removed from the snapshot (the index's upkeep at a bind). The figure is
the best of ``--repeat`` rounds of ``--cycles`` pods, in CPU time (``time.process_time``) so that a loaded machine
slows it less; it uses only the plugins' public methods, so the same script times any tree
(``PYTHONPATH=<tree>/src``).

Run: ``.venv/bin/python bench/bench_affinity_spread.py [--nodes 5000] [--cycles 200] [--repeat 7] [-o json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import timeit
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from packsched.api.objects import (
    LabelSelector,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    Taint,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from packsched.config.types import SYSTEM_DEFAULTING, PodTopologySpreadArgs
from packsched.config.versions import parse_kube_version
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code
from packsched.plugins.interpodaffinity.inter_pod_affinity import InterPodAffinity
from packsched.plugins.podtopologyspread.pod_topology_spread import PodTopologySpread

HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
VERSION = parse_kube_version("1.35")
NAMESPACES = ("sched-1", "sched-0")
FOO = LabelSelector((("foo", ""),))
GREEN = LabelSelector((("color", "green"),))
BLUE = LabelSelector((("color", "blue"),))


def make_nodes(n: int, zones: Sequence[str] = ("zone1",), tainted: int = 0) -> list[Node]:
    out = []
    for i in range(n):
        taints = [Taint("k", "v", "NoSchedule")] if i >= n - tainted else []
        labels = {HOST: f"n{i}", ZONE: zones[i % len(zones)]}
        alloc = {"pods": 110, "cpu": 4000, "memory": 1 << 34}
        out.append(Node(f"n{i}", labels=labels, allocatable=alloc, taints=taints))
    return out


def affinity_pod(kind: str, i: int, namespace: str) -> PodInfo:
    """The scheduler_perf templates: required affinity in the zone, preferred affinity by host, required
    anti-affinity by host."""
    if kind == "affinity":
        aff = PodAffinity(required=(PodAffinityTerm(ZONE, FOO, NAMESPACES),))
        return make_pod_info(Pod(f"a{i}", namespace, labels={"foo": ""}, pod_affinity=aff))
    if kind == "preferred-affinity":
        pref = PodAffinity(preferred=(WeightedPodAffinityTerm(1, PodAffinityTerm(HOST, FOO, NAMESPACES)),))
        return make_pod_info(Pod(f"p{i}", namespace, labels={"foo": ""}, pod_affinity=pref))
    anti = PodAffinity(required=(PodAffinityTerm(HOST, GREEN, NAMESPACES),))
    return make_pod_info(Pod(f"n{i}", namespace, labels={"color": "green"}, pod_anti_affinity=anti))


def spread_pod(i: int, key: str, when: str, sel: LabelSelector, labels: dict[str, str], **policies: str) -> PodInfo:
    pod = Pod(f"s{i}", labels=dict(labels))
    pod.topology_spread_constraints = (TopologySpreadConstraint(1 if key == HOST else 5, key, when, sel, **policies),)
    return make_pod_info(pod)


Plugin = InterPodAffinity | PodTopologySpread


def cycle(plugin: Plugin, snap: Snapshot, pod: PodInfo, cols: np.ndarray[Any, Any]) -> None:
    """PreFilter (+ Filter unless skipped), PreScore (+ Score and NormalizeScore unless skipped)."""
    state = CycleState()
    if plugin.pre_filter(state, pod, snap).code == Code.SUCCESS:
        plugin.filter(state, pod, snap, slice(None))
    if plugin.pre_score(state, pod, snap, cols).code == Code.SUCCESS:
        plugin.normalize_score(state, pod, plugin.score(state, pod, snap, cols))


def best_us(fn: Callable[[], None], number: int, repeat: int) -> float:
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=time.process_time)) / number * 1e6


def run(n: int, cycles: int, repeat: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    cols = np.arange(n)
    counter = [0]

    def timed(name: str, plugin: Plugin, snap: Snapshot, make: Callable[[int], PodInfo]) -> None:
        def one() -> None:
            counter[0] += 1
            cycle(plugin, snap, make(counter[0]), cols)

        rows.append({"case": name, "us_per_cycle": round(best_us(one, cycles, repeat), 1)})

    ipa = InterPodAffinity(None, None, VERSION)  # type: ignore[arg-type]
    for kind, placed in (("affinity", n), ("preferred-affinity", n), ("anti-affinity", n // 5)):
        snap = Snapshot(make_nodes(n))
        for i in range(placed):
            snap.add_pod(affinity_pod(kind, i, "sched-0"), i % n)
        timed(f"InterPodAffinity {kind}", ipa, snap, lambda i, kind=kind: affinity_pod(kind, 10**6 + i, "sched-1"))
        extra = affinity_pod(kind, 10**7, "sched-1")

        def add_remove(snap: Snapshot = snap, extra: PodInfo = extra) -> None:
            snap.add_pod(extra, min(17, n - 1))
            snap.remove_pod(extra)

        rows.append(
            {
                "case": f"InterPodAffinity {kind}: bind + removal",
                "us_per_cycle": round(best_us(add_remove, cycles, repeat), 1),
            }
        )
    pts = PodTopologySpread(PodTopologySpreadArgs(defaulting_type=SYSTEM_DEFAULTING), None, VERSION)  # type: ignore[arg-type]
    snap = Snapshot(make_nodes(n, ("moon-1", "moon-2", "moon-3")))
    for i in range(n):
        snap.add_pod(make_pod_info(Pod(f"e{i}", labels={"color": "blue"} if i % 2 else {})), i)
    blue = {"color": "blue"}
    timed(
        "PodTopologySpread zones, DoNotSchedule", pts, snap, lambda i: spread_pod(i, ZONE, "DoNotSchedule", BLUE, blue)
    )
    timed(
        "PodTopologySpread zones, ScheduleAnyway",
        pts,
        snap,
        lambda i: spread_pod(i, ZONE, "ScheduleAnyway", BLUE, blue),
    )
    timed("PodTopologySpread, a pod without constraints", pts, snap, lambda i: make_pod_info(Pod(f"q{i}")))
    snap = Snapshot(make_nodes(n, tainted=n // 5))
    foo = LabelSelector((("foo", "bar"),))
    for i in range(2 * n // 5):
        snap.add_pod(make_pod_info(Pod(f"e{i}", labels={"foo": "bar"})), i)
    timed(
        "PodTopologySpread hostname, inclusion policies",
        pts,
        snap,
        lambda i: spread_pod(
            i, HOST, "DoNotSchedule", foo, {"foo": "bar"}, node_affinity_policy="Honor", node_taints_policy="Honor"
        ),
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--cycles", type=int, default=200, help="pods per timed round")
    parser.add_argument("--repeat", type=int, default=7, help="rounds; the best is shown")
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table")
    args = parser.parse_args(argv)
    rows = run(args.nodes, args.cycles, args.repeat)
    meta = {
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "nodes": args.nodes,
    }
    if args.output == "json":
        json.dump({"meta": meta, "rows": rows}, sys.stdout, indent=2)
        print()
        return 0
    print(f"{meta}")
    print("| case | µs per cycle (best, CPU) |")
    print("|---|---:|")
    for r in rows:
        print(f"| {r['case']} | {r['us_per_cycle']:,.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
