"""DynamicResources: a pod's ResourceClaims (spec.resourceClaims) must get devices on the node
(upstream ``pkg/scheduler/framework/plugins/dynamicresources``, structured parameters).

- PreEnqueue: every claim must exist (a claim made from a template exists once the resourceclaim controller made
  it, which the simulator does as the pod is created when the template exists): else the pod waits with upstream's
  message (``pod "ns/name": ResourceClaim not created yet``, ``could not find ResourceClaim "ns/name"``, a claim
  being deleted, a claim made for another pod).
- PreFilter: the same checks; an allocated claim reserved for the maximum of pods is "resourceclaim in use"; an
  unallocated claim whose allocation is in flight waits; each request's DeviceClass must exist ("request r: device
  class c does not exist"). A pod without claims skips the plugin.
- Filter: the unallocated claims must get devices there from the node's ResourceSlices ("cannot allocate all
  claims"; the allocator is :mod:`packsched.backend.dra.allocator`), and then an allocated claim's node selector
  must admit the node ("resourceclaim not available on the node": the allocation is tried first, as upstream).
  A claim, class or selector the allocator reports as an error (a CEL runtime error, a missing class) ends the
  scheduling cycle with an Error, its text the pod's message (``running "DynamicResources" filter plugin: ...``;
  upstream evaluates nodes in parallel and stops at the first error, packsched takes the nodes in order); an
  invalid pool only rejects the node. Every rejection is UnschedulableAndUnresolvable (preemption does not free
  devices, as upstream 1.34). Claims that ask only for ExactCount devices of one class with the same selectors are
  decided by per-node counts of free matching devices (:mod:`.devindex`) on the nodes where that is exact, and the
  allocator then runs on the node Reserve takes only.
- Reserve: the node's allocations are held in flight (other pods' allocators see those devices taken);
  Unreserve releases them. PreBind writes each claim's ``status.allocation`` and adds the pod to
  ``status.reservedFor``. In live mode (``DraObjects.api``) PreBind writes them to the API server, claim by claim,
  before the pod is bound (a claim the pod already holds is left alone); the allocation stays in flight until the
  claim's watch shows it. A write that fails fails the binding cycle: Unreserve takes the pod out of the claims it
  was written into and deletes the claim it created, the devices go back and the pod is retried.

When a pod that holds claims is deleted or completes, it leaves their ``reservedFor``; a claim reserved for no pod
is deallocated, and a deleted pod's claims made from templates are deleted with it (the resourceclaim controller's
and the garbage collector's jobs, done here in the simulator).

- PostFilter: "no new claims to deallocate" for a pod without claims (it joins DefaultPreemption's message, as
  upstream's does); else an allocated claim that kept the pod off a node and that no other pod uses is deallocated
  ("deallocation of ResourceClaim completed"; the status write's event sends the pod back to be tried after its
  backoff), or "still not schedulable". From 1.37 the first and the last are
  said without words (``KubeVersion.dra_post_filter_message``).
- PodGroupPostFilter (1.37, a pod group that found no placement; podgroup_placement.py calls it): the same, once per
  pod of the cycle that reached PreFilter, then "deallocation and deletion of ResourceClaims completed".

DRA-backed extended resources (DRAExtendedResource, 1.36+): a pod asking for an extended resource that a
DeviceClass serves (``spec.extendedResourceName``, or ``deviceclass.resource.kubernetes.io/<class>``) gets, on each
node that does not advertise the resource, a claim made by the scheduler for it (one device request of the class
per container asking, count = its amount; :mod:`packsched.backend.dra.extended`), allocated with the pod's own
claims; a node lacking a requested resource that no class serves is "cannot fit resource". Reserve holds that
claim's devices in flight, PreBind records it (the simulator keeps it internal: ``DraObjects.extended_claims``;
live mode creates it on the API server, named ``<pod>-extended-resources-<5 characters>`` and owned by the pod,
writes its allocation, and writes the pod's ``status.extendedResourceClaimStatus``), and it is deallocated when the
pod ends and deleted with the pod.

Device binding conditions (DRADeviceBindingConditions, 1.36+): PreBind writes the claims, then waits until the
allocated devices' binding conditions are True in the claims' ``status.devices`` (answering Wait: the scheduler asks
again after 5 s; live mode waits on its binding worker), fails on a binding failure condition or after
``bindingTimeout`` (DynamicResourcesArgs, 600 s by default), and Filter then finds such a claim unavailable so that
PostFilter deallocates it. Consumable capacity: :mod:`packsched.backend.dra.capacity`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from packsched.api.decode import Reader
from packsched.api.dra import (
    ALL,
    ALLOCATION_RESULTS_MAX,
    EXACT_COUNT,
    RESERVED_FOR_MAX,
    Allocation,
    ClaimApi,
    ClaimSpec,
    ClaimWriteError,
    DeviceClass,
    DraObjects,
    ResourceClaim,
)
from packsched.api.errors import ErrorList
from packsched.api.objects import Node, NodeSelectorTerm, Pod
from packsched.backend.dra.allocator import (
    AllocationError,
    Allocator,
    Features,
    NodeAllocationError,
    node_matches_terms,
)
from packsched.backend.dra.capacity import quantity_text
from packsched.backend.dra.extended import (
    backed_resources,
    claim_requests,
    extended_claim_name,
    is_dra_extended_name,
    request_mappings,
)
from packsched.config.args import (
    decode_dynamic_resources_args,
    default_dynamic_resources_args,
    validate_dynamic_resources_args,
)
from packsched.config.types import DynamicResourcesArgs, PluginArgs
from packsched.config.versions import KubeVersion
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis
from packsched.framework.interface import (
    DELETE,
    DRA,
    DRA_CHANGE,
    POD,
    RESOURCE_CLAIM,
    UPDATE,
    ClusterEvent,
    Handle,
    NodeSel,
    PostFilterResult,
    Rejection,
    SignFragments,
)
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.framework.status import Code, PluginError, Status
from packsched.plugins.dynamicresources.devindex import DeviceIndex, Matcher, Verdicts
from packsched.plugins.helper.dra import FOUND_KEY
from packsched.plugins.helper.normalize import default_normalize_score

NAME = "DynamicResources"
FIRST_AVAILABLE_MAX_SIZE = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize
STATE_KEY = "PreFilter" + NAME
ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_NOT_AVAILABLE = "resourceclaim not available on the node"
# PostFilter's answers
MSG_NO_CLAIMS = "no new claims to deallocate"
# Written by every PreFilter call (upstream writes its cycle state before it skips a pod without claims). A cycle
# whose PreFilter never ran (an earlier PreFilter plugin rejected the pod) has none, and upstream's PostFilter then
# fails to read its state: an Error that ends PostFilter (no preemption) and words the pod's message.
PRE_FILTERED_KEY = "PreFilter" + NAME + "/ran"
MSG_STATE_NOT_FOUND = "not found"
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"
MSG_STILL_UNSCHEDULABLE = "still not schedulable"
MSG_POD_GROUP_DONE = "deallocation and deletion of ResourceClaims completed"  # PodGroupPostFilter's answer
ERR_IN_USE = "resourceclaim in use"
ERR_CANNOT_FIT = "cannot fit resource"  # a requested extended resource neither advertised nor served by a class
# the pod's extended-resource claim an earlier cycle made is still there: every node refuses, PostFilter deletes it
ERR_LEFTOVER_EXTENDED = "cannot schedule extended resource claim"
MSG_EXTENDED_DELETED = "deletion of ResourceClaim completed"
ERR_NOT_TRACKED = "packsched does not track ResourceClaims here: the pod's claims cannot be allocated"
# device binding conditions (DRADeviceBindingConditions): PreBind polls the claims every 5 s until every condition is
# True, a failure condition is True (ErrDeviceBindingFailed) or the binding timeout passes (ErrDeviceBindingTimeout)
BINDING_TIMEOUT_S = 600.0  # DynamicResourcesBindingTimeoutDefault (the plugin args' bindingTimeout)
BINDING_POLL_S = 5.0
ERR_BINDING_TIMEOUT = "device binding timeout"

_UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
_UNBOUNDED = 10**6  # _local_free's count for a device that may be allocated many times


class _Found(Mapping[str, list[Allocation]]):
    """Per node name: the allocation of each claim to allocate that Filter found there. A node the device counts
    let through (devindex.py) gets its allocation when it is first asked for: the allocator runs on that node
    then (Reserve's node, as a rule), as Filter left the cluster."""

    def __init__(self) -> None:
        self.known: dict[str, list[Allocation]] = {}
        self.snap: Snapshot | None = None
        self.lazy: np.ndarray | None = None  # per column: the allocation is still to be made
        self.make: Callable[[int], list[Allocation] | None] | None = None

    def __setitem__(self, name: str, found: list[Allocation]) -> None:
        self.known[name] = found

    def __getitem__(self, name: str) -> list[Allocation]:
        found = self.known.get(name)
        if found is not None:
            return found
        snap, lazy, make = self.snap, self.lazy, self.make
        col = snap.index.get(name) if snap is not None else None
        if col is None or lazy is None or make is None or col >= len(lazy) or not lazy[col]:
            raise KeyError(name)
        lazy[col] = False
        made = make(col)
        if made is None:  # the counts and the allocator disagree: no allocation rather than a wrong one
            raise KeyError(name)
        self.known[name] = made
        return made

    def _names(self) -> list[str]:
        names = list(self.known)
        if self.snap is not None and self.lazy is not None:
            names += [self.snap.nodes[int(c)].name for c in np.flatnonzero(self.lazy)]
        return names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self.known) + (int(self.lazy.sum()) if self.lazy is not None else 0)


@dataclass
class _State:
    claims: list[ResourceClaim]
    to_allocate: list[ResourceClaim]
    allocator: Allocator | None
    min_devices: int  # a lower bound on the devices the claims to allocate need (0: no shortcut)
    verdicts: dict[int, tuple[str, str]] = field(default_factory=dict)  # node column -> ("" | reason, kind)
    allocations: _Found = field(default_factory=_Found)  # node name -> one per claim
    local_free: dict[int, int] = field(default_factory=dict)  # node column -> unallocated devices of its own slices
    # the device counts' shortcut (devindex.py): the claims' one matcher and how many devices they take; per Filter
    # call, the columns and which of them it let through
    matcher: Matcher | None = None
    need: int = 0
    counted: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    # the allocator's verdicts kept between cycles for claims of the same specs (devindex.Verdicts), and the
    # columns' versions they hold for
    signature: tuple[object, ...] | None = None
    kept: tuple[Verdicts, np.ndarray] | None = None
    reserved: list[str] = field(default_factory=list)  # claim keys held in flight by Reserve
    unavailable: set[int] = field(default_factory=set)  # allocated claims (by index) some node could not reach
    # DRA-backed extended resources (DRAExtendedResource): the pod's requests that a DeviceClass serves
    extended: dict[str, DeviceClass] = field(default_factory=dict)
    ext_requests: dict[str, int] = field(default_factory=dict)  # every extended resource the pod requests
    ext_allocations: dict[str, tuple[ResourceClaim, Allocation]] = field(default_factory=dict)  # by node name
    # by node name: the extended resources that node gives through DRA (what the claim made for it requests)
    ext_needed: dict[str, dict[str, DeviceClass]] = field(default_factory=dict)
    # the claim an earlier cycle made for the pod's extended resources, still on the server (upstream PreFilter
    # finds it by its annotation and controlling owner): Filter refuses every node and PostFilter deletes it
    leftover: ResourceClaim | None = None
    pod: Pod | None = None
    # live mode: the claims PreBind reserved for the pod on the API server (with the keys of those it wrote an
    # allocation into), and the extended-resource claim it made
    written: list[ResourceClaim] = field(default_factory=list)
    allocated: set[str] = field(default_factory=set)
    created: ResourceClaim | None = None
    binding_since: float | None = None  # when PreBind began waiting for device binding conditions

    def clone(self) -> _State:
        return self  # the verdicts do not depend on the pods placed (preemption does not free devices)


def _prioritized_list_score(claims: list[ResourceClaim], allocations: list[Allocation]) -> int:
    score = 0
    for claim, alloc in zip(claims, allocations, strict=False):
        taken = {r.request for r in alloc.results if "/" in r.request}
        for request in claim.spec.requests:
            for index, (sub_name, _sub) in enumerate(request.first_available):
                if f"{request.name}/{sub_name}" in taken:
                    score += FIRST_AVAILABLE_MAX_SIZE - index
    return score


def allocator_features(v: KubeVersion) -> Features:
    """The allocator's features at kube-scheduler ``v`` (its release and the feature gates set)."""
    return Features(
        admin_access=v.dra_admin_access,
        prioritized_list=v.dra_prioritized_list,
        partitionable_devices=v.dra_partitionable_devices,
        device_taints=v.dra_device_taints,
        cel_error_names_device=v.dra_cel_error_names_device,
        consumable_capacity=v.dra_consumable_capacity,
        fractional_capacity_range=v.dra_fractional_capacity_range,
        capacity_checks_1_37=v.minor >= 37,
        counters_1_36=v.dra_counters_1_36,
        counters_1_37=v.dra_counters_1_37,
        claim_limit_per_request=v.minor >= 37,
        device_binding=v.dra_device_binding,
    )


def pod_claims(pod: Pod, dra: DraObjects, capitalized: bool = True) -> tuple[list[ResourceClaim], str]:
    """upstream foreachPodResourceClaim: the pod's claims, or why the pod cannot be scheduled yet. A claim made
    from a template must be controlled by the pod: by name, and by uid where both are known (upstream compares
    the uids); ``capitalized``: 1.36+ words that refusal with "Pod" (1.34-1.35: "pod")."""
    out: list[ResourceClaim] = []
    for pc in pod.resource_claims:
        name = dra.pod_claim_name(pod, pc)
        if name is None:
            return out, f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet'
        claim = dra.claim(pod.namespace, name)
        if claim is None:
            return out, f'could not find ResourceClaim "{pod.namespace}/{name}"'
        if claim.deleting:
            return out, f'resourceclaim "{claim.name}" is being deleted'
        if pc.template_name and not claim.controlled_by(pod):
            word = "Pod" if capitalized else "pod"
            return out, (
                f"ResourceClaim {claim.namespace}/{claim.name} was not created for {word} {pod.namespace}/{pod.name} "
                f"({word} is not owner)"
            )
        out.append(claim)
    return out, ""


class DynamicResources:
    name = NAME
    fast = True  # the device counts' shortcut (devindex.py); False: the allocator decides every node (tests)
    cluster_events = (POD,)
    cluster_reads = (DRA,)  # live mode watches the DRA objects for it
    # a pod held back at PreEnqueue (its claims not created yet) runs it again when claims appear (live mode)
    pre_enqueue_events = frozenset({DRA_CHANGE})

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod): None for a pod
        with resource claims."""
        return None if pod.pod.resource_claims else {}

    def __init__(self, handle: Handle, args: PluginArgs | None = None) -> None:
        self.handle = handle
        v = handle.kube_version
        self.features = allocator_features(v)
        self.binding_timeout = parse_args(args, v)
        self.extended_resources = v.dra_extended_resource
        self.capitalized = v.minor >= 36  # "was not created for Pod ... (Pod is not owner)"
        self.index = DeviceIndex(self.features)

    # -- PreEnqueue ----------------------------------------------------------------------------------------

    def pre_enqueue(self, pod: PodInfo) -> Status:
        dra = self.handle.dra()
        if not pod.pod.resource_claims:
            return Status()
        if dra is None:  # a scheduler without a DRA catalog: better wait than bind without devices
            return Status.unschedulable(ERR_NOT_TRACKED, plugin=NAME, unresolvable=True)
        _claims, why = pod_claims(pod.pod, dra, self.capitalized)
        if why:
            return Status.unschedulable(why, plugin=NAME, unresolvable=True)
        return Status()

    # -- PreFilter -----------------------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        state.write(PRE_FILTERED_KEY, True)
        dra = self.handle.dra()
        if dra is None:
            return Status.skip()
        # no DeviceClass: nothing backs an extended resource
        extended = backed_resources(dra, pod.requests) if self.extended_resources and dra.classes else {}
        if not pod.pod.resource_claims and not extended:
            return Status.skip()
        claims, why = pod_claims(pod.pod, dra, self.capitalized)
        if why:
            return Status.unschedulable(why, unresolvable=True)
        if not claims and not extended:
            return Status.skip()
        to_allocate: list[ResourceClaim] = []
        min_devices = 0
        for claim in claims:
            if claim.allocation is not None:
                if len(claim.reserved_for) >= RESERVED_FOR_MAX and pod.key not in claim.reserved_for:
                    return Status.unschedulable(ERR_IN_USE, unresolvable=True)
                continue
            to_allocate.append(claim)
            if claim.key in dra.in_flight:
                return Status.unschedulable(
                    f"resource claim {claim.key} is in the process of being allocated", unresolvable=True
                )
            st, need = self._check_requests(dra, claim)
            if st is not None:
                return st
            min_devices += need
        allocator = None
        if to_allocate or extended:
            held = dra.allocated_state(self.features.consumable_capacity)
            layout = self.index.layout(dra)
            allocator = Allocator(
                self.features,
                held.dedicated,
                dra.classes,
                layout.slices,
                held.shared,
                held.capacity,
                (layout.on_node, layout.shared),
                lambda node: layout.pools(node, self.features),
            )
        data = _State(claims, to_allocate, allocator, max(min_devices, 0))
        if self.fast and not extended:
            data.matcher, data.need = self._matcher(dra, to_allocate)
        if self.fast and to_allocate:
            names = {
                exact.device_class
                for c in to_allocate
                for r in c.spec.requests
                for exact in ([r.exactly] if r.exactly is not None else [sub for _n, sub in r.first_available])
            }
            data.signature = (
                tuple(c.spec for c in to_allocate),
                tuple((name, dra.classes.get(name)) for name in sorted(names)),
            )
        state.write(FOUND_KEY, data.allocations)  # filled by Filter; read by DevicePacking
        if extended:
            data.extended = extended
            data.pod = pod.pod
            data.leftover = _leftover_extended_claim(dra, pod.pod)
            data.ext_requests = {n: a for n, a in pod.requests.items() if a > 0 and is_dra_extended_name(n)}
        state.write(STATE_KEY, data)
        return Status()

    @staticmethod
    def _matcher(dra: DraObjects, claims: list[ResourceClaim]) -> tuple[Matcher | None, int]:
        """The one matcher (class and selectors) of the claims to allocate and the devices they take together, when
        the device counts decide them (devindex.py): ExactCount requests of one class and the same selectors, no
        subrequests, admin access, capacity requests or constraints."""
        key: tuple[str, tuple[str, ...]] | None = None
        need = 0
        for claim in claims:
            if claim.spec.constraints:
                return None, 0
            devices = 0
            for request in claim.spec.requests:
                exact = request.exactly
                if exact is None or request.first_available or exact.mode != EXACT_COUNT:
                    return None, 0
                if exact.admin_access is not None or exact.capacity is not None:
                    return None, 0
                if key is None:
                    key = (exact.device_class, exact.selectors)
                elif key != (exact.device_class, exact.selectors):
                    return None, 0
                devices += exact.count
            if devices > ALLOCATION_RESULTS_MAX:
                return None, 0
            need += devices
        cls = dra.classes.get(key[0]) if key is not None else None
        if key is None or cls is None:
            return None, 0
        return (cls, key[1]), need

    def _check_requests(self, dra: DraObjects, claim: ResourceClaim) -> tuple[Status | None, int]:
        """Every request's DeviceClass exists (and subrequests are allowed); also a lower bound on the devices
        the claim needs (negative: no bound, an admin-access request may take allocated devices)."""
        need = 0
        for request in claim.spec.requests:
            if request.exactly is not None:
                if request.exactly.admin_access:
                    need -= 10**9
                elif request.exactly.mode != ALL:
                    need += request.exactly.count
                st = self._check_class(dra, request.exactly.device_class, request.name)
                if st is not None:
                    return st, 0
            elif request.first_available:
                if not self.features.prioritized_list:
                    message = (
                        f"resource claim {claim.key}, request {request.name}: has subrequests, but the "
                        "DRAPrioritizedList feature is disabled"
                    )
                    return Status.unschedulable(message, unresolvable=True), 0
                for sub_name, sub in request.first_available:
                    st = self._check_class(dra, sub.device_class, f"{request.name}/{sub_name}")
                    if st is not None:
                        return st, 0
                counts = [s.count for _n, s in request.first_available if s.mode != ALL]
                if len(counts) == len(request.first_available):
                    need += min(counts)
        return None, need

    @staticmethod
    def _check_class(dra: DraObjects, device_class: str, request: str) -> Status | None:
        if not device_class:
            return Status.error(f"request {request}: unsupported request type", plugin=NAME)
        if device_class not in dra.classes:
            return Status.unschedulable(
                f"request {request}: device class {device_class} does not exist", unresolvable=True
            )
        return None

    # -- Filter --------------------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        data = state.read(STATE_KEY)
        if not isinstance(data, _State):
            return []
        cols = np.arange(snap.n, dtype=np.intp)[sel]
        reasons: dict[str, np.ndarray] = {}
        slow: list[int] | None = None  # positions in cols left to the allocator (None: all)
        if self.fast and not data.extended and (data.matcher is not None or data.allocator is None):
            slow = self._filter_counted(data, snap, cols, reasons)
        for i in range(len(cols)) if slow is None else slow:
            reason = self._verdict(data, snap, int(cols[i]))
            if reason:
                mask = reasons.get(reason)
                if mask is None:
                    mask = reasons[reason] = np.zeros(len(cols), dtype=bool)
                mask[i] = True
        return [Rejection(mask, reason, _UNRESOLVABLE) for reason, mask in reasons.items()]

    def _filter_counted(
        self, data: _State, snap: Snapshot, cols: np.ndarray, reasons: dict[str, np.ndarray]
    ) -> list[int] | None:
        """The verdicts the device counts give (devindex.py), and the claims' allocations to be made on the
        nodes they let through; answers the columns left to the allocator (those not plain)."""
        dra = self.handle.dra()
        assert dra is not None
        n = snap.n
        # cols is every column in order (the common case): the per-node arrays serve as they are
        every = len(cols) == n and (n == 0 or (int(cols[-1]) == n - 1 and bool((np.diff(cols) > 0).all())))
        if data.allocator is None:  # every claim is allocated: only their node selectors count
            decided = np.ones(len(cols), dtype=bool)
            allocated = decided
        else:
            assert data.matcher is not None
            counted = self.index.counts(dra, snap, data.matcher)
            if counted is None:
                return None
            eligible, free = counted
            fits = eligible & (free >= data.need)
            decided, allocated = (eligible, fits) if every else (eligible[cols], fits[cols])
            failed = decided ^ allocated
            if failed.any():
                reasons[ERR_CANNOT_ALLOCATE] = failed
            lazy = self._lazy(data, snap).lazy
            assert lazy is not None
            if every:
                lazy |= fits
            else:
                lazy[cols[allocated]] = True
        # as _verdict: an allocated claim whose node selector leaves out a node that could allocate the others, or
        # whose device binding gave up (on every such node)
        bad: np.ndarray | None = None
        for index, claim in enumerate(data.claims):
            alloc = claim.allocation
            if alloc is None:
                continue
            if self._binding_gave_up(claim):
                out = allocated
            elif alloc.node_selector is None:
                continue
            else:
                out = allocated & ~_selected(alloc.node_selector, snap, cols)
            if out.any():
                data.unavailable.add(index)
                bad = out if bad is None else bad | out
        if bad is not None:
            reasons[ERR_NOT_AVAILABLE] = bad
        data.counted.append((cols, allocated if bad is None else allocated & ~bad))
        return [] if decided.all() else np.flatnonzero(~decided).tolist()

    def _lazy(self, data: _State, snap: Snapshot) -> _Found:
        """The cycle's allocations, ready to take nodes whose allocation is made when asked for."""
        found = data.allocations
        if found.lazy is None:
            found.snap, found.lazy = snap, np.zeros(snap.n, dtype=bool)
            found.make = lambda col: self._make_allocation(data, snap, col)
        return found

    @staticmethod
    def _make_allocation(data: _State, snap: Snapshot, col: int) -> list[Allocation] | None:
        allocator = data.allocator
        assert allocator is not None
        try:
            found = allocator.allocate(snap.nodes[col], data.to_allocate)
        except AllocationError:
            return None
        if found is None or len(found) != len(data.to_allocate):
            return None
        return found

    def _verdict(self, data: _State, snap: Snapshot, col: int) -> str:
        known = data.verdicts.get(col)
        if known is not None:
            return known[0]
        node = snap.nodes[col]
        ext_claim: ResourceClaim | None = None
        if data.leftover is not None:
            data.verdicts[col] = (ERR_LEFTOVER_EXTENDED, "")
            return ERR_LEFTOVER_EXTENDED
        if data.extended:
            reason, ext_claim = self._extended_claim(data, snap, col)
            if reason:
                data.verdicts[col] = (reason, "")
                return reason
            if ext_claim is None and not data.claims:
                data.verdicts[col] = ("", "")  # every extended resource comes from a device plugin here
                return ""
        # As upstream: the allocated claims whose node selector leaves the node out are noted, the claims to
        # allocate are tried all the same, and "cannot allocate all claims" (or the allocator's error) is the
        # node's verdict when they fail; only when they succeed do the noted claims count (PostFilter may then
        # deallocate one) and make the verdict "resourceclaim not available on the node".
        unavailable = [
            index
            for index, claim in enumerate(data.claims)
            if claim.allocation is not None
            and (
                (
                    claim.allocation.node_selector is not None
                    and not node_matches_terms(node, claim.allocation.node_selector)
                )
                or self._binding_gave_up(claim)
            )
        ]
        reason = ""
        if data.allocator is not None:
            reason = self._allocate(data, snap, col, ext_claim)
        if not reason and unavailable:
            data.unavailable.update(unavailable)
            reason = ERR_NOT_AVAILABLE
        data.verdicts[col] = (reason, "")
        return reason

    def _binding_gave_up(self, claim: ResourceClaim) -> bool:
        """upstream Filter: an allocated claim whose device binding failed, or whose binding conditions are not met
        when the binding timeout since its allocation passed, is not available anywhere (PostFilter may then
        deallocate it)."""
        if not self.features.device_binding or not claim.has_binding_conditions:
            return False
        ready, failure = claim.binding_state()
        if failure:
            return True
        since = claim.allocated_at
        return not ready and since is not None and since + self.binding_timeout < self.handle.clock()

    def _extended_claim(self, data: _State, snap: Snapshot, col: int) -> tuple[str, ResourceClaim | None]:
        """upstream filterExtendedResources: the claim for the extended resources this node must give through
        DRA (None when device plugins give them all), or why the node cannot have the pod."""
        node = snap.nodes[col]
        needed: dict[str, DeviceClass] = {}
        for name in sorted(data.ext_requests):
            row = snap.row.get(name)
            allocatable = int(snap.alloc[row, col]) if row is not None else 0
            cls = data.extended.get(name)
            if cls is not None and allocatable == 0:
                needed[name] = cls
            elif cls is None and allocatable == 0 and name not in node.allocatable:
                return ERR_CANNOT_FIT, None
        if not needed:
            return "", None
        data.ext_needed[node.name] = needed
        pod = data.pod
        assert pod is not None
        claim = ResourceClaim(
            extended_claim_name(pod),
            pod.namespace,
            ClaimSpec(claim_requests(pod, needed)),
            owner_pod=pod.key,
            extended=True,
            source=f"made by the scheduler for the DRA-backed extended resources of pod {pod.key}",
        )
        return "", claim

    def _allocate(self, data: _State, snap: Snapshot, col: int, ext_claim: ResourceClaim | None) -> str:
        allocator = data.allocator
        assert allocator is not None
        node = snap.nodes[col]
        claims = data.to_allocate if ext_claim is None else [*data.to_allocate, ext_claim]
        kept = None
        if ext_claim is None and data.signature is not None:
            if data.kept is None:
                dra = self.handle.dra()
                assert dra is not None
                data.kept = self.index.verdicts(dra, snap, data.signature)
            kept = data.kept
            known = kept[0].get(col, kept[1])
            if known is not None:
                if not known:  # the allocation is made again if Reserve (or a score) asks for it
                    lazy = self._lazy(data, snap).lazy
                    assert lazy is not None
                    lazy[col] = True
                return known
        reason = self._run_allocator(data, col, node, claims, ext_claim)
        if kept is not None:
            kept[0].put(col, kept[1], reason)
        return reason

    def _run_allocator(
        self, data: _State, col: int, node: Node, claims: list[ResourceClaim], ext_claim: ResourceClaim | None
    ) -> str:
        allocator = data.allocator
        assert allocator is not None
        need = data.min_devices
        if ext_claim is not None:
            need += sum(r.exactly.count for r in ext_claim.spec.requests if r.exactly is not None)
        if need > 0 and not allocator.shared_slices:
            free = data.local_free.get(col)
            if free is None:
                free = data.local_free[col] = self._local_free(allocator, node.name)
            if free < need:
                return ERR_CANNOT_ALLOCATE  # not enough unallocated devices on the node to look through
        try:
            found = allocator.allocate(node, claims)
        except NodeAllocationError as exc:
            return str(exc)
        except AllocationError as exc:  # upstream: an Error status, the scheduling cycle ends with it
            raise PluginError(f'running "{NAME}" filter plugin: {exc}') from None
        if found is None or len(found) != len(claims):
            return ERR_CANNOT_ALLOCATE
        data.allocations[node.name] = found[: len(data.to_allocate)]
        if ext_claim is not None:
            data.ext_allocations[node.name] = (ext_claim, found[-1])
        return ""

    @staticmethod
    def _local_free(allocator: Allocator, name: str) -> int:
        """How many devices not allocated yet the slices naming node ``name`` list (an upper bound on what the
        node can give when no slice is shared between nodes); a device that allows multiple allocations
        (DRAConsumableCapacity) may serve every request, and leaves no bound."""
        multiple = allocator.features.consumable_capacity
        return sum(
            _UNBOUNDED if multiple and d.allow_multiple else 1
            for s in allocator.on_node.get(name, ())
            for d in s.devices
            if (s.driver, s.pool, d.name) not in allocator.allocated
        )

    # -- explain -------------------------------------------------------------------------------------------

    def node_details(self, state: CycleState) -> dict[str, dict[str, object]]:
        """For explain, per node that passed this plugin's filter: ``claims``, each of the pod's claims (in
        spec.resourceClaims order) with the devices it holds there: its allocation when it had one, else the one
        Filter found on that node (what Reserve would hold if the node were chosen)."""
        data = state.read(STATE_KEY)
        if not isinstance(data, _State) or not data.claims:
            return {}
        snap = self.handle.snapshot
        out: dict[str, dict[str, object]] = {}
        passed = {col for col, (reason, _kind) in data.verdicts.items() if not reason}
        for cols, ok in data.counted:
            passed.update(int(c) for c in cols[ok])
        for col in sorted(passed):
            node = snap.nodes[col].name
            found = dict(zip((c.key for c in data.to_allocate), data.allocations.get(node, []), strict=False))
            claims: list[dict[str, object]] = []
            for claim in data.claims:
                alloc = claim.allocation if claim.allocation is not None else found.get(claim.key)
                claims.append({"claim": claim.key, "devices": _devices_json(alloc)})
            out[node] = {"claims": claims}
        return out

    # -- PostFilter --------------------------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> PostFilterResult:
        """upstream PostFilter: when no node fits, an allocated claim that kept the pod off a node and that no
        other pod uses is deallocated, so that the next attempt may allocate it elsewhere. Always Unschedulable:
        its message joins DefaultPreemption's in the pod's condition ("no new claims to deallocate, preemption:
        ...")."""
        if state.read(PRE_FILTERED_KEY) is None:  # an earlier PreFilter rejected the pod: no state to read
            return PostFilterResult(None, Status.error(MSG_STATE_NOT_FOUND, plugin=NAME))
        data = state.read(STATE_KEY)
        dra = self.handle.dra()
        worded = self.handle.kube_version.dra_post_filter_message  # 1.34-1.36; 1.37 says nothing
        if not isinstance(data, _State) or not (data.claims or data.extended) or dra is None:
            # (the claim for the pod's DRA-backed extended resources counts: upstream PreFilter adds it)
            return PostFilterResult(None, Status(Code.UNSCHEDULABLE, [MSG_NO_CLAIMS] if worded else []))
        found, st = self._release_one(dra, data, pod)
        if not found:
            st = Status(Code.UNSCHEDULABLE, [MSG_STILL_UNSCHEDULABLE] if worded else [])
        return PostFilterResult(None, st)

    def pod_group_post_filter(self, tried: Iterable[tuple[PodInfo, CycleState]]) -> Status:
        """upstream PodGroupPostFilter (1.37) for a pod group whose cycle found no placement, with
        DRAWorkloadResourceClaims off (packsched drops PodGroup-owned claims): each pod of the cycle that reached
        PreFilter (``tried``, in the cycle's order) has one of its unavailable claims deallocated, or its left-over
        extended-resource claim deleted, as PostFilter does for a single pod; the pods' own answers are not kept.
        A pod whose claim was written already by an earlier pod of the group (a claim they share) writes it from
        the copy its PreFilter read, which the API server refuses as a conflict (upstream sends the resource
        version it read): that Error ends it. The caller answers the read of a missing state ("not found")."""
        dra = self.handle.dra()
        if dra is None:
            return Status(Code.UNSCHEDULABLE, [MSG_POD_GROUP_DONE])
        written: dict[str, list[str]] = {}
        for pod, state in tried:
            data = state.read(STATE_KEY)
            if not isinstance(data, _State):
                continue
            _found, st = self._release_one(dra, data, pod, written)
            if st.code == Code.ERROR:
                return st
        return Status(Code.UNSCHEDULABLE, [MSG_POD_GROUP_DONE])

    def _release_one(
        self, dra: DraObjects, data: _State, pod: PodInfo, written: dict[str, list[str]] | None = None
    ) -> tuple[bool, Status]:
        """upstream deallocateOrDeletePodClaims: the first unavailable claim (in index order; upstream takes one
        at random) that no other pod holds is deallocated, else the left-over extended-resource claim is deleted.
        Answers whether a claim was found, and the write's status (Unschedulable with its words, or an Error).
        ``written`` (PodGroupPostFilter): the claims written earlier in the same call, by key, with their
        ``reservedFor`` before the write; writing one again is a conflict, and each claim written is added."""
        for index in sorted(data.unavailable):
            claim = data.claims[index]
            # the claim as this pod's PreFilter read it (the simulator changes a claim in place when it writes it)
            seen = claim.reserved_for if written is None else written.get(claim.key, claim.reserved_for)
            if seen and seen != [pod.key]:
                continue
            if written is not None:
                if claim.key in written:
                    return True, Status.error(conflict_message(claim), plugin=NAME)
                written[claim.key] = list(claim.reserved_for)
            if dra.api is not None:  # live mode: on the API server (the watch brings it here)
                try:
                    dra.api.deallocate(claim)
                except ClaimWriteError as exc:
                    return True, Status.error(str(exc), plugin=NAME)
                return True, Status(Code.UNSCHEDULABLE, [MSG_DEALLOCATED])
            claim.deallocate()
            dra.changed(claim.key)
            # the status write's event requeues the pod (upstream's claim-change hint): it is tried again after its
            # backoff, when the claim can be allocated on another node
            self.handle.object_written(ClusterEvent(RESOURCE_CLAIM, UPDATE, claim, claim))
            return True, Status(Code.UNSCHEDULABLE, [MSG_DEALLOCATED])
        if data.leftover is not None:
            return True, self._delete_leftover(dra, data.leftover, pod)
        return False, Status(Code.UNSCHEDULABLE)

    def _delete_leftover(self, dra: DraObjects, claim: ResourceClaim, pod: PodInfo) -> Status:
        """upstream PostFilter's deletion of the extended-resource claim an earlier cycle left: on the API server in
        live mode (the watch brings the deletion, which frees its devices and requeues the pod), else from the
        catalog, its deletion handled as that event."""
        if dra.api is not None:
            try:
                dra.api.delete(claim)
            except ClaimWriteError as exc:
                return Status.error(str(exc), plugin=NAME)
            return Status(Code.UNSCHEDULABLE, [MSG_EXTENDED_DELETED])
        dra.claims.pop(claim.key, None)
        dra.in_flight.pop(claim.key, None)
        if dra.extended_claims.get(pod.key) == claim.key:
            del dra.extended_claims[pod.key]
        dra.changed(claim.key)
        self.handle.object_written(ClusterEvent(RESOURCE_CLAIM, DELETE, claim, None))
        return Status(Code.UNSCHEDULABLE, [MSG_EXTENDED_DELETED])

    # -- Reserve, Unreserve, PreBind ----------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        data = state.read(STATE_KEY)
        dra = self.handle.dra()
        if not isinstance(data, _State) or dra is None:
            return Status()
        ext = data.ext_allocations.get(node)
        if ext is not None:
            claim, alloc = ext
            dra.claims[claim.key] = claim
            dra.extended_claims[pod.key] = claim.key
            dra.in_flight[claim.key] = alloc
            data.reserved.append(claim.key)
            dra.changed(claim.key)
        if not data.to_allocate:
            return Status()
        found = data.allocations.get(node)
        if found is None:
            return Status.error("claim allocation not found for node", plugin=NAME)
        if len(found) != len(data.to_allocate):
            return Status.error(
                f"internal error, have {len(found)} allocations, {len(data.to_allocate)} claims to allocate",
                plugin=NAME,
            )
        for claim, alloc in zip(data.to_allocate, found, strict=True):
            dra.in_flight[claim.key] = alloc
            data.reserved.append(claim.key)
        dra.changed(*(claim.key for claim in data.to_allocate))
        return Status()

    def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        data = state.read(STATE_KEY)
        dra = self.handle.dra()
        if not isinstance(data, _State) or dra is None:
            return
        if dra.api is not None:
            self._unreserve_live(data, dra, dra.api, pod)
            return
        touched = list(data.reserved)
        ext_key = dra.extended_claims.get(pod.key)
        if ext_key is not None and ext_key not in touched:
            touched.append(ext_key)  # PreBind wrote it (a failed wait for binding conditions): deleted all the same
        for key in touched:
            dra.in_flight.pop(key, None)
            made = dra.claims.get(key)
            if made is not None and made.extended and made.owner_pod == pod.key:
                del dra.claims[key]  # upstream unreserveExtendedResourceClaim: the pod's claim goes
                dra.extended_claims.pop(pod.key, None)
        data.reserved.clear()
        data.binding_since = None
        for claim in data.claims:
            if claim.allocation is not None and pod.key in claim.reserved_for:
                # upstream Unreserve takes the pod out; the allocation PreBind wrote stays (the next attempt's
                # Filter reuses it, or PostFilter deallocates it)
                claim.reserved_for.remove(pod.key)
        dra.changed(*touched)

    @staticmethod
    def _unreserve_live(data: _State, dra: DraObjects, api: ClaimApi, pod: PodInfo) -> None:
        """Live mode: the devices held in flight go back, but for the allocations PreBind wrote (those stay taken
        until the claim's watch shows them, and then as the claim says); the pod leaves the claims PreBind reserved
        it in, and the extended-resource claim PreBind created is deleted (upstream Unreserve). A write that fails
        is left to the next attempt (the pod is retried) and to the resourceclaim controller."""
        touched = list(data.reserved)
        for key in data.reserved:
            if key not in data.allocated:
                dra.in_flight.pop(key, None)
            made = dra.claims.get(key)
            if made is not None and made.extended and made.owner_pod == pod.key and not made.uid:
                del dra.claims[key]  # the extended-resource claim as made in memory, never seen on the server
                if dra.extended_claims.get(pod.key) == key:
                    del dra.extended_claims[pod.key]
        data.reserved.clear()
        created = data.created
        for claim in data.written:
            if created is not None and claim.key == created.key:
                continue
            # a failure is logged by the writer; the next attempt finds the pod reserved and keeps the claim
            with contextlib.suppress(ClaimWriteError):
                api.unreserve(claim, pod.pod)
        data.written.clear()
        data.allocated.clear()
        if created is not None:
            data.created = None
            with contextlib.suppress(ClaimWriteError):
                api.delete(created)
        dra.changed(*touched)

    def _pre_bind_live(self, data: _State, dra: DraObjects, api: ClaimApi, pod: PodInfo, node: str) -> Status:
        """Live mode, on a binding worker: each claim not reserved for the pod yet gets its allocation from Reserve
        (if it had none) and the pod in ``reservedFor`` on the API server; the extended-resource claim is created
        first, and the pod's ``status.extendedResourceClaimStatus`` written after it. The catalog is not touched
        here (the informers bring the claims as written)."""
        found = dict(zip((c.key for c in data.to_allocate), data.allocations.get(node, []), strict=False))
        todo: list[tuple[ResourceClaim, Allocation | None]] = [
            (claim, found.get(claim.key)) for claim in data.claims if pod.key not in claim.reserved_for
        ]
        ext = data.ext_allocations.get(node)
        try:
            for claim, alloc in todo:
                api.reserve(claim, alloc, pod.pod, self.features.device_binding)
                data.written.append(claim)
                if alloc is not None:
                    data.allocated.add(claim.key)
            if ext is not None:
                made, alloc = ext
                created = data.created = api.create_extended(made, pod.pod)
                api.reserve(created, alloc, pod.pod, self.features.device_binding)
                data.written.append(created)
                api.record_extended(pod.pod, created, request_mappings(pod.pod, data.ext_needed.get(node, {})))
        except ClaimWriteError as exc:
            return Status.error(str(exc), plugin=NAME)
        keys = [c.key for c in data.written]
        binding = any(c.has_binding_conditions for c in data.claims) or any(
            r.binding_conditions for alloc in found.values() for r in alloc.results
        )
        if ext is not None:
            binding = binding or any(r.binding_conditions for r in ext[1].results)
        if not self.features.device_binding or not binding:
            return Status()
        return self._wait_live(dra, [*keys, *(c.key for c in data.claims if c.key not in keys)])

    def _wait_live(self, dra: DraObjects, keys: list[str]) -> Status:
        """Live mode, on the binding worker: upstream PreBind's poll of the claims, as the watch brings them,
        every BINDING_POLL_S until their devices' binding conditions hold, a failure condition is True, a claim's
        binding timeout since its allocation passes, or the binding timeout since the wait began passes."""
        deadline = self.handle.clock() + self.binding_timeout
        while True:
            verdict = self._ready_for_binding([dra.claims.get(key) for key in keys], self.handle.clock())
            if verdict is not None:
                return verdict
            left = deadline - self.handle.clock()
            if left <= BINDING_POLL_S:  # the wait's deadline comes before the next poll
                time.sleep(max(left, 0.0))
                return _binding_timed_out()
            time.sleep(BINDING_POLL_S)

    def _ready_for_binding(self, claims: Iterable[ResourceClaim | None], now: float) -> Status | None:
        """upstream isPodReadyForBinding, claim by claim in order: an Error when a device's binding failure
        condition is True (``device binding failed: ...``) or when a claim that is not ready was allocated longer
        than the binding timeout ago (``device binding timeout: claim=NAME``); None (wait) at the first claim not
        ready yet; Success when every claim is ready. A claim not there or not allocated yet (live mode, before
        the watch brings the write) counts as not ready."""
        for claim in claims:
            if claim is None or claim.allocation is None:
                return None
            ready, failure = claim.binding_state()
            if failure:
                return Status.error(f'running PreBind plugin "{NAME}": {failure}', plugin=NAME)
            if ready:
                continue
            since = claim.allocated_at
            if self.features.device_binding and since is not None and since + self.binding_timeout < now:
                return Status.error(
                    f'running PreBind plugin "{NAME}": {ERR_BINDING_TIMEOUT}: claim={claim.name}', plugin=NAME
                )
            return None
        return Status()

    def pre_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        data = state.read(STATE_KEY)
        dra = self.handle.dra()
        if not isinstance(data, _State) or dra is None:
            return Status()
        if dra.api is not None:
            return self._pre_bind_live(data, dra, dra.api, pod, node)
        ext = data.ext_allocations.get(node)
        made = [] if ext is None else [ext[0]]
        now = self.handle.clock()
        for claim in [*data.claims, *made]:
            alloc = dra.in_flight.pop(claim.key, None)
            if alloc is not None:
                claim.allocation = alloc
            if pod.key not in claim.reserved_for:
                claim.reserved_for.append(pod.key)
                if self.features.device_binding and claim.allocated_at is None:
                    claim.allocated_at = now  # allocationTimestamp, set as the claim is reserved
        data.reserved.clear()
        dra.changed(*(claim.key for claim in [*data.claims, *made]))
        return self._binding_conditions(data, [*data.claims, *made], node, now)

    def _binding_conditions(self, data: _State, claims: list[ResourceClaim], node: str, now: float) -> Status:
        """upstream PreBind's wait for device binding conditions: done when every claim's devices have theirs True;
        an Error when a binding failure condition is True, when a claim's binding timeout since its
        allocationTimestamp passed (``device binding timeout: claim=NAME``), or when the binding timeout passed
        since the wait began (``device binding timeout: context deadline exceeded``); else Wait, and the scheduler
        asks again after BINDING_POLL_S (upstream polls every 5 s)."""
        if not self.features.device_binding:
            return Status()
        pending = [c for c in claims if c.has_binding_conditions]
        if not pending:
            return Status()
        if data.binding_since is None:
            data.binding_since = now
        elif now >= data.binding_since + self.binding_timeout:
            return _binding_timed_out()  # the wait's deadline came before this poll
        verdict = self._ready_for_binding(pending, now)
        if verdict is not None:
            return verdict
        return Status(Code.WAIT, [f"waiting for binding conditions for device on node {node}"], NAME)

    # -- the pods' claims when they go --------------------------------------------------------------------

    def on_cluster_event(self, event: ClusterEvent) -> None:
        dra = self.handle.dra()
        if dra is None or event.resource != POD or dra.api is not None:
            return
        if (
            event.action == DELETE
            and isinstance(event.old, Pod)
            and (event.old.resource_claims or event.old.key in dra.extended_claims)
        ):
            dra.release(event.old, deleted=True)
        elif (
            event.action == UPDATE
            and isinstance(event.new, Pod)
            and (event.new.resource_claims or event.new.key in dra.extended_claims)
            and event.new.phase in ("Succeeded", "Failed")
        ):
            dra.release(event.new, deleted=False)


def conflict_message(claim: ResourceClaim) -> str:
    """The API server's answer to a write of ``claim`` from a copy older than its last write (a 409 Conflict)."""
    return (
        f'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "{claim.name}": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )


def _leftover_extended_claim(dra: DraObjects, pod: Pod) -> ResourceClaim | None:
    """upstream findExtendedResourceClaim: the claim for the pod's extended resources that an earlier cycle made
    (annotated as such and controlled by the pod: same name, and same uid where both are known), if it is still
    there: its binding failed and deleting it failed too (live mode), or a snapshot holds it. (The claim a cycle
    makes at Reserve never reaches a later PreFilter: Unreserve deletes it, or the pod is bound.)"""
    key = dra.extended_claims.get(pod.key)
    claim = dra.claims.get(key) if key is not None else None
    return claim if claim is not None and claim.extended and claim.controlled_by(pod) else None


def _selected(terms: tuple[NodeSelectorTerm, ...], snap: Snapshot, cols: np.ndarray) -> np.ndarray:
    """Per column of ``cols``: whether the node selector admits the node (a selector of node names, the one a
    node-local device's allocation carries, is read through the snapshot's index)."""
    if len(terms) == 1 and not terms[0].match_expressions and len(terms[0].match_fields) == 1:
        req = terms[0].match_fields[0]
        if req.key == "metadata.name" and req.operator == "In":
            full = np.zeros(snap.n, dtype=bool)
            full[[snap.index[v] for v in req.values if v in snap.index]] = True
            out: np.ndarray = full[cols]
            return out
    return np.fromiter((node_matches_terms(snap.nodes[c], terms) for c in cols.tolist()), dtype=bool, count=len(cols))


def _devices_json(alloc: Allocation | None) -> list[dict[str, object]]:
    """An allocation's devices as resource.k8s.io/v1 writes them (``status.allocation.devices.results``)."""
    out: list[dict[str, object]] = []
    for r in alloc.results if alloc is not None else ():
        item: dict[str, object] = {"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device}
        if r.admin_access is not None:
            item["adminAccess"] = r.admin_access
        if r.share_id is not None:
            item["shareID"] = r.share_id
        if r.consumed is not None:
            item["consumedCapacity"] = {name: quantity_text(amount) for name, amount in r.consumed}
        out.append(item)
    return out


class ScoringDynamicResources(DynamicResources):
    """DynamicResources with its Score (v1.35+, ``KubeVersion.dynamic_resources_scores``); 1.34's plugin has no
    Score extension, so it is no score plugin there (recorded: 1.34.4's score_plugin_weights lack it)."""

    # a pod its PreFilter skips (no claim to allocate, or no DRA catalog) writes no state and scores 0 on every
    # node; DefaultNormalizeScore leaves a row of zeros as it is
    scores_zero_if_pre_filter_skips = True
    zeros_normalize_uniformly = True
    normalizes_by_top = True  # DefaultNormalizeScore: a node's value reads its raw score and the highest

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        """upstream Score: 0 for a pod without claims to allocate; else, for each prioritized list
        (``firstAvailable``), FIRST_AVAILABLE_MAX_SIZE minus the index of the subrequest the node's allocation
        took, summed: a node where the first choice fits scores higher."""
        out = np.zeros(len(cols), dtype=np.int64)
        data = state.read(STATE_KEY)
        if not isinstance(data, _State) or not data.to_allocate or not self.features.prioritized_list:
            return out
        if not any(r.first_available for c in data.to_allocate for r in c.spec.requests):
            return out  # no prioritized list: every node scores 0
        for i, col in enumerate(cols.tolist()):
            found = data.allocations.get(snap.nodes[int(col)].name)
            if found is not None:
                out[i] = _prioritized_list_score(data.to_allocate, found)
        return out

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        return default_normalize_score(scores, reverse=False)


def new_dynamic_resources(args: PluginArgs | None, handle: Handle) -> DynamicResources:
    if handle.kube_version.dynamic_resources_scores:
        return ScoringDynamicResources(handle, args)
    return DynamicResources(handle, args)


def parse_args(raw: PluginArgs | None, version: KubeVersion) -> float:
    """The binding timeout in seconds from DynamicResourcesArgs (config/args.py decodes, defaults and validates
    them as upstream; a configuration file's args arrive here typed). A plain map (a test, or a caller that
    skips the configuration loader) goes the same way; ValueError names the field. No timeout given or defaulted
    (1.34, or device binding off): upstream's default, which then never applies."""
    if raw is None:
        return BINDING_TIMEOUT_S
    if isinstance(raw, Mapping):
        errors = ErrorList(file="")
        typed = decode_dynamic_resources_args(Reader(errors), dict(raw), "")
        if raw.get("kind") not in (None, "DynamicResourcesArgs"):
            raise ValueError(f"kind: want DynamicResourcesArgs, got {raw.get('kind')!r}")
        problems = [f"{e.path}: {e.message}" for e in errors.items]
        if not problems:
            default_dynamic_resources_args(typed, version)
            problems = [f"{e.path}: {e.message}" for e in validate_dynamic_resources_args(typed, "", version)]
        if problems:
            raise ValueError("; ".join(problems))
        raw = typed
    if not isinstance(raw, DynamicResourcesArgs):
        raise TypeError(f"want args to be of type DynamicResourcesArgs, got {type(raw).__name__}")
    return BINDING_TIMEOUT_S if raw.binding_timeout is None else raw.binding_timeout


def _binding_timed_out() -> Status:
    return Status.error(
        f'running PreBind plugin "{NAME}": {ERR_BINDING_TIMEOUT}: context deadline exceeded', plugin=NAME
    )
