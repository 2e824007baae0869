"""DRA-backed extended resources (KEP-5004, feature gate DRAExtendedResource, on by default from 1.36): a pod asks
for a plain extended resource (``nvidia.com/gpu: 2``) that a DeviceClass serves, either by naming it in
``spec.extendedResourceName`` or through the implicit name ``deviceclass.resource.kubernetes.io/<class>``.

On a node whose allocatable does not list the resource (or lists it as 0), the request becomes a device request
of that class, one per container asking for it (count = the container's amount), in a ResourceClaim the scheduler
makes for the pod; a node that advertises the resource through a device plugin keeps the plain check.

This module holds what NodeResourcesFit and DynamicResources share: which class serves a name (upstream's
ExtendedResourceCache), the requests of the pod's special claim (upstream createRequestsAndMappings), and per
node the devices of a class and how many are allocated (upstream calculateDRAResourceTotals, for scoring).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from packsched.api.dra import DeviceClass, DeviceRequest, DraObjects, ExactRequest, ResourceSlice
from packsched.api.dracel import CelRuntimeError, compile_selector
from packsched.api.objects import Container, Node, Pod
from packsched.api.resources import is_extended_resource
from packsched.backend.dra.allocator import node_matches_terms

DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"  # resourceapi.ResourceDeviceClassPrefix
EXTENDED_CLAIM_INFIX = "-extended-resources-"


@lru_cache(maxsize=4096)  # asked for the same few names in every scheduling cycle
def is_dra_extended_name(name: str) -> bool:
    """upstream IsDRAExtendedResourceName: an extended resource name, or an implicit class name."""
    return is_extended_resource(name) or name.startswith(DEVICE_CLASS_PREFIX)


def class_for(dra: DraObjects | None, name: str) -> DeviceClass | None:
    """The DeviceClass serving the extended resource ``name``, or None. Two classes naming the same resource:
    upstream prefers the newer one, the name breaking ties; packsched has no creation times and takes them as
    equal, so the lowest class name wins. The implicit name maps its own class."""
    if dra is None or not is_dra_extended_name(name):
        return None
    if name.startswith(DEVICE_CLASS_PREFIX):
        return dra.classes.get(name[len(DEVICE_CLASS_PREFIX) :])
    best: DeviceClass | None = None
    for cls in dra.classes.values():
        if cls.extended_resource_name == name and (best is None or cls.name < best.name):
            best = cls
    return best


def backed_resources(dra: DraObjects | None, requests: dict[str, int]) -> dict[str, DeviceClass]:
    """The pod's requested resources that a DeviceClass serves (name -> class)."""
    out: dict[str, DeviceClass] = {}
    for name, amount in requests.items():
        if amount > 0:
            cls = class_for(dra, name)
            if cls is not None:
                out[name] = cls
    return out


def extended_claim_name(pod: Pod) -> str:
    """``<pod>-extended-resources-`` and five characters (the API server's generateName; here derived from the
    pod's key, so that runs repeat)."""
    base = pod.name[: 63 - len(EXTENDED_CLAIM_INFIX) - 5] + EXTENDED_CLAIM_INFIX
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha256(f"{pod.key}/extended-resources".encode()).digest()
    return base + "".join(alphabet[b % len(alphabet)] for b in digest[:5])


def _container_request(
    index: int, container: Container, name: str, class_name: str, reusable: Sequence[DeviceRequest | None]
) -> DeviceRequest | None:
    """The device request one container needs for ``name`` beyond the devices of ``reusable`` (requests of
    long-lived containers that start later, which an init container may use first); None when it needs none."""
    amount = container.requests.get(name, 0)
    if amount <= 0:
        return None
    have = 0
    for request in reusable:
        if request is not None and request.exactly is not None:
            have += request.exactly.count
            if have >= amount:
                return None
    position = sorted(container.requests).index(name)
    return DeviceRequest(f"container-{index}-request-{position}", ExactRequest(class_name, count=amount - have))


def claim_requests(pod: Pod, needed: dict[str, DeviceClass]) -> tuple[DeviceRequest, ...]:
    """The special claim's requests for the resources a node must give through DRA: for each resource (sorted),
    one request per long-lived container (app containers and sidecars) asking for it, and one for the largest
    need of the plain init containers (which run one at a time and may reuse the devices of containers that
    start after them); sorted by request name."""
    containers = [*pod.init_containers, *pod.containers]
    n_init = len(pod.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= n_init or c.restart_policy == "Always"]
    short_lived = [i for i, c in enumerate(containers) if i < n_init and c.restart_policy != "Always"]
    out: list[DeviceRequest] = []
    for name in sorted(needed):
        class_name = needed[name].name
        per_container: list[DeviceRequest | None] = [None] * len(containers)
        for i in long_lived:
            per_container[i] = _container_request(i, containers[i], name, class_name, ())
        largest: DeviceRequest | None = None
        for i in short_lived:
            request = _container_request(i, containers[i], name, class_name, per_container[i:])
            if request is None or request.exactly is None:
                continue
            if largest is None or (largest.exactly is not None and largest.exactly.count < request.exactly.count):
                largest = request
        if largest is not None:
            out.append(largest)
        out.extend(r for r in per_container if r is not None)
    return tuple(sorted(out, key=lambda r: r.name))


# -- scoring: the devices of a class on each node ------------------------------------------------------------------


def _slice_devices_on(s: ResourceSlice, node: Node) -> list[int]:
    """Indices of the slice's devices counted for ``node`` (upstream's own reading of node selection here: a
    slice naming another node, or whose selector does not match, gives none; a slice with neither name nor
    selector gives all)."""
    if s.per_device:
        out = []
        for i, d in enumerate(s.devices):
            by_name = d.all_nodes or (bool(d.node_name) and d.node_name == node.name)
            if by_name or (d.node_selector is not None and node_matches_terms(node, d.node_selector)):
                out.append(i)
        return out
    if not s.all_nodes and s.node_name != node.name and s.node_selector is not None:
        if not node_matches_terms(node, s.node_selector):
            return []
    elif not s.all_nodes and s.node_name and s.node_name != node.name:
        return []
    return list(range(len(s.devices)))


def _matches_class(cls: DeviceClass, s: ResourceSlice, index: int) -> bool:
    device = s.devices[index]
    for expr in cls.selectors:
        compiled = compile_selector(expr)
        if compiled.error:
            raise CelRuntimeError(compiled.error)
        if not compiled.matches(device.cel):
            return False
    return True


def device_totals(
    dra: DraObjects, cls: DeviceClass, nodes: Sequence[Node], allocated: set[tuple[str, str, str]]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Per node: how many devices of every ResourceSlice match the class, and how many of those are allocated
    (upstream calculateDRAResourceTotals). A node whose count fails (a CEL error) gets (0, 0), as upstream logs
    the error and leaves the resource out of the score."""
    capacity = np.zeros(len(nodes), dtype=np.int64)
    used = np.zeros(len(nodes), dtype=np.int64)
    named: dict[str, list[ResourceSlice]] = {}
    others: list[ResourceSlice] = []
    for s in dra.slices:
        if s.node_name and not s.all_nodes and not s.per_device and s.node_selector is None:
            named.setdefault(s.node_name, []).append(s)  # reaches that node only
        else:
            others.append(s)
    for k, node in enumerate(nodes):
        total = taken = 0
        try:
            for s in [*named.get(node.name, ()), *others]:
                for i in _slice_devices_on(s, node):
                    if _matches_class(cls, s, i):
                        total += 1
                        if (s.driver, s.pool, s.devices[i].name) in allocated:
                            taken += 1
        except CelRuntimeError:
            total = taken = 0
        capacity[k] = total
        used[k] = taken
    return capacity, used


def request_mappings(pod: Pod, needed: dict[str, DeviceClass]) -> list[tuple[str, str, str]]:
    """Which request of the special claim (:func:`claim_requests`) serves each container's extended resource:
    (container, resource, request) as upstream writes ``status.extendedResourceClaimStatus.requestMappings``. A
    plain init container is mapped to the requests of the long-lived containers after it that it reuses, then to
    the largest request of the plain init containers (they run one at a time and share it)."""
    containers = [*pod.init_containers, *pod.containers]
    n_init = len(pod.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= n_init or c.restart_policy == "Always"]
    short_lived = [i for i, c in enumerate(containers) if i < n_init and c.restart_policy != "Always"]
    out: list[tuple[str, str, str]] = []
    for name in sorted(needed):
        class_name = needed[name].name
        per_container: list[DeviceRequest | None] = [None] * len(containers)
        long_maps: list[tuple[str, str, str]] = []
        for i in long_lived:
            request = per_container[i] = _container_request(i, containers[i], name, class_name, ())
            if request is not None:
                long_maps.append((containers[i].name, name, request.name))
        short_maps: list[tuple[str, str, str]] = []
        short_names: set[str] = set()
        largest: DeviceRequest | None = None
        for i in short_lived:
            container = containers[i]
            amount = container.requests.get(name, 0)
            if amount <= 0:
                continue
            have = 0
            for reused in per_container[i:]:
                if reused is None or reused.exactly is None:
                    continue
                have += reused.exactly.count
                short_maps.append((container.name, name, reused.name))
                if have >= amount:
                    break
            request = _container_request(i, container, name, class_name, per_container[i:])
            if request is None or request.exactly is None:
                continue
            short_maps.append((container.name, name, request.name))
            short_names.add(request.name)
            if largest is None or (largest.exactly is not None and largest.exactly.count < request.exactly.count):
                largest = request
        if largest is not None and len(short_names) > 1:
            short_names.discard(largest.name)
            short_maps = [(c, r, largest.name if q in short_names else q) for c, r, q in short_maps]
        out += long_maps + short_maps
    return out
