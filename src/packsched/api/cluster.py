"""What the manifest reader makes: a Cluster (every object read, in the order it was written) and its Workloads."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import tzinfo

from packsched.api.admission import LimitRange, ResourceQuota
from packsched.api.cron import Schedule
from packsched.api.dra import DraObjects
from packsched.api.gangs import PodGroup
from packsched.api.objects import (
    ElasticQuota,
    LabelSelector,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    Service,
)
from packsched.api.podgroups import SchedulingPodGroup, SchedulingWorkload
from packsched.api.storage import PersistentVolumeClaim, StorageObjects


@dataclass
class Workload:
    """A controller that owns pods; kept so that the simulator can replace pods it loses."""

    kind: str
    name: str
    namespace: str
    replicas: int
    template: Pod
    source: str = ""
    # Job only: spec.completions (None: absent) and the pods it runs at once (0 when suspended).
    completions: int | None = None
    parallelism: int = 0
    # StatefulSet only: its volumeClaimTemplates (each pod gets a claim ``<template>-<pod>`` made from one).
    claim_templates: list[PersistentVolumeClaim] = field(default_factory=list)
    # spec.selector (a ReplicationController's map as matchLabels); None: not given (a Job may omit it)
    selector: LabelSelector | None = None
    # DaemonSet only: where its pods go among the manifests' pods (they are made once every node is read)
    position: int = 0
    # Job only: the CronJob that made it ("" for a Job of the manifests)
    cron_job: str = ""


@dataclass
class CronJob:
    """A CronJob: the Jobs it creates at the times of its schedule (``job``: its jobTemplate, as a Job named when
    one is made)."""

    name: str
    namespace: str
    schedule: Schedule
    zone: tzinfo
    job: Workload
    suspend: bool = False
    concurrency_policy: str = "Allow"  # Allow, Forbid or Replace
    starting_deadline: float | None = None  # seconds; None: no deadline
    source: str = ""


@dataclass
class Cluster:
    """Everything read from the manifests, in the order it was written."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    elastic_quotas: list[ElasticQuota] = field(default_factory=list)
    pod_groups: list[PodGroup] = field(default_factory=list)  # scheduler-plugins' (Coscheduling)
    # kube-scheduler's own (GangScheduling): 1.35's Workloads and 1.36's PodGroups (scheduling.k8s.io)
    scheduling_workloads: list[SchedulingWorkload] = field(default_factory=list)
    scheduling_pod_groups: list[SchedulingPodGroup] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    services: list[Service] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cron_jobs: list[CronJob] = field(default_factory=list)
    limit_ranges: list[LimitRange] = field(default_factory=list)
    resource_quotas: list[ResourceQuota] = field(default_factory=list)
    # objects of kinds packsched does not model (custom resources included): kind -> where each was written
    skipped: dict[str, list[str]] = field(default_factory=dict)
    # PersistentVolumeClaims (those StatefulSets and ephemeral volumes make included), PersistentVolumes,
    # StorageClasses and CSINodes
    storage: StorageObjects = field(default_factory=StorageObjects)
    # DeviceClasses, ResourceClaims (with those made from templates), ResourceClaimTemplates, ResourceSlices
    dra: DraObjects = field(default_factory=DraObjects)

    def skipped_summary(self) -> str:
        """One line naming the kinds skipped and how many of each ("" when none was)."""
        if not self.skipped:
            return ""
        total = sum(len(w) for w in self.skipped.values())
        kinds = ", ".join(
            f"{k} ({len(w)})" for k, w in sorted(self.skipped.items(), key=lambda kw: (-len(kw[1]), kw[0]))
        )
        return f"skipped {total} object{'s' if total != 1 else ''} of kinds packsched does not model: {kinds}"

    def pod(self, key: str) -> Pod | None:
        for p in self.pods:
            if p.key == key:
                return p
        return None
