"""``packsched gangs``: per PodGroup after a simulation, when its job could start and when it did, how long its
placed members held devices while waiting at Permit for the rest, how often their wait timed out, and the status
the PodGroup controller would write.

Definitions (all times virtual seconds):

- *submitted*: when the group's first member pod was created (not before the PodGroup itself);
- *started*: when the ``minMember``-th member was bound (members are bound together once the gang is complete);
  none if that never happened;
- *wait*: started - submitted;
- *held at Permit*: for each member, each stretch between being held at Permit and the end of that wait (bound,
  rejected, timed out, or the end of the simulation), times its GPUs (every extended resource named ``*/gpu``):
  GPU-seconds that were reserved and idle.
- *in partial gangs*: GPU-seconds of members bound while fewer than ``minMember`` of their group were bound (a
  training job cannot start until all its workers run): what scheduling pod by pod wastes, and what Coscheduling
  avoids (it binds a gang only whole; it wastes what it holds at Permit instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from packsched.api.annotations import format_duration
from packsched.api.gangs import PodGroup, pod_group_name, pod_group_status
from packsched.config.types import KubeSchedulerConfiguration
from packsched.sim.engine import (
    COMPLETED,
    DELETED_EVENT,
    EVICTED_EVENT,
    PREEMPTED_EVENT,
    SCHEDULED,
    UNSCHEDULABLE,
    WAITING,
    Event,
    PodRecord,
    SimResult,
)

_LEFT = frozenset({COMPLETED, PREEMPTED_EVENT, EVICTED_EVENT, DELETED_EVENT})

GANGS_SCHEMA = "packsched.gangs/v1"
TIMEOUT_WORDS = "rejected due to timeout after waiting"


def coscheduling_enabled(cfg: KubeSchedulerConfiguration) -> bool:
    """Whether a profile runs Coscheduling's Permit (through multiPoint or the permit point)."""
    return any(
        any(ref.name == "Coscheduling" for ref in [*p.plugins.at("permit").enabled, *p.plugins.multi_point.enabled])
        for p in cfg.profiles
    )


def _gpus(rec: PodRecord) -> int:
    return sum(v for k, v in rec.info.requests.items() if k.endswith("/gpu"))


def gang_rows(groups: Sequence[PodGroup], result: SimResult) -> list[dict[str, Any]]:
    """One entry per PodGroup, in the order the manifests list them."""
    return gang_rows_of(groups, result.records, result.events, result.end_time)


def gang_rows_of(
    groups: Sequence[PodGroup], records: Sequence[PodRecord], all_events: Sequence[Event], end_time: float
) -> list[dict[str, Any]]:
    """:func:`gang_rows` from a simulation's records and events so far (a scenario's step)."""
    members: dict[str, list[PodRecord]] = {}
    for rec in records:
        name = pod_group_name(rec.pod)
        if name:
            members.setdefault(f"{rec.pod.namespace}/{name}", []).append(rec)
    events: dict[str, list[Event]] = {}
    for e in all_events:
        events.setdefault(e.pod, []).append(e)
    out: list[dict[str, Any]] = []
    for group in groups:
        recs = members.get(group.key, [])
        latest = {r.pod.key: r for r in recs}  # a re-created pod's newest record
        status = pod_group_status(group, (_phase(r) for r in latest.values()))
        submitted = max(group.created, min((r.created for r in recs), default=group.created))
        bound = sorted(e.time for r in latest.values() for e in events.get(r.pod.key, []) if e.kind == SCHEDULED)
        started = bound[group.min_member - 1] if len(bound) >= group.min_member else None
        held = 0.0
        timeouts = 0
        for key, rec in latest.items():
            since: float | None = None
            for e in events.get(key, []):
                if e.kind == WAITING:
                    since = e.time
                elif e.kind in (SCHEDULED, UNSCHEDULABLE):
                    if since is not None:
                        held += (e.time - since) * _gpus(rec)
                        since = None
                    if e.kind == UNSCHEDULABLE and TIMEOUT_WORDS in (e.reason or ""):
                        timeouts += 1
            if since is not None:
                held += (end_time - since) * _gpus(rec)
        partial = _partial_gang_gpu_seconds(group, latest, events, end_time)
        out.append(
            {
                "namespace": group.namespace,
                "name": group.name,
                "min_member": group.min_member,
                "members": len(latest),
                "phase": status.phase,
                "running": status.running,
                "succeeded": status.succeeded,
                "failed": status.failed,
                "submitted": submitted,
                "started": started,
                "wait": None if started is None else started - submitted,
                "gpu_seconds_held_at_permit": held,
                "gpu_seconds_in_partial_gangs": partial,
                "permit_timeouts": timeouts,
            }
        )
    return out


def _partial_gang_gpu_seconds(
    group: PodGroup, members: dict[str, PodRecord], events: dict[str, list[Event]], end: float
) -> float:
    """GPU-seconds of bound members while fewer than ``minMember`` of the group were bound."""
    changes: list[tuple[float, int, int]] = []  # (time, +1/-1 bound, gpus)
    for key, rec in members.items():
        gpus = _gpus(rec)
        for e in events.get(key, []):
            if e.kind == SCHEDULED:
                changes.append((e.time, 1, gpus))
            elif e.kind in _LEFT and e.node is not None:
                changes.append((e.time, -1, gpus))
    changes.sort(key=lambda c: (c[0], -c[1]))  # at one instant, binds first: a gang bound together is whole
    total = 0.0
    bound = held = 0
    last = 0.0
    for t, sign, gpus in changes:
        if bound < group.min_member:
            total += (t - last) * held
        bound += sign
        held += sign * gpus
        last = t
    if bound < group.min_member:
        total += (end - last) * held
    return total


def _phase(rec: PodRecord) -> str:
    # a pod the simulator preempted, evicted or deleted is gone: the controller counts it as failed only if its
    # phase says so (preempted pods end Failed, as the kubelet reports)
    return rec.pod.phase if rec.pod.phase in ("Running", "Succeeded", "Failed") else rec.phase


def group_detail(groups: Sequence[PodGroup], result: SimResult, pod_key: str) -> dict[str, Any] | None:
    """For ``explain`` of a gang member: its group, how many members are bound, and each member's state at the end
    (node, or the reason it is not placed: the filters' verdicts, a PreFilter rejection, a Permit timeout)."""
    recs = {r.pod.key: r for r in result.records}
    target = recs.get(pod_key)
    if target is None:
        return None
    name = pod_group_name(target.pod)
    group = next((g for g in groups if g.namespace == target.pod.namespace and g.name == name), None)
    if not name:
        return None
    members = [r for r in recs.values() if r.pod.namespace == target.pod.namespace and pod_group_name(r.pod) == name]
    return {
        "name": name,
        "namespace": target.pod.namespace,
        "exists": group is not None,
        "min_member": group.min_member if group is not None else None,
        "bound": sum(1 for r in members if r.node is not None),
        "members": [
            {
                "pod": r.pod.key,
                "phase": r.phase,
                "node": r.node,
                "reason": None if r.node is not None else r.reason,
            }
            for r in members
        ],
    }


def print_group(console: Console, group: dict[str, Any]) -> None:
    need = "no such PodGroup" if not group["exists"] else f"minMember {group['min_member']}"
    table = Table(title=f"PodGroup {group['namespace']}/{group['name']} ({need}; {group['bound']} bound)")
    for col in ("member", "phase", "node", "why not placed"):
        table.add_column(col, overflow="fold")
    for m in group["members"]:
        table.add_row(m["pod"], m["phase"], m["node"] or "-", m["reason"] or "")
    console.print(table)


def gang_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    waits = np.asarray([r["wait"] for r in rows if r["wait"] is not None], dtype=np.float64)
    return {
        "groups": len(rows),
        "started": len(waits),
        "never_started": len(rows) - len(waits),
        "wait_mean": float(waits.mean()) if len(waits) else None,
        "wait_p50": float(np.percentile(waits, 50)) if len(waits) else None,
        "wait_p95": float(np.percentile(waits, 95)) if len(waits) else None,
        "gpu_hours_held_at_permit": sum(r["gpu_seconds_held_at_permit"] for r in rows) / 3600.0,
        "gpu_hours_in_partial_gangs": sum(r["gpu_seconds_in_partial_gangs"] for r in rows) / 3600.0,
        "permit_timeouts": sum(r["permit_timeouts"] for r in rows),
    }


def gangs_json(rows: list[dict[str, Any]], warnings: list[str]) -> dict[str, Any]:
    return {"schema": GANGS_SCHEMA, "gangs": rows, "summary": gang_summary(rows), "warnings": warnings}


def _t(value: float | None) -> str:
    return "-" if value is None else format_duration(value)


def print_gangs(console: Console, rows: list[dict[str, Any]]) -> None:
    table = Table(title="PodGroups after the simulation")
    table.add_column("group", no_wrap=True)
    for col in (
        "min",
        "pods",
        "phase",
        "submitted",
        "started",
        "wait",
        "GPU·h held at Permit",
        "GPU·h in partial gang",
        "timeouts",
    ):
        table.add_column(col, justify="right", no_wrap=True)
    for r in rows:
        table.add_row(
            f"{r['namespace']}/{r['name']}",
            str(r["min_member"]),
            str(r["members"]),
            r["phase"],
            _t(r["submitted"]),
            _t(r["started"]),
            _t(r["wait"]),
            f"{r['gpu_seconds_held_at_permit'] / 3600.0:.2f}",
            f"{r['gpu_seconds_in_partial_gangs'] / 3600.0:.2f}",
            str(r["permit_timeouts"]),
        )
    console.print(table)
    s = gang_summary(rows)
    waits = (
        f"wait mean {_t(s['wait_mean'])}, p50 {_t(s['wait_p50'])}, p95 {_t(s['wait_p95'])}" if s["started"] else "none"
    )
    console.print(
        f"{s['groups']} group(s): {s['started']} started, {s['never_started']} never started; {waits}; "
        f"{s['gpu_hours_held_at_permit']:.2f} GPU-hours held at Permit, {s['gpu_hours_in_partial_gangs']:.2f} in "
        f"partial gangs; {s['permit_timeouts']} Permit timeout(s)",
        highlight=False,
    )
