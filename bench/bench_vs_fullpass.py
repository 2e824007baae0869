"""Benchmark: packsched against a full-pass numpy loop on the same cluster and pods, as a ratio in one run (issue 23).

The cluster and pods are ``bench_schedule.py``'s (its builders: 5,000 nodes, half with 8 GPUs and a NoSchedule
taint, 10,000 pods, 40 % of them asking for GPUs; with ``--same-pods`` every pod asks for 1 CPU and 1 GiB, one class
that a batching profile places mostly by batch hints). Two schedulers place them, in turn, ``--repeat`` times each:

* the full-pass loop, written here with numpy and nothing of packsched: for each pod in order, every node's
  NodeResourcesFit filter (requested + pod <= allocatable for cpu, memory, pods and nvidia.com/gpu), every node's
  RequestedToCapacityRatio score with the shape and weights of bench_schedule's configuration (upstream's integer
  arithmetic: a node lacking a resource, a GPU the pod does not ask for, and a resource scoring 0 are left out of
  the weighted mean, which rounds half up), the best feasible node (ties: the lowest column, columns in node-name
  order), then the pod's requests added to that node;
* for reference, the floor of an incremental scheduler in Python and numpy (``incremental_pass``): the full
  pass's decisions, each class of pods with equal requests keeping every node's score and bringing up to date only
  the nodes pods went to since its last pod, and nothing else (no framework, queue, events or binding; its table
  row says whether it chose as the full pass did, which it must);
* packsched's simulator (``Simulation.run``, as bench_schedule.py times it) with one of these profiles:
  ``fit``, only NodeResourcesFit (PreFilter, Filter, Score; with PrioritySort and DefaultBinder), which is the
  loop's work; ``default``, bench_schedule's configuration (the default profile, NodeResourcesFit scoring with
  RequestedToCapacityRatio), which also honours the taints and node selectors and scores with the other default
  plugins; ``fit-nobatch``, ``fit`` with the OpportunisticBatching gate off (``fit`` signs pods, so from
  kube-scheduler 1.35 it keeps its sorted scores for opportunistic batching; ``default`` never batches); ``none``
  (and ``none-nobatch``), no Filter or Score plugin at all: every node feasible and scored alike, so what it
  measures is the floor of packsched's cycle (queue, extension points, assume, bind, records), not a placement
  policy; the ratio a profile can reach is bounded by it; ``binpack`` (and ``binpack-nobatch``), ``default``
  without PodTopologySpread, as bin-packing setups run it: its pods sign, so from 1.35 it batches. All with
  ``percentageOfNodesToScore: 100`` (every feasible node scored, as the loop does) unless
  ``--percentage`` says otherwise, and selectHost's ``name`` tie-break (the node whose name sorts first), so that
  the two sides can agree pod for pod.

Timed: the scheduling loop only (the numpy arrays, and packsched's Simulation with its snapshot, are built before
the clock starts), by the wall clock and by the process's CPU time (steadier on a busy machine, where the wall clock
also counts the time other jobs held the cores). Printed: the median pods/s and pods per CPU second of each side,
the ratios packsched / full pass of both, the pods each placed,
how many pods the two placed on the same node, and the machine. Run: ``make bench-fullpass`` or
``.venv/bin/python bench/bench_vs_fullpass.py [--nodes N] [--pods N] [--repeat 3] [--profiles fit,default]``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import platform
import pstats
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from bench_schedule import CONFIG  # noqa: E402
from bench_schedule import make_cluster as mixed_cluster  # noqa: E402

from packsched.api.objects import Container, Node, OwnerRef, Pod  # noqa: E402

IntArray = npt.NDArray[np.int64]

GPU = "nvidia.com/gpu"
# the loop's resource rows: the filter checks all four, the score the ones the strategy names
ROWS = ("cpu", "memory", "pods", GPU)
# fit-nobatch: fit with the OpportunisticBatching gate off (fit signs pods, so from 1.35 it batches; default never);
# none: no Filter or Score plugin at all, the floor of packsched's cycle (none-nobatch: without batching);
# binpack: default without PodTopologySpread, whose default constraints make every pod unsignable (so it batches)
PROFILES = ("fit", "default", "fit-nobatch", "none", "none-nobatch", "binpack", "binpack-nobatch")
EXTENDED = {GPU}  # scalar resources: left out of the score for a pod that does not ask for them


# -- the full-pass loop ------------------------------------------------------------------------------------------


@dataclass
class Problem:
    """The cluster and pods as arrays: ``alloc`` (rows ROWS x node columns, in node-name order) and per pod its
    requests over ROWS (the pod count row is 1)."""

    names: list[str]
    alloc: IntArray
    requests: IntArray
    score_rows: IntArray  # rows of ROWS the strategy scores
    weights: IntArray  # their weights
    extended: npt.NDArray[np.bool_]  # which of them are scalar resources
    shape: IntArray  # score for every integer utilisation 0..100


def make_cluster(n_nodes: int, n_pods: int, seed: int, same_pods: bool = False) -> tuple[list[Node], list[Pod]]:
    """bench_schedule's cluster and pods; with ``same_pods`` every pod asks for the same (1 CPU and 1 GiB, no GPU):
    one class of pods, so that a profile that batches (``fit``, from 1.35) takes a batch hint for most of them."""
    nodes, pods = mixed_cluster(n_nodes, 0 if same_pods else n_pods, seed)
    if same_pods:
        pods = [
            Pod(f"pod-{i:05d}", containers=[Container("main", {"cpu": 1000, "memory": 1024**3}, {})],
                owner=OwnerRef("Job", f"job-{i // 10}"))
            for i in range(n_pods)
        ]  # fmt: skip
    return nodes, pods


def shape_lookup(points: Sequence[dict[str, int]]) -> IntArray:
    """The RequestedToCapacityRatio shape at each utilisation 0..100: scores 0..10 scaled by 10, linear between
    points with Go's truncating division, flat before the first point and after the last."""
    pts = [(int(p["utilization"]), int(p["score"]) * 10) for p in points]
    out = np.empty(101, dtype=np.int64)
    for u in range(101):
        if u <= pts[0][0]:
            out[u] = pts[0][1]
        elif u >= pts[-1][0]:
            out[u] = pts[-1][1]
        else:
            k = next(i for i, (x, _) in enumerate(pts) if u <= x)
            (x0, y0), (x1, y1) = pts[k - 1], pts[k]
            num = (y1 - y0) * (u - x0)
            q = abs(num) // (x1 - x0)
            out[u] = y0 + (q if num >= 0 else -q)
    return out


def fit_args(config: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = next(
        pc["args"] for pc in config["profiles"][0]["pluginConfig"] if pc["name"] == "NodeResourcesFit"
    )
    return args


def problem(nodes: Sequence[Node], pods: Sequence[Pod], config: dict[str, Any]) -> Problem:
    order = sorted(range(len(nodes)), key=lambda i: nodes[i].name)
    alloc = np.array([[nodes[i].allocatable.get(r, 0) for i in order] for r in ROWS], dtype=np.int64)
    requests = np.zeros((len(pods), len(ROWS)), dtype=np.int64)
    for k, pod in enumerate(pods):
        for c in pod.containers:
            for j, r in enumerate(ROWS):
                requests[k, j] += int(c.requests.get(r, 0))
        requests[k, ROWS.index("pods")] = 1
    strategy = fit_args(config)["scoringStrategy"]
    resources = strategy["resources"]
    return Problem(
        names=[nodes[i].name for i in order],
        alloc=alloc,
        requests=requests,
        score_rows=np.array([ROWS.index(r["name"]) for r in resources], dtype=np.int64),
        weights=np.array([int(r["weight"]) for r in resources], dtype=np.int64),
        extended=np.array([r["name"] in EXTENDED for r in resources], dtype=bool),
        shape=shape_lookup(strategy["requestedToCapacityRatio"]["shape"]),
    )


def full_pass(p: Problem) -> IntArray:
    """Every pod in order over every node: the chosen column, or -1 where no node fits."""
    alloc = p.alloc
    used = np.zeros_like(alloc)
    s_alloc = alloc[p.score_rows]
    has = s_alloc > 0
    safe = np.where(has, s_alloc, 1)
    weights = p.weights[:, None]
    chosen = np.full(len(p.requests), -1, dtype=np.int64)
    for k, req in enumerate(p.requests):
        after = used + req[:, None]
        fits = (after <= alloc).all(axis=0)
        if not fits.any():
            continue
        s_after = after[p.score_rows]
        util = np.where(s_after > s_alloc, 100, s_after * 100 // safe)
        per = p.shape[util]
        asked = ~p.extended | (req[p.score_rows] > 0)
        counted = has & (per > 0) & asked[:, None]
        num = np.where(counted, per * weights, 0).sum(axis=0)
        den = np.where(counted, weights, 0).sum(axis=0)
        score = np.where(den > 0, (2 * num + den) // (2 * np.maximum(den, 1)), 0)
        best = int(np.argmax(np.where(fits, score, -1)))
        chosen[k] = best
        used[:, best] += req
    return chosen


def _loop_scores(p: Problem, used: IntArray, req: IntArray, cols: IntArray | slice) -> IntArray:
    """The full pass's arithmetic for one pod over ``cols``: each node's score, or -1 where the pod does not fit."""
    alloc = p.alloc[:, cols]
    after = used[:, cols] + req[:, None]
    fits = (after <= alloc).all(axis=0)
    s_alloc = alloc[p.score_rows]
    has = s_alloc > 0
    s_after = after[p.score_rows]
    util = np.where(s_after > s_alloc, 100, s_after * 100 // np.where(has, s_alloc, 1))
    per = p.shape[util]
    asked = ~p.extended | (req[p.score_rows] > 0)
    counted = has & (per > 0) & asked[:, None]
    weights = p.weights[:, None]
    num = np.where(counted, per * weights, 0).sum(axis=0)
    den = np.where(counted, weights, 0).sum(axis=0)
    score = np.where(den > 0, (2 * num + den) // (2 * np.maximum(den, 1)), 0)
    out: IntArray = np.where(fits, score, -1)
    return out


def incremental_pass(p: Problem) -> IntArray:
    """The floor of an incremental scheduler written in Python and numpy, for reference: the full pass's
    decisions, with each class of pods with equal requests keeping every node's score (-1: does not fit) and
    bringing up to date only the nodes pods went to since the class was last used; nothing else (no framework,
    queue, events or binding). The chosen column per pod, or -1."""
    used = np.zeros_like(p.alloc)
    journal: list[int] = []  # the column each placed pod went to, in order
    kept: dict[bytes, tuple[IntArray, int]] = {}  # per class: its scores, and how much of the journal they saw
    chosen = np.full(len(p.requests), -1, dtype=np.int64)
    for k, req in enumerate(p.requests):
        key = req.tobytes()
        entry = kept.get(key)
        if entry is None:
            scores = _loop_scores(p, used, req, slice(None))
        else:
            scores, seen = entry
            if seen < len(journal):
                changed = np.unique(np.array(journal[seen:], dtype=np.intp))
                scores[changed] = _loop_scores(p, used, req, changed)
        kept[key] = (scores, len(journal))
        best = int(np.argmax(scores))
        if scores[best] < 0:
            continue
        chosen[k] = best
        used[:, best] += req
        journal.append(best)
    return chosen


# -- packsched -----------------------------------------------------------------------------------------------------


def packsched_config(profile: str, percentage: int | None) -> dict[str, Any]:
    """bench_schedule's configuration (``default``), the same NodeResourcesFit args with every other plugin
    disabled (``fit``), or no Filter or Score plugin at all (``none``: PrioritySort and DefaultBinder only, every
    node feasible and scored alike; what packsched's cycle costs with nothing to compute)."""
    config = json.loads(json.dumps(CONFIG))
    prof = config["profiles"][0]
    if profile in ("fit", "fit-nobatch"):
        prof["plugins"] = {
            "multiPoint": {
                "disabled": [{"name": "*"}],
                "enabled": [{"name": "PrioritySort"}, {"name": "NodeResourcesFit"}, {"name": "DefaultBinder"}],
            }
        }
    elif profile in ("binpack", "binpack-nobatch"):
        prof["plugins"] = {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}}
    elif profile in ("none", "none-nobatch"):
        prof["plugins"] = {
            "multiPoint": {
                "disabled": [{"name": "*"}],
                "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}],
            }
        }
    if percentage is not None:
        config["percentageOfNodesToScore"] = percentage
    return config


def run_packsched(
    nodes: list[Node], pods: list[Pod], profile: str, percentage: int | None, seed: int, prof: str | None = None
) -> tuple[float, float, float, dict[str, str]]:
    """(setup seconds, scheduling seconds, scheduling CPU seconds, pod name -> node name of the placed pods);
    ``prof``: a file to write a cProfile of the scheduling loop to."""
    from packsched.api.manifests import Cluster
    from packsched.config.loader import load_config_data
    from packsched.plugins.registry import in_tree_registry
    from packsched.scheduler import TIE_NAME
    from packsched.sim.engine import RUNNING, Simulation

    registry = in_tree_registry()
    gates = {"OpportunisticBatching": False} if profile.endswith("-nobatch") else None
    cfg = load_config_data(
        packsched_config(profile, percentage), f"fullpass-{profile}", set(registry), feature_gates=gates
    )
    t0 = time.perf_counter()
    sim = Simulation(Cluster(nodes=nodes, pods=pods), cfg, registry, seed=seed)
    sim.scheduler.tie_break = TIE_NAME
    profiler = cProfile.Profile() if prof else None
    t1, c1 = time.perf_counter(), time.process_time()
    if profiler is not None:
        profiler.enable()
    result = sim.run()
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(prof)
    t2, c2 = time.perf_counter(), time.process_time()
    placed = {r.pod.name: r.node for r in result.records if r.phase == RUNNING and r.node is not None}
    return t1 - t0, t2 - t1, c2 - c1, placed


# -- the run -------------------------------------------------------------------------------------------------------


def forbidden(pod: Pod, node: Node) -> bool:
    """Would the default profile's TaintToleration or NodeAffinity (nodeSelector) filters refuse the pod there?"""
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(t.tolerates(taint) for t in pod.tolerations):
            return True
    return any(node.labels.get(k) != v for k, v in pod.node_selector.items())


def machine() -> dict[str, Any]:
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "")
    except OSError:
        pass
    return {
        "machine": platform.machine(),
        "cpu": model or platform.processor(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }


def compare(
    nodes: int,
    pods: int,
    repeat: int,
    profiles: Sequence[str],
    percentage: int | None,
    seed: int,
    same_pods: bool = False,
) -> dict[str, Any]:
    """Alternate the full pass and each profile ``repeat`` times; medians, ratios and placement agreement."""
    base_nodes, base_pods = make_cluster(nodes, pods, seed, same_pods)
    prob = problem(base_nodes, base_pods, CONFIG)
    node_by_name = {n.name: n for n in base_nodes}
    times: dict[str, list[float]] = {"fullpass": [], "incremental": [], **{p: [] for p in profiles}}
    cpu: dict[str, list[float]] = {"fullpass": [], "incremental": [], **{p: [] for p in profiles}}
    same_as_full = True
    setup: dict[str, list[float]] = {p: [] for p in profiles}
    chosen: IntArray | None = None
    placed: dict[str, dict[str, str]] = {}
    for rep in range(repeat):
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        chosen = full_pass(prob)
        times["fullpass"].append(time.perf_counter() - t0)
        cpu["fullpass"].append(time.process_time() - c0)
        print(f"  run {rep + 1}: full pass {pods / times['fullpass'][-1]:,.0f} pods/s", file=sys.stderr, flush=True)
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        floor = incremental_pass(prob)
        times["incremental"].append(time.perf_counter() - t0)
        cpu["incremental"].append(time.process_time() - c0)
        same_as_full = same_as_full and bool(np.array_equal(floor, chosen))
        for profile in profiles:
            run_nodes, run_pods = make_cluster(nodes, pods, seed, same_pods)  # the simulator changes the pods it places
            gc.collect()
            s, t, c, placed[profile] = run_packsched(run_nodes, run_pods, profile, percentage, seed)
            cpu[profile].append(c)
            del run_nodes, run_pods
            setup[profile].append(s)
            times[profile].append(t)
            print(f"  run {rep + 1}: packsched {profile} {pods / t:,.0f} pods/s", file=sys.stderr, flush=True)
    assert chosen is not None
    numpy_nodes = {base_pods[k].name: prob.names[int(c)] for k, c in enumerate(chosen) if c >= 0}
    full_rate = [pods / t for t in times["fullpass"]]
    full_cpu_rate = [pods / max(c, 1e-9) for c in cpu["fullpass"]]
    out: dict[str, Any] = {
        "machine": machine(),
        "nodes": nodes,
        "pods": pods,
        "same_pods": same_pods,
        "repeat": repeat,
        "seed": seed,
        "percentage_of_nodes_to_score": "adaptive" if percentage == 0 else percentage,
        "tie_break": "node name (the lowest column of the loop, columns in name order; packsched's `name`)",
        "fullpass": {
            "pods_per_s_median": round(statistics.median(full_rate), 1),
            "pods_per_s_runs": [round(r, 1) for r in full_rate],
            "pods_per_cpu_s_median": round(statistics.median(full_cpu_rate), 1),
            "placed": len(numpy_nodes),
        },
        "incremental_loop": _rates(times["incremental"], cpu["incremental"], pods, full_rate, full_cpu_rate)
        | {"same_choices_as_full_pass": same_as_full},
        "profiles": {},
    }
    pod_by_name = {p.name: p for p in base_pods}
    for profile in profiles:
        rate = [pods / t for t in times[profile]]
        cpu_rate = [pods / max(c, 1e-9) for c in cpu[profile]]
        theirs = placed[profile]
        both = set(theirs) & set(numpy_nodes)
        same = sum(1 for name in both if theirs[name] == numpy_nodes[name])
        out["profiles"][profile] = {
            "pods_per_s_median": round(statistics.median(rate), 1),
            "pods_per_s_runs": [round(r, 1) for r in rate],
            "setup_s_median": round(statistics.median(setup[profile]), 2),
            "ratio": round(statistics.median(rate) / statistics.median(full_rate), 3),
            "pods_per_cpu_s_median": round(statistics.median(cpu_rate), 1),
            "cpu_ratio": round(statistics.median(cpu_rate) / statistics.median(full_cpu_rate), 3),
            "placed": len(theirs),
            "placed_by_both": len(both),
            "same_node": same,
            "agreement": round(same / max(1, len(both)), 4),
            "fullpass_forbidden_here": sum(
                1 for name, node in numpy_nodes.items() if forbidden(pod_by_name[name], node_by_name[node])
            ),
        }
    return out


def _rates(
    times: list[float], cpu: list[float], pods: int, full_rate: list[float], full_cpu_rate: list[float]
) -> dict[str, Any]:
    rate = [pods / t for t in times]
    cpu_rate = [pods / max(c, 1e-9) for c in cpu]
    return {
        "pods_per_s_median": round(statistics.median(rate), 1),
        "pods_per_s_runs": [round(x, 1) for x in rate],
        "ratio": round(statistics.median(rate) / statistics.median(full_rate), 3),
        "pods_per_cpu_s_median": round(statistics.median(cpu_rate), 1),
        "cpu_ratio": round(statistics.median(cpu_rate) / statistics.median(full_cpu_rate), 3),
    }


def report(r: dict[str, Any]) -> str:
    m = r["machine"]
    lines = [
        f"machine: {m['machine']} {m['cpu']} ({m['cpus']} cpus), python {m['python']}, numpy {m['numpy']}, "
        f"load average at start {m['loadavg']}",
        f"nodes={r['nodes']:,} pods={r['pods']:,}{' (all alike)' if r.get('same_pods') else ''} "
        f"repeat={r['repeat']} (alternating) seed={r['seed']} "
        f"percentageOfNodesToScore={r['percentage_of_nodes_to_score']} tie-break: {r['tie_break']}",
        "",
        "| scheduler | pods/s (median) | runs | packsched / full pass | pods per CPU s (median) | packsched / full "
        "pass, CPU | placed | same node as full pass |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    f = r["fullpass"]
    runs = ", ".join(f"{x:,.0f}" for x in f["pods_per_s_runs"])
    lines.append(
        f"| full-pass numpy loop | {f['pods_per_s_median']:,.0f} | {runs} | 1 | {f['pods_per_cpu_s_median']:,.0f} | 1 "
        f"| {f['placed']:,} | |"
    )
    inc = r["incremental_loop"]
    runs = ", ".join(f"{x:,.0f}" for x in inc["pods_per_s_runs"])
    same = "same as the full pass" if inc["same_choices_as_full_pass"] else "DIFFERENT from the full pass"
    lines.append(
        f"| incremental numpy loop, no framework (reference) | {inc['pods_per_s_median']:,.0f} | {runs} "
        f"| {inc['ratio']:.2f} | {inc['pods_per_cpu_s_median']:,.0f} | {inc['cpu_ratio']:.2f} | | {same} |"
    )
    for name, p in r["profiles"].items():
        label = {
            "fit": "packsched, NodeResourcesFit only",
            "fit-nobatch": "packsched, NodeResourcesFit only, OpportunisticBatching off",
            "binpack": "packsched, default profile without PodTopologySpread",
            "binpack-nobatch": "packsched, default profile without PodTopologySpread, OpportunisticBatching off",
            "none": "packsched, no Filter or Score plugin (its cycle's floor)",
            "none-nobatch": "packsched, no Filter or Score plugin, OpportunisticBatching off",
        }.get(name, "packsched, default profile")
        runs = ", ".join(f"{x:,.0f}" for x in p["pods_per_s_runs"])
        lines.append(
            f"| {label} (`{name}`) | {p['pods_per_s_median']:,.0f} | {runs} | {p['ratio']:.2f} "
            f"| {p['pods_per_cpu_s_median']:,.0f} | {p['cpu_ratio']:.2f} | {p['placed']:,} "
            f"| {p['same_node']:,} of {p['placed_by_both']:,} ({100 * p['agreement']:.1f} %) |"
        )
    for name, p in r["profiles"].items():
        if name in ("default", "binpack", "binpack-nobatch") and p["fullpass_forbidden_here"]:
            lines.append(
                f"`{name}`: {p['fullpass_forbidden_here']:,} of the full pass's placements break a taint or node "
                "selector this profile honours (the full pass, like `fit`, checks resources only)"
            )
    lines.append("timed: the scheduling loops only (packsched's setup, median s: ")
    lines[-1] += ", ".join(f"{name} {p['setup_s_median']:.2f}" for name, p in r["profiles"].items()) + ")"
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each scheduler, alternating")
    parser.add_argument(
        "--profiles",
        default="fit,default",
        help="packsched profiles to measure: fit, default, fit-nobatch, none, none-nobatch (none: no Filter or Score "
        "plugin, the floor of packsched's cycle), binpack, binpack-nobatch (default without PodTopologySpread)",
    )
    parser.add_argument(
        "--percentage",
        type=int,
        default=100,
        help="packsched's percentageOfNodesToScore (default 100, as the full pass; 0: kube-scheduler's adaptive)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--same-pods",
        action="store_true",
        help="every pod asks for 1 CPU and 1 GiB (one class of pods: `fit` batches them from kube-scheduler 1.35)",
    )
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table")
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="after the timed runs, one more packsched run per profile under cProfile (not timed): DIR/<profile>.prof "
        "and its top 15 functions by cumulative time",
    )
    args = parser.parse_args(argv)
    profiles = [p for p in args.profiles.split(",") if p]
    unknown = [p for p in profiles if p not in PROFILES]
    if unknown or not profiles:
        parser.error(f"--profiles: one or more of {', '.join(PROFILES)}")
    result = compare(args.nodes, args.pods, max(1, args.repeat), profiles, args.percentage, args.seed, args.same_pods)
    print(json.dumps(result, indent=2) if args.output == "json" else report(result))
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
        for profile in profiles:
            path = os.path.join(args.profile, f"{profile}.prof")
            run_nodes, run_pods = make_cluster(args.nodes, args.pods, args.seed, args.same_pods)
            run_packsched(run_nodes, run_pods, profile, args.percentage, args.seed, path)  # the CPU time is not used
            out = sys.stderr if args.output == "json" else sys.stdout
            print(f"\n## packsched `{profile}`: top 15 by cumulative time ({path})", file=out)
            pstats.Stats(path, stream=out).sort_stats("cumulative").print_stats(15)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
