"""kube-scheduler's own pod groups (KEP-4671, feature gate GenericWorkload): how a pod names its group, and the
objects that give a group its policy.

- **1.35**: a pod names ``spec.workloadRef`` ``{name, podGroup, podGroupReplicaKey}``; the ``Workload``
  (``scheduling.k8s.io/v1alpha1``) of that name lists its ``podGroups``, each with a policy, ``basic`` (no
  constraint) or ``gang: {minCount}``. The group is (namespace, workload, podGroup, replica key): every replica key
  is a gang of its own under the same policy.
- **1.36** (and 1.37): a pod names ``spec.schedulingGroup: {podGroupName}``; the ``PodGroup``
  (``scheduling.k8s.io/v1alpha2``,
  not scheduler-plugins' ``scheduling.x-k8s.io`` one) of that name has ``spec.schedulingPolicy``, ``basic`` or
  ``gang: {minCount}``. The group is (namespace, podGroupName). A v1alpha2 ``Workload`` only templates PodGroups
  for controllers; the scheduler does not read it. **1.37** serves the PodGroup as ``scheduling.k8s.io/v1beta1``
  (v1alpha2 is no longer served): the same policy (``minCount`` may now change), plus a priority
  (``priorityClassName`` / ``priority``, resolved as a pod's) every pod of the group must share.

Without GenericWorkload the API server drops the pod's field; in a release that does not define it, the field is
not there either (:func:`pod_group_ref` answers None and :func:`dropped_reference` says why).
"""

from __future__ import annotations

from dataclasses import dataclass

from packsched.api.objects import Pod, WorkloadReference

__all__ = ["WorkloadReference"]

WORKLOAD_API_VERSION = "scheduling.k8s.io/v1alpha1"  # 1.35's Workload
# v1alpha2: 1.36's, v1beta1: 1.37's (PodGroup templates for controllers, not read by the scheduler)
WORKLOAD_API_VERSIONS = (WORKLOAD_API_VERSION, "scheduling.k8s.io/v1alpha2", "scheduling.k8s.io/v1beta1")
POD_GROUP_API_VERSION = "scheduling.k8s.io/v1alpha2"  # 1.36's PodGroup
POD_GROUP_API_VERSION_1_37 = "scheduling.k8s.io/v1beta1"  # 1.37's PodGroup
# The PodGroup API version each release's API server serves (and its scheduler reads); the others are not served.
POD_GROUP_API_BY_MINOR = {36: POD_GROUP_API_VERSION, 37: POD_GROUP_API_VERSION_1_37}
WORKLOAD_MAX_POD_GROUPS = 8

# Pod fields, per release
WORKLOAD_REF = "workloadRef"  # 1.35
SCHEDULING_GROUP = "schedulingGroup"  # 1.36+


@dataclass(frozen=True)
class PodGroupRef:
    """The group a pod belongs to in the release being imitated: 1.35 (namespace, workload, podGroup, replica
    key), 1.36+ (namespace, podGroup name; ``workload`` and ``replica_key`` empty)."""

    namespace: str
    pod_group: str
    workload: str = ""
    replica_key: str = ""

    @property
    def key(self) -> str:
        """``namespace/podGroup`` (1.36+) or ``namespace/workload/podGroup[/replicaKey]`` (1.35)."""
        if not self.workload:
            return f"{self.namespace}/{self.pod_group}"
        tail = f"/{self.replica_key}" if self.replica_key else ""
        return f"{self.namespace}/{self.workload}/{self.pod_group}{tail}"

    @property
    def object_name(self) -> str:
        """The name of the object that gives the group its policy: the Workload (1.35) or the PodGroup (1.36+)."""
        return self.workload or self.pod_group


@dataclass(frozen=True)
class GroupPolicy:
    """A pod group's scheduling policy: ``min_count`` for a gang, None for ``basic``."""

    min_count: int | None = None

    @property
    def gang(self) -> bool:
        return self.min_count is not None


@dataclass
class SchedulingWorkload:
    """A 1.35 ``Workload``: its pod groups' policies by name. ``created``: when it appears (its
    ``packsched.io/arrival-time`` annotation, else 0)."""

    name: str
    namespace: str
    pod_groups: dict[str, GroupPolicy]
    created: float = 0.0
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class SchedulingPodGroup:
    """A 1.36 ``PodGroup`` (scheduling.k8s.io/v1alpha2) or 1.37 one (v1beta1: ``api_version``). ``template``: its
    ``podGroupTemplateRef.workload`` (1.36) / ``workloadRef`` (1.37) (workload name, template name), informational.
    ``priority``: 1.37's ``spec.priority`` as the Priority admission plugin resolves it from ``priority_class_name``
    (None: not resolved yet, or a 1.36 group, which has none)."""

    name: str
    namespace: str
    policy: GroupPolicy
    template: tuple[str, str] | None = None
    created: float = 0.0
    source: str = ""
    api_version: str = POD_GROUP_API_VERSION
    priority_class_name: str = ""
    priority: int | None = None
    priority_set: bool = False  # spec.priority was written in the manifest
    file: str = ""  # the file it was read from (for the errors found once the PriorityClasses are known)
    label: str = ""  # the document's label in that file

    def served_in(self, minor: int) -> bool:
        """Whether kube-scheduler ``1.<minor>``'s API server serves this PodGroup's version."""
        return POD_GROUP_API_BY_MINOR.get(min(minor, max(POD_GROUP_API_BY_MINOR))) == self.api_version

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def pod_group_ref(pod: Pod, minor: int, generic_workload: bool) -> PodGroupRef | None:
    """The group ``pod`` belongs to in kube-scheduler ``1.<minor>`` with GenericWorkload as given (None: none, or
    the API server dropped the field)."""
    if not generic_workload:
        return None
    if minor == 35 and pod.workload_ref is not None:
        ref = pod.workload_ref
        return PodGroupRef(pod.namespace, ref.pod_group, ref.name, ref.replica_key)
    if minor >= 36 and pod.scheduling_group is not None:
        return PodGroupRef(pod.namespace, pod.scheduling_group)
    return None


def dropped_reference(pod: Pod, minor: int, generic_workload: bool) -> str:
    """Why the group reference ``pod`` carries does not count in ``1.<minor>`` ("" when it counts, or when the
    pod has none): the field is not one of that release's pods, or GenericWorkload is off."""
    fields = [f for f, v in ((WORKLOAD_REF, pod.workload_ref), (SCHEDULING_GROUP, pod.scheduling_group)) if v]
    if not fields or pod_group_ref(pod, minor, generic_workload) is not None:
        return ""
    own = WORKLOAD_REF if minor == 35 else SCHEDULING_GROUP if minor >= 36 else ""
    if own in fields and not generic_workload:
        return (
            f"spec.{own}: the API server drops the field with the feature gate GenericWorkload off (its default in "
            f"kube-scheduler 1.{minor}; --feature-gates GenericWorkload=true keeps it)"
        )
    where = {WORKLOAD_REF: "1.35", SCHEDULING_GROUP: "1.36 and later"}
    field = fields[0]
    return f"spec.{field}: not a field of kube-scheduler 1.{minor}'s pods (only of {where[field]})"
