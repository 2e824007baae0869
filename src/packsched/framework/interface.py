"""Extension points. A plugin is any object with a ``name`` and the methods of the points it implements.

The one deliberate difference from kube-scheduler: Filter and Score take *many nodes at once* (``sel``: a slice or
an array of node columns of the snapshot) and answer with arrays, so that the work happens in numpy.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from packsched.api.dra import DraObjects
from packsched.api.storage import StorageObjects
from packsched.config.versions import KubeVersion
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis, RejectGroup
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.framework.status import Code, Status

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1

# Which nodes a Filter or Score call covers: every node (slice(None)) or some node columns.
NodeSel = slice | npt.NDArray[np.intp]


@dataclass
class Rejection:
    """Nodes (a mask aligned with the selection) that a filter rejects, for one reason."""

    mask: BoolArray
    reason: str
    code: Code = Code.UNSCHEDULABLE


@dataclass
class PostFilterResult:
    nominated_node: str | None = None
    status: Status = field(default_factory=Status)


class Plugin(Protocol):
    name: str


# Cluster events (what kube-scheduler's informers deliver to plugins' event handlers).
POD = "Pod"  # only assigned pods (spec.nodeName set, or bound by the scheduler), as upstream's filtered informer
ELASTIC_QUOTA = "ElasticQuota"
POD_GROUP = "PodGroup"  # api.gangs.PodGroup (scheduler-plugins' Coscheduling)
# kube-scheduler's own gangs (GangScheduling): api.podgroups.SchedulingWorkload (1.35), SchedulingPodGroup (1.36)
SCHEDULING_WORKLOAD = "Workload.scheduling.k8s.io"
SCHEDULING_POD_GROUP = "PodGroup.scheduling.k8s.io"
# a kube-scheduler 1.37 PodGroup changed (its minCount: the only field that may); registered by GangScheduling
SCHEDULING_POD_GROUP_UPDATE = "PodGroup.scheduling.k8s.io/Update"
SERVICE = "Service"  # api.objects.Service
RESOURCE_CLAIM = "ResourceClaim"  # api.dra.ResourceClaim whose status a plugin wrote (DynamicResources' PostFilter)
WORKLOAD = "Workload"  # api.manifests.Workload: a Deployment, ReplicaSet, StatefulSet, ReplicationController or Job
ADD, UPDATE, DELETE = "Add", "Update", "Delete"

# What moves unschedulable pods back to be tried (upstream's cluster events for the queue). A plugin may declare the
# ones it registers (``queueing_events``, upstream EventsToRegister): a pod only that plugin (or other declaring
# plugins) rejected is not moved by other events; it waits for one of its plugins' events, or the periodic flush
# of pods unschedulable for 5 minutes. A plugin that declares nothing is moved by every event.
ASSIGNED_POD_ADD = "AssignedPodAdd"
ASSIGNED_POD_DELETE = "AssignedPodDelete"
# a new unscheduled pod; an event only in kube-scheduler 1.35-1.36 with the GangScheduling gate (upstream
# addPodToSchedulingQueue), and only GangScheduling registers it
UNSCHEDULED_POD_ADD = "UnscheduledPodAdd"
NODE_CHANGE = "Node"
STORAGE_CHANGE = "Storage"
# a DeviceClass or ResourceSlice added or changed, a ResourceClaim created, allocated or deallocated (live mode's
# DRA informers; upstream's DynamicResources registers these)
DRA_CHANGE = "DRA"


@dataclass(frozen=True)
class ClusterEvent:
    """A change to the cluster: ``resource`` (POD, ELASTIC_QUOTA, ...) and ``action`` (ADD, UPDATE, DELETE).
    ``old`` is set for UPDATE and DELETE, ``new`` for ADD and UPDATE: the api objects (``Pod``,
    ``ElasticQuota``) as they were and as they are."""

    resource: str
    action: str
    old: object | None = None
    new: object | None = None


@runtime_checkable
class ClusterEventPlugin(Protocol):
    """A plugin that keeps its own view of the cluster from events (as upstream plugins register informer
    handlers). The simulator and the live adapter deliver every event through ``Scheduler.dispatch``."""

    name: str

    def on_cluster_event(self, event: ClusterEvent) -> None: ...


# Cluster objects a plugin reads outside events (its ``cluster_reads`` attribute), so that the live adapter watches
# them only for a profile that has such a plugin: namespace labels (``Snapshot.namespaces``) and the storage catalog
# (``Handle.storage()``: claims, volumes, classes, CSINodes).
NAMESPACES = "Namespaces"
STORAGE = "Storage"
DRA = "DRA"  # DeviceClasses, ResourceSlices, ResourceClaims (``Handle.dra()``)


def reads(plugin: object, what: str) -> bool:
    """Whether the plugin reads ``what`` (NAMESPACES, STORAGE): listed in its ``cluster_reads`` attribute."""
    return what in getattr(plugin, "cluster_reads", ())


def handles(plugin: ClusterEventPlugin, resource: str) -> bool:
    """Whether the plugin wants events of ``resource``: those its ``cluster_events`` attribute lists, every
    resource when it has none (so that the live adapter watches only what some plugin reads)."""
    wanted = getattr(plugin, "cluster_events", None)
    return wanted is None or resource in wanted


@runtime_checkable
class AssignedPodAddPlugin(Protocol):
    """A plugin whose rejection a newly assigned pod may lift (kube-scheduler's queue moves such pods when a pod is
    bound: ``AssignedPodAdded``). ``may_help(waiting, added)``: whether ``added``, now on a node, may let
    ``waiting``, which this plugin rejected, fit."""

    name: str

    def assigned_pod_may_help(self, waiting: PodInfo, added: PodInfo, snap: Snapshot) -> bool: ...


@runtime_checkable
class QueueingHintPlugin(Protocol):
    """A plugin that declares ``queueing_events`` and, for some of them, tells whether one event may help a pod it
    rejected (upstream QueueingHintFn): ``obj`` is the object the event is about (the pod added, as a PodInfo; the
    object created). A pod it holds back at PreEnqueue is tried again (PreEnqueue run anew) on the same events."""

    name: str

    def queueing_hint(self, event: str, waiting: PodInfo, obj: object) -> bool: ...


@runtime_checkable
class PreEnqueuePlugin(Protocol):
    name: str

    def pre_enqueue(self, pod: PodInfo) -> Status: ...


@runtime_checkable
class QueueSortPlugin(Protocol):
    """Orders the scheduling queue. ``less`` is upstream's Less; ``sort_key`` is the same order as a key (the
    queue is a heap of keys): ``less(a, b)`` exactly when ``sort_key(a) < sort_key(b)``."""

    name: str

    def less(self, a: PodInfo, b: PodInfo) -> bool: ...

    def sort_key(self, pod: PodInfo) -> tuple[float | int | str, ...]: ...


@runtime_checkable
class PreFilterPlugin(Protocol):
    name: str

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Keeps a PreFilter plugin's cycle state right when preemption (or nominated pods) adds/removes pods."""

    def add_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status: ...

    def remove_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status: ...


@runtime_checkable
class FilterPlugin(Protocol):
    name: str

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]: ...


@dataclass
class ExtraPods:
    """Pods counted on nodes beside those placed there (the nominated pods a cycle adds): per node column, how
    many, and what they request of each resource by name (a resource left out: nothing)."""

    count: IntArray
    amounts: Mapping[str, IntArray]


@runtime_checkable
class ResourceFitFilter(Protocol):
    """A filter that judges a node by its free amounts and its pod count alone (NodeResourcesFit): a node passes
    when it has room for one more pod and, for each (snapshot resource row, amount) of ``fit_demand``, at least
    that amount free. Preemption's vectorised dry run judges many nodes at once with it, and a failed cycle's
    pass with nominated pods judges the nodes with ``filter_with_extra``: its ``filter`` as if ``extra``'s pods
    were added to the snapshot's arrays."""

    def fit_demand(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> list[tuple[int, int]]: ...

    def filter_with_extra(
        self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel, extra: ExtraPods
    ) -> list[Rejection]: ...


@runtime_checkable
class NodeLocalPlugin(Protocol):
    """A Filter or Score plugin whose verdict and score on a node depend on that node alone (its fields and the pods
    placed on it) and on what ``equivalence_key`` says of the pod; what its PreFilter and PreScore write in the cycle
    state depends on the key alone too. The framework then keeps each pod class's verdicts and scores per node and,
    between two cycles, recomputes only the nodes whose pods changed (framework/equivalence.py). ``None``: not for
    this pod (its inputs reach beyond the node, e.g. DRA devices): the plugin runs over every node as usual."""

    name: str

    def equivalence_key(self, pod: PodInfo) -> Hashable | None: ...


@runtime_checkable
class VerdictFilter(Protocol):
    """A node-local Filter plugin that can also answer only whether each selected node passes (no reasons, no
    rejection objects): what the equivalence cache asks when it filters again the nodes changed since a class was
    last used. ``passes(...)[i]`` must be True exactly where ``filter`` rejects the i-th selected node for no
    reason."""

    name: str

    def passes(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> BoolArray: ...


def filter_reads_pods(plugin: object) -> bool:
    """Whether the plugin's filter verdict on a node may change when pods are placed on or removed from it. A
    plugin says it does not with a ``filter_reads_pods = False`` attribute (its verdict reads the node and the
    incoming pod only); by default it may."""
    return bool(getattr(plugin, "filter_reads_pods", True))


def score_reads_pods(plugin: object) -> bool:
    """Whether the plugin's score of a node may change when pods are placed on or removed from it (as
    :func:`filter_reads_pods`, with a ``score_reads_pods = False`` attribute)."""
    return bool(getattr(plugin, "score_reads_pods", True))


def zeros_normalize_uniformly(plugin: object) -> bool:
    """Whether the plugin's NormalizeScore, given raw scores that are all 0, gives every node one and the same
    value, whatever the nodes and however many, and whatever the pod and the cycle (upstream's
    DefaultNormalizeScore: 0, or the maximum when reversed). A plugin says so with a ``zeros_normalize_uniformly =
    True`` attribute; by default it does not. The framework then adds that one value, asked of the plugin once,
    instead of normalising a row of zeros (framework/equivalence.py)."""
    return bool(getattr(plugin, "zeros_normalize_uniformly", False))


def normalizes_by_top(plugin: object) -> bool:
    """Whether the plugin's NormalizeScore gives each node a value that depends only on its own raw score and the
    highest raw score among the nodes normalised together (upstream's DefaultNormalizeScore). A plugin says so with a
    ``normalizes_by_top = True`` attribute; by default it does not. A batch then scores one node again against the
    highest raw scores its list was normalised with (framework/batch.py) instead of normalising every node again."""
    return bool(getattr(plugin, "normalizes_by_top", False))


def scores_zero_if_pre_filter_skips(plugin: object) -> bool:
    """Whether the plugin's Score gives 0 on every node in a cycle where its PreFilter returned Skip (VolumeBinding
    and DynamicResources for a pod without claims: upstream still scores such a pod, 0 everywhere). A plugin says
    so with a ``scores_zero_if_pre_filter_skips = True`` attribute; by default it does not. The framework then
    takes that row of zeros without calling Score (``Framework.run_score``); what NormalizeScore makes of it is
    computed as before."""
    return bool(getattr(plugin, "scores_zero_if_pre_filter_skips", False))


@runtime_checkable
class PostFilterPlugin(Protocol):
    name: str

    def post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> PostFilterResult: ...


@runtime_checkable
class PreScorePlugin(Protocol):
    name: str

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> Status: ...


@runtime_checkable
class ScorePlugin(Protocol):
    name: str

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray: ...


# What a plugin contributes to a pod's signature (upstream fwk.SignFragment): key -> a JSON-able value. Plugins that
# look at the same part of a pod use the same key (the SIGN_* names below), so their fragments merge.
SignFragments = dict[str, object]

# The fragment keys, as upstream's signers name them (kube-scheduler framework/signers.go).
SIGN_SCHEDULER_NAME = "v1.Pod.Spec.SchedulerName"
SIGN_RESOURCES = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SIGN_TOLERATIONS = "v1.Pod.Spec.Tolerations"
SIGN_NODE_NAME = "v1.Pod.Spec.NodeName"
SIGN_NODE_AFFINITY = "v1.Pod.Spec.Affinity.NodeAffinity"
SIGN_NODE_SELECTOR = "v1.Pod.Spec.Affinity.NodeSelector"
SIGN_HOST_PORTS = "v1.Pod.Spec.HostPorts()"
SIGN_LABELS = "v1.Pod.Labels"
SIGN_IMAGE_NAMES = "v1.Pod.Spec.CanonicalImageNames()"
SIGN_VOLUMES = "v1.Pod.Spec.Volumes.NonSyntheticSources()"


@runtime_checkable
class SignPlugin(Protocol):
    """A plugin that can say which parts of a pod its PreFilter, Filter, PreScore and Score read (upstream
    SignPlugin, KEP-5598 opportunistic batching): two pods with equal fragments from every plugin of a profile
    get the same verdicts and scores on the same nodes. ``sign_pod`` answers None when it cannot vouch for
    that (upstream: a non-success status), and the pod then has no signature."""

    name: str

    def sign_pod(self, pod: PodInfo) -> SignFragments | None: ...


@runtime_checkable
class ReservePlugin(Protocol):
    name: str

    def reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None: ...


@runtime_checkable
class PermitPlugin(Protocol):
    """Success lets the binding cycle run; Wait (with the seconds to wait, at most 15 minutes) holds the pod
    assumed on ``node`` until the plugin allows it through the handle's waiting pods, or the time is up;
    Unschedulable rejects the placement."""

    name: str

    def permit(self, state: CycleState, pod: PodInfo, node: str) -> tuple[Status, float]: ...


@runtime_checkable
class PreBindPlugin(Protocol):
    name: str

    def pre_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status: ...


@runtime_checkable
class BindPlugin(Protocol):
    name: str

    def bind(self, state: CycleState, pod: PodInfo, node: str) -> Status: ...


@runtime_checkable
class PostBindPlugin(Protocol):
    name: str

    def post_bind(self, state: CycleState, pod: PodInfo, node: str) -> None: ...


@runtime_checkable
class NodeDetailsPlugin(Protocol):
    """A plugin with more to show per node than its verdict and score (``explain`` only; decides nothing):
    ``node_details`` gives, per node name, fields for that node's entry of explain's JSON (DynamicResources:
    ``claims``, the devices each claim would get there)."""

    name: str

    def node_details(self, state: CycleState) -> dict[str, dict[str, object]]: ...


POINT_PROTOCOLS: dict[str, type] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": PostBindPlugin,
}


def implements(plugin: object, point: str) -> bool:
    return isinstance(plugin, POINT_PROTOCOLS[point])


class ProfileRuntime(Protocol):
    """One profile's runtime as plugins reach it (``Handle.framework_for``): its filters and PreFilter extensions
    and the framework calls that run them, as upstream's ``framework.Framework`` interface.
    :class:`packsched.framework.runtime.Framework` implements it."""

    @property
    def filters(self) -> Sequence[FilterPlugin]:
        """The Filter plugins, in the profile's order."""
        ...

    @property
    def extensions(self) -> Sequence[PreFilterPlugin]:
        """The PreFilter plugins with AddPod/RemovePod (:class:`PreFilterExtensions`), in the profile's order."""
        ...

    def has_active_extensions(self, state: CycleState) -> bool:
        """Whether a PreFilter plugin of this cycle (not skipped) must hear of pods added or removed."""
        ...

    def run_add_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int) -> Status:
        """Upstream RunPreFilterExtensionAddPod: ``other`` now counts on node ``col``."""
        ...

    def run_remove_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int) -> Status:
        """Upstream RunPreFilterExtensionRemovePod: ``other`` no longer counts on node ``col``."""
        ...

    def run_filters_with_nominated(
        self, state: CycleState, pod: PodInfo, sel: NodeSel
    ) -> tuple[BoolArray, list[RejectGroup]]:
        """Every filter over the selected nodes, with the pods nominated there counted (upstream
        RunFilterPluginsWithNominatedPods)."""
        ...

    def arithmetic_filters(self, state: CycleState) -> tuple[ResourceFitFilter, list[FilterPlugin]] | None:
        """This cycle's filters (skipped ones left out) when each judges a node by its free amounts and pod count
        alone (exactly one :class:`ResourceFitFilter`) or reads no placed pod (:func:`filter_reads_pods`): that
        fit filter and the others, in order; None otherwise."""
        ...


class ClusterActions(Protocol):
    """What plugins may do to the cluster beyond the snapshot: the simulator and the live adapter implement it."""

    def preempt(self, victim: PodInfo, preemptor: PodInfo) -> None:
        """Evict ``victim`` so that ``preemptor`` can run."""

    def bind(self, pod: PodInfo, node: str) -> Status:
        """Bind the pod to the node (DefaultBinder's job)."""
        ...


class Handle(Protocol):
    """What a plugin can reach: the snapshot, cluster objects, other pods' nominations, and cluster actions."""

    @property
    def snapshot(self) -> Snapshot: ...

    @property
    def actions(self) -> ClusterActions: ...

    @property
    def rng(self) -> np.random.Generator: ...

    @property
    def kube_version(self) -> KubeVersion:
        """The kube-scheduler release whose behaviour plugins follow (``--kube-version``)."""
        ...

    def nominated_pods(self, col: int) -> Sequence[PodInfo]:
        """Pods nominated to run on node ``col`` that are not placed yet."""
        ...

    def nominated_nodes(self) -> Sequence[int]:
        """Node columns with at least one nominated pod."""
        ...

    def nominated_totals(self, pod: PodInfo, names: Sequence[str]) -> tuple[IntArray, IntArray] | None:
        """Per node column of the snapshot: how many pods of priority at least ``pod``'s (``pod`` left out) are
        nominated there, and what they request of each resource of ``names`` (a row per name); None when no pod
        of such a priority is nominated. The arrays are read-only, and valid until nominations change."""
        ...

    def nominations_changed_since(self, pos: int) -> tuple[list[int] | None, int]:
        """The node columns (repeats possible) where a nomination came or went since position ``pos`` of the
        nominations' journal (None when it no longer reaches back that far: anything may have changed), and the
        journal's position now (0 at the start)."""
        ...

    def nominated_col(self, pod: PodInfo) -> int | None:
        """The node column where ``pod``'s own nomination is counted (``nominated_totals`` leaves it out there for
        ``pod``); None if it has none."""
        ...

    def pdbs(self) -> Sequence[BudgetView]:
        """PodDisruptionBudgets with the disruptions each allows now."""
        ...

    def storage(self) -> StorageObjects | None:
        """PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes (upstream's listers), or None
        where the runtime does not track them (the volume plugins then let every pod pass)."""
        ...

    def dra(self) -> DraObjects | None:
        """DeviceClasses, ResourceClaims, their templates and ResourceSlices, or None where the runtime does not
        track them (DynamicResources then lets every pod pass)."""
        ...

    def framework_for(self, pod: PodInfo) -> ProfileRuntime | None:
        """The profile runtime that schedules ``pod`` (by its schedulerName)."""
        ...

    def clear_nomination(self, pod: PodInfo) -> None:
        """Take the pod's nomination away (upstream clears status.nominatedNodeName): it is scheduled afresh."""
        ...

    def clock(self) -> float:
        """The scheduler's time in seconds (virtual in the simulator): what plugins' own expiries are measured in."""
        ...

    def waiting_pods(self) -> Iterable[WaitingPodView]:
        """The pods waiting at Permit (upstream IterateOverWaitingPods), in the order they started waiting."""
        ...

    def get_waiting_pod(self, key: str) -> WaitingPodView | None:
        """The pod ``key`` ("namespace/name") if it waits at Permit."""
        ...

    def object_written(self, event: ClusterEvent) -> None:
        """A plugin wrote an object's change to the API server during a cycle (upstream: an API call whose watch
        event then reaches the scheduler's handlers): handled as that event, so pods it may help move, the pod in
        flight included (it goes to backoff when its cycle fails)."""
        ...

    def activate(self, keys: Iterable[str]) -> None:
        """Move these pods, if they wait in the queue's unschedulable or backoff part, to the active part
        (upstream PodsToActivate, honoured at the end of a scheduling cycle)."""
        ...

    def group_members(self, namespace: str, group: str) -> Sequence[PodInfo]:
        """The pods of the namespace (pending or running, not finished) whose scheduling group is ``group``: the
        ``scheduling.x-k8s.io/pod-group`` label (or the older ``pod-group.scheduling.sigs.k8s.io``)."""
        ...

    def pod_group_state(self, key: str) -> PodGroupStateView | None:
        """kube-scheduler's own pod group ``key`` (``PodInfo.pod_group.key``: GenericWorkload) as the scheduler
        tracks it (1.35 its WorkloadManager, 1.36 its cache); None when no pod of the group exists. A pod-group
        scheduling cycle's copy is in its cycle state (``POD_GROUP_CYCLE``)."""
        ...


# The cycle state key of a pod-group scheduling cycle (kube-scheduler 1.36 IsPodGroupSchedulingCycle): the copy of
# the pod group states that the cycle assumes its pods in (a PodGroupStatesView).
POD_GROUP_CYCLE = "PodGroupSchedulingCycle"


class PodGroupStateView(Protocol):
    """One pod group as the scheduler tracks it (backend/podgroups.py): its pods by key, and which are unscheduled,
    assumed or assigned."""

    @property
    def all_count(self) -> int: ...

    @property
    def scheduled_count(self) -> int: ...

    @property
    def assumed(self) -> dict[str, PodInfo]: ...

    @property
    def assigned(self) -> set[str]: ...

    def unscheduled_pods(self) -> list[PodInfo]: ...

    def unscheduled_keys(self) -> list[str]: ...

    def assume(self, pod: PodInfo) -> None: ...

    def forget(self, key: str) -> None: ...

    def scheduling_timeout(self, now: float) -> float: ...


class PodGroupStatesView(Protocol):
    def get(self, key: str) -> PodGroupStateView | None: ...


class WaitingPodView(Protocol):
    """A pod waiting at Permit, as plugins see it (framework/waiting.py)."""

    @property
    def pod(self) -> PodInfo: ...

    @property
    def node(self) -> str: ...

    @property
    def pending_plugins(self) -> list[str]: ...

    def allow(self, plugin: str) -> None: ...

    def reject(self, plugin: str, message: str) -> bool: ...

    def preempt(self, plugin: str, message: str) -> bool: ...


class BudgetView(Protocol):
    """A PodDisruptionBudget and how many more pods it lets go now."""

    @property
    def disruptions_allowed(self) -> int: ...

    def matches(self, pod: PodInfo) -> bool: ...
