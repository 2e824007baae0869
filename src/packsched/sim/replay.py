"""The published GPU-trace protocol (Weng et al., USENIX ATC '23; ``shared/spec/gpu-trace-evaluation.md`` §3):

1. every node of the node list, renamed with a seeded random 4-digit prefix (ties between equal scores go to the
   smallest name, so this order decides tie-breaks);
2. the pods sorted by name, then shuffled with the run's seed;
3. inflation: copies drawn at random, with replacement, from the original pods are appended until the total GPU
   request reaches ``tune`` (1.3) x the cluster's GPU capacity (a larger trace loses pods drawn at random instead);
4. one pod at a time through the scheduler, no departures; a pod that fits nowhere is dropped;
5. after every pod: allocated GPU milli, arrived GPU milli (failed pods included), the cluster fragment (FGD's
   measure over the original trace's target workload), CPU and memory allocated.

Samples are binned by arrived workload rounded to whole percent (0..130) and averaged per bin; an empty bin takes
the samples of its neighbours (+-1).

``as_dra``: the GPUs are DRA devices with a consumable capacity and the pods' GPUs claims, allocated by
DynamicResources instead of GPUShare (``sim/dratrace.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from packsched.api.errors import FieldError, InputError
from packsched.api.objects import DEFAULT_SCHEDULER_NAME, Node
from packsched.backend.gpu.frag import FragState, Shape, TargetWorkload
from packsched.backend.gpu.table import device_table
from packsched.config.types import KubeSchedulerConfiguration
from packsched.framework.podinfo import make_pod_info
from packsched.framework.runtime import Framework
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Status
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import TIE_NAME, Scheduler
from packsched.sim.defaults import DEFAULT_TUNE
from packsched.sim.dratrace import as_dra_pod, mirror_allocation, trace_dra_objects
from packsched.sim.trace import Trace

FloatArray = npt.NDArray[np.float64]
MAX_BIN = 130
CURVES = ("gpu_alloc_pct", "frag_rate_pct", "frag_total_pct", "cpu_alloc_pct", "mem_alloc_pct")
# RunResult.curves also has, outside runs.csv and the JSON (``packsched tune``'s metrics), "dropped_pods": pods
# dropped so far (they fit nowhere: pending in a real cluster), and "free_nodes": nodes without any pod (pods never
# leave in a replay).
Progress = Callable[[int, int], None]
# The plugin that assigns GPUs (packsched.plugins.gpushare, reached through the registry) and where it must run.
GPU_SHARE = "GPUShare"
GPU_SHARE_POINTS = ("preFilter", "filter", "reserve")
NO_GPU_METRICS = "a replay measures GPU allocation and fragmentation"
DYNAMIC_RESOURCES = "DynamicResources"
DRA_POINTS = ("preFilter", "filter", "reserve", "preBind")


def target_workload(trace: Trace) -> TargetWorkload:
    """The fragmentation measure's target workload: the original pods' popular shapes (95%)."""
    return TargetWorkload.from_shapes(Shape.of(p.cpu, p.demand) for p in trace.pods)


def seeded_nodes(trace: Trace, rng: np.random.Generator) -> list[Node]:
    """The nodes, sorted by name, each renamed ``NNNN-<name>`` with NNNN from a seeded permutation.

    The paper's simulator does this, and its scheduler breaks score ties by the smallest node name: ties thus go
    to a random but seed-fixed node order (``--tie-break name``)."""
    by_name = sorted(trace.nodes, key=lambda n: n.name)
    perm = rng.permutation(len(by_name))
    out = []
    for i, tn in enumerate(by_name):
        node = tn.to_node()
        node.name = f"{int(perm[i]):04d}-{tn.name}"
        out.append(node)
    return out


def pod_order(trace: Trace, rng: np.random.Generator, tune: float = DEFAULT_TUNE) -> tuple[list[int], int]:
    """Indexes into ``trace.pods`` in submission order, and how many of them are resampled copies.

    Sorted by name, shuffled, then inflated (or thinned) to ``tune`` x GPU capacity of GPU request."""
    by_name = sorted(range(len(trace.pods)), key=lambda i: trace.pods[i].name)
    seq = [by_name[int(i)] for i in rng.permutation(len(by_name))]
    milli = [p.total_milli for p in trace.pods]
    target = tune * trace.gpu_capacity_milli
    total = sum(milli)
    copies = 0
    if total == 0 or tune <= 0:
        return seq, 0
    while total < target:
        j = int(rng.integers(len(trace.pods)))
        seq.append(j)
        total += milli[j]
        copies += 1
    while total > target and any(milli[i] for i in seq):
        k = int(rng.integers(len(seq)))
        if total - milli[seq[k]] < target and milli[seq[k]]:
            break  # removing this one would go below the target: stop at the first pod that crosses
        total -= milli[seq.pop(k)]
    return seq, copies


def bin_curve(arrived_pct: FloatArray, values: FloatArray, max_bin: int = MAX_BIN) -> list[float | None]:
    """Mean of ``values`` per whole-percent bin of ``arrived_pct`` (0..max_bin); an empty bin uses +-1."""
    bins = np.rint(arrived_pct).astype(np.int64)
    keep = (bins >= 0) & (bins <= max_bin)
    bins, vals = bins[keep], values[keep]
    sums = np.bincount(bins, weights=vals, minlength=max_bin + 1)
    counts = np.bincount(bins, minlength=max_bin + 1)
    out: list[float | None] = []
    for b in range(max_bin + 1):
        if counts[b]:
            out.append(float(sums[b] / counts[b]))
            continue
        lo, hi = max(0, b - 1), min(max_bin, b + 1)
        c = counts[lo : hi + 1].sum()
        out.append(float(sums[lo : hi + 1].sum() / c) if c else None)
    return out


@dataclass
class RunResult:
    label: str
    seed: int
    pods: int
    originals: int
    copies: int
    scheduled: int
    failed: int
    seconds: float
    curves: dict[str, list[float | None]] = field(default_factory=dict)

    def at(self, curve: str, pct: int) -> float | None:
        return self.curves[curve][pct]

    def unallocated(self, pct: int) -> float | None:
        alloc = self.at("gpu_alloc_pct", pct)
        return None if alloc is None else 100.0 - alloc

    def as_json(self) -> dict[str, Any]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        return {
            "seed": self.seed,
            "unallocated_gpu_pct": {"100": r(self.unallocated(100)), "130": r(self.unallocated(130))},
            "gpu_alloc_pct": {str(p): r(self.at("gpu_alloc_pct", p)) for p in (50, 80, 90, 95, 100, 110, 120, 130)},
            "frag_rate_pct": {str(p): r(self.at("frag_rate_pct", p)) for p in (50, 70, 80, 90)},
            "frag_total_pct": {str(p): r(self.at("frag_total_pct", p)) for p in (50, 80, 90)},
            "cpu_alloc_pct": {"100": r(self.at("cpu_alloc_pct", 100)), "130": r(self.at("cpu_alloc_pct", 130))},
            "mem_alloc_pct": {"100": r(self.at("mem_alloc_pct", 100)), "130": r(self.at("mem_alloc_pct", 130))},
            "pods": self.pods,
            "originals": self.originals,
            "copies": self.copies,
            "scheduled": self.scheduled,
            "failed": self.failed,
            "seconds": round(self.seconds, 3),
        }


class _Actions:
    def bind(self, pod: Any, node: str) -> Status:
        return Status()

    def preempt(self, victim: Any, preemptor: Any) -> None:  # pragma: no cover - preemption is off
        raise RuntimeError("the replay protocol does not preempt")


def check_trace(trace: Trace) -> None:
    """Every metric is a share of the node list's GPUs (or of the GPUs the pods ask for): a node list without a GPU,
    or a pod list that asks for none, would give no number at all."""
    errors: list[FieldError] = []
    if trace.gpu_capacity_milli <= 0:
        errors.append(FieldError("", f"no node of the list has a GPU: {NO_GPU_METRICS}", trace.node_file))
    if not any(p.total_milli for p in trace.pods):
        errors.append(FieldError("", f"no pod of the list asks for a GPU: {NO_GPU_METRICS}", trace.pod_file))
    if errors:
        raise InputError(errors)


def _trace_profile(sched: Scheduler, config: KubeSchedulerConfiguration) -> tuple[Framework, int]:
    """The profile the trace's pods (schedulerName default-scheduler) go through, and its index in the file."""
    fwk = sched.frameworks.get(DEFAULT_SCHEDULER_NAME)
    if fwk is None:
        raise InputError.single(
            f"no profile has schedulerName {DEFAULT_SCHEDULER_NAME}, which the trace's pods use",
            file=config.source_file,
            path="profiles",
        )
    return fwk, next(i for i, p in enumerate(config.profiles) if p is fwk.profile)


def check_gpu_share(sched: Scheduler, config: KubeSchedulerConfiguration) -> None:
    """The trace's pods (schedulerName default-scheduler) must go through GPUShare: it picks each pod's GPUs, and
    the GPU metrics count the GPUs it took. Without it no GPU is ever taken in the device table, so the cluster
    fragment stays that of an empty cluster while the idle GPU milli shrinks (fragmentation rates above 100 %),
    and a node's GPUs are admitted by their sum only."""
    fwk, index = _trace_profile(sched, config)
    missing = [point for point in GPU_SHARE_POINTS if GPU_SHARE not in fwk.plugin_names(point)]
    if missing:
        raise InputError.single(
            f"{GPU_SHARE} is required for the GPU metrics of a replay (it assigns the GPUs they count): enable it "
            f"under multiPoint (here it does not run at {', '.join(missing)})",
            file=config.source_file,
            path=f"profiles[{index}].plugins",
        )


def check_dra(sched: Scheduler, config: KubeSchedulerConfiguration) -> None:
    """``--as-dra``: DynamicResources must allocate the GPUs, and GPUShare must not take any (the replay writes the
    devices each pod got into GPUShare's table itself)."""
    fwk, index = _trace_profile(sched, config)
    missing = [point for point in DRA_POINTS if DYNAMIC_RESOURCES not in fwk.plugin_names(point)]
    if missing:
        raise InputError.single(
            f"--as-dra: {DYNAMIC_RESOURCES} allocates the GPUs' devices and must run at {', '.join(DRA_POINTS)} "
            f"(here it does not run at {', '.join(missing)})",
            file=config.source_file,
            path=f"profiles[{index}].plugins",
        )
    taking = [point for point in ("filter", "reserve") if GPU_SHARE in fwk.plugin_names(point)]
    if taking:
        raise InputError.single(
            f"--as-dra: {GPU_SHARE} must not run at {', '.join(taking)}: DynamicResources allocates the GPUs",
            file=config.source_file,
            path=f"profiles[{index}].plugins",
        )


def check_replay(trace: Trace, config: KubeSchedulerConfiguration, *, as_dra: bool = False) -> None:
    """What :func:`replay` would refuse, checked without running it (before any worker starts)."""
    check_trace(trace)
    sched = Scheduler(config, in_tree_registry(), _Actions(), Snapshot())
    if as_dra:
        check_dra(sched, config)
    else:
        check_gpu_share(sched, config)


def replay(
    trace: Trace,
    config: KubeSchedulerConfiguration,
    seed: int,
    *,
    label: str = "",
    tune: float = DEFAULT_TUNE,
    progress: Progress | None = None,
    target: TargetWorkload | None = None,
    tie_break: str = TIE_NAME,
    as_dra: bool = False,
) -> RunResult:
    """One run of the protocol with one seed."""
    start = time.perf_counter()
    check_trace(trace)
    rng = np.random.default_rng(seed)
    nodes = seeded_nodes(trace, rng)
    seq, copies = pod_order(trace, rng, tune)
    snap = Snapshot()
    snap.add_nodes(nodes)
    table = device_table(snap)
    frag = FragState(snap, target or target_workload(trace))
    dra = trace_dra_objects(nodes) if as_dra else None
    sched = Scheduler(config, in_tree_registry(), _Actions(), snap, seed, tie_break=tie_break, dra=dra)
    if dra is not None:
        check_dra(sched, config)
    else:
        check_gpu_share(sched, config)
    n = len(seq)
    arrived = np.zeros(n, dtype=np.float64)
    used = np.zeros(n, dtype=np.float64)
    frag_amount = np.zeros(n, dtype=np.float64)
    cpu_used = np.zeros(n, dtype=np.float64)
    mem_used = np.zeros(n, dtype=np.float64)
    dropped = np.zeros(n, dtype=np.float64)
    free_nodes = np.zeros(n, dtype=np.float64)
    nodes_used: set[str] = set()
    a = u = c = m = 0
    scheduled = 0
    step = max(1, n // 200)
    for i, idx in enumerate(seq):
        tp = trace.pods[idx]
        name = tp.name if i < n - copies else f"{tp.name}-copy-{i}"
        pod = tp.to_pod(name)
        if dra is not None:
            pod = as_dra_pod(pod, tp.demand, dra)
        info = make_pod_info(pod, i, sched.config.kube_version)
        a += tp.total_milli
        result = sched.schedule_one(info)
        if result.scheduled and dra is not None and tp.demand.wants_gpu:
            mirror_allocation(dra, table, info, snap.index[result.node or ""], tp.demand)
        if result.scheduled:
            scheduled += 1
            u += tp.total_milli
            c += tp.cpu
            m += tp.memory_mib
            nodes_used.add(result.node or "")
        arrived[i], used[i], cpu_used[i], mem_used[i] = a, u, c, m
        dropped[i], free_nodes[i] = i + 1 - scheduled, len(nodes) - len(nodes_used)
        frag_amount[i] = frag.cluster_fragment()
        if progress is not None and (i % step == 0 or i == n - 1):
            progress(i + 1, n)
    cap = float(trace.gpu_capacity_milli)
    pct = arrived / cap * 100.0
    idle = cap - used
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(idle > 0, frag_amount / np.where(idle > 0, idle, 1.0) * 100.0, 0.0)
    curves = {
        "gpu_alloc_pct": bin_curve(pct, used / cap * 100.0),
        "frag_rate_pct": bin_curve(pct, rate),
        "frag_total_pct": bin_curve(pct, frag_amount / cap * 100.0),
        "cpu_alloc_pct": bin_curve(pct, cpu_used / max(1, trace.cpu_capacity) * 100.0),
        "mem_alloc_pct": bin_curve(pct, mem_used / max(1, trace.memory_capacity_mib) * 100.0),
        "dropped_pods": bin_curve(pct, dropped),
        "free_nodes": bin_curve(pct, free_nodes),
    }
    return RunResult(label, seed, n, n - copies, copies, scheduled, n - scheduled, time.perf_counter() - start, curves)


def summarize(runs: Sequence[RunResult], pcts: Sequence[int] = (100, 130)) -> dict[str, dict[str, float | None]]:
    """Mean and population SD of unallocated GPU % over the runs, per arrived level."""
    mean: dict[str, float | None] = {}
    sd: dict[str, float | None] = {}
    for p in pcts:
        vals = [v for v in (r.unallocated(p) for r in runs) if v is not None]
        mean[str(p)] = round(float(np.mean(vals)), 4) if vals else None
        sd[str(p)] = round(float(np.std(vals)), 4) if vals else None
    return {"mean": mean, "sd": sd}
