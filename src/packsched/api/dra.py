"""Dynamic Resource Allocation (resource.k8s.io): DeviceClasses, ResourceClaims and their templates,
ResourceSlices, and the catalog the DynamicResources plugin reads (:class:`DraObjects`).

``resource.k8s.io/v1`` is read as written; ``v1beta2`` has the same shape; ``v1beta1`` is converted (a request's
fields sit beside its name instead of under ``exactly``, a device's under ``basic``). A selector's CEL expression
is compiled when read: a compile error is reported at its field path.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, ClassVar, Protocol

from packsched.api.decode import Reader
from packsched.api.dracel import CelDevice, compile_selector, interned, is_semver
from packsched.api.names import dns1123_label, dns1123_subdomain
from packsched.api.objects import NodeSelectorTerm, Pod, PodResourceClaim, Taint, Toleration
from packsched.api.pods import decode_node_selector_term
from packsched.api.quantity import QuantityError, parse_quantity

DRA_API_VERSIONS = ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1")
V1BETA1 = "resource.k8s.io/v1beta1"

EXACT_COUNT = "ExactCount"
ALL = "All"
ALLOCATION_MODES = (EXACT_COUNT, ALL)
NO_SCHEDULE, NO_EXECUTE, NONE = "NoSchedule", "NoExecute", "None"
DEVICE_TAINT_EFFECTS = (NO_SCHEDULE, NO_EXECUTE, NONE)
ALLOCATION_RESULTS_MAX = 32  # resourceapi.AllocationResultsMaxSize
# the namespace label the API server requires of a claim or template asking for admin access (DRAAdminNamespaceLabelKey)
ADMIN_NAMESPACE_LABEL = "resource.kubernetes.io/admin-access"
ADMIN_NAMESPACE_MESSAGE = (
    f"Forbidden: admin access to devices requires the `{ADMIN_NAMESPACE_LABEL}: true` label on the containing namespace"
)
RESERVED_FOR_MAX = 256  # resourceapi.ResourceClaimReservedForMaxSize

_SPEC_CLAIM = ("devices",)
_DEVICE_CLAIM = ("requests", "constraints", "config")
_REQUEST = ("name", "exactly", "firstAvailable")
_REQUEST_V1BETA1 = (
    "name",
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
    "firstAvailable",
)
_EXACT = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")
_SUB_REQUEST = ("name", "deviceClassName", "selectors", "allocationMode", "count", "tolerations", "capacity")
_SELECTOR = ("cel",)
_CEL = ("expression",)
_CONSTRAINT = ("requests", "matchAttribute", "distinctAttribute")
_TOLERATION = ("key", "operator", "value", "effect", "tolerationSeconds")
# resourceapi.ExtendedResourceClaimAnnotation: the claim the scheduler made for a pod's DRA-backed extended resources
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
_CLASS_SPEC = ("selectors", "config", "extendedResourceName")
_SLICE_SPEC = (
    "driver",
    "pool",
    "nodeName",
    "nodeSelector",
    "allNodes",
    "perDeviceNodeSelection",
    "devices",
    "sharedCounters",
)
_NODE_FIELDS = "`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`"
_POOL = ("name", "generation", "resourceSliceCount")
_DEVICE = (
    "name",
    "attributes",
    "capacity",
    "consumesCounters",
    "nodeName",
    "nodeSelector",
    "allNodes",
    "taints",
    "bindsToNode",
    "bindingConditions",
    "bindingFailureConditions",
    "allowMultipleAllocations",
)
_ATTRIBUTE = ("int", "bool", "string", "version")
_TAINT = ("key", "value", "effect", "timeAdded")
_COUNTER_SET = ("name", "counters")
_CONSUMPTION = ("counterSet", "counters")
_CAPACITY = ("value", "requestPolicy")
_REQUEST_POLICY = ("default", "validValues", "validRange")
_VALID_RANGE = ("min", "max", "step")
_CAPACITY_REQUIREMENTS = ("requests",)
REQUEST_POLICY_MAX_OPTIONS = 10  # resourceapi.CapacityRequestPolicyDiscreteMaxOptions
_CLAIM_STATUS = ("allocation", "reservedFor", "devices")
_ALLOCATION = ("devices", "nodeSelector", "allocationTimestamp")
_DEVICE_ALLOCATION = ("results", "config")
_RESULT = (
    "request",
    "driver",
    "pool",
    "device",
    "adminAccess",
    "tolerations",
    "bindingConditions",
    "bindingFailureConditions",
    "shareID",
    "consumedCapacity",
)
_REFERENCE = ("apiGroup", "resource", "name", "uid")
_DEVICE_STATUS = ("driver", "pool", "device", "shareID", "conditions", "data", "networkData")
_CONDITION = ("type", "status", "reason", "message", "lastTransitionTime", "observedGeneration")
_UID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


# -- the objects ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExactRequest:
    """``exactly`` of a request, or one ``firstAvailable`` subrequest."""

    device_class: str
    selectors: tuple[str, ...] = ()
    mode: str = EXACT_COUNT
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[Toleration, ...] = ()
    capacity: tuple[tuple[str, Fraction], ...] | None = None  # ``capacity.requests`` (None: no ``capacity``)


@dataclass(frozen=True)
class DeviceRequest:
    name: str
    exactly: ExactRequest | None = None
    first_available: tuple[tuple[str, ExactRequest], ...] = ()  # (subrequest name, request)


@dataclass(frozen=True)
class DeviceConstraint:
    requests: tuple[str, ...] = ()
    match_attribute: str = ""
    distinct_attribute: str = ""


@dataclass(frozen=True)
class ClaimSpec:
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()


@dataclass(frozen=True)
class DeviceResult:
    """One allocated device (``status.allocation.devices.results[]``)."""

    request: str  # the request, or ``request/subrequest``
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    share_id: str | None = None  # DRAConsumableCapacity: one share of a device that allows multiple allocations
    consumed: tuple[tuple[str, Fraction], ...] | None = None  # ``consumedCapacity`` (None: not set)
    binding_conditions: tuple[str, ...] = ()  # DRADeviceBindingConditions: the device's, copied by the allocator
    binding_failure_conditions: tuple[str, ...] = ()
    tolerations: tuple[Toleration, ...] = ()  # the request's (DRADeviceTaints), copied by the allocator

    @property
    def device_id(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device)


@dataclass(frozen=True)
class Allocation:
    results: tuple[DeviceResult, ...] = ()
    node_selector: tuple[NodeSelectorTerm, ...] | None = None  # None: every node


@dataclass(frozen=True)
class DeviceCondition:
    """One condition of an allocated device in the claim's ``status.devices`` (DRAResourceClaimDeviceStatus), as
    its driver sets it: binding conditions and binding failure conditions are looked up here by type."""

    type: str
    status: str  # "True", "False" or "Unknown"
    reason: str = ""
    message: str = ""


@dataclass
class ResourceClaim:
    name: str
    namespace: str
    spec: ClaimSpec
    uid: str = ""
    allocation: Allocation | None = None
    reserved_for: list[str] = field(default_factory=list)  # pod keys (namespace/name)
    owner_pod: str = ""  # the pod it was made for (from a template): namespace/name
    owner_uid: str = ""  # that pod's uid as the claim's ownerReferences give it ("" when not known)
    deleting: bool = False
    source: str = ""
    extended: bool = False  # the claim the scheduler makes for a pod's DRA-backed extended resources
    # ``status.devices``: per allocated device (driver, pool, device), the conditions its driver set
    device_conditions: dict[tuple[str, str, str], tuple[DeviceCondition, ...]] = field(default_factory=dict)
    allocated_at: float | None = None  # when PreBind wrote the allocation (``allocationTimestamp``), in the run's time

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def controlled_by(self, pod: Pod) -> bool:
        """Whether ``pod`` is the claim's controlling owner: by name, and by uid where both are known (upstream
        compares the uids)."""
        return self.owner_pod == pod.key and not (self.owner_uid and pod.uid and self.owner_uid != pod.uid)

    @property
    def has_binding_conditions(self) -> bool:
        return self.allocation is not None and any(r.binding_conditions for r in self.allocation.results)

    def binding_state(self) -> tuple[bool, str]:
        """upstream isClaimReadyForBinding: (ready, why binding failed). Ready when every allocated device with
        binding conditions has all of them True in ``status.devices`` and none of its binding failure conditions
        True; a failure condition True is the failure (``device binding failed: claim=..., reason=...,
        message="..."``)."""
        if self.allocation is None:
            return False, ""
        for r in self.allocation.results:
            if not r.binding_conditions:
                continue
            conditions = self.device_conditions.get(r.device_id)
            if conditions is None:
                return False, ""
            true = {c.type: c for c in conditions if c.status == "True"}
            for name in r.binding_failure_conditions:
                failed = true.get(name)
                if failed is not None:
                    message = json.dumps(failed.message, ensure_ascii=False)
                    return False, f"device binding failed: claim={self.name}, reason={failed.reason}, message={message}"
            if any(name not in true for name in r.binding_conditions):
                return False, ""
        return True, ""

    def deallocate(self) -> None:
        """The allocation cleared (and the device statuses with it) and no pod reserved."""
        self.allocation = None
        self.reserved_for.clear()
        self.device_conditions = {}
        self.allocated_at = None


@dataclass
class ResourceClaimTemplate:
    name: str
    namespace: str
    spec: ClaimSpec
    source: str = ""


@dataclass(frozen=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...] = ()
    extended_resource_name: str = ""
    has_config: bool = False


@dataclass(frozen=True)
class CapacityPolicy:
    """A capacity's ``requestPolicy`` (DRAConsumableCapacity): the amount a share takes when the request names
    none (``default``), and the amounts a share may take (``validValues``, ascending, or ``validRange``)."""

    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()
    range_min: Fraction | None = None
    range_max: Fraction | None = None
    range_step: Fraction | None = None
    has_range: bool = False


@dataclass(frozen=True)
class Device:
    name: str
    cel: CelDevice
    consumes: tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...] = ()  # (counter set, counters)
    taints: tuple[Taint, ...] = ()
    node_name: str = ""
    all_nodes: bool = False
    node_selector: tuple[NodeSelectorTerm, ...] | None = None
    policies: tuple[tuple[str, CapacityPolicy], ...] = ()  # capacity name -> its requestPolicy
    # DRADeviceBindingConditions: the conditions kube-scheduler waits for at PreBind, those that fail the binding,
    # and whether an allocation of the device is tied to the node it was made for
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    binds_to_node: bool = False

    @property
    def allow_multiple(self) -> bool:
        return self.cel.allow_multiple_allocations

    def attribute(self, qualified: str) -> tuple[str, Any] | None:
        """upstream lookupAttribute: the fully qualified name, or the bare name when the domain is the driver's."""
        domain, _, ident = qualified.partition("/")
        for name, kind, value in self.cel.attributes:
            if name == qualified:
                return kind, value
        if domain != self.cel.driver:
            return None
        for name, kind, value in self.cel.attributes:
            if name == ident:
                return kind, value
        return None


@dataclass(frozen=True)
class ResourceSlice:
    name: str
    driver: str
    pool: str
    generation: int = 0
    slice_count: int = 1
    node_name: str = ""
    node_selector: tuple[NodeSelectorTerm, ...] | None = None
    all_nodes: bool = False
    per_device: bool = False
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...] = ()
    source: str = ""


def claim_name_for(pod: Pod, pod_claim: PodResourceClaim) -> str:
    """The name the resourceclaim controller gives the claim it makes for ``pod`` from a template:
    ``<pod>-<claim>-`` (both truncated in proportion when longer than 57 characters) and five characters the API
    server picks at random (here: derived from the pod's key and the claim's name, so that runs repeat)."""
    base = f"{pod.name}-{pod_claim.name}-"
    if len(base) > 57:
        pod_part = pod.name[: len(pod.name) * 57 // len(base)]
        claim_part = pod_claim.name[: len(pod_claim.name) * 57 // len(base)]
        base = f"{pod_part}-{claim_part}"
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha256(f"{pod.key}/{pod_claim.name}".encode()).digest()
    return base + "".join(alphabet[b % len(alphabet)] for b in digest[:5])


class ClaimWriteError(Exception):
    """The API server did not take a claim's write (the message says which claim and why)."""


class ClaimApi(Protocol):
    """Where a live scheduler records what DynamicResources decides (the API server); the simulator has none and
    records it in :class:`DraObjects` itself. Every method raises :class:`ClaimWriteError` when the write fails."""

    def reserve(self, claim: ResourceClaim, allocation: Allocation | None, pod: Pod, stamp: bool = False) -> None:
        """Write ``allocation`` (None: the claim is allocated already) into the claim's status and add the pod to
        its ``reservedFor``; ``stamp`` (device binding conditions on): the allocation gets its
        ``allocationTimestamp`` when it has none."""
        ...

    def unreserve(self, claim: ResourceClaim, pod: Pod) -> None:
        """Take the pod out of the claim's ``reservedFor``."""
        ...

    def create_extended(self, claim: ResourceClaim, pod: Pod) -> ResourceClaim:
        """Create the claim for the pod's DRA-backed extended resources (its name generated by the API server);
        answers the claim created."""
        ...

    def record_extended(self, pod: Pod, claim: ResourceClaim, mappings: list[tuple[str, str, str]]) -> None:
        """Write the pod's ``status.extendedResourceClaimStatus``: the claim's name and, per (container, resource),
        the claim's request that serves it."""
        ...

    def delete(self, claim: ResourceClaim) -> None: ...

    def deallocate(self, claim: ResourceClaim) -> None:
        """Clear the claim's allocation and ``reservedFor`` (PostFilter, for a claim no pod uses)."""
        ...


def pod_claim_keys(pod: Pod) -> set[str]:
    """The keys (namespace/name) of the pod's claims known by name: named in its spec, or (made from a template)
    in its ``status.resourceClaimStatuses``."""
    out: set[str] = set()
    for pc in pod.resource_claims:
        name = pc.claim_name or pod.resource_claim_statuses.get(pc.name)
        if name:
            out.add(f"{pod.namespace}/{name}")
    return out


@dataclass
class AllocatedState:
    """upstream structured.AllocatedState: the devices taken whole, the devices with at least one share, and per
    device the capacity its shares consume together."""

    dedicated: set[tuple[str, str, str]] = field(default_factory=set)
    shared: set[tuple[str, str, str]] = field(default_factory=set)
    capacity: dict[tuple[str, str, str], dict[str, Fraction]] = field(default_factory=dict)


DeviceKey = tuple[str, str, str]  # driver, pool, device


class _Held:
    """The allocated devices of every claim, kept up to date claim by claim (:meth:`DraObjects.changed`): per device
    how many results take it whole with DRAConsumableCapacity off (``every``) and on (``whole``), how many are
    shares, and which claims' shares consume its capacity. ``journal``: the devices whose state changed, in order
    (positions count from ``base``), for caches that recompute only the nodes of those devices."""

    def __init__(self) -> None:
        self.counted: dict[str, Allocation] = {}  # claim key -> the allocation counted for it
        self.every: dict[DeviceKey, int] = {}
        self.whole: dict[DeviceKey, int] = {}
        self.shares: dict[DeviceKey, int] = {}
        self.sharing: dict[DeviceKey, dict[str, None]] = {}  # device -> claims with a consumedCapacity on it
        self.off = AllocatedState()  # the view with DRAConsumableCapacity off (dedicated only)
        self.on = AllocatedState()
        self.journal: list[DeviceKey] = []
        self.base = 0
        self.sizes = (0, 0)  # the numbers of claims and of allocations in flight when last brought up to date

    @property
    def end(self) -> int:
        return self.base + len(self.journal)

    def since(self, pos: int) -> list[DeviceKey] | None:
        """The devices changed from journal position ``pos`` on, or None when the journal no longer reaches
        back that far (or was started again)."""
        if pos < self.base:
            return None
        return self.journal[pos - self.base :]

    def count(self, key: str, alloc: Allocation, step: int) -> None:
        for r in alloc.results:
            if r.admin_access:
                continue
            did = r.device_id
            self.journal.append(did)
            _bump(self.every, self.off.dedicated, did, step)
            if r.share_id is None:
                _bump(self.whole, self.on.dedicated, did, step)
                continue
            _bump(self.shares, self.on.shared, did, step)
            if r.consumed is not None:
                claims = self.sharing.setdefault(did, {})
                if step > 0:
                    claims[key] = None
                else:
                    claims.pop(key, None)
                    if not claims:
                        del self.sharing[did]

    def capacity_of(self, did: DeviceKey) -> None:
        """What the shares of ``did`` consume together, summed again from the claims that hold them."""
        claims = self.sharing.get(did)
        if not claims:
            self.on.capacity.pop(did, None)
            return
        have: dict[str, Fraction] = {}
        for key in claims:
            for r in self.counted[key].results:
                if r.device_id == did and not r.admin_access and r.share_id is not None and r.consumed is not None:
                    for name, amount in r.consumed:
                        have[name] = have.get(name, Fraction(0)) + amount
        self.on.capacity[did] = have


def _bump(counts: dict[DeviceKey, int], present: set[DeviceKey], did: DeviceKey, step: int) -> None:
    n = counts.get(did, 0) + step
    if n > 0:
        counts[did] = n
        present.add(did)
    else:
        counts.pop(did, None)
        present.discard(did)


@dataclass
class DraObjects:
    """Every DRA object of the cluster, and the allocated devices (those of claims with an allocation, and of
    claims whose allocation is in flight between Reserve and PreBind, or in live mode until the claim's watch shows
    the allocation written).

    ``api``: live mode's writer; with it PreBind writes claims to the API server and leaves this catalog to the
    informers (which alone change the claims here), and nothing here is released when a pod goes (the
    resourceclaim controller does it on the server).

    The allocated devices are kept claim by claim: whoever changes a claim's allocation or its entry in
    ``in_flight``, or adds or removes a claim, calls :meth:`changed` with its key (which bumps ``generation``). A
    bare ``generation += 1``, or a number of claims that differs from the count kept, makes the next
    :meth:`allocated_state` count every claim again."""

    classes: dict[str, DeviceClass] = field(default_factory=dict)
    claims: dict[str, ResourceClaim] = field(default_factory=dict)  # by namespace/name
    templates: dict[str, ResourceClaimTemplate] = field(default_factory=dict)  # by namespace/name
    slices: list[ResourceSlice] = field(default_factory=list)
    in_flight: dict[str, Allocation] = field(default_factory=dict)  # claim key -> allocation being bound
    extended_claims: dict[str, str] = field(default_factory=dict)  # pod key -> its extended-resource claim's key
    generation: int = 0
    api: ClaimApi | None = None
    incremental: ClassVar[bool] = True  # False: every claim counted again at each read (tests compare both)
    # the allocated devices as of ``_synced`` (a generation), brought up to date from the claims in ``_dirty``;
    # ``_noted``: the generation the last :meth:`changed` left (any other means a change it was not told of)
    _held: _Held | None = field(default=None, init=False, repr=False, compare=False)
    _synced: int = field(default=-1, init=False, repr=False, compare=False)
    _noted: int = field(default=0, init=False, repr=False, compare=False)
    _dirty: dict[str, None] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __bool__(self) -> bool:
        return bool(self.classes or self.claims or self.templates or self.slices)

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def changed(self, *keys: str) -> None:
        """The claims ``keys`` were added, removed, (de)allocated, or their allocation put in or taken out of
        ``in_flight`` (none: a change that allocates nothing, a class or a slice); bumps ``generation``."""
        if self.generation != self._noted:
            self._held = None  # a change nobody named happened before: count everything again
        self.generation += 1
        self._noted = self.generation
        for key in keys:
            self._dirty[key] = None

    def without_admin_access(self) -> tuple[DraObjects, int]:
        """The catalog as an API server with DRAAdminAccess off keeps it (it drops ``adminAccess`` from claims'
        and templates' requests and from allocation results), and how many objects lost it; ``self`` when
        none."""
        claims: dict[str, ResourceClaim] = {}
        templates: dict[str, ResourceClaimTemplate] = {}
        for key, claim in self.claims.items():
            results = claim.allocation.results if claim.allocation is not None else ()
            if admin_access_path(claim.spec, "spec", "") is None and not any(r.admin_access for r in results):
                continue
            allocation = claim.allocation
            if allocation is not None:
                allocation = replace(allocation, results=tuple(replace(r, admin_access=None) for r in results))
            claims[key] = replace(
                claim,
                spec=without_admin_access(claim.spec),
                allocation=allocation,
                reserved_for=list(claim.reserved_for),
            )
        for key, template in self.templates.items():
            if admin_access_path(template.spec, "spec", "") is not None:
                templates[key] = replace(template, spec=without_admin_access(template.spec))
        if not claims and not templates:
            return self, 0
        copy = replace(self, claims=self.claims | claims, templates=self.templates | templates)
        return copy, len(claims) + len(templates)

    def adopt(self, other: DraObjects) -> None:
        """Take the claims, templates and slices of ``other``, a catalog made from this one (``without_...``), in
        place: whoever holds this catalog reads them from now on; the allocated devices are counted again."""
        self.claims = other.claims
        self.templates = other.templates
        self.slices = other.slices
        self._held = None
        self.changed()

    def without_binding_conditions(self) -> tuple[DraObjects, int]:
        """The catalog as an API server with DRADeviceBindingConditions (or DRAResourceClaimDeviceStatus) off keeps
        it: devices' ``bindingConditions``, ``bindingFailureConditions`` and ``bindsToNode`` dropped from the
        ResourceSlices; and how many slices lost them (``self`` when none)."""
        slices: list[ResourceSlice] = []
        changed = 0
        for s in self.slices:
            if any(d.binding_conditions or d.binding_failure_conditions or d.binds_to_node for d in s.devices):
                plain = tuple(
                    replace(d, binding_conditions=(), binding_failure_conditions=(), binds_to_node=False)
                    for d in s.devices
                )
                s = replace(s, devices=plain)
                changed += 1
            slices.append(s)
        if not changed:
            return self, 0
        return replace(self, slices=slices), changed

    def allocated_devices(self) -> set[tuple[str, str, str]]:
        """Devices allocated to a claim (admin-access results do not count, as upstream's
        ListAllAllocatedDevices); a device's shares (results with a ``shareID``) count as the device. The set is
        the one kept up to date: read it, do not change it."""
        return self.allocated_state(False).dedicated

    def allocated_state(self, consumable: bool) -> AllocatedState:
        """upstream GatherAllocatedState: with DRAConsumableCapacity on, a result with a ``shareID`` is one share
        of its device (its ``consumedCapacity`` summed per device) and the device is not taken whole; off, every
        result takes its device whole. The state is the one kept up to date (read it, do not change it): valid
        until the next change."""
        held = self.held()
        return held.on if consumable else held.off

    def held(self) -> _Held:
        """The allocated devices brought up to date (see :meth:`changed`)."""
        held = self._held
        if (
            held is None
            or not self.incremental
            or self.generation != self._noted
            or held.sizes != (len(self.claims), len(self.in_flight))
        ):
            return self._recount()
        if self._synced != self.generation:
            for key in self._dirty:
                claim = self.claims.get(key)
                alloc = self.in_flight.get(key, claim.allocation) if claim is not None else None
                before = held.counted.get(key)
                if before is alloc:
                    continue
                touched = len(held.journal)
                if before is not None:
                    del held.counted[key]
                    held.count(key, before, -1)
                if alloc is not None:
                    held.counted[key] = alloc
                    held.count(key, alloc, 1)
                for did in dict.fromkeys(held.journal[touched:]):
                    if did in held.sharing or did in held.on.capacity:
                        held.capacity_of(did)
            self._dirty.clear()
            self._synced = self.generation
            held.sizes = (len(self.claims), len(self.in_flight))
            if len(held.journal) > 1 << 16:  # readers that fall behind start again (``base`` moves on)
                held.base += len(held.journal)
                held.journal = []
        return held

    def _recount(self) -> _Held:
        old = self._held
        held = _Held()
        if old is not None:
            held.base = old.base + len(old.journal) + 1  # a gap: every reader starts again
        for claim in self.claims.values():
            alloc = self.in_flight.get(claim.key, claim.allocation)
            if alloc is not None:
                held.counted[claim.key] = alloc
                held.count(claim.key, alloc, 1)
        for did in held.sharing:
            held.capacity_of(did)
        held.journal = []
        held.sizes = (len(self.claims), len(self.in_flight))
        self._held = held
        self._noted = self._synced = self.generation
        self._dirty.clear()
        return held

    def pod_claim_name(self, pod: Pod, pod_claim: PodResourceClaim) -> str | None:
        """upstream resourceclaim.Name: the claim's own name, the one in the pod's status, or (the controller
        having made it) the generated one; None when it was not made (no such template)."""
        if pod_claim.claim_name:
            return pod_claim.claim_name
        if pod_claim.name in pod.resource_claim_statuses:
            return pod.resource_claim_statuses[pod_claim.name]
        template = self.templates.get(f"{pod.namespace}/{pod_claim.template_name}")
        if template is None:
            return None
        name = claim_name_for(pod, pod_claim)
        key = f"{pod.namespace}/{name}"
        if key not in self.claims:
            self.claims[key] = ResourceClaim(
                name,
                pod.namespace,
                template.spec,
                uid=f"claim-{name}",
                owner_pod=pod.key,
                source=f"made from ResourceClaimTemplate {template.name} for pod {pod.key}",
            )
            self.changed(key)
        return name

    def release(self, pod: Pod, deleted: bool) -> None:
        """The pod no longer runs: it leaves its claims' reservedFor; a claim reserved for no pod is deallocated
        (the resourceclaim controller's job); a deleted pod's claims made from templates go with it, and so does
        the claim made for its DRA-backed extended resources."""
        keys = [
            f"{pod.namespace}/{pc.claim_name or pod.resource_claim_statuses.get(pc.name) or claim_name_for(pod, pc)}"
            for pc in pod.resource_claims
        ]
        extended = self.extended_claims.get(pod.key)
        if extended is not None:
            keys.append(extended)
            if deleted:
                del self.extended_claims[pod.key]
        for key in keys:
            claim = self.claims.get(key)
            if claim is None:
                continue
            if pod.key in claim.reserved_for:
                claim.reserved_for.remove(pod.key)
            if not claim.reserved_for:
                claim.deallocate()
            if deleted and claim.owner_pod == pod.key:
                del self.claims[claim.key]
            self.changed(key)


# -- reading ----------------------------------------------------------------------------------------------------


def _quantity(r: Reader, raw: object, path: str) -> Fraction:
    if isinstance(raw, dict):  # v1 DeviceCapacity {value: ...}
        data = r.fields(raw, path, ("value", "requestPolicy"))
        raw, path = data.get("value"), f"{path}.value"
    try:
        return parse_quantity(raw)
    except QuantityError as exc:
        r.errors.add(path, f"Invalid value: {raw!r}: {exc}")
        return Fraction(0)


def _qualified_name_errors(name: str) -> list[str]:
    domain, sep, ident = name.partition("/")
    out: list[str] = []
    if sep:
        out += dns1123_subdomain(domain)
    else:
        ident = domain
    if not ident or len(ident) > 64 or not all(c.isalnum() or c == "_" for c in ident) or not ident[0].isalpha():
        out.append(
            "Invalid value: must be a C identifier (matching regex [A-Za-z_][A-Za-z0-9_]*) of at most 64 "
            "characters, optionally with a DNS subdomain prefix and /"
        )
    return out


def _selectors(r: Reader, raw: object, path: str) -> tuple[str, ...]:
    out: list[str] = []
    for i, item in enumerate(r.list(raw, path)):
        p = f"{path}[{i}]"
        data = r.fields(item, p, _SELECTOR)
        if data.get("cel") is None:
            r.errors.add(f"{p}.cel", "Required value")
            continue
        cel = r.fields(data.get("cel"), f"{p}.cel", _CEL)
        expr = r.str(cel.get("expression"), f"{p}.cel.expression")
        if not expr:
            r.errors.add(f"{p}.cel.expression", "Required value")
            continue
        compiled = compile_selector(expr)
        if compiled.error:
            r.errors.add(f"{p}.cel.expression", f"Invalid value: {expr!r}: {compiled.error}")
        out.append(expr)
    return tuple(out)


def _tolerations(r: Reader, raw: object, path: str) -> tuple[Toleration, ...]:
    out: list[Toleration] = []
    for i, item in enumerate(r.list(raw, path)):
        p = f"{path}[{i}]"
        data = r.fields(item, p, _TOLERATION)
        op = r.one_of(data.get("operator"), f"{p}.operator", ("Equal", "Exists"), "Equal")
        effect = r.one_of(data.get("effect"), f"{p}.effect", ("", NO_SCHEDULE, NO_EXECUTE), "")
        key, value = r.str(data.get("key"), f"{p}.key"), r.str(data.get("value"), f"{p}.value")
        if op == "Exists" and value:
            r.errors.add(f"{p}.value", "Invalid value: must be empty when `operator` is 'Exists'")
        seconds = r.int(data.get("tolerationSeconds"), f"{p}.tolerationSeconds")
        out.append(Toleration(key, op, value, effect, seconds))
    return tuple(out)


def _exact(r: Reader, data: dict[str, Any], path: str, admin: bool = True) -> ExactRequest:
    cls = r.str(data.get("deviceClassName"), f"{path}.deviceClassName")
    if not cls:
        r.errors.add(f"{path}.deviceClassName", "Required value")
    else:
        for message in dns1123_subdomain(cls):
            r.errors.add(f"{path}.deviceClassName", f"Invalid value: {cls!r}: {message}")
    mode = r.one_of(data.get("allocationMode"), f"{path}.allocationMode", ALLOCATION_MODES, EXACT_COUNT)
    count = r.int(data.get("count"), f"{path}.count")
    if mode == EXACT_COUNT:
        if count is None:
            count = 1
        elif count <= 0:
            r.errors.add(f"{path}.count", f"Invalid value: {count}: must be greater than zero")
    elif count is not None and count != 0:
        r.errors.add(f"{path}.count", f"Invalid value: {count}: must not be specified when allocationMode is 'All'")
    capacity = None
    if data.get("capacity") is not None:
        capacity = _capacity_requests(r, data.get("capacity"), f"{path}.capacity")
    admin_access = None
    if admin and data.get("adminAccess") is not None:
        admin_access = r.bool(data.get("adminAccess"), f"{path}.adminAccess")
    return ExactRequest(
        cls,
        _selectors(r, data.get("selectors"), f"{path}.selectors"),
        mode,
        count or 0,
        admin_access,
        _tolerations(r, data.get("tolerations"), f"{path}.tolerations"),
        capacity,
    )


def _capacity_requests(r: Reader, raw: object, path: str) -> tuple[tuple[str, Fraction], ...]:
    """A request's ``capacity`` (DRAConsumableCapacity): ``requests``, capacity name -> amount a share takes."""
    data = r.fields(raw, path, _CAPACITY_REQUIREMENTS)
    out: list[tuple[str, Fraction]] = []
    for name, item in r.map(data.get("requests"), f"{path}.requests").items():
        p = f"{path}.requests.{name}"
        for message in _qualified_name_errors(str(name)):
            r.errors.add(p, message)
        amount = _quantity(r, item, p)
        if amount < 0:
            r.errors.add(p, f"Invalid value: {item!r}: must be greater than or equal to 0")
        out.append((str(name), amount))
    return tuple(sorted(out))


def admin_access_path(spec: ClaimSpec, path: str, api_version: str) -> str | None:
    """The field path of the first request asking for admin access (``adminAccess: true``), which the API server
    checks against the namespace's labels (upstream AuthorizedForAdmin); None when none asks."""
    for i, request in enumerate(spec.requests):
        if request.exactly is not None and request.exactly.admin_access:
            inner = "" if api_version == V1BETA1 else ".exactly"
            return f"{path}.devices.requests[{i}]{inner}.adminAccess"
    return None


def without_admin_access(spec: ClaimSpec) -> ClaimSpec:
    """The spec as the API server keeps it with DRAAdminAccess off: no request's ``adminAccess``."""
    requests = tuple(
        replace(r, exactly=replace(r.exactly, admin_access=None))
        if r.exactly is not None and r.exactly.admin_access is not None
        else r
        for r in spec.requests
    )
    return replace(spec, requests=requests)


def decode_claim_spec(r: Reader, raw: object, path: str, api_version: str) -> ClaimSpec:
    spec = r.fields(raw, path, _SPEC_CLAIM)
    dp = f"{path}.devices"
    devices = r.fields(spec.get("devices"), dp, _DEVICE_CLAIM)
    requests = _requests(r, devices.get("requests"), f"{dp}.requests", api_version == V1BETA1)
    names = {req.name for req in requests}
    constraints = _constraints(r, devices.get("constraints"), f"{dp}.constraints", names)
    r.list(devices.get("config"), f"{dp}.config")  # opaque driver configuration: not read
    return ClaimSpec(tuple(requests), tuple(constraints))


def _subrequests(r: Reader, raw: object, path: str) -> list[tuple[str, ExactRequest]]:
    subs: list[tuple[str, ExactRequest]] = []
    sub_names: set[str] = set()
    for j, sub in enumerate(r.list(raw, path)):
        sp = f"{path}[{j}]"
        sdata = r.fields(sub, sp, _SUB_REQUEST)
        sname = r.str(sdata.get("name"), f"{sp}.name")
        if not sname:
            r.errors.add(f"{sp}.name", "Required value")
        elif sname in sub_names:
            r.errors.add(f"{sp}.name", f'Duplicate value: "{sname}"')
        sub_names.add(sname)
        subs.append((sname, _exact(r, sdata, sp, admin=False)))
    if len(subs) > 8:
        r.errors.add(path, f"Too many: {len(subs)}: must have at most 8 items")
    return subs


def _requests(r: Reader, raw: object, dp: str, v1beta1: bool) -> list[DeviceRequest]:
    requests: list[DeviceRequest] = []
    names: set[str] = set()
    for i, item in enumerate(r.list(raw, dp)):
        p = f"{dp}[{i}]"
        data = r.fields(item, p, _REQUEST_V1BETA1 if v1beta1 else _REQUEST)
        name = r.str(data.get("name"), f"{p}.name")
        if not name:
            r.errors.add(f"{p}.name", "Required value")
        elif name in names:
            r.errors.add(f"{p}.name", f'Duplicate value: "{name}"')
        else:
            for message in dns1123_label(name):
                r.errors.add(f"{p}.name", f"Invalid value: {name!r}: {message}")
        names.add(name)
        exact_raw: Any = data.get("exactly")
        if v1beta1 and data.get("firstAvailable") is None:
            exact_raw = {k: v for k, v in data.items() if k not in ("name", "firstAvailable")}
        subs = _subrequests(r, data.get("firstAvailable"), f"{p}.firstAvailable")
        exact = None
        if exact_raw is not None and not subs:
            path_exact = p if v1beta1 else f"{p}.exactly"
            exact = _exact(r, r.fields(exact_raw, path_exact, _EXACT), path_exact)
        if exact is None and not subs:
            r.errors.add(p, "Required value: exactly one of `exactly` or `firstAvailable` is required")
        elif data.get("exactly") is not None and subs:
            r.errors.add(p, "Invalid value: exactly one of `exactly` or `firstAvailable` is required, not both")
        requests.append(DeviceRequest(name, exact, tuple(subs)))
    return requests


def _constraints(r: Reader, raw: object, path: str, names: set[str]) -> list[DeviceConstraint]:
    constraints: list[DeviceConstraint] = []
    for i, item in enumerate(r.list(raw, path)):
        p = f"{path}[{i}]"
        data = r.fields(item, p, _CONSTRAINT)
        reqs = tuple(r.str_list(data.get("requests"), f"{p}.requests"))
        for j, req in enumerate(reqs):
            if req.split("/", 1)[0] not in names:
                r.errors.add(
                    f"{p}.requests[{j}]", f'Invalid value: "{req}": must be the name of a request in the claim'
                )
        match = r.str(data.get("matchAttribute"), f"{p}.matchAttribute")
        distinct = r.str(data.get("distinctAttribute"), f"{p}.distinctAttribute")
        if bool(match) == bool(distinct):
            r.errors.add(p, "Required value: exactly one of `matchAttribute` or `distinctAttribute` is required")
        for key, value in (("matchAttribute", match), ("distinctAttribute", distinct)):
            if value and "/" not in value:
                r.errors.add(f"{p}.{key}", "Invalid value: must be a fully qualified name (a domain, a slash, a name)")
            elif value:
                for message in _qualified_name_errors(value):
                    r.errors.add(f"{p}.{key}", message)
        constraints.append(DeviceConstraint(reqs, match, distinct))
    return constraints


def _node_selector(r: Reader, raw: object, path: str) -> tuple[NodeSelectorTerm, ...] | None:
    if raw is None:
        return None
    data = r.fields(raw, path, ("nodeSelectorTerms",))
    terms = r.list(data.get("nodeSelectorTerms"), f"{path}.nodeSelectorTerms")
    if not terms:
        r.errors.add(f"{path}.nodeSelectorTerms", "Required value: must have at least one node selector term")
    return tuple(decode_node_selector_term(r, t, f"{path}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms))


def _counters(r: Reader, raw: object, path: str) -> tuple[tuple[str, Fraction], ...]:
    out: list[tuple[str, Fraction]] = []
    for name, item in r.map(raw, path).items():
        out.append((str(name), _quantity(r, item, f"{path}.{name}")))
    return tuple(out)


def _device(r: Reader, raw: object, path: str, driver: str, api_version: str) -> Device:
    data = r.fields(raw, path, ("name", "basic") if api_version == V1BETA1 else _DEVICE)
    name = r.str(data.get("name"), f"{path}.name")
    if not name:
        r.errors.add(f"{path}.name", "Required value")
    if api_version == V1BETA1:
        basic = {k: v for k, v in r.map(data.get("basic"), f"{path}.basic").items()}
        path = f"{path}.basic"
        data = {"name": name, **r.fields(basic, path, [k for k in _DEVICE if k != "name"])}
    attributes: list[tuple[str, str, Any]] = []
    for key, item in r.map(data.get("attributes"), f"{path}.attributes").items():
        ap = f"{path}.attributes.{key}"
        for message in _qualified_name_errors(str(key)):
            r.errors.add(ap, message)
        attr = r.fields(item, ap, _ATTRIBUTE)
        set_kinds = [k for k in _ATTRIBUTE if attr.get(k) is not None]
        if len(set_kinds) != 1:
            r.errors.add(ap, "Invalid value: exactly one value must be specified")
            continue
        kind = set_kinds[0]
        value: Any = attr[kind]
        if kind == "int":
            value = r.int(value, f"{ap}.int", 0)
        elif kind == "bool":
            value = r.bool(value, f"{ap}.bool")
        else:
            value = r.str(value, f"{ap}.{kind}")
            if kind == "version" and not is_semver(value):
                r.errors.add(
                    f"{ap}.version", f"Invalid value: {value!r}: must be a string compatible with semver.org spec 2.0.0"
                )
        attributes.append((str(key), kind, value))
    allow_multiple = r.bool(data.get("allowMultipleAllocations"), f"{path}.allowMultipleAllocations")
    capacity, policies = _device_capacity(r, data.get("capacity"), f"{path}.capacity", allow_multiple)
    consumes: list[tuple[str, tuple[tuple[str, Fraction], ...]]] = []
    for i, item in enumerate(r.list(data.get("consumesCounters"), f"{path}.consumesCounters")):
        cp = f"{path}.consumesCounters[{i}]"
        c = r.fields(item, cp, _CONSUMPTION)
        counters = {
            str(k): _quantity(r, r.fields(v, f"{cp}.counters.{k}", ("value",)).get("value"), f"{cp}.counters.{k}.value")
            for k, v in r.map(c.get("counters"), f"{cp}.counters").items()
        }
        consumes.append((r.str(c.get("counterSet"), f"{cp}.counterSet"), tuple(counters.items())))
    taints: list[Taint] = []
    for i, item in enumerate(r.list(data.get("taints"), f"{path}.taints")):
        tp = f"{path}.taints[{i}]"
        t = r.fields(item, tp, _TAINT)
        key = r.str(t.get("key"), f"{tp}.key")
        if not key:
            r.errors.add(f"{tp}.key", "Required value")
        effect = r.one_of(t.get("effect"), f"{tp}.effect", DEVICE_TAINT_EFFECTS)
        if t.get("effect") is None:
            r.errors.add(f"{tp}.effect", "Required value")
        taints.append(Taint(key, r.str(t.get("value"), f"{tp}.value"), effect))
    binding = tuple(r.str_list(data.get("bindingConditions"), f"{path}.bindingConditions"))
    failure = tuple(r.str_list(data.get("bindingFailureConditions"), f"{path}.bindingFailureConditions"))
    _binding_errors(r, binding, failure, path)
    return Device(
        name,
        interned(
            CelDevice(
                driver,
                tuple(attributes),
                capacity,
                allow_multiple,
            )
        ),
        tuple(consumes),
        tuple(taints),
        r.str(data.get("nodeName"), f"{path}.nodeName"),
        r.bool(data.get("allNodes"), f"{path}.allNodes"),
        _node_selector(r, data.get("nodeSelector"), f"{path}.nodeSelector"),
        policies,
        binding,
        failure,
        r.bool(data.get("bindsToNode"), f"{path}.bindsToNode"),
    )


BINDING_CONDITIONS_MAX = 4  # resourceapi.BindingConditionsMaxSize (and BindingFailureConditionsMaxSize)
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def _label_name_errors(value: str) -> list[str]:
    """upstream ValidateLabelName (a qualified name): an optional DNS subdomain and '/', then at most 63 characters,
    alphanumeric at both ends, '-', '_' or '.' between."""
    prefix, sep, name = value.rpartition("/")
    out = [f"prefix part {m}" for m in dns1123_subdomain(prefix)] if sep else []
    if not name or len(name) > 63 or not _LABEL_NAME.match(name):
        out.append(
            "name part must consist of at most 63 alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character"
        )
    return out


def _binding_errors(r: Reader, binding: tuple[str, ...], failure: tuple[str, ...], path: str) -> None:
    """upstream validateDeviceBindingParameters: at most four of each, qualified names, no repeats, no condition in
    both lists, and each list only with the other."""
    for key, values in (("bindingConditions", binding), ("bindingFailureConditions", failure)):
        if len(values) > BINDING_CONDITIONS_MAX:
            r.errors.add(f"{path}.{key}", f"Too many: {len(values)}: must have at most {BINDING_CONDITIONS_MAX} items")
        seen: set[str] = set()
        for i, value in enumerate(values):
            for message in _label_name_errors(value):
                r.errors.add(f"{path}.{key}[{i}]", f"Invalid value: {value!r}: {message}")
            if value in seen:
                r.errors.add(f"{path}.{key}[{i}]", f'Duplicate value: "{value}"')
            seen.add(value)
    for i, value in enumerate(failure):
        if value in binding:
            r.errors.add(
                f"{path}.bindingFailureConditions[{i}]",
                f"Invalid value: {value!r}: bindingFailureConditions must not overlap with bindingConditions",
            )
    if failure and not binding:
        r.errors.add(
            f"{path}.bindingConditions", "Invalid value: bindingConditions are required to use bindingFailureConditions"
        )
    if binding and not failure:
        r.errors.add(
            f"{path}.bindingFailureConditions",
            "Invalid value: bindingFailureConditions are required to use bindingConditions",
        )


def _device_capacity(
    r: Reader, raw: object, path: str, allow_multiple: bool
) -> tuple[tuple[tuple[str, Fraction], ...], tuple[tuple[str, CapacityPolicy], ...]]:
    """A device's ``capacity``: name -> value (v1: ``{value, requestPolicy}``; v1beta1: a bare quantity), and the
    request policies, which only a device with ``allowMultipleAllocations`` may have."""
    values: list[tuple[str, Fraction]] = []
    policies: list[tuple[str, CapacityPolicy]] = []
    for name, item in r.map(raw, path).items():
        p = f"{path}.{name}"
        for message in _qualified_name_errors(str(name)):
            r.errors.add(p, message)
        if not isinstance(item, dict):
            values.append((str(name), _quantity(r, item, p)))
            continue
        data = r.fields(item, p, _CAPACITY)
        value = _quantity(r, data.get("value"), f"{p}.value")
        values.append((str(name), value))
        if data.get("requestPolicy") is None:
            continue
        pp = f"{p}.requestPolicy"
        if not allow_multiple:
            r.errors.add(pp, "Forbidden: allowMultipleAllocations must be true")
            continue
        policies.append((str(name), _request_policy(r, data.get("requestPolicy"), pp, value)))
    return tuple(values), tuple(policies)


def _optional_quantity(r: Reader, raw: object, path: str) -> Fraction | None:
    return None if raw is None else _quantity(r, raw, path)


def _show(q: Fraction) -> str:
    if q.denominator == 1:
        return str(q.numerator)
    milli = q * 1000
    return f"{milli.numerator}m" if milli.denominator == 1 else str(float(q))


def _request_policy(r: Reader, raw: object, path: str, capacity: Fraction) -> CapacityPolicy:
    """upstream validateRequestPolicy, with exact arithmetic (a multiple of ``step`` from ``min`` is checked on
    the values as written; upstream's milli-value and integer paths agree with it for values in whole milli
    units, which is what the API server accepts with DRAFractionalCapacityRange)."""
    data = r.fields(raw, path, _REQUEST_POLICY)
    default = _optional_quantity(r, data.get("default"), f"{path}.default")
    values_raw = data.get("validValues")
    range_raw = data.get("validRange")
    if values_raw and range_raw is not None:
        r.errors.add(
            path,
            'Forbidden: exactly one policy can be specified, cannot specify "validValues" and '
            '"validRange" at the same time',
        )
        return CapacityPolicy(default)
    if values_raw:
        return _valid_values(r, values_raw, path, default, capacity)
    if range_raw is None:
        return CapacityPolicy(default)
    return _valid_range(r, range_raw, f"{path}.validRange", path, default, capacity)


def _valid_values(r: Reader, raw: object, path: str, default: Fraction | None, capacity: Fraction) -> CapacityPolicy:
    vp = f"{path}.validValues"
    values = [_quantity(r, v, f"{vp}[{i}]") for i, v in enumerate(r.list(raw, vp))]
    if default is None:
        r.errors.add(f"{path}.default", "Required value: required when validValues is defined")
        return CapacityPolicy(default, tuple(values))
    for i in range(len(values) - 1):
        if values[i] > values[i + 1]:
            r.errors.add(
                f"{vp}[{i + 1}]",
                f"Invalid value: {_show(values[i + 1])!r}: values must be sorted in ascending order",
            )
    if len(values) > REQUEST_POLICY_MAX_OPTIONS:
        r.errors.add(vp, f"Too many: {len(values)}: must have at most {REQUEST_POLICY_MAX_OPTIONS} items")
    seen: set[Fraction] = set()
    for i, v in enumerate(values):
        if v in seen:
            r.errors.add(f"{vp}[{i}]", f"Duplicate value: {_show(v)!r}")
        seen.add(v)
        if v > capacity:
            r.errors.add(
                f"{vp}[{i}]",
                f"Invalid value: {_show(v)!r}: option is larger than capacity value: {_show(capacity)}",
            )
    if default not in seen:
        r.errors.add(
            vp, f"Invalid value: {_show(default)!r}: default value is not valid according to the requestPolicy"
        )
    return CapacityPolicy(default, tuple(values))


def _valid_range(
    r: Reader, raw: object, rp: str, path: str, default: Fraction | None, capacity: Fraction
) -> CapacityPolicy:
    rng = r.fields(raw, rp, _VALID_RANGE)
    low = _optional_quantity(r, rng.get("min"), f"{rp}.min")
    high = _optional_quantity(r, rng.get("max"), f"{rp}.max")
    step = _optional_quantity(r, rng.get("step"), f"{rp}.step")
    policy = CapacityPolicy(default, (), low, high, step, True)
    if default is None:
        r.errors.add(f"{path}.default", "Required value: required when validRange is defined")
        return policy
    if low is None:
        r.errors.add(f"{rp}.min", "Required value: required when validRange is defined")
        return policy
    if low > capacity:
        r.errors.add(
            f"{rp}.min", f"Invalid value: {_show(low)!r}: min is larger than capacity value: {_show(capacity)}"
        )
    if default < low:
        r.errors.add(f"{rp}.default", f"Invalid value: {_show(default)!r}: default is less than min: {_show(low)}")
    if high is not None:
        _range_max(r, rp, low, high, default, capacity)
    for label, q in (("default", default), ("min", low), ("max", high), ("step", step)):
        if q is not None and (q * 1000).denominator != 1:
            r.errors.add(f"{rp}.{label}", f"Invalid value: {float(q)!r}: value cannot be represented as a milli value")
            return policy
    if step is None:
        return policy
    if step <= 0:
        r.errors.add(f"{rp}.step", f"Invalid value: {_show(step)!r}: must be greater than zero")
        return policy
    if low + step > capacity:
        r.errors.add(
            f"{rp}.step",
            f"Invalid value: {_show(step)!r}: one step {_show(low + step)} is larger than "
            f"capacity value: {_show(capacity)}",
        )
    for value in (default, high):
        if value is not None and ((value - low) / step).denominator != 1:
            r.errors.add(
                f"{rp}.step",
                f"Invalid value: {_show(value)!r}: value is not a multiple of a given step "
                f"({_show(step)}) from ({_show(low)})",
            )
    return policy


def _range_max(r: Reader, rp: str, low: Fraction, high: Fraction, default: Fraction, capacity: Fraction) -> None:
    if low > high:
        r.errors.add(f"{rp}.max", f"Invalid value: {_show(low)!r}: min is larger than max: {_show(high)}")
    if high > capacity:
        r.errors.add(
            f"{rp}.max", f"Invalid value: {_show(high)!r}: max is larger than capacity value: {_show(capacity)}"
        )
    if default > high:
        r.errors.add(f"{rp}.default", f"Invalid value: {_show(default)!r}: default is more than max: {_show(high)}")


def decode_slice(r: Reader, data: dict[str, Any], name: str, api_version: str) -> ResourceSlice:
    spec = r.fields(data.get("spec"), "spec", _SLICE_SPEC)
    driver = r.str(spec.get("driver"), "spec.driver")
    if not driver:
        r.errors.add("spec.driver", "Required value")
    pool = r.fields(spec.get("pool"), "spec.pool", _POOL)
    pool_name = r.str(pool.get("name"), "spec.pool.name")
    if not pool_name:
        r.errors.add("spec.pool.name", "Required value")
    generation = r.int(pool.get("generation"), "spec.pool.generation", 0) or 0
    count = r.int(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount", 0) or 0
    if count <= 0:
        r.errors.add("spec.pool.resourceSliceCount", f"Invalid value: {count}: must be greater than zero")
    node_name = r.str(spec.get("nodeName"), "spec.nodeName")
    node_selector = _node_selector(r, spec.get("nodeSelector"), "spec.nodeSelector")
    all_nodes = r.bool(spec.get("allNodes"), "spec.allNodes")
    per_device = r.bool(spec.get("perDeviceNodeSelection"), "spec.perDeviceNodeSelection")
    shared: list[tuple[str, tuple[tuple[str, Fraction], ...]]] = []
    for i, item in enumerate(r.list(spec.get("sharedCounters"), "spec.sharedCounters")):
        sp = f"spec.sharedCounters[{i}]"
        cs = r.fields(item, sp, _COUNTER_SET)
        counters = {
            str(k): _quantity(r, r.fields(v, f"{sp}.counters.{k}", ("value",)).get("value"), f"{sp}.counters.{k}.value")
            for k, v in r.map(cs.get("counters"), f"{sp}.counters").items()
        }
        shared.append((r.str(cs.get("name"), f"{sp}.name"), tuple(counters.items())))
    chosen = sum(bool(x) for x in (node_name, node_selector is not None, all_nodes, per_device))
    if chosen > 1:
        r.errors.add(
            "spec",
            f"Invalid value: exactly one of {_NODE_FIELDS} is required, but multiple fields are set",
        )
    elif chosen == 0 and not shared:
        r.errors.add(
            "spec",
            f"Required value: exactly one of {_NODE_FIELDS} is required",
        )
    devices = tuple(
        _device(r, d, f"spec.devices[{i}]", driver, api_version)
        for i, d in enumerate(r.list(spec.get("devices"), "spec.devices"))
    )
    if len(devices) > 128:
        r.errors.add("spec.devices", f"Too many: {len(devices)}: must have at most 128 items")
    return ResourceSlice(
        name,
        driver,
        pool_name,
        generation,
        count,
        node_name,
        node_selector,
        all_nodes,
        per_device,
        devices,
        tuple(shared),
    )


def decode_device_class(r: Reader, data: dict[str, Any], name: str) -> DeviceClass:
    spec = r.fields(data.get("spec"), "spec", _CLASS_SPEC)
    return DeviceClass(
        name,
        _selectors(r, spec.get("selectors"), "spec.selectors"),
        r.str(spec.get("extendedResourceName"), "spec.extendedResourceName"),
        bool(r.list(spec.get("config"), "spec.config")),
    )


def decode_claim_status(r: Reader, raw: object, claim: ResourceClaim) -> None:
    status = r.fields(raw, "status", _CLAIM_STATUS)
    if status.get("allocation") is not None:
        alloc = r.fields(status.get("allocation"), "status.allocation", _ALLOCATION)
        devices = r.fields(alloc.get("devices"), "status.allocation.devices", _DEVICE_ALLOCATION)
        results: list[DeviceResult] = []
        for i, item in enumerate(r.list(devices.get("results"), "status.allocation.devices.results")):
            p = f"status.allocation.devices.results[{i}]"
            d = r.fields(item, p, _RESULT)
            admin = d.get("adminAccess")
            share = d.get("shareID")
            share_id = None
            if share is not None:
                share_id = r.str(share, f"{p}.shareID")
                if not _UID.match(share_id):
                    r.errors.add(
                        f"{p}.shareID", f"Invalid value: {share_id!r}: must be a lowercase UUID in 8-4-4-4-12 format"
                    )
            consumed = None
            if d.get("consumedCapacity") is not None:
                consumed = tuple(sorted(_counters(r, d.get("consumedCapacity"), f"{p}.consumedCapacity")))
            results.append(
                DeviceResult(
                    r.str(d.get("request"), f"{p}.request"),
                    r.str(d.get("driver"), f"{p}.driver"),
                    r.str(d.get("pool"), f"{p}.pool"),
                    r.str(d.get("device"), f"{p}.device"),
                    None if admin is None else r.bool(admin, f"{p}.adminAccess"),
                    share_id,
                    consumed,
                    tuple(r.str_list(d.get("bindingConditions"), f"{p}.bindingConditions")),
                    tuple(r.str_list(d.get("bindingFailureConditions"), f"{p}.bindingFailureConditions")),
                    _tolerations(r, d.get("tolerations"), f"{p}.tolerations"),
                )
            )
        claim.allocation = Allocation(
            tuple(results), _node_selector(r, alloc.get("nodeSelector"), "status.allocation.nodeSelector")
        )
    for i, item in enumerate(r.list(status.get("devices"), "status.devices")):
        p = f"status.devices[{i}]"
        d = r.fields(item, p, _DEVICE_STATUS)
        did = (
            r.str(d.get("driver"), f"{p}.driver"),
            r.str(d.get("pool"), f"{p}.pool"),
            r.str(d.get("device"), f"{p}.device"),
        )
        claim.device_conditions[did] = _device_conditions(r, d.get("conditions"), f"{p}.conditions")
    for i, item in enumerate(r.list(status.get("reservedFor"), "status.reservedFor")):
        ref = r.fields(item, f"status.reservedFor[{i}]", _REFERENCE)
        if r.str(ref.get("resource"), f"status.reservedFor[{i}].resource") == "pods":
            claim.reserved_for.append(f"{claim.namespace}/{r.str(ref.get('name'), f'status.reservedFor[{i}].name')}")


def _device_conditions(r: Reader, raw: object, path: str) -> tuple[DeviceCondition, ...]:
    out: list[DeviceCondition] = []
    for j, item in enumerate(r.list(raw, path)):
        cp = f"{path}[{j}]"
        c = r.fields(item, cp, _CONDITION)
        kind = r.str(c.get("type"), f"{cp}.type")
        if not kind:
            r.errors.add(f"{cp}.type", "Required value")
        status = r.one_of(c.get("status"), f"{cp}.status", ("True", "False", "Unknown"))
        if not status:
            r.errors.add(f"{cp}.status", "Required value")
        out.append(
            DeviceCondition(
                kind, status, r.str(c.get("reason"), f"{cp}.reason"), r.str(c.get("message"), f"{cp}.message")
            )
        )
    return tuple(out)
