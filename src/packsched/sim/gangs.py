"""``packsched gangs``: per gang after a simulation, when its job could start and when it did, how long its placed
members held devices while waiting at Permit for the rest, how often their wait timed out, and (scheduler-plugins'
PodGroups) the status the PodGroup controller would write (phase, occupiedBy).

A gang is one of (:func:`gangs_of`, in this order):

- a scheduler-plugins PodGroup (``scheduling.x-k8s.io/v1alpha1``, Coscheduling): the pods labelled with its name in
  its namespace, ``minMember``;
- with ``--kube-version 1.35``, a pod group of a ``Workload`` (``scheduling.k8s.io/v1alpha1``) whose policy is
  ``gang``, once per replica key its pods name (``spec.workloadRef``), ``minCount``;
- with 1.36, a ``PodGroup`` of ``scheduling.k8s.io/v1alpha2`` whose policy is ``gang``: the pods naming it in
  ``spec.schedulingGroup``, ``minCount``; with 1.37 the same of ``scheduling.k8s.io/v1beta1``.

``basic`` pod groups are no gangs and are not reported. Below, ``minMember`` stands for ``minCount`` too.

Definitions (all times virtual seconds):

- *submitted*: when the group's first member pod was created (not before the PodGroup / Workload itself, unless
  the gang started before that: it had no effect);
- *started*: when the ``minMember``-th member was bound (members are bound together once the gang is complete);
  none if that never happened;
- *wait*: started - submitted;
- *held at Permit*: for each member, each stretch between being held at Permit and the end of that wait (bound,
  rejected, timed out, or the end of the simulation), times its GPUs (api/resources.py ``is_gpu``): GPU-seconds
  that were reserved and idle.
- *in partial gangs*: GPU-seconds of members bound while fewer than ``minMember`` of their group were bound (a
  training job cannot start until all its workers run): what scheduling pod by pod wastes, and what Coscheduling
  and GangScheduling avoid (they bind a gang only whole; they waste what they hold at Permit instead).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from packsched.api.annotations import format_duration
from packsched.api.cluster import Cluster
from packsched.api.gangs import (
    POD_GROUP_API_VERSIONS,
    PodGroup,
    first_owners,
    occupied_by,
    pod_group_name,
    pod_group_status,
)
from packsched.api.objects import Pod
from packsched.api.podgroups import POD_GROUP_API_VERSION, POD_GROUP_API_VERSION_1_37, WORKLOAD_API_VERSION
from packsched.api.resources import gpu_count
from packsched.config.types import KubeSchedulerConfiguration
from packsched.config.versions import KubeVersion
from packsched.framework.interface import WaitingPodView
from packsched.sim import report
from packsched.sim.engine import (
    COMPLETED,
    DELETED_EVENT,
    EVICTED_EVENT,
    PENDING,
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


COSCHEDULING_API_VERSION = POD_GROUP_API_VERSIONS[0]


def _enables(cfg: KubeSchedulerConfiguration, plugin: str) -> bool:
    return any(
        any(ref.name == plugin for ref in [*p.plugins.at("permit").enabled, *p.plugins.multi_point.enabled])
        for p in cfg.profiles
    )


def coscheduling_enabled(cfg: KubeSchedulerConfiguration) -> bool:
    """Whether a profile runs Coscheduling's Permit (through multiPoint or the permit point)."""
    return _enables(cfg, "Coscheduling")


def gang_scheduling_enabled(cfg: KubeSchedulerConfiguration) -> bool:
    """Whether kube-scheduler's own GangScheduling runs: GenericWorkload on (the pods keep their group
    reference) and a profile runs the plugin's Permit."""
    return cfg.kube_version.generic_workload and _enables(cfg, "GangScheduling")


@dataclass(frozen=True)
class Gang:
    """A group of pods the report follows. ``name``: the PodGroup's name, or ``workload/podGroup[/replicaKey]``
    for a pod group of a 1.35 Workload; ``kind`` and ``api_version``: the object that defines it; ``pod_group``:
    the scheduler-plugins PodGroup (whose status its controller writes), None for kube-scheduler's own; ``basic``:
    a kube-scheduler pod group with the ``basic`` policy (no gang: listed only on request)."""

    namespace: str
    name: str
    kind: str
    api_version: str
    min_member: int
    created: float
    pod_group: PodGroup | None = None
    basic: bool = False

    @property
    def key(self) -> str:
        """Unique among the gangs: the API group tells the two PodGroup kinds apart."""
        return f"{self.api_version}/{self.namespace}/{self.name}"


def owner_names(pod: Pod) -> list[str]:
    """The names in the pod's ``metadata.ownerReferences`` (for a pod packsched expands from a workload, its
    workload)."""
    if pod.owner_refs:
        return [o.name for o in pod.owner_refs]
    return [pod.owner.name] if pod.owner is not None else []


def _coscheduling_name(pod: Pod) -> str:
    return pod_group_name(pod)


def _workload_name(pod: Pod) -> str:
    ref = pod.workload_ref
    if ref is None:
        return ""
    return f"{ref.name}/{ref.pod_group}" + (f"/{ref.replica_key}" if ref.replica_key else "")


def _scheduling_group_name(pod: Pod) -> str:
    return pod.scheduling_group or ""


def _coscheduling_gangs(cluster: Cluster, pods: Iterable[Pod]) -> list[Gang]:
    return [
        Gang(g.namespace, g.name, "PodGroup", COSCHEDULING_API_VERSION, g.min_member, g.created, g)
        for g in cluster.pod_groups
    ]


def _workload_gangs(cluster: Cluster, pods: Iterable[Pod]) -> list[Gang]:
    """1.35: one per pod group of each Workload and replica key among ``pods`` (the key "" when none names one)."""
    replicas: dict[tuple[str, str, str], set[str]] = {}
    for pod in pods:
        ref = pod.workload_ref
        if ref is not None:
            replicas.setdefault((pod.namespace, ref.name, ref.pod_group), set()).add(ref.replica_key)
    out = []
    for w in cluster.scheduling_workloads:
        for group, policy in w.pod_groups.items():
            for rk in sorted(replicas.get((w.namespace, w.name, group), {""})):
                name = f"{w.name}/{group}" + (f"/{rk}" if rk else "")
                need, basic = policy.min_count or 1, policy.min_count is None
                out.append(Gang(w.namespace, name, "Workload", WORKLOAD_API_VERSION, need, w.created, None, basic))
    return out


def _pod_group_gangs_of(api_version: str) -> Callable[[Cluster, Iterable[Pod]], list[Gang]]:
    """1.36 (v1alpha2) / 1.37 (v1beta1): one per ``scheduling.k8s.io`` PodGroup of ``api_version``."""

    def gangs(cluster: Cluster, pods: Iterable[Pod]) -> list[Gang]:
        return [
            Gang(
                g.namespace,
                g.name,
                "PodGroup",
                api_version,
                g.policy.min_count or 1,
                g.created,
                None,
                not g.policy.gang,
            )
            for g in cluster.scheduling_pod_groups
            if g.api_version == api_version
        ]

    return gangs


@dataclass(frozen=True)
class _GangSource:
    """One kind of gang: the object's kind, the releases (minor versions) that read it, the groups the manifests
    define, the group a pod names ("": none)."""

    kind: str
    minors: range
    gangs: Callable[[Cluster, Iterable[Pod]], list[Gang]]
    named_by: Callable[[Pod], str]


# The kinds of gang, in the order the report lists them (api_version -> its source). A pod's field counts whatever
# the feature gates say: with GenericWorkload off the API server would drop it, and the report warns that those gangs
# had no effect.
_SOURCES: dict[str, _GangSource] = {
    COSCHEDULING_API_VERSION: _GangSource("PodGroup", range(0, 1000), _coscheduling_gangs, _coscheduling_name),
    WORKLOAD_API_VERSION: _GangSource("Workload", range(35, 36), _workload_gangs, _workload_name),
    POD_GROUP_API_VERSION: _GangSource(
        "PodGroup", range(36, 37), _pod_group_gangs_of(POD_GROUP_API_VERSION), _scheduling_group_name
    ),
    POD_GROUP_API_VERSION_1_37: _GangSource(
        "PodGroup", range(37, 1000), _pod_group_gangs_of(POD_GROUP_API_VERSION_1_37), _scheduling_group_name
    ),
}


def _member_key(api_version: str, pod: Pod) -> str | None:
    name = _SOURCES[api_version].named_by(pod)
    return f"{api_version}/{pod.namespace}/{name}" if name else None


def gangs_of(cluster: Cluster, version: KubeVersion, pods: Iterable[Pod] = (), basic: bool = False) -> list[Gang]:
    """The gangs of the manifests, in their order: scheduler-plugins' PodGroups, then kube-scheduler's own gangs
    of the release imitated (1.35: each pod group of a Workload with a ``gang`` policy, once per replica key among
    ``pods``; 1.36: each ``scheduling.k8s.io`` PodGroup with a ``gang`` policy); with ``basic``, their ``basic``
    pod groups too."""
    pods = list(pods)
    out: list[Gang] = []
    for source in _SOURCES.values():
        if version.minor in source.minors:
            out.extend(g for g in source.gangs(cluster, pods) if basic or not g.basic)
    return out


def gang_warnings(gangs: Sequence[Gang], cfg: KubeSchedulerConfiguration) -> list[str]:
    """Why some gangs had no effect: Coscheduling's PodGroups without Coscheduling, kube-scheduler's own gangs
    without GangScheduling."""
    out = []
    if any(g.pod_group is not None for g in gangs) and not coscheduling_enabled(cfg):
        out.append(
            "no profile enables Coscheduling at Permit: the PodGroups have no effect (pods are scheduled one by one)"
        )
    own = sorted({f"{g.kind}s ({g.api_version})" for g in gangs if g.pod_group is None})
    if own and not gang_scheduling_enabled(cfg):
        gates = "gate GenericWorkload" if cfg.kube_version.minor >= 37 else "gates GenericWorkload and GangScheduling"
        out.append(
            f"kube-scheduler {cfg.kube_version} runs no GangScheduling (it needs the feature {gates}): the "
            f"{', '.join(own)} have no effect (pods are scheduled one by one)"
        )
    return out


def gang_rows(gangs: Sequence[Gang], result: SimResult) -> list[dict[str, Any]]:
    """One entry per gang, in the order of :func:`gangs_of`."""
    return gang_rows_of(gangs, result.records, result.events, result.end_time)


def gang_rows_of(
    gangs: Sequence[Gang], records: Sequence[PodRecord], all_events: Sequence[Event], end_time: float
) -> list[dict[str, Any]]:
    """:func:`gang_rows` from a simulation's records and events so far (a scenario's step)."""
    kinds = {g.api_version for g in gangs}
    members: dict[str, list[PodRecord]] = {}
    for rec in records:
        for api_version in kinds:
            key = _member_key(api_version, rec.pod)
            if key is not None:
                members.setdefault(key, []).append(rec)
    events: dict[str, list[Event]] = {}
    for e in all_events:
        events.setdefault(e.pod, []).append(e)
    out: list[dict[str, Any]] = []
    for group in gangs:
        recs = members.get(group.key, [])
        latest = {r.pod.key: r for r in recs}  # a re-created pod's newest record
        phases = [_phase(r) for r in latest.values()]
        phase: str | None = None
        occupied: str | None = None
        if group.pod_group is not None:
            owners = first_owners(
                (r.pod.name, occupied_by(r.pod.namespace, owner_names(r.pod))) for r in latest.values()
            )
            status = pod_group_status(group.pod_group, phases, owners)
            phase, occupied = status.phase, status.occupied_by or None
        first = min((r.created for r in recs), default=group.created)
        submitted = max(group.created, first)
        bound = sorted(e.time for r in latest.values() for e in events.get(r.pod.key, []) if e.kind == SCHEDULED)
        started = bound[group.min_member - 1] if len(bound) >= group.min_member else None
        if started is not None and started < submitted:
            submitted = first  # started before its object existed (the gang had no effect): no negative wait
        held = 0.0
        timeouts = 0
        for key, rec in latest.items():
            gpus = gpu_count(rec.info.requests)
            since: float | None = None
            for e in events.get(key, []):
                if e.kind == WAITING:
                    since = e.time
                elif e.kind in (SCHEDULED, UNSCHEDULABLE):
                    if since is not None:
                        held += (e.time - since) * gpus
                        since = None
                    if e.kind == UNSCHEDULABLE and TIMEOUT_WORDS in (e.reason or ""):
                        timeouts += 1
            if since is not None:
                held += (end_time - since) * gpus
        partial = _partial_gang_gpu_seconds(group.min_member, latest, events, end_time)
        out.append(
            {
                "namespace": group.namespace,
                "name": group.name,
                "kind": group.kind,
                "api_version": group.api_version,
                "min_member": group.min_member,
                "members": len(latest),
                "phase": phase,
                "running": phases.count("Running"),
                "succeeded": phases.count("Succeeded"),
                "failed": phases.count("Failed"),
                "occupied_by": occupied,
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
    min_member: int, members: dict[str, PodRecord], events: dict[str, list[Event]], end: float
) -> float:
    """GPU-seconds of bound members while fewer than ``minMember`` of the group were bound."""
    changes: list[tuple[float, int, int]] = []  # (time, +1/-1 bound, gpus)
    for key, rec in members.items():
        gpus = gpu_count(rec.info.requests)
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
        if bound < min_member:
            total += (t - last) * held
        bound += sign
        held += sign * gpus
        last = t
    if bound < min_member:
        total += (end - last) * held
    return total


def _phase(rec: PodRecord) -> str:
    # a pod the simulator preempted, evicted or deleted is gone: the controller counts it as failed only if its
    # phase says so (preempted pods end Failed, as the kubelet reports)
    return rec.pod.phase if rec.pod.phase in ("Running", "Succeeded", "Failed") else rec.phase


def sibling_keys(cluster: Cluster, version: KubeVersion, pod_key: str) -> set[str]:
    """The keys of the manifests' pods in the same group as ``pod_key`` (itself included), by the first kind of
    group it names among those the release reads; empty for a pod in no group or not in the manifests (``explain``
    captures their cycles: a group's pods the simulation creates later, such as a Job's next pod, are not among
    them)."""
    target = cluster.pod(pod_key)
    if target is None:
        return set()
    for api_version, source in _SOURCES.items():
        if version.minor not in source.minors:
            continue
        gang_key = _member_key(api_version, target)
        if gang_key is not None:
            return {p.key for p in cluster.pods if _member_key(api_version, p) == gang_key}
    return set()


# A member's state in explain's group (at the end of the simulation, or at ``explain --at``).
PLACED, WAITING_AT_PERMIT, NOT_PLACED, NOT_CREATED, GONE = "placed", "waiting", "pending", "not created", "gone"
MEMBER_STATES = (PLACED, WAITING_AT_PERMIT, NOT_PLACED, NOT_CREATED, GONE)
# the counts' keys in explain's JSON, per state
_COUNT_KEYS = {
    PLACED: "bound",
    WAITING_AT_PERMIT: "waiting_at_permit",
    NOT_PLACED: "pending",
    NOT_CREATED: "not_created",
    GONE: "gone",
}


def _member_state(rec: PodRecord, waiting: Mapping[str, WaitingPodView]) -> str:
    if rec.pod.key in waiting:
        return WAITING_AT_PERMIT
    if rec.node is not None:
        return PLACED
    if rec.phase != PENDING:
        return GONE
    return NOT_PLACED if rec.arrived else NOT_CREATED


def group_detail(
    gangs: Sequence[Gang],
    result: SimResult,
    pod_key: str,
    version: KubeVersion,
    waiting: Mapping[str, WaitingPodView] | None = None,
) -> dict[str, Any] | None:
    """For ``explain`` of a gang member (``gangs``: :func:`gangs_of` with ``basic``): its group, how many members
    are bound (placed), held at Permit (``waiting``: the scheduler's waiting pods when the simulation stopped),
    pending, not created yet or gone, and each member's state: its node, or the reason it is not placed (the
    filters' verdicts, a PreFilter or PreEnqueue rejection, a Permit timeout) with, when its last attempt was
    captured, every node's filter verdict in that attempt. None for a pod in no gang (or in a basic pod group)."""
    recs = {r.pod.key: r for r in result.records}
    target = recs.get(pod_key)
    if target is None:
        return None
    # the first kind of group the pod names, among those the release reads
    named = ((api, _member_key(api, target.pod)) for api, src in _SOURCES.items() if version.minor in src.minors)
    api_version, gang_key = next(((api, key) for api, key in named if key is not None), ("", None))
    if gang_key is None:
        return None
    group = next((g for g in gangs if g.key == gang_key), None)
    if group is not None and group.basic:
        return None  # a basic pod group: no gang
    held = waiting or {}
    members = [r for r in recs.values() if _member_key(api_version, r.pod) == gang_key]
    name = _SOURCES[api_version].named_by(target.pod)
    kind = _SOURCES[api_version].kind
    entries: list[dict[str, Any]] = []
    counts = dict.fromkeys(_COUNT_KEYS.values(), 0)
    for r in members:
        state = _member_state(r, held)
        counts[_COUNT_KEYS[state]] += 1
        cycles = result.captured.get(r.pod.key, [])
        last = cycles[-1] if cycles else None
        verdicts = (
            report.node_verdicts(last, result.snapshot)
            if state == NOT_PLACED and last is not None and last.diagnosis is not None
            else None
        )
        entries.append(
            {
                "pod": r.pod.key,
                "phase": r.phase,
                "state": state,
                "node": held[r.pod.key].node if state == WAITING_AT_PERMIT else r.node,
                "reason": r.reason if state in (WAITING_AT_PERMIT, NOT_PLACED, GONE) else None,
                "attempts": r.attempts,
                "nodes": verdicts,
            }
        )
    return {
        "name": name,
        "namespace": target.pod.namespace,
        "kind": kind,
        "api_version": api_version,
        "exists": group is not None,
        "min_member": group.min_member if group is not None else None,
        **counts,
        "members": entries,
    }


# a member's nodes with the same verdict are listed together, at most this many by name in the table
_NODES_NAMED = 5


def _verdict_lines(nodes: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """(nodes, why) rows for one member: the nodes that reject it grouped by plugin and reasons, in the order of
    their first node; then the nodes its filters let through (then refused later: Reserve, Permit, a timeout)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for n in nodes:
        why = ("fits (filters passed)", "") if n["feasible"] else (", ".join(n["reasons"]), n["rejected_by"] or "")
        groups.setdefault(why, []).append(n["node"])
    rows = []
    for (reasons, plugin), names in groups.items():
        shown = ", ".join(names[:_NODES_NAMED]) + (
            f" (+{len(names) - _NODES_NAMED} more)" if len(names) > _NODES_NAMED else ""
        )
        rows.append((f"{len(names)}: {shown}", f"{reasons} ({plugin})" if plugin else reasons))
    return rows


def print_group(console: Console, group: dict[str, Any]) -> None:
    coscheduling = group["api_version"] == COSCHEDULING_API_VERSION
    if not group["exists"]:
        need = f"no such {group['kind']}"
    else:
        need = f"{'minMember' if coscheduling else 'minCount'} {group['min_member']}"
    api = "" if coscheduling else f" ({group['api_version']})"
    counts = f"{group['bound']} bound, {group['waiting_at_permit']} waiting at Permit, {group['pending']} pending"
    counts += "".join(f", {group[k]} {k.replace('_', ' ')}" for k in ("not_created", "gone") if group[k])
    title = f"{group['kind']}{api} {group['namespace']}/{group['name']} ({need})"
    console.print(f"{escape(title)}: {counts}", highlight=False, soft_wrap=True)
    table = Table(title=escape(f"Members of {group['namespace']}/{group['name']}"))
    for col in ("member", "state", "phase", "node", "why not placed"):
        table.add_column(col, overflow="fold")
    for m in group["members"]:
        table.add_row(m["pod"], m["state"], m["phase"], m["node"] or "-", escape(m["reason"] or ""))
    console.print(table)
    for m in group["members"]:
        if not m["nodes"]:
            continue
        where = Table(title=escape(f"Nodes for {m['pod']} in its attempt {m['attempts']}"))
        where.add_column("nodes", overflow="fold")
        where.add_column("why", overflow="fold")
        for names, why in _verdict_lines(m["nodes"]):
            where.add_row(escape(names), escape(why))
        console.print(where)


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


_API_LABELS = {
    ("PodGroup", COSCHEDULING_API_VERSION): "PodGroup x-k8s.io",
    ("Workload", WORKLOAD_API_VERSION): "Workload k8s.io",
    ("PodGroup", POD_GROUP_API_VERSION): "PodGroup k8s.io",
}


def _t(value: float | None) -> str:
    return "-" if value is None else format_duration(value)


def print_gangs(console: Console, rows: list[dict[str, Any]]) -> None:
    table = Table(title="Gangs after the simulation")
    table.add_column("group", no_wrap=True)
    table.add_column("API", no_wrap=True)
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
            _API_LABELS.get((r["kind"], r["api_version"]), r["api_version"]),
            str(r["min_member"]),
            str(r["members"]),
            r["phase"] or "-",
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
