"""Objects from the API server, decoded by the same code that reads manifests for the simulator.

An API server only serves valid objects, but a newer one may carry fields this packsched does not know: those
are ignored here (the manifest reader reports them as typos). Any other problem makes the object unreadable;
the caller logs it and leaves the object out.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Protocol

from packsched.api import manifests
from packsched.api.dra import DraObjects
from packsched.api.errors import ErrorList, FieldError
from packsched.api.gangs import PodGroup
from packsched.api.manifests import Workload
from packsched.api.objects import ElasticQuota, Node, Pod, PodDisruptionBudget, PriorityClass, Service
from packsched.api.podgroups import SchedulingPodGroup, SchedulingWorkload
from packsched.api.storage import StorageObjects
from packsched.live.port import Obj, Resource, key_of

UNKNOWN_FIELD = "unknown field"
LOG = logging.getLogger("packsched.live")


class _Counts(Protocol):
    decode_errors: int


@dataclass
class Decoded:
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    elastic_quotas: list[ElasticQuota] = field(default_factory=list)
    pod_groups: list[PodGroup] = field(default_factory=list)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> labels
    services: list[Service] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    storage: StorageObjects = field(default_factory=StorageObjects)
    dra: DraObjects = field(default_factory=DraObjects)
    problems: list[FieldError] = field(default_factory=list)
    scheduling_workloads: list[SchedulingWorkload] = field(default_factory=list)
    scheduling_pod_groups: list[SchedulingPodGroup] = field(default_factory=list)


def decode(res: Resource, raw: Obj) -> Decoded:
    """Decode one object of ``res``'s kind. A Succeeded or Failed pod decodes to nothing (it holds nothing). A
    workload is read without its pods (only its selector matters here)."""
    doc = dict(raw)
    if isinstance(doc.get("spec"), dict) and "replicas" in doc["spec"]:
        doc["spec"] = {**doc["spec"], "replicas": 0}  # the manifest reader would make a pod for each replica
    doc.setdefault("apiVersion", res.api_version)
    doc.setdefault("kind", res.kind)
    where = f"{res.kind} {key_of(raw)}"
    errors = ErrorList(file=where)
    cluster = manifests.decode_document(doc, where, errors)
    out = Decoded(
        cluster.nodes,
        cluster.pods,
        cluster.pdbs,
        list(cluster.priority_classes.values()),
        cluster.elastic_quotas,
        cluster.pod_groups,
        {name: ns.labels for name, ns in cluster.namespaces.items()},
        cluster.services,
        cluster.workloads,
        cluster.storage,
        cluster.dra,
        scheduling_workloads=cluster.scheduling_workloads,
        scheduling_pod_groups=cluster.scheduling_pod_groups,
    )
    phase = (raw.get("status") or {}).get("phase")
    for pod in out.pods:  # the manifest reader leaves pods Pending; the API server says where they are
        if isinstance(phase, str) and phase:
            pod.phase = phase
        # the API server merged matchLabelKeys / mismatchLabelKeys into the selectors when it created the pod
        pod.label_keys_merged = True
    out.problems = [e for e in errors.items if e.message != UNKNOWN_FIELD]
    return out


def resolve_pod_priority(pod: Pod, classes: dict[str, PriorityClass]) -> list[FieldError]:
    """The Priority admission plugin sets spec.priority on every pod it admits; where it is missing (a pod
    created before its class existed, or a server without the plugin) take it from the class, as the plugin
    would."""
    errors = ErrorList(file=f"Pod {pod.key}")
    if pod.priority_set:
        return []
    default = next((pc for pc in classes.values() if pc.global_default), None)
    manifests.resolve_priority(pod, classes, default, errors, "spec")
    return list(errors.items)


def resolve_pod_group_priority(group: SchedulingPodGroup, classes: dict[str, PriorityClass]) -> list[FieldError]:
    """A kube-scheduler 1.37 PodGroup's priority as the Priority admission plugin sets it (the API server writes
    spec.priority; where it is missing, from the class, as for pods)."""
    errors = ErrorList(file=f"PodGroup {group.key}")
    if group.priority_set:
        return []
    default = next((pc for pc in classes.values() if pc.global_default), None)
    manifests.resolve_pod_group_priority(group, classes, default, errors, "")
    return list(errors.items)


def decode_or_log(res: Resource, raw: Obj, stats: _Counts) -> Decoded | None:
    """:func:`decode` for an informer's event handler: an object it cannot read is counted, logged with its
    problems and left out (None)."""
    out = decode(res, raw)
    if not out.problems:
        return out
    stats.decode_errors += 1
    LOG.warning(
        "cannot read object; left out",
        extra={"object": f"{res.kind} {key_of(raw)}", "problems": [str(p) for p in out.problems]},
    )
    return None
