"""The live adapter's port: the few API-server operations packsched needs, as a protocol.

Everything else in :mod:`packsched.live` talks to the cluster only through :class:`ApiPort`; the one
implementation on a real cluster is :class:`packsched.live.kube.KubernetesPort`. Objects travel as the JSON
dictionaries the API server sends, and are decoded by packsched's own decoder (:mod:`packsched.live.decode`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Protocol

Obj = dict[str, Any]

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"
DEFAULT_PAGE_SIZE = 500  # objects per page of a paginated list (``packsched snapshot --page-size``)


@dataclass(frozen=True)
class Resource:
    """One kind of object the API server serves: where it lives and how it is named."""

    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def base(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    def collection(self, namespace: str = "") -> str:
        """The list/watch path: every namespace when ``namespace`` is empty."""
        if self.namespaced and namespace:
            return f"{self.base()}/namespaces/{namespace}/{self.plural}"
        return f"{self.base()}/{self.plural}"

    def item(self, namespace: str, name: str, subresource: str = "") -> str:
        path = f"{self.collection(namespace)}/{name}"
        return f"{path}/{subresource}" if subresource else path


NODES = Resource("", "v1", "nodes", "Node", False)
PODS = Resource("", "v1", "pods", "Pod", True)
PDBS = Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True)
PRIORITY_CLASSES = Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", True)
EVENTS = Resource("events.k8s.io", "v1", "events", "Event", True)
# The ElasticQuota custom resource (deploy/elasticquota-crd.yaml), watched for CapacityScheduling.
ELASTIC_QUOTAS = Resource("scheduling.x-k8s.io", "v1alpha1", "elasticquotas", "ElasticQuota", True)
# The PodGroup custom resource (deploy/podgroup-crd.yaml), watched for Coscheduling.
POD_GROUPS = Resource("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", True)
# Watched when a profile's plugin reads them: namespace labels (InterPodAffinity's namespaceSelector); Services and
# the controllers whose selectors PodTopologySpread's default constraints use; the storage catalog (the volume
# plugins).
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", False)
SERVICES = Resource("", "v1", "services", "Service", True)
REPLICATION_CONTROLLERS = Resource("", "v1", "replicationcontrollers", "ReplicationController", True)
REPLICA_SETS = Resource("apps", "v1", "replicasets", "ReplicaSet", True)
STATEFUL_SETS = Resource("apps", "v1", "statefulsets", "StatefulSet", True)
WORKLOADS = (REPLICATION_CONTROLLERS, REPLICA_SETS, STATEFUL_SETS)
# Read by `packsched snapshot` only (never watched): the controllers a what-if scales, and ConfigMaps (one, by name:
# the scheduler's configuration).
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)
JOBS = Resource("batch", "v1", "jobs", "Job", True)
CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap", True)
PVCS = Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True)
PVS = Resource("", "v1", "persistentvolumes", "PersistentVolume", False)
STORAGE_CLASSES = Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False)
CSI_NODES = Resource("storage.k8s.io", "v1", "csinodes", "CSINode", False)
STORAGE_RESOURCES = (PVCS, PVS, STORAGE_CLASSES, CSI_NODES)
# Dynamic Resource Allocation, watched when a profile has DynamicResources and the cluster serves resource.k8s.io:
# v1 (Kubernetes 1.34+), else the newest older version it serves (DRA_OLDER_VERSIONS, in the order tried).
DRA_GROUP = "resource.k8s.io"
DEVICE_CLASSES = Resource(DRA_GROUP, "v1", "deviceclasses", "DeviceClass", False)
RESOURCE_SLICES = Resource(DRA_GROUP, "v1", "resourceslices", "ResourceSlice", False)
RESOURCE_CLAIMS = Resource(DRA_GROUP, "v1", "resourceclaims", "ResourceClaim", True)
DRA_RESOURCES = (DEVICE_CLASSES, RESOURCE_SLICES, RESOURCE_CLAIMS)
DRA_OLDER_VERSIONS = ("v1beta2", "v1beta1")
# kube-scheduler's own pod groups (GenericWorkload), at the one version the chosen --kube-version's API server serves:
# 1.35's Workloads (their podGroups inside), 1.36's and 1.37's PodGroups (not scheduler-plugins' PodGroup above).
SCHEDULING_GROUP = "scheduling.k8s.io"
SCHEDULING_WORKLOADS = Resource(SCHEDULING_GROUP, "v1alpha1", "workloads", "Workload", True)
SCHEDULING_POD_GROUPS_1_36 = Resource(SCHEDULING_GROUP, "v1alpha2", "podgroups", "PodGroup", True)
SCHEDULING_POD_GROUPS = Resource(SCHEDULING_GROUP, "v1beta1", "podgroups", "PodGroup", True)
_GENERIC_WORKLOAD_BY_MINOR = {35: SCHEDULING_WORKLOADS, 36: SCHEDULING_POD_GROUPS_1_36, 37: SCHEDULING_POD_GROUPS}


def generic_workload_resource(minor: int) -> Resource | None:
    """The object that gives kube-scheduler ``1.<minor>``'s pod groups their policy, at the version that release
    serves (None before 1.35; a later release's is 1.37's)."""
    if minor < min(_GENERIC_WORKLOAD_BY_MINOR):
        return None
    return _GENERIC_WORKLOAD_BY_MINOR[min(minor, max(_GENERIC_WORKLOAD_BY_MINOR))]


def is_generic_workload(res: Resource) -> bool:
    """Whether ``res`` is one of kube-scheduler's own pod-group kinds (any version)."""
    return any(same_kind(res, r) for r in _GENERIC_WORKLOAD_BY_MINOR.values())


def older_versions(res: Resource) -> tuple[Resource, ...]:
    """The same kind at the older versions a cluster may serve instead (what an informer falls back to when the
    version it asks for is not served): DRA's beta versions."""
    if res.group != DRA_GROUP:
        return ()
    return tuple(replace(res, version=v) for v in DRA_OLDER_VERSIONS)


def optional(res: Resource) -> bool:
    """Whether a cluster may not serve the kind at all (DRA's, before Kubernetes 1.32 or with the API off; the
    GenericWorkload kinds, alpha or beta APIs a cluster serves only when enabled): then it is not watched, and what
    reads it sees none."""
    return res.group == DRA_GROUP or is_generic_workload(res)


def same_kind(a: Resource, b: Resource) -> bool:
    """Whether two resources name one kind (at any version)."""
    return a.group == b.group and a.plural == b.plural


class ApiError(Exception):
    """An API-server answer other than success, or no answer at all (``status`` 0: connection refused, reset or
    timed out)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        super().__init__(f"{status} {reason}: {message}" if status else f"{reason}: {message}")

    @property
    def conflict(self) -> bool:
        return self.status == 409

    @property
    def gone(self) -> bool:
        return self.status == 410

    @property
    def not_found(self) -> bool:
        return self.status == 404

    @property
    def too_many_requests(self) -> bool:
        return self.status == 429


@dataclass
class WatchEvent:
    type: str  # ADDED, MODIFIED, DELETED or BOOKMARK (an ERROR event is raised as ApiError)
    obj: Obj

    @property
    def resource_version(self) -> str:
        return str(self.obj.get("metadata", {}).get("resourceVersion", ""))


def key_of(obj: Obj) -> str:
    meta = obj.get("metadata", {})
    ns = meta.get("namespace", "")
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


class ApiPort(Protocol):
    """What packsched asks of an API server."""

    def list(self, res: Resource, namespace: str = "") -> tuple[list[Obj], str]:
        """Every object and the list's resourceVersion (the point a watch resumes from)."""
        ...

    def watch(self, res: Resource, resource_version: str, timeout_s: int) -> Iterator[WatchEvent]:
        """Changes after ``resource_version``, bookmarks included, until the server ends the stream.
        Raises ApiError(410) when that version is too old (the caller relists)."""
        ...

    def get(self, res: Resource, namespace: str, name: str) -> Obj: ...

    def group_versions(self, group: str) -> tuple[str, ...]:
        """The versions the server serves of an API group (its discovery document), the preferred one first; empty
        when it serves none (404)."""
        ...

    def create(self, res: Resource, namespace: str, body: Obj) -> Obj: ...

    def update(self, res: Resource, namespace: str, name: str, body: Obj) -> Obj:
        """PUT: fails with 409 when ``body``'s resourceVersion is not the current one."""
        ...

    def update_status(self, res: Resource, namespace: str, name: str, body: Obj) -> Obj:
        """PUT of the status subresource (only ``body``'s status is taken); 409 as :meth:`update`."""
        ...

    def patch_status(self, res: Resource, namespace: str, name: str, patch: Obj) -> Obj:
        """Strategic-merge patch of the status subresource (merge patch for custom resources)."""
        ...

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """POST the pods/binding subresource; the server answers a success with a Status."""
        ...

    def evict(self, namespace: str, name: str, uid: str) -> None:
        """POST the pods/eviction subresource (429 when a PodDisruptionBudget forbids it)."""
        ...

    def delete(self, res: Resource, namespace: str, name: str, uid: str = "", grace_s: int | None = None) -> None: ...

    def close(self) -> None: ...
