"""Workloads (Deployment, ReplicaSet, StatefulSet, Job, ReplicationController): read, and expanded into the pods
(and, for a StatefulSet, the claims) their controllers would create.

A workload read back from an API server (``metadata.creationTimestamp`` set: ``kubectl get -o yaml``, a packsched
snapshot) has its pods in the input already, as Pods owned by it: they are not made again.
"""

from __future__ import annotations

from dataclasses import replace

from packsched.api import schema
from packsched.api.annotations import read_timing
from packsched.api.cluster import Workload
from packsched.api.decode import Reader
from packsched.api.decoding import DecodeContext
from packsched.api.names import int32_errors
from packsched.api.objects import LabelSelector, OwnerRef, Pod, PodVolume
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
}

# Where a workload's pods' spec is written (errors about a pod it makes are reported there).
TEMPLATE_SPEC = "spec.template.spec"


def decode_workload(ctx: DecodeContext) -> None:
    """The decoder of every workload kind: the Workload, then the pods it makes (unless read back)."""
    r, kind, ns = ctx.r, ctx.kind, ctx.namespace
    spec = r.fields(ctx.data.get("spec"), "spec", SPEC_FIELDS[kind])
    template, _ = template_pod(r, spec.get("template"), "spec.template", ns)
    read_timing(r, template, "spec.template.metadata.annotations")
    claim_templates = _claim_templates(r, spec.get("volumeClaimTemplates"), template, ns)
    read_back = bool(ctx.meta.get("creationTimestamp"))
    count, completions, parallelism = _pod_count(r, kind, spec, read_back)
    workload = Workload(
        kind,
        ctx.name,
        ns,
        count,
        template,
        ctx.where,
        completions,
        max(parallelism, 0),
        claim_templates=claim_templates,
        selector=_selector(r, kind, spec.get("selector"), template),
    )
    ctx.cluster.workloads.append(workload)
    for i in range(0 if read_back else count):
        pod = instantiate(template, kind, ctx.name, i)
        pod.source = ctx.where
        ctx.add_pod(pod, TEMPLATE_SPEC)
        ctx.reading.made_claims.extend(statefulset_claim(claim, pod) for claim in claim_templates)


def _pod_count(r: Reader, kind: str, spec: dict[str, object], read_back: bool) -> tuple[int, int | None, int]:
    """How many pods the workload runs at once, and a Job's completions and parallelism."""
    completions: int | None = None
    parallelism = 0
    if kind == "Job":
        # The Job controller runs min(parallelism, completions) pods at once (parallelism alone without
        # completions); a suspended Job runs none.
        parallelism = r.int(spec.get("parallelism"), "spec.parallelism", 1) or 0
        completions = r.int(spec.get("completions"), "spec.completions")
        if completions is not None and completions < 0:  # else reported below at spec.parallelism
            r.errors.add("spec.completions", "must be greater than or equal to 0")
            completions = 0
        count = parallelism if completions is None else min(parallelism, completions)
        if r.bool(spec.get("suspend"), "spec.suspend"):
            count = parallelism = 0
    else:
        count = r.int(spec.get("replicas"), "spec.replicas", 1) or 0
    count_path = "spec.replicas" if kind != "Job" else "spec.parallelism"
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


def _selector(r: Reader, kind: str, raw: object, template: Pod) -> LabelSelector | None:
    """``spec.selector``, which must select the template's pods (a Job may omit it)."""
    selector: LabelSelector | None = None
    if kind == "ReplicationController":
        # a plain map; defaulted from the template's labels when absent
        labels = r.str_map(raw, "spec.selector") if raw is not None else dict(template.labels)
        raw = labels
        selector = LabelSelector(tuple(sorted(labels.items())))
    elif kind != "Job" and raw is None:
        r.errors.add("spec.selector", "Required value")
    if selector is None and raw is not None:
        selector = decode_label_selector(r, raw, "spec.selector")
    if selector is not None:
        if selector.empty and kind != "Job":
            r.errors.add("spec.selector", "Invalid value: empty selector is invalid for deployment")
        elif not selector.matches(template.labels):
            r.errors.add("spec.template.metadata.labels", "Invalid value: `selector` does not match template `labels`")
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
        out.append(decode_claim_template(r, item, p, name, ns))
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
