"""Warnings about ElasticQuota setups that upstream accepts silently but that do not do what users expect
(spec §12). None of them changes a decision: CapacityScheduling still behaves as upstream does."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from packsched.api.manifests import Cluster
from packsched.api.objects import ElasticQuota, Pod
from packsched.api.quantity import MAX_INT64, format_quantity
from packsched.config.types import KubeSchedulerConfiguration
from packsched.plugins.capacityscheduling.capacity_scheduling import NAME
from packsched.plugins.capacityscheduling.elastic_quota import (
    FIRST_CLASS,
    counted,
    max_from_spec,
    min_from_spec,
    pod_quota_request,
)


def _q(name: str, amount: int) -> str:
    return "unbounded" if amount >= MAX_INT64 else format_quantity(name, amount)


def quota_warnings(cluster: Cluster) -> list[str]:
    quotas = cluster.elastic_quotas
    if not quotas:
        return []
    out: list[str] = []
    by_ns: dict[str, list[ElasticQuota]] = defaultdict(list)
    for q in quotas:
        by_ns[q.namespace].append(q)
    for ns, group in by_ns.items():
        if len(group) > 1:
            names = ", ".join(q.name for q in group)
            out.append(
                f"namespace {ns} has {len(group)} ElasticQuotas ({names}): CapacityScheduling supports one per "
                f"namespace and uses the first it sees ({group[0].name}); the others are ignored"
            )
    effective = {ns: group[0] for ns, group in by_ns.items()}
    for q in effective.values():
        out += _min_over_max(q)
    out += _sum_of_min_over_capacity(list(effective.values()), cluster)
    out += _requests_against_lists(list(effective.values()), cluster.pods)
    return out


def _min_over_max(q: ElasticQuota) -> list[str]:
    lo, hi = min_from_spec(q.min), max_from_spec(q.max)
    out = []
    for name in sorted(set(lo) | set(hi)):
        mn = lo.get(name, 0)
        mx = hi.get(name, 0 if name in FIRST_CLASS else MAX_INT64)
        if mn > mx:
            implicit = q.max is not None and name not in q.max
            why = f" (max does not list {name}, which upstream then bounds at 0)" if implicit else ""
            out.append(
                f"{q.source or q.key}: ElasticQuota {q.key}: min {name} {_q(name, mn)} is greater than max "
                f"{_q(name, mx)}{why}"
            )
    return out


def _sum_of_min_over_capacity(quotas: list[ElasticQuota], cluster: Cluster) -> list[str]:
    if not cluster.nodes:
        return []
    capacity: dict[str, int] = defaultdict(int)
    for node in cluster.nodes:
        for name, amount in node.allocatable.items():
            capacity[name] += amount
    total: dict[str, int] = defaultdict(int)
    for q in quotas:
        for name, amount in (q.min or {}).items():
            if counted(name):
                total[name] += amount
    out = []
    for name, amount in sorted(total.items()):
        if amount > capacity.get(name, 0):
            out.append(
                f"the ElasticQuotas' mins add up to {_q(name, amount)} {name}, more than the cluster's "
                f"{_q(name, capacity.get(name, 0))}: not every guarantee can be honoured at once"
            )
    return out


def _requests_against_lists(quotas: list[ElasticQuota], pods: Iterable[Pod]) -> list[str]:
    by_ns = {q.namespace: q for q in quotas}
    omitted_max: dict[tuple[str, str], list[str]] = defaultdict(list)
    requested: dict[str, int] = defaultdict(int)  # pods of quota namespaces requesting each resource
    for pod in pods:
        q = by_ns.get(pod.namespace)
        if q is None:
            continue
        for name, amount in pod_quota_request(pod).items():
            if amount <= 0:
                continue
            requested[name] += 1
            if name in FIRST_CLASS and q.max is not None and name not in q.max:
                omitted_max[(q.key, name)].append(pod.key)
    out = []
    for (key, name), pod_keys in sorted(omitted_max.items()):
        q = next(q for q in quotas if q.key == key)
        more = f" and {len(pod_keys) - 1} more" if len(pod_keys) > 1 else ""
        out.append(
            f"{q.source or key}: pod {pod_keys[0]}{more} request(s) {name}, which ElasticQuota {key}'s max does "
            f"not list: upstream then bounds {name} at 0, so these pods can never be scheduled (list {name} in max)"
        )
    mins = set().union(*((q.min or {}).keys() for q in quotas))
    for name in FIRST_CLASS:
        if requested.get(name) and name not in mins:
            out.append(
                f"{requested[name]} pod(s) of namespaces with an ElasticQuota request {name}, but no quota's min "
                f"lists it: the sum of mins is 0 {name}, so CapacityScheduling rejects every one of them (list "
                f"{name} in the mins)"
            )
    return out


def enforces_quotas(cfg: KubeSchedulerConfiguration) -> bool:
    return any(
        any(ref.name == NAME for ref in p.plugins.at("preFilter").enabled)
        or any(ref.name == NAME for ref in p.plugins.multi_point.enabled)
        for p in cfg.profiles
    )


def not_enforced_warning(cluster: Cluster, cfg: KubeSchedulerConfiguration) -> str | None:
    if cluster.elastic_quotas and not enforces_quotas(cfg):
        return (
            f"the manifests have {len(cluster.elastic_quotas)} ElasticQuota(s), but no profile of the "
            f"configuration enables {NAME}: the quotas are not enforced"
        )
    return None
