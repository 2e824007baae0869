"""Gangs: the pods that must be scheduled together.

scheduler-plugins' Coscheduling reads PodGroups (``scheduling.x-k8s.io/v1alpha1``): ``minMember`` pods of the group
must be placed before any is bound, ``minResources`` must be free in the cluster, and ``scheduleTimeoutSeconds``
bounds how long the placed ones wait for the rest. A pod names its group with the label
``scheduling.x-k8s.io/pod-group`` (the name of a PodGroup in its namespace); packsched also reads the label of
older scheduler-plugins releases, ``pod-group.scheduling.sigs.k8s.io``, when the current one is absent (current
releases read only the first).

The PodGroup controller of scheduler-plugins writes the group's status (phase, running, succeeded, failed,
occupiedBy): :func:`pod_group_status` computes what it converges to for the group's pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from packsched.api.goquantity import GoQuantity
from packsched.api.objects import Pod

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
LEGACY_POD_GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io"
POD_GROUP_API_VERSIONS = ("scheduling.x-k8s.io/v1alpha1",)
POD_GROUP_SPEC = ("minMember", "minResources", "scheduleTimeoutSeconds")
POD_GROUP_STATUS = ("phase", "occupiedBy", "running", "succeeded", "failed", "scheduleStartTime")

# PodGroup phases (apis/scheduling/v1alpha1)
PG_PENDING = "Pending"
PG_SCHEDULING = "Scheduling"
PG_RUNNING = "Running"
PG_FINISHED = "Finished"
PG_FAILED = "Failed"


def pod_group_name(pod: Pod) -> str:
    """The name of the pod's group ("" when it has none): the current label, else the older one."""
    return group_from_labels(pod.labels)


def group_from_labels(labels: Mapping[str, str]) -> str:
    """The group named by these pod labels ("" when none): the current label, else the older one."""
    return labels.get(POD_GROUP_LABEL) or labels.get(LEGACY_POD_GROUP_LABEL, "")


@dataclass
class PodGroup:
    """A PodGroup. ``created``: when it was created, in virtual seconds (its ``packsched.io/arrival-time``
    annotation, else 0): Coscheduling orders its pods by it. ``min_quantities``: ``minResources`` as Go's
    ``resource.Quantity`` holds them (Coscheduling's "resource gap" message prints them raw)."""

    name: str
    namespace: str
    min_member: int
    min_resources: dict[str, int] | None = None
    schedule_timeout_seconds: int | None = None
    created: float = 0.0
    source: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    # minResources as Go holds them after parsing what was written (for the messages that print them raw)
    min_quantities: dict[str, GoQuantity] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class PodGroupStatus:
    phase: str
    running: int
    succeeded: int
    failed: int
    occupied_by: str = ""  # status.occupiedBy ("" when unset)


def occupied_by(namespace: str, owners: Sequence[str]) -> str:
    """``status.occupiedBy`` as the controller fills it from one pod: ``namespace/owner`` for each of the pod's
    ``metadata.ownerReferences`` (by name, in the pod's namespace), sorted, joined with commas; "" for a pod
    without owners (the controller then leaves the field as it was)."""
    return ",".join(sorted(f"{namespace}/{name}" for name in owners))


def first_owners(members: Iterable[tuple[str, str]]) -> str:
    """The ``occupiedBy`` of a group's pods, given (pod name, :func:`occupied_by` of its owners) for each: the
    controller takes the first pod its informer cache lists, in no fixed order; packsched takes the pod whose name
    sorts first (for the pods of one Job, which share their owner, the answer is the same)."""
    return min(members, default=("", ""))[1]


def pod_group_status(
    group: PodGroup, phases: Iterable[str], first_owners: str = "", before: PodGroupStatus | None = None
) -> PodGroupStatus:
    """What the PodGroup controller (scheduler-plugins ``PodGroupReconciler``) settles on for a group whose pods
    (every pod carrying the group's label) are in these phases: Pending while fewer pods exist than
    ``minMember``; then Scheduling until ``minMember`` of them run or succeeded (Running); Failed once one failed
    and failed + running + succeeded reach ``minMember``; Finished once ``minMember`` succeeded.

    ``occupiedBy`` is filled only as the group leaves Pending (the controller's Pending -> Scheduling step), from
    the first pod it lists (:func:`first_owners`); otherwise it stays what it was
    (``before``, the status the group shows now; none: a new group), and a pod without owners leaves it too."""
    pods = list(phases)
    running = sum(1 for p in pods if p == "Running")
    succeeded = sum(1 for p in pods if p == "Succeeded")
    failed = sum(1 for p in pods if p == "Failed")
    need = group.min_member
    kept = before.occupied_by if before is not None else ""
    if len(pods) < need:
        return PodGroupStatus(PG_PENDING, running, succeeded, failed, kept)
    phase = PG_RUNNING if succeeded + running >= need else PG_SCHEDULING
    if failed and failed + running + succeeded >= need:
        phase = PG_FAILED
    if succeeded >= need:
        phase = PG_FINISHED
    leaves_pending = before is None or before.phase in ("", PG_PENDING)
    return PodGroupStatus(phase, running, succeeded, failed, (first_owners or kept) if leaves_pending else kept)
