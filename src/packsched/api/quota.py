"""ElasticQuota arithmetic shared by the CapacityScheduling plugin, the simulator's quota report and the live
ElasticQuota status controller (``../shared/spec/capacity-scheduling.md`` §1, §2 and §10.3): the resources a
quota counts, a pod's request as the plugin counts it, ``min`` / ``max`` as the plugin reads them, and
``status.used`` as scheduler-plugins' ElasticQuota controller writes it.

A resource vector is a ``dict`` from resource name to an integer (cpu in millicores, everything else in units).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from packsched.api.objects import ElasticQuota, Pod
from packsched.api.quantity import MAX_INT64
from packsched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_scalar_resource

FIRST_CLASS = (CPU, MEMORY, EPHEMERAL_STORAGE)

Res = dict[str, int]


def counted(name: str) -> bool:
    """Whether the plugin tracks this resource at all (pods is first-class too, but no pod requests it)."""
    return name in FIRST_CLASS or (name != PODS and is_scalar_resource(name))


def add_to(total: Res, other: Mapping[str, int], sign: int = 1) -> None:
    """total += sign * other, dimension by dimension (a dimension of ``other`` is added to ``total`` even at zero)."""
    for name, amount in other.items():
        total[name] = total.get(name, 0) + sign * amount


def pod_quota_request(pod: Pod) -> Res:
    """Upstream computePodResourceRequest: the containers' requests summed, then raised to any single init
    container's request (sidecars are not special here), then the overhead added. Only requests count.
    Zero entries a container lists are kept (``nvidia.com/gpu: 0`` shows up in ``used``, as upstream)."""
    out: Res = {}
    for c in pod.containers:
        add_to(out, {k: v for k, v in c.requests.items() if counted(k)})
    for c in pod.init_containers:
        for name, amount in c.requests.items():
            if counted(name) and amount > out.get(name, 0):
                out[name] = amount
            elif counted(name):
                out.setdefault(name, 0)
    add_to(out, {k: v for k, v in pod.overhead.items() if counted(k)})
    return out


def min_from_spec(raw: Mapping[str, int] | None) -> Res:
    """An absent ``min`` is zero in cpu, memory and ephemeral-storage; a present list lists what it has (a
    first-class resource it omits is zero)."""
    if raw is None:
        return {name: 0 for name in FIRST_CLASS}
    out = {name: 0 for name in FIRST_CLASS}
    out.update({k: v for k, v in raw.items() if counted(k)})
    return out


def max_from_spec(raw: Mapping[str, int] | None) -> Res:
    """An absent ``max`` is unbounded (MaxInt64) in cpu, memory and ephemeral-storage. A present list bounds a
    first-class resource it omits at ZERO, and leaves an omitted scalar resource unbounded (spec §1.6)."""
    if raw is None:
        return {name: MAX_INT64 for name in FIRST_CLASS}
    out = {name: 0 for name in FIRST_CLASS}
    out.update({k: v for k, v in raw.items() if counted(k)})
    return out


def first_per_namespace(quotas: Iterable[ElasticQuota]) -> list[ElasticQuota]:
    """The quota that counts for each namespace: the first one (upstream's controller and plugin take it)."""
    seen: dict[str, ElasticQuota] = {}
    for q in quotas:
        seen.setdefault(q.namespace, q)
    return list(seen.values())


def quota_used(namespace: str, pods: Iterable[Pod]) -> Res:
    """What a namespace's quota has in use as the plugin counts it: the quota requests of ``pods`` (the pods
    placed on nodes) that belong to the namespace, summed."""
    used: Res = {}
    for pod in pods:
        if pod.namespace == namespace:
            add_to(used, pod_quota_request(pod))
    return used


def status_used(quota: ElasticQuota, pods: Iterable[Pod]) -> Res:
    """``status.used`` as scheduler-plugins' ElasticQuota controller writes it (spec §10.3): zero for every
    resource ``min`` or ``max`` names, plus the requests of the namespace's Running pods (containers summed,
    raised to any init container's; the overhead is NOT added, an upstream bug kept here, and a resource a pod
    requests but the quota does not list is still added)."""
    used: Res = {name: 0 for name in (quota.min or {})}
    used.update({name: 0 for name in (quota.max or {}) if name not in used})
    for pod in pods:
        if pod.namespace != quota.namespace or pod.phase != "Running":
            continue
        req: Res = {}
        for c in pod.containers:
            add_to(req, c.requests)
        for c in pod.init_containers:
            for name, amount in c.requests.items():
                req[name] = max(req.get(name, 0), amount)
        add_to(used, req)
    return used
