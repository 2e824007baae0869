"""The API server's admission on pod create, as packsched models it (``packsched.api.admission``): the LimitRanger
plugin (defaults, then min / max / maxLimitRequestRatio per Container and per Pod) and the ResourceQuota plugin
(scopes, "must specify", "exceeded quota"). The messages are upstream's, word for word (limitranger/admission.go,
resourcequota/controller.go and the pod evaluator's Constraints)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from packsched.api.admission import (
    LimitRange,
    LimitRangeItem,
    ResourceQuota,
    ScopeRequirement,
    _constraints,
    apply_limit_ranges,
    check_quotas,
    pod_usage,
    quota_matches,
    unit_of,
)
from packsched.api.objects import Container, Pod

Mi = 2**20
Gi = 2**30


def make_pod(*containers: Container, inits: tuple[Container, ...] = (), name: str = "p", **kw: object) -> Pod:
    return Pod(name, "team", containers=list(containers), init_containers=list(inits), **kw)  # type: ignore[arg-type]


def lr(*items: LimitRangeItem, namespace: str = "team") -> LimitRange:
    for item in items:
        item.set_defaults()
    return LimitRange("lr", namespace, list(items))


def admit(pod: Pod, *items: LimitRangeItem) -> tuple[Pod, str | None]:
    return apply_limit_ranges(pod, [lr(*items)])


# -- LimitRanger: the mutating phase ------------------------------------------------------------------------------


def test_set_defaults_only_for_container_items() -> None:
    item = LimitRangeItem("Container", max={"cpu": 2000}, min={"memory": 64 * Mi}, default={"memory": 128 * Mi})
    item.set_defaults()
    assert item.default == {"cpu": 2000, "memory": 128 * Mi}
    assert item.default_request == {"cpu": 2000, "memory": 128 * Mi}  # default wins over min
    pod_item = LimitRangeItem("Pod", max={"cpu": 4000})
    pod_item.set_defaults()
    assert (pod_item.default, pod_item.default_request) == ({}, {})


def test_no_limit_range_in_the_namespace_leaves_the_pod_alone() -> None:
    pod = make_pod(Container("c"))
    out, refusal = apply_limit_ranges(pod, [lr(LimitRangeItem("Container", min={"cpu": 100}), namespace="other")])
    assert out is pod and refusal is None


def test_missing_requests_and_limits_come_from_defaults_given_ones_stay() -> None:
    item = LimitRangeItem("Container", default={"cpu": 500, "memory": 256 * Mi}, default_request={"cpu": 100})
    pod = make_pod(
        Container("bare"), Container("own", requests={"cpu": 200}, limits={"cpu": 300}), inits=(Container("init"),)
    )
    out, refusal = admit(pod, item)
    assert refusal is None
    bare, own = out.containers
    # defaultRequest from default where not given (SetDefaults), limits from default
    assert bare.requests == {"cpu": 100, "memory": 256 * Mi} and bare.limits == {"cpu": 500, "memory": 256 * Mi}
    assert own.requests == {"cpu": 200, "memory": 256 * Mi} and own.limits == {"cpu": 300, "memory": 256 * Mi}
    assert out.init_containers[0].limits == {"cpu": 500, "memory": 256 * Mi}
    assert pod.containers[0].requests == {}  # the pod given is not changed


def test_a_container_with_everything_is_kept_as_is() -> None:
    c = Container("c", requests={"cpu": 100}, limits={"cpu": 200})
    out, refusal = admit(make_pod(c), LimitRangeItem("Container", default={"cpu": 500}))
    assert refusal is None and out.containers[0] is c


def test_a_default_request_of_an_extended_resource_without_a_limit_is_invalid() -> None:
    """A LimitRange's defaultRequest of an extended resource with no default limit: the defaulted container requests
    it without a limit, which the API server's validation refuses for a resource that cannot be overcommitted
    (packsched admitted the pod). A default limit makes it valid (the request defaults to it)."""
    item = LimitRangeItem("Container", default_request={"example.com/foo": 1})
    _, refusal = admit(make_pod(Container("c")), item)
    assert refusal == (
        'Pod "p" is invalid: spec.containers[0].resources.limits: Required value: Limit must be set for non '
        "overcommitable resources"
    )
    out, refusal = admit(make_pod(Container("c")), LimitRangeItem("Container", default={"example.com/foo": 1}))
    assert refusal is None
    assert out.containers[0].requests == out.containers[0].limits == {"example.com/foo": 1}


def test_a_default_request_above_the_containers_limit_is_invalid() -> None:
    """The API server's validation of the defaulted pod, before any validating admission plugin: request <= limit,
    and request == limit for a resource that cannot be overcommitted (extended resources, hugepages); containers by
    index, a string value in double quotes, as its field errors read (issue 24 audit: the message was a LimitRanger
    refusal, named the container and skipped extended resources)."""
    item = LimitRangeItem("Container", default_request={"cpu": 500, "example.com/foo": 5}, min={"cpu": 600})
    pod = make_pod(Container("c", limits={"cpu": 200, "example.com/foo": 1}))
    _, refusal = admit(pod, item)
    assert refusal == (
        'Pod "p" is invalid: [spec.containers[0].resources.requests: Invalid value: "500m": must be less than '
        'or equal to cpu limit of 200m, spec.containers[0].resources.requests: Invalid value: "5": must be equal '
        "to example.com/foo limit of 1]"
    )
    init = make_pod(Container("app", requests={"cpu": 100}), inits=(Container("setup", limits={"cpu": 200}),))
    _, refusal = admit(init, LimitRangeItem("Container", default_request={"cpu": 500}))
    assert refusal == (
        'Pod "p" is invalid: spec.initContainers[0].resources.requests: Invalid value: "500m": must be less than or '
        "equal to cpu limit of 200m"
    )


# -- LimitRanger: the validating phase ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requests", "limits", "message"),
    [
        ({}, {}, "minimum cpu usage per Container is 100m.  No request is specified"),
        ({"cpu": 50}, {"cpu": 200}, "minimum cpu usage per Container is 100m, but request is 50m"),
        ({"cpu": 150}, {"cpu": 150}, None),
    ],
)
def test_container_min(requests: dict[str, int], limits: dict[str, int], message: str | None) -> None:
    item = LimitRangeItem("Container", min={"cpu": 100})
    item.default_request = {}  # no defaulting: the constraint itself
    _, refusal = apply_limit_ranges(make_pod(Container("c", requests, limits)), [LimitRange("lr", "team", [item])])
    assert refusal == (None if message is None else f'pods "p" is forbidden: {message}')


def test_container_min_checks_the_limit_too() -> None:
    """A limit below min with a request above it (the API server refuses request > limit first, but minConstraint
    says both)."""
    item = LimitRangeItem("Container", min={"example.com/foo": 2})
    said = _constraints(item, {"example.com/foo": 3}, {"example.com/foo": 1})
    assert said == ["minimum example.com/foo usage per Container is 2, but limit is 1"]


@pytest.mark.parametrize(
    ("requests", "limits", "message"),
    [
        ({"memory": 128 * Mi}, {}, "maximum memory usage per Container is 1Gi.  No limit is specified"),
        ({"memory": 128 * Mi}, {"memory": 2 * Gi}, "maximum memory usage per Container is 1Gi, but limit is 2Gi"),
        ({"memory": 128 * Mi}, {"memory": Gi}, None),
    ],
)
def test_container_max(requests: dict[str, int], limits: dict[str, int], message: str | None) -> None:
    item = LimitRangeItem("Container", max={"memory": Gi})
    _, refusal = apply_limit_ranges(make_pod(Container("c", requests, limits)), [LimitRange("lr", "team", [item])])
    assert refusal == (None if message is None else f'pods "p" is forbidden: {message}')


def test_container_max_checks_the_request_too() -> None:
    item = LimitRangeItem("Container", max={"example.com/foo": 2})
    said = _constraints(item, {"example.com/foo": 3}, {"example.com/foo": 1})
    assert said == ["maximum example.com/foo usage per Container is 2, but request is 3"]


@pytest.mark.parametrize(
    ("ratio", "requests", "limits", "message"),
    [
        (Fraction(2), {}, {"cpu": 100}, "cpu max limit to request ratio per Container is 2, but no request is "
         "specified or request is 0"),
        (Fraction(2), {"cpu": 100}, {}, "cpu max limit to request ratio per Container is 2, but no limit is "
         "specified or limit is 0"),
        (Fraction(2), {"cpu": 100}, {"cpu": 300}, "cpu max limit to request ratio per Container is 2, but provided "
         "ratio is 3.000000"),
        (Fraction(3, 2), {"cpu": 100}, {"cpu": 175}, "cpu max limit to request ratio per Container is 1500m, but "
         "provided ratio is 1.750000"),
        (Fraction(2), {"cpu": 100}, {"cpu": 200}, None),  # equal to the ratio is allowed
    ],
)  # fmt: skip
def test_container_max_limit_request_ratio(
    ratio: Fraction, requests: dict[str, int], limits: dict[str, int], message: str | None
) -> None:
    item = LimitRangeItem("Container", max_limit_request_ratio={"cpu": ratio})
    _, refusal = admit(make_pod(Container("c", requests, limits)), item)
    assert refusal == (None if message is None else f'pods "p" is forbidden: {message}')


def test_several_errors_are_one_bracketed_aggregate() -> None:
    item = LimitRangeItem("Container", min={"cpu": 100}, max={"memory": Gi})
    item_pod = LimitRangeItem("Pod", max={"cpu": 150})
    pod = make_pod(Container("a", {"cpu": 50}, {"memory": Gi}), Container("b", {"cpu": 100}, {"memory": Gi}))
    _, refusal = apply_limit_ranges(pod, [LimitRange("lr", "team", [item, item_pod])])
    assert refusal == (
        'pods "p" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, '
        "maximum cpu usage per Pod is 150m.  No limit is specified]"
    )


def test_pod_item_sums_containers_and_takes_the_largest_init_container() -> None:
    item = LimitRangeItem("Pod", max={"cpu": 1000}, min={"cpu": 300})
    lim = {"cpu": 400}
    ok = make_pod(Container("a", {"cpu": 200}, lim), Container("b", {"cpu": 200}, lim), inits=(Container("i"),))
    assert apply_limit_ranges(ok, [LimitRange("lr", "team", [item])])[1] is None  # 400m requested, 800m limited
    big_init = make_pod(Container("a", {"cpu": 200}, lim), inits=(Container("i", {"cpu": 900}, {"cpu": 1200}),))
    _, refusal = apply_limit_ranges(big_init, [LimitRange("lr", "team", [item])])
    assert refusal == 'pods "p" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m'
    small = make_pod(Container("a", {"cpu": 100}, {"cpu": 100}), inits=(Container("i", {"cpu": 50}, {"cpu": 50}),))
    _, refusal = apply_limit_ranges(small, [LimitRange("lr", "team", [item])])
    assert refusal == 'pods "p" is forbidden: minimum cpu usage per Pod is 300m, but request is 100m'


def test_pod_item_counts_sidecars_with_the_containers() -> None:
    """limitranger's podRequests / podLimits: a restartable init container (a sidecar) runs beside the containers,
    so it adds to their sum, as it does for the scheduler and the quota."""
    item = LimitRangeItem("Pod", max={"cpu": 250})
    sidecar = Container("side", {"cpu": 200}, {"cpu": 200}, restart_policy="Always")
    pod = make_pod(Container("a", {"cpu": 100}, {"cpu": 100}), inits=(sidecar,))
    _, refusal = apply_limit_ranges(pod, [LimitRange("lr", "team", [item])])
    assert refusal == 'pods "p" is forbidden: maximum cpu usage per Pod is 250m, but limit is 300m'
    # an init container after a sidecar runs beside it: 150m + 200m = 350m > the containers' 300m
    later = Container("later", {"cpu": 150}, {"cpu": 150})
    pod = make_pod(Container("a", {"cpu": 100}, {"cpu": 100}), inits=(sidecar, later))
    _, refusal = apply_limit_ranges(pod, [LimitRange("lr", "team", [LimitRangeItem("Pod", max={"cpu": 320})])])
    assert refusal == 'pods "p" is forbidden: maximum cpu usage per Pod is 320m, but limit is 350m'


def test_persistent_volume_claim_items_do_not_bound_pods() -> None:
    item = LimitRangeItem("PersistentVolumeClaim", max={"storage": Gi}, min={"storage": Mi})
    out, refusal = admit(make_pod(Container("c")), item)
    assert refusal is None and out.containers[0].requests == {}


# -- ResourceQuota -------------------------------------------------------------------------------------------------


def test_unit_of() -> None:
    assert [unit_of(n) for n in ("requests.cpu", "limits.memory", "pods", "nvidia.com/gpu")] == [
        "cpu",
        "memory",
        "pods",
        "nvidia.com/gpu",
    ]


def test_pod_usage_counts_requests_limits_extended_and_hugepages() -> None:
    c = Container(
        "c",
        {"cpu": 500, "memory": Gi, "nvidia.com/gpu": 1, "hugepages-2Mi": 4 * Mi},
        {"cpu": 1000, "memory": Gi, "nvidia.com/gpu": 1},
    )
    init = Container("i", {"cpu": 100}, {"cpu": 2000})
    pod = make_pod(c, inits=(init,), overhead={"cpu": 100, "ephemeral-storage": Gi})
    assert pod_usage(pod) == {
        "pods": 1,
        "count/pods": 1,
        "cpu": 600,  # requests with the overhead
        "requests.cpu": 600,
        "limits.cpu": 2100,  # the init container's limit is larger; overhead added to limits already set
        "ephemeral-storage": Gi,  # the overhead counts as requested (PodRequests), not as a limit
        "requests.ephemeral-storage": Gi,
        "memory": Gi,
        "requests.memory": Gi,
        "limits.memory": Gi,
        "hugepages-2Mi": 4 * Mi,
        "requests.hugepages-2Mi": 4 * Mi,
        "requests.nvidia.com/gpu": 1,
    }
    assert pod_usage(make_pod(Container("c"), overhead={"cpu": 100})) == {
        "pods": 1,
        "count/pods": 1,
        "cpu": 100,
        "requests.cpu": 100,
    }  # no limits at all: the overhead does not make one


def quota(*scopes: ScopeRequirement, hard: dict[str, int] | None = None, name: str = "q") -> ResourceQuota:
    return ResourceQuota(name, "team", hard or {"pods": 1}, tuple(scopes))


BEST_EFFORT_POD = make_pod(Container("c"))
BURSTABLE_POD = make_pod(Container("c", {"memory": Mi}))


@pytest.mark.parametrize(
    ("scope", "operator", "best_effort", "burstable"),
    [
        ("BestEffort", "Exists", True, False),
        ("NotBestEffort", "Exists", False, True),
        ("BestEffort", "DoesNotExist", False, True),
        ("NotTerminating", "Exists", True, True),
        ("Terminating", "Exists", False, False),
        ("Terminating", "DoesNotExist", True, True),
        ("CrossNamespacePodAffinity", "Exists", False, False),
    ],
)
def test_scopes(scope: str, operator: str, best_effort: bool, burstable: bool) -> None:
    q = quota(ScopeRequirement(scope, operator))
    assert (quota_matches(q, BEST_EFFORT_POD), quota_matches(q, BURSTABLE_POD)) == (best_effort, burstable)


def test_zero_requests_leave_a_pod_best_effort() -> None:
    """QoS counts only cpu and memory amounts above zero (GetPodQOS); an extended resource does not count."""
    pod = make_pod(Container("c", {"cpu": 0, "nvidia.com/gpu": 1}, {"memory": 0}))
    assert quota_matches(quota(ScopeRequirement("BestEffort", "Exists")), pod)
    assert not quota_matches(quota(ScopeRequirement("NotBestEffort", "Exists")), pod)


@pytest.mark.parametrize(
    ("operator", "values", "high", "none"),
    [
        ("In", ("high",), True, False),
        ("NotIn", ("high",), False, True),
        ("Exists", (), True, False),
        ("DoesNotExist", (), False, True),
    ],
)
def test_priority_class_scope(operator: str, values: tuple[str, ...], high: bool, none: bool) -> None:
    q = quota(ScopeRequirement("PriorityClass", operator, values))
    assert quota_matches(q, make_pod(Container("c"), priority_class_name="high")) is high
    assert quota_matches(q, make_pod(Container("c"))) is none


def test_every_scope_must_hold_and_the_namespace_must_match() -> None:
    q = quota(ScopeRequirement("PriorityClass", "In", ("high",)), ScopeRequirement("BestEffort", "Exists"))
    assert quota_matches(q, make_pod(Container("c"), priority_class_name="high"))
    assert not quota_matches(q, make_pod(Container("c", {"cpu": 1}), priority_class_name="high"))
    assert not quota_matches(q, Pod("p", "other", containers=[Container("c")], priority_class_name="high"))


def test_no_matching_quota_admits() -> None:
    assert check_quotas(BURSTABLE_POD, [quota(ScopeRequirement("BestEffort", "Exists"))], []) is None


def test_must_specify_names_each_resource_and_its_containers() -> None:
    """A quota on cpu or memory (requests or limits) needs every container, init containers too, to give it."""
    q = quota(hard={"requests.cpu": 4000, "limits.memory": 4 * Gi, "requests.nvidia.com/gpu": 2})
    pod = make_pod(
        Container("b", {"cpu": 100}, {"memory": Mi}),
        Container("a", {}, {"memory": Mi}),
        inits=(Container("init", {"cpu": 100}),),
    )
    assert check_quotas(pod, [q], []) == (
        'pods "p" is forbidden: failed quota: q: must specify limits.memory for: init; requests.cpu for: a'
    )
    plain = quota(hard={"cpu": 4000, "memory": Gi})
    assert check_quotas(make_pod(Container("x")), [plain], []) == (
        'pods "p" is forbidden: failed quota: q: must specify cpu for: x; memory for: x'
    )
    # a quota on other resources only asks nothing of the containers
    assert check_quotas(make_pod(Container("x")), [quota(hard={"pods": 2, "requests.nvidia.com/gpu": 1})], []) is None


def test_exceeded_quota_shows_only_the_exceeded_resources() -> None:
    q = quota(hard={"requests.cpu": 1000, "pods": 3, "requests.memory": 4 * Gi}, name="compute")
    held = [
        make_pod(Container("c", {"cpu": 600, "memory": Gi}), name="h1"),
        Pod("elsewhere", "other", containers=[Container("c", {"cpu": 900, "memory": Gi})]),
    ]
    ok = make_pod(Container("c", {"cpu": 400, "memory": Gi}))
    assert check_quotas(ok, [q], held) is None  # 1000m of 1000m: at the limit is allowed
    over = make_pod(Container("c", {"cpu": 500, "memory": Gi}))
    assert check_quotas(over, [q], held) == (
        'pods "p" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=600m, '
        "limited: requests.cpu=1"
    )


def test_held_pods_count_only_where_the_quota_counts_them() -> None:
    q = quota(ScopeRequirement("PriorityClass", "In", ("high",)), hard={"pods": 1})
    high = make_pod(Container("c"), priority_class_name="high", name="new")
    assert check_quotas(high, [q], [make_pod(Container("c"), name="low")]) is None
    refusal = check_quotas(high, [q], [make_pod(Container("c"), priority_class_name="high", name="old")])
    assert refusal == 'pods "new" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1'


def test_a_quota_on_resources_the_pod_does_not_use_is_skipped_and_quotas_go_by_name() -> None:
    gpus = quota(hard={"requests.nvidia.com/gpu": 0}, name="a-gpus")
    pods = quota(hard={"pods": 0}, name="b-pods")
    count = quota(hard={"count/pods": 0}, name="c-count")
    pod = make_pod(Container("c"))
    assert check_quotas(pod, [count, pods, gpus], []) == (
        'pods "p" is forbidden: exceeded quota: b-pods, requested: pods=1, used: pods=0, limited: pods=0'
    )


def test_quota_limits_count_sidecars() -> None:
    """PodLimits: a sidecar's limit adds to the containers' (limits.cpu 300m here, not max(100m, 200m))."""
    sidecar = Container("side", {"cpu": 200}, {"cpu": 200}, restart_policy="Always")
    pod = make_pod(Container("a", {"cpu": 100}, {"cpu": 100}), inits=(sidecar,))
    assert pod_usage(pod)["limits.cpu"] == 300
    assert check_quotas(pod, [quota(hard={"limits.cpu": 250})], []) == (
        'pods "p" is forbidden: exceeded quota: q, requested: limits.cpu=300m, used: limits.cpu=0, '
        "limited: limits.cpu=250m"
    )
