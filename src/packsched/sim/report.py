"""Results as documented JSON (``docs/reference/json.md``) and as rich tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from packsched.api.annotations import format_duration
from packsched.api.dra import DraObjects
from packsched.api.gpushare import GPU_INDEX
from packsched.api.quantity import format_quantity
from packsched.api.resources import CPU, MEMORY
from packsched.backend.dra.extended import class_for, device_totals
from packsched.config.types import KubeSchedulerConfiguration
from packsched.framework.runtime import ScoreResult
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.scheduler import CycleResult
from packsched.sim.engine import PENDING, RUNNING, SUCCEEDED, Event, PodRecord, SimResult

SIMULATE_SCHEMA = "packsched.simulate/v1"
EXPLAIN_SCHEMA = "packsched.explain/v1"


def _pct(req: int, alloc: int) -> float | None:
    return round(100.0 * req / alloc, 2) if alloc > 0 else None


def device_allocatable(snap: Snapshot, dra: DraObjects | None) -> dict[int, IntArray]:
    """For the resources pods requested on nodes that do not advertise them (DRA-backed extended resources, served
    by a DeviceClass): snapshot row -> per node, the devices of the class the node has, what the resource's
    allocatable is to the scheduler (NodeResourcesFit's scoring counts it so)."""
    out: dict[int, IntArray] = {}
    if dra is None or not dra.classes:
        return out
    for row, name in enumerate(snap.resources):
        if not bool(np.any((snap.alloc[row] == 0) & (snap.requested[row] > 0))):
            continue
        cls = class_for(dra, name)
        if cls is not None:
            capacity, _used = device_totals(dra, cls, snap.nodes, set())
            out[row] = np.where(snap.alloc[row] == 0, capacity, snap.alloc[row])
    return out


def node_usage(snap: Snapshot, dra: DraObjects | None = None) -> list[dict[str, Any]]:
    """Per node: allocatable, requested and utilisation (%) of every resource the node has (for a DRA-backed
    extended resource, the node's devices of its class)."""
    devices = device_allocatable(snap, dra)
    out: list[dict[str, Any]] = []
    for col, node in enumerate(snap.nodes):
        alloc: dict[str, int] = {}
        req: dict[str, int] = {}
        util: dict[str, float | None] = {}
        for row, name in enumerate(snap.resources):
            a = int(devices[row][col]) if row in devices else int(snap.alloc[row, col])
            r = int(snap.requested[row, col])
            if a == 0 and r == 0:
                continue
            alloc[name], req[name], util[name] = a, r, _pct(r, a)
        out.append(
            {
                "node": node.name,
                "pods": int(snap.pod_count[col]),
                "allowed_pods": int(snap.allowed_pods[col]),
                "allocatable": alloc,
                "requested": req,
                "utilization": util,
            }
        )
    return out


def summary(result: SimResult) -> dict[str, int]:
    counts: dict[str, int] = {"pods": len(result.records)}
    for rec in result.records:
        counts[rec.phase.lower()] = counts.get(rec.phase.lower(), 0) + 1
    return counts


def placement(rec: PodRecord) -> dict[str, Any]:
    owner = rec.pod.owner
    return {
        "pod": rec.pod.key,
        "node": rec.node,
        "phase": rec.phase,
        "reason": rec.reason if rec.phase not in (RUNNING, SUCCEEDED) else None,
        "priority": rec.pod.priority,
        "attempts": rec.attempts,
        "owner": f"{owner.kind}/{owner.name}" if owner is not None else None,
        "replaces": rec.replaces,
        "created": rec.created,
        "started": rec.started,
        "finished": rec.finished,
        # the GPUs GPUShare reserved ("0" or "0-1"), from the pod's alibabacloud.com/gpu-index annotation
        "gpu_index": rec.pod.annotations.get(GPU_INDEX) if rec.phase == RUNNING else None,
    }


def event_json(e: Event) -> dict[str, Any]:
    return {"time": e.time, "kind": e.kind, "pod": e.pod, "node": e.node, "by": e.by, "reason": e.reason}


def config_summary(cfg: KubeSchedulerConfiguration) -> dict[str, Any]:
    return {
        "source": cfg.source_version,
        "file": cfg.source_file or None,
        "profiles": [
            {"schedulerName": p.scheduler_name, "omitted_default_plugins": list(p.omitted_default_plugins)}
            for p in cfg.profiles
        ],
    }


def simulate_json(result: SimResult, cfg: KubeSchedulerConfiguration, seed: int) -> dict[str, Any]:
    return {
        "schema": SIMULATE_SCHEMA,
        "seed": seed,
        "config": config_summary(cfg),
        "summary": summary(result),
        "placements": [placement(r) for r in result.records],
        "nodes": node_usage(result.snapshot, result.dra),
        "events": [event_json(e) for e in result.events],
        "end_time": result.end_time,
        "warnings": list(result.warnings),
    }


def explain_json(
    pod_key: str,
    cycle: CycleResult | None,
    snap: Snapshot,
    attempts: int,
    cfg: KubeSchedulerConfiguration,
    bound_by_manifest: str | None = None,
) -> dict[str, Any]:
    """Every node's filter verdict and reasons, each score plugin's score (raw and weighted) and the total."""
    out: dict[str, Any] = {"schema": EXPLAIN_SCHEMA, "pod": pod_key, "attempts": attempts}
    if bound_by_manifest is not None:
        out.update(
            {
                "selected": bound_by_manifest,
                "reason": "bound by its manifest (spec.nodeName); the scheduler does not place it",
                "nodes": [],
            }
        )
        return out
    if cycle is None:
        out.update(
            {
                "selected": None,
                "reason": "the pod was never tried (no profile for its schedulerName, or a scheduling gate holds it)",
                "nodes": [],
            }
        )
        return out
    fwk_profile = cfg.profile(cycle.profile)
    out["profile"] = cycle.profile
    out["selected"] = cycle.node
    out["reason"] = None if cycle.scheduled else cycle.message
    if cycle.waiting:  # assumed on its node and held (explain --at, before the wait ended)
        out["waiting"] = "PreBind" if cycle.waiting_in_pre_bind else "Permit"
        out["reason"] = (
            f"{cycle.status.message} ({cycle.status.plugin} PreBind)"
            if cycle.waiting_in_pre_bind
            else f"waiting at Permit ({cycle.status.plugin})"
        )
    out["nominated_node"] = cycle.nominated_node
    out["used_nominated_node"] = cycle.used_nominated_node
    out["used_batch_hint"] = cycle.used_batch_hint
    if fwk_profile is not None:
        out["omitted_default_plugins"] = list(fwk_profile.omitted_default_plugins)
    passes = [sr for sr in (cycle.scores, cycle.unsampled_scores) if sr is not None]
    weights = passes[0].weights if passes else {}
    out["weights"] = weights
    # the decision's scores, and for feasible nodes it did not score, explain's own pass
    score_at: dict[int, tuple[ScoreResult, int]] = {}
    for sr in reversed(passes):
        score_at.update({int(c): (sr, i) for i, c in enumerate(sr.cols.tolist())})
    sampled = set(cycle.sampled.tolist()) if cycle.sampled is not None else set()
    nodes: list[dict[str, Any]] = []
    diag = cycle.diagnosis
    for col, node in enumerate(snap.nodes):
        status = diag.node_status(col) if diag is not None else None
        feasible = bool(diag.feasible[col]) if diag is not None else False
        entry: dict[str, Any] = {
            "node": node.name,
            "feasible": feasible,
            "reasons": [] if feasible or status is None else list(status.reasons),
            "rejected_by": None if feasible or status is None else (status.plugin or None),
            "code": None if feasible or status is None else status.code.label,
            "scored": col in sampled,
            "scores": {},
            "weighted": {},
            "total": None,
        }
        entry.update(cycle.node_details.get(node.name, {}))
        if col in score_at:
            sr, i = score_at[col]
            for name, arr in sr.per_plugin.items():
                entry["scores"][name] = int(arr[i])
                entry["weighted"][name] = int(arr[i]) * weights[name]
            entry["total"] = int(sr.totals[i])
        nodes.append(entry)
    out["nodes"] = nodes
    return out


def node_verdicts(cycle: CycleResult, snap: Snapshot) -> list[dict[str, Any]]:
    """Every node's filter verdict in ``cycle`` (explain's ``nodes`` without the scores): feasible or not, and for a
    rejected node the first rejecting plugin's reasons and code."""
    diag = cycle.diagnosis
    out: list[dict[str, Any]] = []
    for col, node in enumerate(snap.nodes):
        status = diag.node_status(col) if diag is not None else None
        feasible = bool(diag.feasible[col]) if diag is not None else False
        rejected = not feasible and status is not None
        out.append(
            {
                "node": node.name,
                "feasible": feasible,
                "reasons": list(status.reasons) if rejected and status is not None else [],
                "rejected_by": (status.plugin or None) if rejected and status is not None else None,
                "code": status.code.label if rejected and status is not None else None,
            }
        )
    return out


def preemption_json(pod_key: str, cycles: Sequence[CycleResult], events: Sequence[Event]) -> dict[str, Any] | None:
    """The pod's first attempt that nominated a node (preemption): which attempt, the node, the pods it evicted
    (``preempted`` events naming it), and that attempt's message; None when no attempt nominated one."""
    for i, cycle in enumerate(cycles):
        if cycle.nominated_node is None:
            continue
        victims = sorted({e.pod for e in events if e.kind == "preempted" and e.by == pod_key})
        return {"attempt": i + 1, "nominated_node": cycle.nominated_node, "victims": victims, "message": cycle.message}
    return None


# -- tables --------------------------------------------------------------------------------------------------


def _fmt(name: str, amount: int) -> str:
    return format_quantity(name, amount)


def print_simulation(console: Console, result: SimResult, limit: int = 200, warnings_to: Console | None = None) -> None:
    """The tables; the warnings go to ``warnings_to`` (standard error, say) when given."""
    recs = result.records
    table = Table(title=f"Placements ({len(recs)} pods)")
    for col in ("pod", "node", "phase", "reason"):
        table.add_column(col, overflow="fold")
    for rec in recs[:limit]:
        table.add_row(
            rec.pod.key,
            rec.node or "-",
            rec.phase,
            "" if rec.phase in (RUNNING, SUCCEEDED) else (rec.reason or ""),
        )
    console.print(table)
    if len(recs) > limit:
        console.print(f"... {len(recs) - limit} more pods (use -o json, or --limit)")
    print_events(console, result.events, limit)
    print_usage(console, result.snapshot, limit, result.dra)
    pending = [r for r in recs if r.phase == PENDING]
    if pending:
        pt = Table(title=f"Pending pods ({len(pending)})")
        pt.add_column("pod")
        pt.add_column("reason", overflow="fold")
        for rec in pending:
            pt.add_row(rec.pod.key, rec.reason or "")
        console.print(pt)
    s = summary(result)
    console.print("Summary: " + ", ".join(f"{k} {v}" for k, v in s.items()))
    for w in result.warnings:
        (warnings_to or console).print(f"[yellow]warning:[/yellow] {escape(w)}", highlight=False, soft_wrap=True)


def print_events(console: Console, events: list[Event], limit: int = 200) -> None:
    """The simulation's history: one row per event, in order (time in virtual seconds, as a Go duration)."""
    table = Table(title=f"Events ({len(events)})")
    table.add_column("time", justify="right")
    table.add_column("kind")
    for col in ("pod", "node"):
        table.add_column(col, overflow="fold")
    table.add_column("by / reason", overflow="fold")
    for e in events[:limit]:
        detail = "; ".join(x for x in (f"by {e.by}" if e.by else None, e.reason) if x)
        table.add_row(format_duration(e.time), e.kind, e.pod, e.node or "-", detail)
    console.print(table)
    if len(events) > limit:
        console.print(f"... {len(events) - limit} more events (use -o json, or --limit)")


def print_usage(console: Console, snap: Snapshot, limit: int = 200, dra: DraObjects | None = None) -> None:
    devices = device_allocatable(snap, dra)
    names = [r for r, row in snap.row.items() if bool(np.any(snap.alloc[row] > 0)) or row in devices]
    names = [CPU, MEMORY] + [n for n in names if n not in (CPU, MEMORY)]
    table = Table(title="Per-node utilisation (requested / allocatable)")
    table.add_column("node")
    table.add_column("pods", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    for col, node in enumerate(snap.nodes[:limit]):
        cells = [node.name, f"{int(snap.pod_count[col])}/{int(snap.allowed_pods[col])}"]
        for name in names:
            row = snap.row[name]
            a = int(devices[row][col]) if row in devices else int(snap.alloc[row, col])
            r = int(snap.requested[row, col])
            cells.append("-" if a == 0 and r == 0 else f"{_fmt(name, r)}/{_fmt(name, a)} ({_pct(r, a) or 0:.0f}%)")
        table.add_row(*cells)
    console.print(table)
    if snap.n > limit:
        console.print(f"... {snap.n - limit} more nodes")


def print_explain(console: Console, data: dict[str, Any]) -> None:
    at = f", at {format_duration(data['at'])}" if data.get("at") is not None else ""
    console.print(f"Pod [bold]{data['pod']}[/bold] (attempts: {data['attempts']}{at})")
    if data.get("omitted_default_plugins"):
        console.print("Default plugins not simulated: " + ", ".join(data["omitted_default_plugins"]))
    plugins = list(data.get("weights", {}))
    table = Table(title="Nodes")
    table.add_column("node")
    table.add_column("feasible")
    table.add_column("reasons", overflow="fold")
    for p in plugins:
        table.add_column(f"{p} (x{data['weights'][p]})", justify="right")
    table.add_column("total", justify="right")
    for n in data["nodes"]:
        cells = [n["node"], "yes" if n["feasible"] else "no", ", ".join(n["reasons"])]
        for p in plugins:
            cells.append(str(n["scores"].get(p, "")) if p in n["scores"] else "")
        cells.append("" if n["total"] is None else str(n["total"]))
        table.add_row(*cells)
    console.print(table)
    if data.get("waiting"):
        console.print(f"Assumed on node [bold]{data['selected']}[/bold], {escape(data['reason'] or '')}")
    elif data.get("selected"):
        console.print(f"Selected node: [bold green]{data['selected']}[/bold green]")
    else:
        console.print(f"[bold red]Not scheduled[/bold red]: {data.get('reason')}")
    if data.get("nominated_node"):
        console.print(f"Nominated node (preemption): {data['nominated_node']}")
