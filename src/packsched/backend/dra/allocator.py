"""The structured-parameters allocator of DRA: which devices of the ResourceSlices a node can reach satisfy a
pod's claims (upstream ``k8s.io/dynamic-resource-allocation/structured``, the "incubating" variant that the
scheduler uses when any of the newer features is on).

For one node it gathers the pools whose slices the node reaches (the newest generation of each; a pool missing
slices is *incomplete* and a pool with a device name twice is *invalid*: neither is allocated from), then tries the
claims in order, each claim's requests in order, each request's devices in pool, slice and device order: the
first full solution wins, with backtracking when a later request or claim cannot be satisfied. A device is
skipped when allocated already (to another claim, or earlier in this search), when the class's and the request's
CEL selectors do not both match, when an untolerated NoSchedule/NoExecute taint is on it (DRADeviceTaints), or
when a constraint (matchAttribute, distinctAttribute) would break. A device that consumes shared counters
(DRAPartitionableDevices) is allocated only while no counter of its pool would go below zero; what a device refused
after taking its counters gives back, and how counters are kept, follow the release (``Features.counters_1_36``,
``Features.counters_1_37``). A request with
``firstAvailable`` takes the first subrequest that leads to a solution (DRAPrioritizedList). ``All`` asks for
every matching device of the node's pools, and fails when a pool is incomplete or invalid.

Upstream walks the pools in Go map order (unspecified); packsched takes them in the order their first slice is
listed (the node's own slices before those shared through a node selector or ``allNodes``), slices and devices
as listed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field, replace
from fractions import Fraction

from packsched.api.dra import (
    ALL,
    ALLOCATION_RESULTS_MAX,
    EXACT_COUNT,
    NO_EXECUTE,
    NO_SCHEDULE,
    Allocation,
    Device,
    DeviceClass,
    DeviceResult,
    ExactRequest,
    ResourceClaim,
    ResourceSlice,
)
from packsched.api.dracel import CelRuntimeError, compile_selector
from packsched.api.objects import Node, NodeSelectorTerm, Requirement
from packsched.backend.dra.capacity import CapacityError, consumption, fits

DeviceID = tuple[str, str, str]  # driver, pool, device
Counters = dict[str, dict[str, Fraction]]  # counter set -> counter -> amount


class AllocationError(Exception):
    """Something is wrong with a claim, a class or a selector (upstream returns an error, not "unschedulable")."""


class NodeAllocationError(AllocationError):
    """The node cannot be judged (an invalid pool): upstream wraps it in ErrFailedAllocationOnNode, and the node,
    not the scheduling cycle, fails with its text."""


@dataclass(frozen=True)
class Features:
    """The DRA feature gates the allocator follows (``KubeVersion.dra_features``)."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = False
    device_taints: bool = False
    cel_error_names_device: bool = True  # 1.37 wording of a selector's runtime error (KubeVersion)
    consumable_capacity: bool = False
    fractional_capacity_range: bool = False
    # 1.37's capacity checks: "All" compares a device's capacity without its allocations, and a request the
    # arithmetic cannot represent (or a negative amount) is an error rather than a device that does not fit
    capacity_checks_1_37: bool = True
    # 1.36's shared counters (DRAPartitionableDevices): a device refused after its counters were taken (an
    # untolerated taint, a constraint, its capacity) gives back everything it took, and so does a share of a device
    # that allows multiple allocations when the search backtracks over it; a device with shares allocated already
    # uses its counters. Before (1.34-1.35) the counters stay taken for the rest of the node's search, a refused
    # share also keeps its constraints and its device, and only devices taken whole use counters across claims.
    counters_1_36: bool = True
    # 1.37's: counters are tracked per pool of each driver (before: per pool name, so two drivers' pools of the same
    # name shared them), and a device with a share allocated but no consumed capacity has its counters paid.
    counters_1_37: bool = True
    # 1.37's claim limit: each request's fewest devices are checked as the request is read, and the error names
    # the request ("adding N devices exceeds the claim limit of 32, with M already accounted for"); before, the
    # claim's sum is checked after all its requests were read ("number of requested devices N exceeds ...")
    claim_limit_per_request: bool = True
    # DRADeviceBindingConditions and DRAResourceClaimDeviceStatus (the allocator's DeviceBindingAndStatus): off, a
    # device with binding conditions is never picked; on, its results carry the device's binding conditions
    device_binding: bool = True


def share_id(claim: str, index: int, did: DeviceID) -> str:
    """A share's ID: upstream draws a random UUID; packsched derives one from the claim, the result's position
    and the device, so that runs repeat (unique among the shares of a device as long as claims' keys are)."""
    h = hashlib.sha256(f"{claim}#{index}#{'/'.join(did)}".encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def node_matches_terms(node: Node, terms: Sequence[NodeSelectorTerm]) -> bool:
    """A v1.NodeSelector: some term whose expressions (labels) and fields (metadata.name) all hold; an empty
    term matches nothing."""
    fields = {"metadata.name": node.name}
    for term in terms:
        if not term.match_expressions and not term.match_fields:
            continue
        if all(r.matches(node.labels) for r in term.match_expressions) and all(
            r.matches(fields) for r in term.match_fields
        ):
            return True
    return False


def node_matches(node: Node, node_name: str, all_nodes: bool, selector: Sequence[NodeSelectorTerm] | None) -> bool:
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return node_matches_terms(node, selector)
    return False


@dataclass
class Pool:
    driver: str
    name: str
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: list[ResourceSlice] = field(default_factory=list)  # device slices the node reaches
    others: list[ResourceSlice] = field(default_factory=list)  # the pool's other device slices
    counter_sets: dict[str, dict[str, Fraction]] | None = None

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def _slice_reaches(s: ResourceSlice, node: Node, features: Features) -> bool:
    if s.node_name or s.all_nodes or s.node_selector is not None:
        return node_matches(node, s.node_name, s.all_nodes, s.node_selector)
    if s.per_device:
        return any(node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in s.devices)
    return False


def gather_pools(
    slices: Iterable[ResourceSlice], node: Node, features: Features, every: Sequence[ResourceSlice]
) -> list[Pool]:
    """upstream GatherPools: the pools of the slices the node reaches, newest generation only."""
    found: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        if not features.partitionable_devices and (s.per_device or s.shared_counters):
            continue
        if not (s.shared_counters or _slice_reaches(s, node, features)):
            continue
        key = (s.driver, s.pool)
        have = found.get(key)
        if have is None or s.generation > have[0].generation:
            found[key] = [s]
        elif s.generation == have[0].generation:
            have.append(s)
    out: list[Pool] = []
    for (driver, name), got in found.items():
        if len(got) == got[0].slice_count:
            out.append(_build_pool(driver, name, got, features, None))
            continue
        generation = got[0].generation
        same = [s for s in every if s.driver == driver and s.pool == name and s.generation >= generation]
        if any(s.generation > generation for s in same):
            continue  # obsolete: the driver is replacing this generation
        if len(same) != got[0].slice_count:
            out.append(Pool(driver, name, incomplete=True))
            continue
        out.append(_build_pool(driver, name, got, features, same))
    return out


def _build_pool(
    driver: str, name: str, got: list[ResourceSlice], features: Features, every: list[ResourceSlice] | None
) -> Pool:
    if features.partitionable_devices:
        device_slices = [s for s in got if not s.shared_counters]
        counter_slices = [s for s in got if s.shared_counters]
    else:
        device_slices, counter_slices = got, []
    seen: set[str] = set()
    for s in device_slices:
        for d in s.devices:
            if d.name in seen:
                return Pool(driver, name, invalid=True, invalid_reason=f"duplicate device name {d.name}")
            seen.add(d.name)
    if not features.partitionable_devices:
        return Pool(driver, name, slices=device_slices)
    sets: dict[str, dict[str, Fraction]] = {}
    for s in counter_slices:
        for set_name, counters in s.shared_counters:
            if set_name in sets:
                return Pool(driver, name, invalid=True, invalid_reason=f"duplicate counter set name {set_name}")
            sets[set_name] = dict(counters)
    problem = _check_consumption(sets, got)
    if problem:
        return Pool(driver, name, invalid=True, invalid_reason=problem)
    others: list[ResourceSlice] = []
    if every is not None and len(every) != len(got):
        names = {s.name for s in got}
        others = [s for s in every if s.name not in names]
        problem = _check_consumption(sets, others)
        if problem:
            return Pool(driver, name, invalid=True, invalid_reason=problem)
    return Pool(driver, name, slices=device_slices, others=others, counter_sets=sets)


def _check_consumption(sets: Mapping[str, Mapping[str, Fraction]], slices: Iterable[ResourceSlice]) -> str:
    for s in slices:
        for d in s.devices:
            for set_name, counters in d.consumes:
                if set_name not in sets:
                    return f"counter set {set_name} not found"
                for counter, _amount in counters:
                    if counter not in sets[set_name]:
                        return f"counter {counter} not found in counter set {set_name}"
    return ""


# -- one request or subrequest ------------------------------------------------------------------------------------


@dataclass
class _Request:
    name: str  # the request, or the subrequest
    parent: str  # the request of a subrequest ("" otherwise)
    exact: ExactRequest
    device_class: DeviceClass | None = None
    num_devices: int = 0
    all_devices: list[tuple[Device, DeviceID, ResourceSlice, Pool]] = field(default_factory=list)

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name

    @property
    def admin(self) -> bool:
        return bool(self.exact.admin_access) and not self.parent


class _Constraint:
    def __init__(self, requests: tuple[str, ...], attribute: str, distinct: bool) -> None:
        self.requests = set(requests)
        self.attribute = attribute
        self.distinct = distinct
        self.value: tuple[str, object] | None = None
        self.count = 0
        self.values: dict[DeviceID, tuple[str, object]] = {}

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)

    def add(self, request: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not self._applies(request, sub):
            return True
        attr = device.attribute(self.attribute)
        if attr is None:
            return False
        if self.distinct:
            if attr in self.values.values():
                return False
            self.values[did] = attr
            return True
        if self.count == 0:
            self.value, self.count = attr, 1
            return True
        if attr != self.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str, device: Device, did: DeviceID) -> None:
        if not self._applies(request, sub):
            return
        if self.distinct:
            self.values.pop(did, None)
        else:
            self.count -= 1


# whether a request fits a device none of whose capacity is taken, per (device, its policies, the request's
# capacity, the two capacity gates): devices and requests are immutable, and the nodes of a cluster repeat them
_STATIC_FITS: dict[tuple[object, ...], bool] = {}
_STATIC_FITS_MAX = 4096


class _MaxSizeExceeded(Exception):
    pass


class Allocator:
    """Allocation for one pod's claims, set up once per scheduling cycle (upstream NewAllocator) and asked per
    node (:meth:`allocate`). ``allocated``: devices allocated whole to claims already (or in flight); with
    DRAConsumableCapacity, ``shared``: devices with at least one share allocated, and ``capacity``: per device,
    what its allocated shares consume together."""

    def __init__(
        self,
        features: Features,
        allocated: Set[DeviceID],
        classes: Mapping[str, DeviceClass],
        slices: Sequence[ResourceSlice],
        shared: Set[DeviceID] | None = None,
        capacity: Mapping[DeviceID, Mapping[str, Fraction]] | None = None,
        layout: tuple[dict[str, list[ResourceSlice]], list[ResourceSlice]] | None = None,
        pools: Callable[[Node], list[Pool]] | None = None,
    ) -> None:
        """``layout``: the slices by node (``nodeName``) and the others, when the caller keeps them already
        (``slices`` must then be a list the caller does not change); ``pools``: a node's pools as
        :func:`gather_pools` finds them, when the caller keeps them."""
        self.pools = pools
        self.features = features
        self.allocated = allocated
        self.shared = shared or set()
        self.capacity: Mapping[DeviceID, Mapping[str, Fraction]] = capacity or {}
        self.classes = classes
        if layout is not None and isinstance(slices, list):
            self.slices = slices
            self.on_node, self.shared_slices = layout
        else:
            self.slices = list(slices)
            self.on_node = {}
            self.shared_slices = []
            for s in self.slices:
                if s.node_name:
                    self.on_node.setdefault(s.node_name, []).append(s)
                else:
                    self.shared_slices.append(s)
        self._available: dict[str, Counters] = {}
        self.invocations = 0  # allocateOne calls, as upstream's stats

    def reachable(self, node_name: str) -> bool:
        """Whether any slice may reach the node (a node with none cannot get a device)."""
        return bool(self.shared_slices) or node_name in self.on_node

    def allocate(self, node: Node, claims: Sequence[ResourceClaim]) -> list[Allocation] | None:
        """One allocation per claim, in order, or None when the claims cannot all be satisfied on the node;
        raises AllocationError for a claim, class or selector upstream reports as an error."""
        return _Run(self, node, claims).run()


class _Run:
    def __init__(self, owner: Allocator, node: Node, claims: Sequence[ResourceClaim]) -> None:
        self.a = owner
        self.features = owner.features
        self.node = node
        self.claims = claims
        if owner.pools is not None:
            self.pools = owner.pools(node)
        else:
            self.pools = gather_pools(
                [*owner.on_node.get(node.name, ()), *owner.shared_slices], node, owner.features, owner.slices
            )
        self.requests: dict[tuple[int, int, int], _Request] = {}
        self.sub_counts: dict[tuple[int, int], int] = {}  # (claim, request) -> number of subrequests (0: none)
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_Constraint]] = []
        self.matches: dict[tuple[DeviceID, int, int, int], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}  # shares of this search, per device
        self.consumed: dict[str, Counters] = {}
        self.results: list[list[tuple[DeviceResult, ResourceSlice, Device]]] = [[] for _ in claims]

    # -- setup -------------------------------------------------------------------------------------------

    def _claim_id(self, ci: int) -> str:
        c = self.claims[ci]
        return f"{c.namespace}/{c.name}"

    def run(self) -> list[Allocation] | None:
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(claim.spec.requests):
                self._check_capacity_gate(ci, request.name, request.exactly, request.first_available)
                if request.first_available:
                    if not self.features.prioritized_list:
                        raise AllocationError(
                            f"claim {self._claim_id(ci)}, request {request.name}: has subrequests, but the "
                            "DRAPrioritizedList feature is disabled"
                        )
                    fewest = None
                    for si, (sub_name, sub) in enumerate(request.first_available):
                        data = self._validate(ci, ri, si, _Request(sub_name, request.name, sub))
                        fewest = data.num_devices if fewest is None else min(fewest, data.num_devices)
                    self.sub_counts[(ci, ri)] = len(request.first_available)
                    adding = fewest or 0
                else:
                    assert request.exactly is not None
                    data = self._validate(ci, ri, 0, _Request(request.name, "", request.exactly))
                    self.sub_counts[(ci, ri)] = 0
                    adding = data.num_devices
                if self.features.claim_limit_per_request and adding > ALLOCATION_RESULTS_MAX - min_devices:
                    raise AllocationError(
                        f"claim {self._claim_id(ci)}, request {request.name}: adding {adding} devices exceeds the "
                        f"claim limit of {ALLOCATION_RESULTS_MAX}, with {min_devices} already accounted for"
                    )
                min_devices += adding
            if min_devices > ALLOCATION_RESULTS_MAX:
                raise AllocationError(
                    f"claim {self._claim_id(ci)}: number of requested devices {min_devices} exceeds the claim limit "
                    f"of {ALLOCATION_RESULTS_MAX}"
                )
            constraints: list[_Constraint] = []
            for i, c in enumerate(claim.spec.constraints):
                if c.match_attribute:
                    constraints.append(_Constraint(c.requests, c.match_attribute, False))
                elif c.distinct_attribute:
                    constraints.append(_Constraint(c.requests, c.distinct_attribute, True))
                else:
                    raise AllocationError(
                        f"claim {self._claim_id(ci)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            self.constraints.append(constraints)
        try:
            done = self._one(0, 0, 0, 0, False, (0, 0, 0))
        except _MaxSizeExceeded:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                raise NodeAllocationError("invalid resource pools were encountered")
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    def _check_capacity_gate(
        self, ci: int, name: str, exact: ExactRequest | None, subs: Sequence[tuple[str, ExactRequest]]
    ) -> None:
        if self.features.consumable_capacity:
            return
        if exact is not None and exact.capacity is not None:
            raise AllocationError(
                f"claim {self._claim_id(ci)}, request {name}: has capacity requests, but the DRAConsumableCapacity "
                "feature is disabled"
            )
        for sub_name, sub in subs:
            if sub.capacity is not None:
                raise AllocationError(
                    f"claim {self._claim_id(ci)}, subrequest {sub_name}: has capacity requests, but the "
                    "DRAConsumableCapacity feature is disabled"
                )

    def _validate(self, ci: int, ri: int, si: int, data: _Request) -> _Request:
        self.requests[(ci, ri, si)] = data
        exact = data.exact
        claim_id = self._claim_id(ci)
        if exact.admin_access is not None and not data.parent and not self.features.admin_access:
            raise AllocationError(
                f"claim {claim_id}, request {data.name}: admin access is requested, but the feature is disabled"
            )
        if not exact.device_class:
            raise AllocationError(
                f"claim {claim_id}, request {data.name}: missing device class name (unsupported request type?)"
            )
        cls = self.a.classes.get(exact.device_class)
        if cls is None:
            raise AllocationError(
                f"claim {claim_id}, request {data.name}: could not retrieve device class {exact.device_class}: "
                f'deviceclass.resource.k8s.io "{exact.device_class}" not found'
            )
        data.device_class = cls
        if exact.mode == EXACT_COUNT:
            data.num_devices = exact.count
        elif exact.mode == ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {claim_id}, request {data.name}: asks for all devices, but resource pool "
                        f"{pool.pool_id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {claim_id}, request {data.name}: asks for all devices, but resource pool "
                        f"{pool.pool_id} is currently invalid"
                    )
                for s in pool.slices:
                    for dev in s.devices:
                        if not self._selectable(ci, ri, si, data, s, dev):
                            continue
                        did = (s.driver, s.pool, dev.name)
                        if self.features.consumable_capacity and not self._fits_static(ci, data, did, dev):
                            continue
                        data.all_devices.append((dev, did, s, pool))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(f"claim {claim_id}, request {data.name}: unsupported count mode {exact.mode}")
        return data

    # -- matching ----------------------------------------------------------------------------------------

    def _selectable(self, ci: int, ri: int, si: int, data: _Request, s: ResourceSlice, dev: Device) -> bool:
        did = (s.driver, s.pool, dev.name)
        key = (did, ci, ri, si)
        known = self.matches.get(key)
        if known is not None:
            return known
        if dev.binding_conditions and not self.features.device_binding:
            self.matches[key] = False
            return False
        ok = True
        if data.device_class is not None:
            ok = self._selectors_match(ci, dev, did, data.device_class, data.device_class.selectors)
        ok = ok and self._selectors_match(ci, dev, did, None, data.exact.selectors)
        if ok and s.per_device:
            ok = node_matches(self.node, dev.node_name, dev.all_nodes, dev.node_selector)
        self.matches[key] = ok
        return ok

    def _selectors_match(
        self, ci: int, dev: Device, did: DeviceID, cls: DeviceClass | None, selectors: Sequence[str]
    ) -> bool:
        where = f"class {cls.name}" if cls is not None else f"claim {self._claim_id(ci)}"
        for i, expr in enumerate(selectors):
            compiled = compile_selector(expr)
            if compiled.error:
                raise AllocationError(f"{where}: selector #{i}: CEL compile error: {compiled.error}")
            try:
                if not compiled.matches(dev.cel):
                    return False
            except CelRuntimeError as exc:
                if not self.features.cel_error_names_device:  # up to 1.36
                    raise AllocationError(f"{where}: selector #{i}: CEL runtime error: {exc}") from None
                message = str(exc)
                if "no such key:" in message:
                    message += (
                        ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check "
                        "with has() for optional fields"
                    )
                raise AllocationError(
                    f"{where}: selector #{i} on device {'/'.join(did)}: CEL runtime error: {message}"
                ) from None
        return True

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated or bool(self.allocating.get(did))

    # -- the search --------------------------------------------------------------------------------------

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int, int]) -> bool:
        """upstream allocateOne: device ``di`` of (sub)request ``si`` of request ``ri`` of claim ``ci``."""
        self.a.invocations += 1
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.requests):
            try:
                return self._one(ci + 1, 0, 0, 0, False, (0, 0, 0))
            except _MaxSizeExceeded:
                return False
        if not in_sub and self.sub_counts[(ci, ri)]:
            return self._subrequests(ci, ri)
        data = self.requests[(ci, ri, si)]
        do_all = data.exact.mode == ALL
        if do_all and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        if len(self.results[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX:
            raise _MaxSizeExceeded
        if do_all:
            dev, did, s, pool = data.all_devices[di]
            undo = self._allocate_device(ci, data, dev, did, s, pool, must=True)
            return undo is not None and self._then(undo, ci, ri, si, di, in_sub, (0, 0, 0))
        return self._search(ci, ri, si, di, in_sub, start, data)

    def _subrequests(self, ci: int, ri: int) -> bool:
        """The first subrequest that leads to a solution; _MaxSizeExceeded when every one was too large."""
        all_exceeded = True
        for sub in range(self.sub_counts[(ci, ri)]):
            try:
                ok = self._one(ci, ri, sub, 0, True, (0, 0, 0))
            except _MaxSizeExceeded:
                continue
            all_exceeded = False
            if ok:
                self.selected_sub[(ci, ri)] = sub
                return True
        if all_exceeded:
            raise _MaxSizeExceeded
        return False

    def _then(
        self, undo: Callable[[], None], ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int, int]
    ) -> bool:
        """With a device taken: the rest of the search, the device given back when it fails."""
        try:
            done = self._one(ci, ri, si, di + 1, in_sub, start)
        except BaseException:
            undo()
            raise
        if not done:
            undo()
        return done

    def _search(
        self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int, int], data: _Request
    ) -> bool:
        """Every device from ``start`` on (pool, slice, device), in order: the first that leads to a solution."""
        p0, s0, d0 = start
        for pi in range(p0, len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            for sli in range(s0 if pi == p0 else 0, len(pool.slices)):
                s = pool.slices[sli]
                first = d0 if (pi == p0 and sli == s0) else 0
                for dvi in range(first, len(s.devices)):
                    dev = s.devices[dvi]
                    did = (pool.driver, pool.name, dev.name)
                    if ci in self.allocating.get(did, ()) if data.admin else self._in_use(did):
                        continue
                    if not self._selectable(ci, ri, si, data, s, dev):
                        continue
                    if self.features.consumable_capacity and not self._fits(ci, data, did, dev):
                        continue
                    undo = self._allocate_device(ci, data, dev, did, s, pool, must=False)
                    if undo is not None and self._then(undo, ci, ri, si, di, in_sub, (pi, sli, dvi + 1)):
                        return True
        return False

    def _allocate_device(
        self, ci: int, data: _Request, dev: Device, did: DeviceID, s: ResourceSlice, pool: Pool, must: bool
    ) -> Callable[[], None] | None:
        multiple = self.features.consumable_capacity and dev.allow_multiple
        if not self._free(ci, data, did, multiple):
            return None
        counters = self._pay_counters(pool, dev, did, multiple)
        if counters is None:
            return None
        base = data.parent or data.name
        sub = data.name if data.parent else ""
        # From 1.36 a device refused after its counters were taken gives them back; before, they stay taken for
        # the rest of this node's search (Features.counters_1_36).
        rollback = self.features.counters_1_36
        if not self._admits(ci, data, dev, did, base, sub, must):
            if counters and rollback:
                self._give_counters(pool, dev)
            return None
        constraints = self.constraints[ci]
        if not multiple:
            self.allocating.setdefault(did, set()).add(ci)

        def give_back() -> None:
            if not multiple:
                self.allocating[did].discard(ci)
            for c in constraints:
                c.remove(base, sub, dev, did)
            if counters and (rollback or not multiple):  # 1.34-1.35 keep a backtracked share's counters
                self._give_counters(pool, dev)

        share = self._share(ci, data, did, dev, multiple)
        if share is None:
            if rollback:  # 1.34-1.35: the refused share keeps its constraints, its device and its counters
                give_back()
            return None
        taken, existed = share
        result = DeviceResult(
            data.full_name,
            did[0],
            did[1],
            did[2],
            True if data.admin else None,
            "" if taken is not None else None,  # the share's ID is made with the result (_result)
            tuple(sorted(taken.items())) if taken else None,
            dev.binding_conditions if self.features.device_binding else (),
            dev.binding_failure_conditions if self.features.device_binding else (),
            data.exact.tolerations,
        )
        self.results[ci].append((result, s, dev))
        before = len(self.results[ci]) - 1

        def undo() -> None:
            del self.results[ci][before:]
            if taken is not None:
                self._release_share(did, taken, existed)
            give_back()

        return undo

    def _release_share(self, did: DeviceID, taken: Mapping[str, Fraction], existed: bool) -> None:
        """A share of this search given back: its capacity, and the device's entry when the share made it (1.34-1.35
        keep the entry of a share that consumed nothing)."""
        have = self.allocating_capacity[did]
        for name, amount in taken.items():
            have[name] -= amount
        if not existed and (taken or self.features.counters_1_36):
            del self.allocating_capacity[did]

    def _free(self, ci: int, data: _Request, did: DeviceID, multiple: bool) -> bool:
        """Not taken already: by another claim (or, for admin access, by this claim); a device that allows
        multiple allocations is taken only by a claim that holds it whole."""
        if data.admin:
            return multiple or ci not in self.allocating.get(did, ())
        return not self._in_use(did)

    def _pay_counters(self, pool: Pool, dev: Device, did: DeviceID, multiple: bool) -> bool | None:
        """The device's shared counters taken: whether it took some (a device that allows multiple allocations pays
        them once, with its first share), or None when they are not there (or DRAPartitionableDevices is off)."""
        if not dev.consumes:
            return False
        if not self.features.partitionable_devices:
            return None
        if multiple and self._capacity_in_use(did):
            return False
        return True if self._take_counters(pool, dev) else None

    def _admits(self, ci: int, data: _Request, dev: Device, did: DeviceID, base: str, sub: str, must: bool) -> bool:
        """The device's taints are tolerated (DRADeviceTaints) and the claim's constraints take it (added then)."""
        if self.features.device_taints and self._tainted(dev, data.exact):
            return False
        return self._add_constraints(ci, data, dev, did, base, sub, must)

    def _add_constraints(
        self, ci: int, data: _Request, dev: Device, did: DeviceID, base: str, sub: str, must: bool
    ) -> bool:
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, dev, did):
                if must:
                    raise AllocationError(
                        f"claim {self._claim_id(ci)}, request {data.name}: cannot add device {'/'.join(did)} because "
                        "a claim constraint would not be satisfied"
                    )
                for prev in constraints[:i]:
                    prev.remove(base, sub, dev, did)
                return False
        return True

    def _share(
        self, ci: int, data: _Request, did: DeviceID, dev: Device, multiple: bool
    ) -> tuple[dict[str, Fraction] | None, bool] | None:
        """With DRAConsumableCapacity: None when the request no longer fits the device; else what a share of a
        device that allows multiple allocations takes (None for a device taken whole) and whether the device
        had a share in this search before."""
        if not self.features.consumable_capacity:
            return None, False
        if not self._fits(ci, data, did, dev):
            return None
        if not multiple:
            return None, False
        taken = consumption(
            dev, data.exact.capacity, self.features.fractional_capacity_range, self.features.capacity_checks_1_37
        )
        existed = did in self.allocating_capacity
        have = self.allocating_capacity.setdefault(did, {})
        for name, amount in taken.items():
            have[name] = have.get(name, Fraction(0)) + amount
        return taken, existed

    def _capacity_in_use(self, did: DeviceID) -> bool:
        """upstream deviceCapacityInUse: some share of the device is allocated or being allocated (before 1.37 an
        allocated share counts only with a consumed capacity)."""
        persisted = did in self.a.capacity or (self.features.counters_1_37 and did in self.a.shared)
        return persisted or did in self.allocating_capacity

    def _fits(self, ci: int, data: _Request, did: DeviceID, dev: Device) -> bool:
        return self._check_fits(ci, data, dev, self.a.capacity.get(did, {}), self.allocating_capacity.get(did, {}))

    def _fits_static(self, ci: int, data: _Request, did: DeviceID, dev: Device) -> bool:
        if self.features.capacity_checks_1_37:
            return self._check_fits(ci, data, dev, {}, {})
        return self._fits(ci, data, did, dev)

    def _check_fits(
        self,
        ci: int,
        data: _Request,
        dev: Device,
        allocated: Mapping[str, Fraction],
        allocating: Mapping[str, Fraction],
    ) -> bool:
        f = self.features
        key = None
        if not allocated and not allocating:  # the device alone: the same answer every time (kept)
            key = (dev.cel, dev.policies, data.exact.capacity, f.fractional_capacity_range, f.capacity_checks_1_37)
            known = _STATIC_FITS.get(key)
            if known is not None:
                return known
        try:
            ok = fits(
                dev, data.exact.capacity, allocated, allocating, f.fractional_capacity_range, f.capacity_checks_1_37
            )
        except CapacityError as exc:
            if not self.features.capacity_checks_1_37:
                return False
            raise AllocationError(
                f"claim {self._claim_id(ci)}, request {data.name}: checking capacity for device {dev.name}: {exc}"
            ) from None
        if key is not None:
            if len(_STATIC_FITS) >= _STATIC_FITS_MAX:
                _STATIC_FITS.clear()
            _STATIC_FITS[key] = ok
        return ok

    @staticmethod
    def _tainted(dev: Device, request: ExactRequest) -> bool:
        for taint in dev.taints:
            if taint.effect in (NO_SCHEDULE, NO_EXECUTE) and not any(t.tolerates(taint) for t in request.tolerations):
                return True
        return False

    # -- shared counters (partitionable devices) ---------------------------------------------------------

    def _counter_key(self, pool: Pool) -> str:
        """What upstream keys its counter caches by: the pool's driver and name from 1.37, its name before (two
        drivers' pools of one name then share them)."""
        return pool.pool_id if self.features.counters_1_37 else pool.name

    def _available_counters(self, pool: Pool) -> Counters:
        key = self._counter_key(pool)
        known = self.a._available.get(key)
        if known is not None:
            return known
        avail: Counters = {name: dict(counters) for name, counters in (pool.counter_sets or {}).items()}
        shares = self.features.counters_1_36
        for s in [*pool.slices, *pool.others]:
            for d in s.devices:
                did = (s.driver, s.pool, d.name)
                if did not in self.a.allocated and not (shares and (did in self.a.shared or did in self.a.capacity)):
                    continue  # upstream IsDeviceAllocated: taken whole, or (1.36+) with a share
                for set_name, counters in d.consumes:
                    have = avail.get(set_name, {})
                    for counter, amount in counters:
                        if counter in have:
                            have[counter] -= amount
        self.a._available[key] = avail
        return avail

    def _take_counters(self, pool: Pool, dev: Device) -> bool:
        avail = self._available_counters(pool)
        used = self.consumed.setdefault(self._counter_key(pool), {})
        for set_name, counters in dev.consumes:
            have = used.setdefault(set_name, {})
            for counter, amount in counters:
                have[counter] = have.get(counter, Fraction(0)) + amount
        for set_name, counters_avail in avail.items():
            have = used.get(set_name, {})
            for counter, amount in counters_avail.items():
                if amount < have.get(counter, Fraction(0)):
                    self._give_counters(pool, dev)
                    return False
        return True

    def _give_counters(self, pool: Pool, dev: Device) -> None:
        used = self.consumed.get(self._counter_key(pool), {})
        for set_name, counters in dev.consumes:
            have = used.get(set_name, {})
            for counter, amount in counters:
                have[counter] = have.get(counter, Fraction(0)) - amount

    # -- the result --------------------------------------------------------------------------------------

    def _result(self, ci: int) -> Allocation:
        devices = self.results[ci]
        results = tuple(
            replace(r, share_id=share_id(self._claim_id(ci), i, r.device_id)) if r.share_id is not None else r
            for i, (r, _s, _d) in enumerate(devices)
        )
        return Allocation(results, self._node_selector(devices))

    def _node_selector(
        self, devices: list[tuple[DeviceResult, ResourceSlice, Device]]
    ) -> tuple[NodeSelectorTerm, ...] | None:
        exprs: list[Requirement] = []
        fields: list[Requirement] = []
        for _r, s, dev in devices:
            name, selector = (dev.node_name, dev.node_selector) if s.per_device else (s.node_name, s.node_selector)
            if name or dev.binds_to_node:  # a device bound to a node: the allocation is for this node only
                return (NodeSelectorTerm((), (Requirement("metadata.name", "In", (self.node.name,)),)),)
            if selector is not None and len(selector) == 1:
                for req in selector[0].match_fields:
                    if not any(_same(req, have) for have in fields):
                        fields.append(req)
                for req in selector[0].match_expressions:
                    if not any(_same(req, have) for have in exprs):
                        exprs.append(req)
            elif selector is not None and len(selector) > 1:
                raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(selector)} terms")
        if exprs or fields:
            return (NodeSelectorTerm(tuple(exprs), tuple(fields)),)
        return None


def _same(a: Requirement, b: Requirement) -> bool:
    return a.key == b.key and a.operator == b.operator and set(a.values) == set(b.values)
