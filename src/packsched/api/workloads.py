"""Workloads (Deployment, ReplicaSet, StatefulSet, Job, ReplicationController, DaemonSet, CronJob): read, and
expanded into the pods (and, for a StatefulSet, the claims) their controllers would create.

A workload read back from an API server (``metadata.creationTimestamp`` set: ``kubectl get -o yaml``, a packsched
snapshot) has its pods in the input already, as Pods owned by it: they are not made again. A DaemonSet's pods are
made once every node is read (one per eligible node that has none yet, read back or not, as its controller does);
a CronJob's Jobs are made by the simulator, at the times of its schedule.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from packsched.api import schema
from packsched.api.annotations import read_timing
from packsched.api.cluster import CronJob, Workload
from packsched.api.cron import Schedule, ScheduleError, parse_schedule
from packsched.api.decode import Reader
from packsched.api.decoding import DecodeContext, in_document
from packsched.api.names import int32_errors
from packsched.api.objects import (
    NO_EXECUTE,
    NO_SCHEDULE,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeSelectorTerm,
    OwnerRef,
    Pod,
    PodVolume,
    Requirement,
    Toleration,
)
from packsched.api.pods import decode_label_selector, template_pod
from packsched.api.storage import PersistentVolumeClaim, decode_claim_template

# The most pods one workload may be expanded into (a simulator's sanity bound, far above real controllers).
MAX_WORKLOAD_PODS = 1_000_000

# Each workload kind's spec fields.
SPEC_FIELDS: dict[str, tuple[str, ...]] = {
    "Deployment": schema.DEPLOYMENT_SPEC,
    "ReplicaSet": schema.REPLICASET_SPEC,
    "StatefulSet": schema.STATEFULSET_SPEC,
    "Job": schema.JOB_SPEC,
    "ReplicationController": schema.REPLICATION_CONTROLLER_SPEC,
    "DaemonSet": schema.DAEMONSET_SPEC,
}

# Where a workload's pods' spec is written (errors about a pod it makes are reported there).
TEMPLATE_SPEC = "spec.template.spec"


def decode_workload(ctx: DecodeContext) -> None:
    """The decoder of every workload kind: the Workload, then the pods it makes (unless read back)."""
    r, kind, ns = ctx.r, ctx.kind, ctx.namespace
    spec = r.fields(ctx.data.get("spec"), "spec", SPEC_FIELDS[kind])
    workload = _workload(r, kind, ctx.name, ns, spec, "spec", bool(ctx.meta.get("creationTimestamp")), ctx.where)
    ctx.cluster.workloads.append(workload)
    if kind == "DaemonSet":
        workload.position = len(ctx.cluster.pods)
        ctx.reading.daemon_sets.append((workload, ctx.r.errors.file, ctx.label))
        ctx.reading.templates.append((workload.template, ctx.r.errors.file, in_document(ctx.label, TEMPLATE_SPEC)))
        return
    for i in range(0 if bool(ctx.meta.get("creationTimestamp")) else workload.replicas):
        pod = instantiate(workload.template, kind, ctx.name, i)
        pod.source = ctx.where
        ctx.add_pod(pod, TEMPLATE_SPEC)
        ctx.reading.made_claims.extend(statefulset_claim(claim, pod) for claim in workload.claim_templates)


def _workload(
    r: Reader, kind: str, name: str, ns: str, spec: dict[str, object], path: str, read_back: bool, where: str
) -> Workload:
    """The Workload of a spec at ``path`` (``spec``; ``spec.jobTemplate.spec`` for a CronJob's Jobs)."""
    template, _ = template_pod(r, spec.get("template"), f"{path}.template", ns)
    read_timing(r, template, f"{path}.template.metadata.annotations")
    claim_templates = _claim_templates(r, spec.get("volumeClaimTemplates"), template, ns)
    count, completions, parallelism = _pod_count(r, kind, spec, read_back, path)
    if kind == "DaemonSet":
        add_daemon_tolerations(template, _host_network(spec.get("template")))
    return Workload(
        kind,
        name,
        ns,
        count,
        template,
        where,
        completions,
        max(parallelism, 0),
        claim_templates=claim_templates,
        selector=_selector(r, kind, spec.get("selector"), template, path),
    )


def _host_network(raw: object) -> bool:
    spec = raw.get("spec") if isinstance(raw, dict) else None
    return isinstance(spec, dict) and spec.get("hostNetwork") is True


def _pod_count(
    r: Reader, kind: str, spec: dict[str, object], read_back: bool, path: str = "spec"
) -> tuple[int, int | None, int]:
    """How many pods the workload runs at once, and a Job's completions and parallelism."""
    completions: int | None = None
    parallelism = 0
    if kind == "Job":
        # The Job controller runs min(parallelism, completions) pods at once (parallelism alone without
        # completions); a suspended Job runs none.
        parallelism = r.int(spec.get("parallelism"), f"{path}.parallelism", 1) or 0
        completions = r.int(spec.get("completions"), f"{path}.completions")
        if completions is not None and completions < 0:  # else reported below at spec.parallelism
            r.errors.add(f"{path}.completions", "must be greater than or equal to 0")
            completions = 0
        count = parallelism if completions is None else min(parallelism, completions)
        if r.bool(spec.get("suspend"), f"{path}.suspend"):
            count = parallelism = 0
    elif kind == "DaemonSet":
        count = 0  # one per eligible node, made once every node is read
    else:
        count = r.int(spec.get("replicas"), f"{path}.replicas", 1) or 0
    count_path = f"{path}.replicas" if kind != "Job" else f"{path}.parallelism"
    if count < 0:
        r.errors.add(count_path, "must be greater than or equal to 0")
        count = 0
    elif int32_errors(count):
        r.errors.add(count_path, int32_errors(count)[0])
        count = 0
    elif count > MAX_WORKLOAD_PODS and not read_back:
        r.errors.add(count_path, f"packsched makes at most {MAX_WORKLOAD_PODS:,} pods of one workload, got {count:,}")
        count = 0
    return count, completions, parallelism


def _selector(r: Reader, kind: str, raw: object, template: Pod, path: str = "spec") -> LabelSelector | None:
    """``spec.selector``, which must select the template's pods (a Job may omit it)."""
    selector: LabelSelector | None = None
    if kind == "ReplicationController":
        # a plain map; defaulted from the template's labels when absent
        labels = r.str_map(raw, f"{path}.selector") if raw is not None else dict(template.labels)
        raw = labels
        selector = LabelSelector(tuple(sorted(labels.items())))
    elif kind != "Job" and raw is None:
        r.errors.add(f"{path}.selector", "Required value")
    if selector is None and raw is not None:
        selector = decode_label_selector(r, raw, f"{path}.selector")
    if selector is not None:
        if selector.empty and kind != "Job":
            r.errors.add(f"{path}.selector", "Invalid value: empty selector is invalid for deployment")
        elif not selector.matches(template.labels):
            r.errors.add(
                f"{path}.template.metadata.labels", "Invalid value: `selector` does not match template `labels`"
            )
    return selector


def _claim_templates(r: Reader, raw: object, template: Pod, ns: str) -> list[PersistentVolumeClaim]:
    """A StatefulSet's volumeClaimTemplates; each becomes a volume of the pod template (replacing a volume of the
    same name, as the StatefulSet controller does)."""
    out: list[PersistentVolumeClaim] = []
    for i, item in enumerate(r.list(raw, "spec.volumeClaimTemplates")):
        p = f"spec.volumeClaimTemplates[{i}]"
        meta = r.map(r.map(item, p).get("metadata"), f"{p}.metadata")
        name = r.str(meta.get("name"), f"{p}.metadata.name")
        if not name:
            r.errors.add(f"{p}.metadata.name", "Required value")
        out.append(decode_claim_template(r, item, p, name, ns, schema.STATEFULSET_CLAIM_TEMPLATE))
    names = {c.name for c in out}
    template.volumes = [v for v in template.volumes if v.name not in names] + [
        PodVolume(c.name, "persistentVolumeClaim", from_template=True) for c in out
    ]
    return out


def instantiate(template: Pod, kind: str, owner: str, index: int) -> Pod:
    """One pod of a workload, named ``<owner>-<index>`` (StatefulSet pods are named so in Kubernetes too)."""
    pod = Pod(**{**template.__dict__})
    pod.name = f"{owner}-{index}"
    pod.labels = dict(template.labels)
    pod.annotations = dict(template.annotations)
    pod.owner = OwnerRef(kind, owner)
    if kind == "StatefulSet":
        pod.labels.setdefault("statefulset.kubernetes.io/pod-name", pod.name)
        pod.volumes = [
            replace(v, claim_name=f"{v.name}-{pod.name}") if v.from_template else v for v in template.volumes
        ]
    return pod


def statefulset_claim(template: PersistentVolumeClaim, pod: Pod) -> PersistentVolumeClaim:
    """The claim the StatefulSet controller makes from ``template`` for ``pod``: ``<template>-<pod>``, with the
    template's labels and the pod's StatefulSet labels."""
    return replace(
        template,
        name=f"{template.name}-{pod.name}",
        labels=dict(template.labels),
        annotations=dict(template.annotations),
        source=pod.source,
    )


# -- DaemonSet ----------------------------------------------------------------------------------------------------

# The tolerations the DaemonSet controller gives every pod it makes (AddOrUpdateDaemonPodTolerations), so that a
# node's conditions and a cordon do not keep its pods off; network-unavailable only for hostNetwork pods.
DAEMON_TOLERATIONS = (
    Toleration("node.kubernetes.io/not-ready", "Exists", "", NO_EXECUTE),
    Toleration("node.kubernetes.io/unreachable", "Exists", "", NO_EXECUTE),
    Toleration("node.kubernetes.io/disk-pressure", "Exists", "", NO_SCHEDULE),
    Toleration("node.kubernetes.io/memory-pressure", "Exists", "", NO_SCHEDULE),
    Toleration("node.kubernetes.io/pid-pressure", "Exists", "", NO_SCHEDULE),
    Toleration("node.kubernetes.io/unschedulable", "Exists", "", NO_SCHEDULE),
)
NETWORK_UNAVAILABLE = Toleration("node.kubernetes.io/network-unavailable", "Exists", "", NO_SCHEDULE)


def add_daemon_tolerations(template: Pod, host_network: bool) -> None:
    wanted = DAEMON_TOLERATIONS + ((NETWORK_UNAVAILABLE,) if host_network else ())
    template.tolerations = list(template.tolerations) + [t for t in wanted if t not in template.tolerations]


def _term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    if not term.match_expressions and not term.match_fields:
        return False
    fields = {"metadata.name": node.name}
    return all(r.matches(node.labels) for r in term.match_expressions) and all(
        r.matches(fields) for r in term.match_fields
    )


def daemon_fits(template: Pod, node: Node) -> tuple[bool, bool]:
    """The DaemonSet controller's own check of a node (its ``predicates``): whether it should run a pod there (the
    template's nodeSelector and required node affinity match, and every NoSchedule and NoExecute taint is
    tolerated), and whether a pod already there should keep running (only NoExecute taints count)."""
    if template.node_name and template.node_name != node.name:
        return False, False
    if any(node.labels.get(k) != v for k, v in template.node_selector.items()):
        return False, False
    required = template.node_affinity.required if template.node_affinity is not None else None
    if required is not None and not any(_term_matches(t, node) for t in required):
        return False, False

    def untolerated(effects: tuple[str, ...]) -> bool:
        return any(
            t.effect in effects and not any(tol.tolerates(t) for tol in template.tolerations) for t in node.taints
        )

    return not untolerated((NO_SCHEDULE, NO_EXECUTE)), not untolerated((NO_EXECUTE,))


def daemon_pod(w: Workload, node: str) -> Pod:
    """The pod the DaemonSet controller makes for ``node``: named ``<daemonset>-<node>``, with its required node
    affinity replaced by ``matchFields metadata.name In [node]`` (ReplaceDaemonSetPodNodeNameNodeAffinity; the
    preferred terms stay), and scheduled by the scheduler."""
    pod = instantiate(w.template, w.kind, w.name, 0)
    pod.name = f"{w.name}-{node}"
    term = NodeSelectorTerm(match_fields=(Requirement("metadata.name", "In", (node,)),))
    preferred = w.template.node_affinity.preferred if w.template.node_affinity is not None else ()
    pod.node_affinity = NodeAffinity((term,), preferred)
    pod.node_name = ""
    return pod


def daemon_node(pod: Pod) -> str:
    """The node a DaemonSet's pod is for: its nodeName, or its required node affinity's ``metadata.name``."""
    if pod.node_name:
        return pod.node_name
    required = pod.node_affinity.required if pod.node_affinity is not None else None
    for term in required or ():
        for req in term.match_fields:
            if req.key == "metadata.name" and req.operator == "In" and len(req.values) == 1:
                return req.values[0]
    return ""


def owned_by(pod: Pod, kind: str, name: str) -> bool:
    if pod.owner is not None:
        return pod.owner.kind == kind and pod.owner.name == name
    return any(ref.controller and ref.kind == kind and ref.name == name for ref in pod.owner_refs)


# -- CronJob ------------------------------------------------------------------------------------------------------

CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")


def decode_cron_job(ctx: DecodeContext) -> None:
    """A CronJob: its schedule and its jobTemplate, read as a Job's (the simulator makes the Jobs)."""
    r, ns = ctx.r, ctx.namespace
    spec = r.fields(ctx.data.get("spec"), "spec", schema.CRONJOB_SPEC)
    text = r.str(spec.get("schedule"), "spec.schedule")
    schedule = Schedule()
    if not text:
        r.errors.add("spec.schedule", "Required value")
    else:
        try:
            schedule = parse_schedule(text)
        except ScheduleError as exc:
            r.errors.add("spec.schedule", f"Invalid value: {text!r}: {exc}")
    zone: tzinfo = UTC
    zone_name = r.str(spec.get("timeZone"), "spec.timeZone")
    if zone_name:
        try:
            zone = ZoneInfo(zone_name)
        except (ZoneInfoNotFoundError, ValueError):
            r.errors.add("spec.timeZone", f"Invalid value: {zone_name!r}: unknown time zone {zone_name}")
    deadline = r.int(spec.get("startingDeadlineSeconds"), "spec.startingDeadlineSeconds")
    if deadline is not None and deadline < 0:
        r.errors.add("spec.startingDeadlineSeconds", "must be greater than or equal to 0")
    policy = r.one_of(spec.get("concurrencyPolicy"), "spec.concurrencyPolicy", CONCURRENCY_POLICIES, "Allow")
    job_template = r.fields(spec.get("jobTemplate"), "spec.jobTemplate", schema.JOB_TEMPLATE)
    if spec.get("jobTemplate") is None:
        r.errors.add("spec.jobTemplate", "Required value")
    job_spec = r.fields(job_template.get("spec"), "spec.jobTemplate.spec", schema.JOB_SPEC)
    job = _workload(r, "Job", "", ns, job_spec, "spec.jobTemplate.spec", False, ctx.where)
    job.cron_job = ctx.name
    spec_path = in_document(ctx.label, "spec.jobTemplate.spec.template.spec")
    ctx.reading.templates.append((job.template, ctx.r.errors.file, spec_path))
    ctx.cluster.cron_jobs.append(
        CronJob(
            ctx.name,
            ns,
            schedule,
            zone,
            job,
            r.bool(spec.get("suspend"), "spec.suspend"),
            policy,
            None if deadline is None else float(max(deadline, 0)),
            ctx.where,
        )
    )
