"""The Kubernetes objects packsched reads, as plain typed records.

Only what scheduling needs is kept; every other field the Kubernetes schema defines is accepted and ignored
(see :mod:`packsched.api.schema`), and a field the schema does not define is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packsched.api.resources import ResourceList

DEFAULT_SCHEDULER_NAME = "default-scheduler"

# Taint effects and toleration operators.
NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
TAINT_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)

PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"

UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"


@dataclass(frozen=True)
class OwnerRef:
    kind: str
    name: str
    controller: bool = True
    api_version: str = ""  # as written in metadata.ownerReferences ("" for the pods a workload expands into)


@dataclass(frozen=True)
class Requirement:
    """A label (or field) selector requirement: key, operator and values."""

    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist (+ Gt, Lt for node selectors)
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        if self.operator in ("Gt", "Lt"):
            if not present:
                return False
            try:
                have, want = int(labels[self.key]), int(self.values[0])
            except (ValueError, IndexError):
                return False
            return have > want if self.operator == "Gt" else have < want
        return False


@dataclass(frozen=True)
class LabelSelector:
    """metav1.LabelSelector: every matchLabels pair and every expression must hold; empty matches all."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.match_labels) and all(
            r.matches(labels) for r in self.match_expressions
        )

    @property
    def empty(self) -> bool:
        return not self.match_labels and not self.match_expressions


# whenUnsatisfiable of a topology spread constraint
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
# nodeAffinityPolicy / nodeTaintsPolicy
HONOR = "Honor"
IGNORE = "Ignore"


@dataclass(frozen=True)
class TopologySpreadConstraint:
    """One entry of a pod's spec.topologySpreadConstraints (or of PodTopologySpreadArgs.defaultConstraints,
    where the label selector is absent). ``None`` policies: not set (the scheduler's defaults apply: Honor for
    node affinity, Ignore for taints)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class NodeSelectorTerm:
    """Terms are ORed; within a term, every expression (labels) and field (metadata.name) must hold."""

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()


@dataclass(frozen=True)
class PreferredTerm:
    weight: int
    preference: NodeSelectorTerm


@dataclass(frozen=True)
class NodeAffinity:
    required: tuple[NodeSelectorTerm, ...] | None = None  # None: no required node affinity
    preferred: tuple[PreferredTerm, ...] = ()


@dataclass(frozen=True)
class PodAffinityTerm:
    """One inter-pod (anti-)affinity term. ``label_selector`` None selects no pod; ``namespace_selector`` None
    selects no namespace (then ``namespaces``, or the pod's own namespace when both are empty, apply).
    ``match_label_keys`` / ``mismatch_label_keys`` as written; the API server merges them into the selector when
    the pod is created (:func:`packsched.api.pods.merge_label_keys`)."""

    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True)
class PodAffinity:
    """spec.affinity.podAffinity or podAntiAffinity: required and preferred terms."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"  # Equal or Exists
    value: str = ""
    effect: str = ""  # empty matches every effect
    seconds: int | None = None  # tolerationSeconds: kept for a device's (DRA allocation results carry it)

    def tolerates(self, taint: Taint) -> bool:
        """Upstream ToleratesTaint: effect, then key (empty key with Exists matches all), then value."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


@dataclass(frozen=True)
class ContainerPort:
    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@dataclass
class Container:
    name: str
    requests: ResourceList = field(default_factory=dict)
    limits: ResourceList = field(default_factory=dict)
    ports: list[ContainerPort] = field(default_factory=list)
    restart_policy: str = ""  # "Always" on an init container makes it a sidecar
    image: str = ""  # as written (ImageLocality normalises it)


@dataclass(frozen=True)
class PodVolume:
    """One entry of ``spec.volumes`` as the volume plugins see it.

    ``source`` is the volume type (``persistentVolumeClaim``, ``ephemeral``, ``gcePersistentDisk``,
    ``awsElasticBlockStore``, ``rbd``, ``iscsi``, or another type the plugins ignore). ``claim_name`` is the
    claim of a persistentVolumeClaim volume; ``disk`` identifies an in-line disk (GCE PD name, EBS volume id,
    iSCSI IQN, RBD pool and image) and ``monitors`` are an RBD volume's Ceph monitors. ``from_template``: a
    StatefulSet volumeClaimTemplate (``claim_name`` is then ``<volume name>-<pod name>``)."""

    name: str
    source: str
    claim_name: str = ""
    read_only: bool = False
    disk: tuple[str, ...] = ()
    monitors: tuple[str, ...] = ()
    from_template: bool = False
    # an ephemeral volume's volumeClaimTemplate, undecoded (the manifest loader makes the claim)
    claim_template: object = field(default=None, compare=False, hash=False)
    image: str = ""  # an image volume's ``reference`` (ImageLocality counts it from 1.36)


@dataclass(frozen=True)
class NodeImage:
    """One entry of a node's ``status.images``: the names it is known by and its size in bytes."""

    names: tuple[str, ...]
    size: int


@dataclass(frozen=True)
class PodResourceClaim:
    """One entry of spec.resourceClaims: a ResourceClaim by name, or one made from a template for the pod."""

    name: str
    claim_name: str = ""
    template_name: str = ""


@dataclass(frozen=True)
class WorkloadReference:
    """A 1.35 pod's ``spec.workloadRef`` (kube-scheduler's own gangs: api/podgroups.py)."""

    name: str
    pod_group: str
    replica_key: str = ""


@dataclass
class Pod:
    name: str
    namespace: str = "default"
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    owner: OwnerRef | None = None
    containers: list[Container] = field(default_factory=list)
    init_containers: list[Container] = field(default_factory=list)
    overhead: ResourceList = field(default_factory=dict)
    priority: int = 0
    priority_set: bool = False  # spec.priority was written in the manifest
    priority_class_name: str = ""
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    node_name: str = ""
    node_selector: dict[str, str] = field(default_factory=dict)
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None
    # The API server has merged matchLabelKeys / mismatchLabelKeys into the terms' selectors (objects read from a
    # cluster); pods read from manifests get them merged with their final labels when first scheduled.
    label_keys_merged: bool = False
    tolerations: list[Toleration] = field(default_factory=list)
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    nominated_node_name: str = ""
    phase: str = "Pending"  # status.phase: Pending, Running, Succeeded, Failed
    terminating: bool = False  # metadata.deletionTimestamp is set: the pod is on its way out
    # status.conditions has DisruptionTarget=True with reason PreemptionByScheduler: a scheduler preempted it
    preempted_by_scheduler: bool = False
    # status.startTime (seconds since the epoch) of a pod read from a cluster: which of two bound pods of one
    # priority started first, for preemption (upstream MoreImportantPod)
    started_at: float | None = None
    scheduling_gates: list[str] = field(default_factory=list)
    volumes: list[PodVolume] = field(default_factory=list)
    resource_claims: tuple[PodResourceClaim, ...] = ()  # spec.resourceClaims
    # status.resourceClaimStatuses (pod claim name -> ResourceClaim name), as read from a cluster
    resource_claim_statuses: dict[str, str] = field(default_factory=dict)
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    # metadata.ownerReferences as written (``owner`` is set only for the pods packsched expands from workloads)
    owner_refs: tuple[OwnerRef, ...] = ()
    # kube-scheduler's own pod groups (GenericWorkload): 1.35's spec.workloadRef, 1.36's
    # spec.schedulingGroup.podGroupName (api/podgroups.py: which one counts depends on the release and the gate)
    workload_ref: WorkloadReference | None = None
    scheduling_group: str | None = None
    # Features packsched reads but whose plugins it does not implement yet; the simulator warns about them.
    unsupported_features: list[str] = field(default_factory=list)
    # From packsched's annotations (packsched.api.annotations), in virtual seconds: when the pod is created,
    # and how long it runs once bound (None: until the simulation ends).
    arrival_time: float = 0.0
    run_duration: float | None = None
    # Where the pod came from (file and document), for messages.
    source: str = ""
    # Read back from an API server (metadata.creationTimestamp set): admission ran when it was created, so the
    # simulator does not run LimitRanges and ResourceQuotas on it again.
    admitted: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def __copy__(self) -> Pod:
        """``copy.copy``: a new pod sharing every field's value, as the generic copy (``__reduce_ex__``) makes it,
        without its detour through copyreg (the simulator copies every pod of a cluster it is given)."""
        cls = self.__class__
        out = cls.__new__(cls)
        out.__dict__.update(self.__dict__)
        return out

    def host_ports(self) -> list[ContainerPort]:
        return [p for c in self.containers for p in c.ports if p.host_port > 0] + [
            p for c in self.init_containers if c.restart_policy == "Always" for p in c.ports if p.host_port > 0
        ]


@dataclass
class Node:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    capacity: ResourceList = field(default_factory=dict)
    allocatable: ResourceList = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)
    unschedulable: bool = False
    images: tuple[NodeImage, ...] = ()  # status.images
    source: str = ""


@dataclass
class Service:
    """A Service: only its pod selector matters to scheduling (PodTopologySpread's default constraints).
    ``selector`` None: the Service selects no pod (upstream skips nil selectors)."""

    name: str
    namespace: str
    selector: dict[str, str] | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    description: str = ""


@dataclass
class Namespace:
    name: str
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class PodDisruptionBudget:
    name: str
    namespace: str
    selector: LabelSelector
    min_available: int | str | None = None  # an int or a percentage like "50%"
    max_unavailable: int | str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def matches(self, pod: Pod) -> bool:
        """A PDB's selector applies to pods of its own namespace; an empty selector selects none (as
        kube-scheduler's preemption treats it)."""
        return pod.namespace == self.namespace and not self.selector.empty and self.selector.matches(pod.labels)


ELASTIC_QUOTA_API_VERSIONS = ("scheduling.x-k8s.io/v1alpha1", "scheduling.sigs.k8s.io/v1alpha1")


@dataclass
class ElasticQuota:
    """scheduler-plugins' ElasticQuota: a namespace's guaranteed ``min`` and its borrowing cap ``max``.

    ``None`` means the list is absent from the manifest (upstream then defaults it); ``{}`` is a present, empty
    list. ``used`` is ``status.used`` as written (informational; the scheduler keeps its own count)."""

    name: str
    namespace: str
    min: ResourceList | None = None
    max: ResourceList | None = None
    used: ResourceList | None = None
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


# Built-in priority classes every cluster has.
SYSTEM_PRIORITY_CLASSES = (
    PriorityClass("system-node-critical", 2000001000, description="built in"),
    PriorityClass("system-cluster-critical", 2000000000, description="built in"),
)
