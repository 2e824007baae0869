"""What the API server's admission does to a pod it creates: the LimitRanger plugin (a namespace's LimitRanges set
the requests and limits a container leaves out, then bound them), and the ResourceQuota plugin (a pod that would
take a namespace over one of its ResourceQuotas is not created).

Both are pure functions of the pod and the objects; the simulator calls them when a pod is created
(``sim/engine.py``) and gives the quota check the pods that hold quota then.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from fractions import Fraction

from packsched.api.objects import Container, Pod
from packsched.api.pods import pod_requests
from packsched.api.quantity import format_quantity
from packsched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, ResourceList, is_extended_resource, is_hugepages

CONTAINER = "Container"
POD = "Pod"
PVC = "PersistentVolumeClaim"
LIMIT_TYPES = (CONTAINER, POD, PVC)

REQUESTS_PREFIX = "requests."
LIMITS_PREFIX = "limits."

# ResourceQuota scopes (spec.scopes and spec.scopeSelector's scopeName)
TERMINATING = "Terminating"
NOT_TERMINATING = "NotTerminating"
BEST_EFFORT = "BestEffort"
NOT_BEST_EFFORT = "NotBestEffort"
PRIORITY_CLASS = "PriorityClass"
CROSS_NAMESPACE_POD_AFFINITY = "CrossNamespacePodAffinity"
QUOTA_SCOPES = (
    TERMINATING,
    NOT_TERMINATING,
    BEST_EFFORT,
    NOT_BEST_EFFORT,
    PRIORITY_CLASS,
    CROSS_NAMESPACE_POD_AFFINITY,
)


@dataclass
class LimitRangeItem:
    """One entry of ``spec.limits``, with the API server's defaults applied (``default`` from ``max``,
    ``defaultRequest`` from ``default`` then ``min``, for type Container)."""

    type: str
    max: ResourceList = field(default_factory=dict)
    min: ResourceList = field(default_factory=dict)
    default: ResourceList = field(default_factory=dict)
    default_request: ResourceList = field(default_factory=dict)
    max_limit_request_ratio: dict[str, Fraction] = field(default_factory=dict)

    def set_defaults(self) -> None:
        """SetDefaults_LimitRangeItem."""
        if self.type != CONTAINER:
            return
        for name, amount in self.max.items():
            self.default.setdefault(name, amount)
        for name, amount in self.default.items():
            self.default_request.setdefault(name, amount)
        for name, amount in self.min.items():
            self.default_request.setdefault(name, amount)


@dataclass
class LimitRange:
    name: str
    namespace: str
    limits: list[LimitRangeItem] = field(default_factory=list)
    source: str = ""


@dataclass(frozen=True)
class ScopeRequirement:
    scope: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple[str, ...] = ()


@dataclass
class ResourceQuota:
    """``spec.hard`` in the scheduler's units per quota resource name (``requests.cpu`` in millicores, ``pods`` a
    count), and the scopes that pick the pods it counts."""

    name: str
    namespace: str
    hard: ResourceList = field(default_factory=dict)
    scopes: tuple[ScopeRequirement, ...] = ()
    source: str = ""


def unit_of(quota_name: str) -> str:
    """The resource whose unit a quota resource name has (``requests.cpu`` and ``limits.cpu``: cpu)."""
    for prefix in (REQUESTS_PREFIX, LIMITS_PREFIX):
        if quota_name.startswith(prefix):
            return quota_name[len(prefix) :]
    return quota_name


def _fmt(name: str, amount: int) -> str:
    return format_quantity(unit_of(name), amount)


def _error(pod: Pod, messages: list[str]) -> str:
    """The API server's refusal (an aggregate of several errors is bracketed)."""
    return f'pods "{pod.name}" is forbidden: {_aggregate(messages)}'


# -- LimitRanger --------------------------------------------------------------------------------------------------


def apply_limit_ranges(pod: Pod, ranges: Iterable[LimitRange]) -> tuple[Pod, str | None]:
    """The LimitRanger plugin on a pod being created: the pod with the defaults of the namespace's LimitRanges
    (a container's missing limits from ``default``, its missing requests from ``defaultRequest``; the API server
    had already made a request from a limit given alone), and the refusal when the pod breaks a min, max or
    maxLimitRequestRatio (None: admitted). ``pod`` itself is not changed."""
    mine = [lr for lr in ranges if lr.namespace == pod.namespace]
    if not mine:
        return pod, None
    containers, inits = list(pod.containers), list(pod.init_containers)
    for lr in mine:  # the mutating phase, every LimitRange in turn
        limits: ResourceList = {}
        requests: ResourceList = {}
        for item in lr.limits:
            if item.type == CONTAINER:
                requests.update(item.default_request)
                limits.update(item.default)
        containers = [_merge(c, requests, limits) for c in containers]
        inits = [_merge(c, requests, limits) for c in inits]
    out = replace(pod, containers=containers, init_containers=inits)
    invalid = _invalid_requests(containers, inits)
    if invalid:  # the API server validates the mutated pod before the validating admission plugins run
        return out, f'Pod "{pod.name}" is invalid: {_aggregate(invalid)}'
    errors: list[str] = []
    for lr in mine:  # the validating phase
        for item in lr.limits:
            if item.type == CONTAINER:
                for c in (*containers, *inits):
                    errors += _constraints(item, c.requests, c.limits)
            elif item.type == POD:
                errors += _constraints(item, *_pod_totals(containers, inits))
    return out, (_error(pod, errors) if errors else None)


def _invalid_requests(containers: list[Container], inits: list[Container]) -> list[str]:
    """What the API server's pod validation says of requests beside their limits: at most the limit, and, for a
    resource that cannot be overcommitted (extended resources, hugepages), equal to it and not without it (a
    LimitRange's ``defaultRequest`` of such a resource with no ``default`` limit makes the pod invalid); fields by
    index, as it writes them."""
    errors: list[str] = []
    for field_name, group in (("containers", containers), ("initContainers", inits)):
        for i, c in enumerate(group):
            for name, req in c.requests.items():
                if name not in c.limits:
                    if is_extended_resource(name) or is_hugepages(name):
                        errors.append(
                            f"spec.{field_name}[{i}].resources.limits: Required value: Limit must be set for non "
                            "overcommitable resources"
                        )
                    continue
                limit = c.limits[name]
                if is_extended_resource(name) or is_hugepages(name):
                    detail = "must be equal to" if req != limit else ""
                else:
                    detail = "must be less than or equal to" if req > limit else ""
                if detail:
                    errors.append(
                        f'spec.{field_name}[{i}].resources.requests: Invalid value: "{_fmt(name, req)}": {detail} '
                        f"{name} limit of {_fmt(name, limit)}"
                    )
    return errors


def _aggregate(messages: list[str]) -> str:
    """Several errors as the API server joins them: one as it is, more bracketed."""
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def _merge(c: Container, requests: ResourceList, limits: ResourceList) -> Container:
    if all(n in c.requests for n in requests) and all(n in c.limits for n in limits):
        return c
    return replace(c, requests={**requests, **c.requests}, limits={**limits, **c.limits})


def _pod_totals(containers: list[Container], inits: list[Container]) -> tuple[ResourceList, ResourceList]:
    """The LimitRanger's pod requests and limits (its podRequests and podLimits)."""
    return _pod_sum(containers, inits, "requests"), _pod_sum(containers, inits, "limits")


def _pod_sum(containers: Iterable[Container], inits: Iterable[Container], kind: str) -> ResourceList:
    """Upstream's pod total of ``kind`` (requests or limits): the containers' sum with the sidecars' (restartable
    init containers run beside them), or, if larger, what an init container needs with the sidecars started
    before it."""
    total: ResourceList = {}
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for c in containers:
        _add(total, getattr(c, kind))
    for c in inits:
        if c.restart_policy == "Always":
            _add(total, getattr(c, kind))
            _add(sidecars, getattr(c, kind))
            needs = sidecars
        else:
            needs = dict(sidecars)
            _add(needs, getattr(c, kind))
        for name, amount in needs.items():
            if amount > init_peak.get(name, 0):
                init_peak[name] = amount
    for name, amount in init_peak.items():
        if name not in total or amount > total[name]:
            total[name] = amount
    return total


def _add(total: ResourceList, amounts: ResourceList) -> None:
    for name, amount in amounts.items():
        total[name] = total.get(name, 0) + amount


def _constraints(item: LimitRangeItem, requests: ResourceList, limits: ResourceList) -> list[str]:
    """minConstraint, maxConstraint and limitRequestRatioConstraint of one item."""
    out: list[str] = []
    kind = item.type
    for name, floor in item.min.items():
        at = _fmt(name, floor)
        if name not in requests:
            out.append(f"minimum {name} usage per {kind} is {at}.  No request is specified")
        elif requests[name] < floor:
            out.append(f"minimum {name} usage per {kind} is {at}, but request is {_fmt(name, requests[name])}")
        elif name in limits and limits[name] < floor:
            out.append(f"minimum {name} usage per {kind} is {at}, but limit is {_fmt(name, limits[name])}")
    for name, ceiling in item.max.items():
        at = _fmt(name, ceiling)
        if name not in limits:
            out.append(f"maximum {name} usage per {kind} is {at}.  No limit is specified")
        elif limits[name] > ceiling:
            out.append(f"maximum {name} usage per {kind} is {at}, but limit is {_fmt(name, limits[name])}")
        elif name in requests and requests[name] > ceiling:
            out.append(f"maximum {name} usage per {kind} is {at}, but request is {_fmt(name, requests[name])}")
    for name, ratio in item.max_limit_request_ratio.items():
        at = _ratio(ratio)
        req, lim = requests.get(name, 0), limits.get(name, 0)
        if req == 0:
            out.append(
                f"{name} max limit to request ratio per {kind} is {at}, but no request is specified or request is 0"
            )
        elif lim == 0:
            out.append(f"{name} max limit to request ratio per {kind} is {at}, but no limit is specified or limit is 0")
        elif Fraction(lim, req) > ratio:
            out.append(f"{name} max limit to request ratio per {kind} is {at}, but provided ratio is {lim / req:f}")
    return out


def _ratio(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{int(q * 1000)}m"


# -- ResourceQuota ------------------------------------------------------------------------------------------------

# Resources whose quota needs every container to say its request or limit (the pod evaluator's validation set).
_MUST_SPECIFY = ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory")


def pod_usage(pod: Pod) -> ResourceList:
    """What a pod counts against quota (upstream podComputeUsageHelper): ``pods`` and ``count/pods``, its requests as
    ``cpu``/``requests.cpu`` (memory, ephemeral-storage alike), ``requests.<name>`` of extended resources and huge
    pages, and its limits as ``limits.cpu`` (memory, ephemeral-storage)."""
    usage: ResourceList = {"pods": 1, "count/pods": 1}
    requests = pod_requests(pod)
    limits = _pod_limits(pod)
    for name in (CPU, MEMORY, EPHEMERAL_STORAGE):
        if name in requests:
            usage[name] = usage[REQUESTS_PREFIX + name] = requests[name]
        if name in limits:
            usage[LIMITS_PREFIX + name] = limits[name]
    for name, amount in requests.items():
        if is_hugepages(name):
            usage[name] = usage[REQUESTS_PREFIX + name] = amount
        elif is_extended_resource(name):
            usage[REQUESTS_PREFIX + name] = amount
    return usage


def _pod_limits(pod: Pod) -> ResourceList:
    """Upstream's PodLimits: the containers' and sidecars' limits (or an init container's, if larger), with the
    pod overhead added to the limits set."""
    total = _pod_sum(pod.containers, pod.init_containers, "limits")
    if total:
        for name, amount in pod.overhead.items():
            if name in total:
                total[name] += amount
    return total


def _best_effort(pod: Pod) -> bool:
    """GetPodQOS: BestEffort when no container asks for or limits cpu or memory (amounts of 0 do not count)."""
    return not any(
        amount > 0
        for c in (*pod.containers, *pod.init_containers)
        for part in (c.requests, c.limits)
        for name, amount in part.items()
        if name in (CPU, MEMORY)
    )


def quota_matches(quota: ResourceQuota, pod: Pod) -> bool:
    """Whether the quota counts the pod: same namespace, and every scope holds (a pod is never Terminating:
    packsched does not read activeDeadlineSeconds; it uses no cross-namespace pod affinity term either)."""
    if quota.namespace != pod.namespace:
        return False
    for req in quota.scopes:
        if req.scope == PRIORITY_CLASS:
            name = pod.priority_class_name
            if req.operator == "In":
                ok = name in req.values
            elif req.operator == "NotIn":
                ok = name not in req.values
            elif req.operator == "Exists":
                ok = bool(name)
            else:
                ok = not name
        else:
            holds = {
                TERMINATING: False,
                NOT_TERMINATING: True,
                BEST_EFFORT: _best_effort(pod),
                NOT_BEST_EFFORT: not _best_effort(pod),
                CROSS_NAMESPACE_POD_AFFINITY: False,
            }[req.scope]
            ok = holds if req.operator in ("Exists", "In") else not holds
        if not ok:
            return False
    return True


def check_quotas(pod: Pod, quotas: Iterable[ResourceQuota], holding: Iterable[Pod]) -> str | None:
    """The ResourceQuota plugin on a pod being created: the refusal when one of the namespace's quotas (by name)
    would go over its hard limits with the pod (``holding``: the pods that count now, the namespace's pods not
    finished), or when a quota on cpu or memory meets a container that does not say its own; None: admitted."""
    mine = sorted((q for q in quotas if quota_matches(q, pod)), key=lambda q: q.name)
    if not mine:
        return None
    delta = pod_usage(pod)
    held = [p for p in holding if p.namespace == pod.namespace]
    for q in mine:
        missing = _missing(pod, [n for n in q.hard if n in _MUST_SPECIFY])
        if missing:
            return _error(pod, [f"failed quota: {q.name}: must specify {missing}"])
        requested = {n: a for n, a in delta.items() if n in q.hard}
        if not requested:
            continue
        used: ResourceList = {}
        for p in held:
            if quota_matches(q, p):
                for n, a in pod_usage(p).items():
                    if n in q.hard:
                        used[n] = used.get(n, 0) + a
        exceeded = sorted(n for n, a in requested.items() if used.get(n, 0) + a > q.hard[n])
        if exceeded:

            def show(values: ResourceList, names: list[str] = exceeded) -> str:
                return ",".join(f"{n}={_fmt(n, values.get(n, 0))}" for n in names)

            return _error(
                pod,
                [
                    f"exceeded quota: {q.name}, requested: {show(requested)}, used: {show(used)}, "
                    f"limited: {show(q.hard)}"
                ],
            )
    return None


def _missing(pod: Pod, names: list[str]) -> str:
    """``must specify``'s list: per resource, the containers that do not give it (upstream's order)."""
    by_name: dict[str, list[str]] = {}
    for name in names:
        kind, base = (
            ("limits", name[len(LIMITS_PREFIX) :]) if name.startswith(LIMITS_PREFIX) else ("requests", unit_of(name))
        )
        for c in (*pod.containers, *pod.init_containers):
            if base not in getattr(c, kind):
                by_name.setdefault(name, []).append(c.name)
    return "; ".join(f"{n} for: {','.join(sorted(set(cs)))}" for n, cs in sorted(by_name.items()))
