"""Pod requests as kube-scheduler counts them (packsched.api.pods), and container resource decoding.

The request vectors are upstream's own, from k8s.io/component-helpers resource helpers_test.go
(TestPodRequestsAndLimits, TestPodRequestsAndLimitsWithoutOverhead, TestPodResourceRequests and
TestPodLevelResourceRequests, the cases without pod-level resources or status), written here as packsched
containers. The non-zero cases follow PodResourcesOptions.NonMissingContainerRequests as the scheduler sets it
(100m cpu, 200Mi memory for every container, init and sidecar included, that has no entry).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from packsched.api.decode import Reader
from packsched.api.errors import ErrorList
from packsched.api.objects import Container, Pod
from packsched.api.pods import decode_pod_spec, pod_non_zero_requests, pod_requests, pod_requests_and_non_zero
from packsched.api.resources import ResourceList, add_into, amount_of, max_into

Mi = 2**20
Gi = 2**30
DEF_CPU = 100
DEF_MEM = 200 * Mi


def res(**kw: Any) -> ResourceList:
    """A resource list from quantities: res(cpu="2", memory="1Gi", gpu=1)."""
    names = {"gpu": "nvidia.com/gpu", "storage": "ephemeral-storage"}
    return {names.get(k, k): amount_of(names.get(k, k), v) for k, v in kw.items()}


def app(name: str = "app", **kw: Any) -> Container:
    return Container(name, requests=res(**kw))


def init(name: str = "init", **kw: Any) -> Container:
    return Container(name, requests=res(**kw))


def sidecar(name: str = "sidecar", **kw: Any) -> Container:
    return Container(name, requests=res(**kw), restart_policy="Always")


def pod(
    containers: list[Container],
    inits: list[Container] | None = None,
    overhead: ResourceList | None = None,
) -> Pod:
    return Pod("p", containers=containers, init_containers=inits or [], overhead=overhead or {})


# --- upstream vectors -----------------------------------------------------------------------------


UPSTREAM = [
    # TestPodRequestsAndLimits
    ("just-overhead", pod([app()], overhead=res(cpu="5", memory="5")), res(cpu="5", memory="5")),
    (
        "req-and-overhead",
        pod([app(cpu="1", memory="10")], overhead=res(cpu="5", memory="5")),
        res(cpu="6", memory="15"),
    ),
    # TestPodRequestsAndLimitsWithoutOverhead (with the overhead added back, as the scheduler counts it)
    (
        "two containers",
        pod([app("a", cpu="1", memory="5"), app("b", cpu="4", memory="12")]),
        res(cpu="5", memory="17"),
    ),
    (
        "two containers with overhead",
        pod([app("a", cpu="1", memory="5"), app("b", cpu="4", memory="12")], overhead=res(cpu="3", memory="8")),
        res(cpu="8", memory="25"),
    ),
    (
        "two containers, massive init - should just be the largest init",
        pod(
            [app("a", cpu="1", memory="5"), app("b", cpu="4", memory="12")],
            [init("small", cpu="1", memory="5"), init("big", cpu="40", memory="120")],
            overhead=res(cpu="3", memory="8"),
        ),
        res(cpu="43", memory="128"),
    ),
    # TestPodResourceRequests
    ("larger init container", pod([app(cpu="1")], [init(cpu="4")]), res(cpu="4")),
    ("larger containers", pod([app("a", cpu="2"), app("b", cpu="3")], [init(cpu="2")]), res(cpu="5")),
    (
        "pod overhead included",
        pod([app("a", cpu="2"), app("b", cpu="3")], [init(cpu="2")], overhead=res(cpu="1", memory="1Gi")),
        res(cpu="6", memory="1Gi"),
    ),
    ("restartable init container", pod([app(cpu="1")], [sidecar(cpu="1")]), res(cpu="2")),
    (
        # max(5, restartable init containers (3+2+1) + regular (1)) = 7
        "multiple restartable init containers",
        pod(
            [app(cpu="1")],
            [init("init-1", cpu="5"), sidecar("r1", cpu="1"), sidecar("r2", cpu="2"), sidecar("r3", cpu="3")],
        ),
        res(cpu="7"),
    ),
    (
        # init-2 needs 5 + the restartable init containers started before it (1+2) = 8; the one after it
        # does not count
        "multiple restartable and regular init containers",
        pod(
            [app(cpu="1")],
            [
                init("init-1", cpu="5"),
                sidecar("r1", cpu="1"),
                sidecar("r2", cpu="2"),
                init("init-2", cpu="5"),
                sidecar("r3", cpu="3"),
            ],
        ),
        res(cpu="8"),
    ),
    (
        "restartable-init, init and regular",
        pod([app(cpu="100")], [sidecar(cpu="10"), init(cpu="200")]),
        res(cpu="210"),
    ),
    # TestPodLevelResourceRequests, the cases without pod-level resources
    (
        "container-level resources and init container",
        pod([app(memory="3Mi", cpu="2m")], [init(memory="5Mi", cpu="4m")]),
        res(memory="5Mi", cpu="4m"),
    ),
    (
        "container-level resources and sidecar container",
        pod([app(memory="3Mi", cpu="2m")], [sidecar(memory="5Mi", cpu="4m")]),
        res(memory="8Mi", cpu="6m"),
    ),
    (
        "container-level resources, init and sidecar container",
        pod([app(memory="3Mi", cpu="2m")], [sidecar(memory="5Mi", cpu="4m"), init(memory="6Mi", cpu="8m")]),
        res(memory="11Mi", cpu="12m"),
    ),
]


@pytest.mark.parametrize(("p", "expected"), [pytest.param(p, e, id=name) for name, p, e in UPSTREAM])
def test_upstream_pod_requests(p: Pod, expected: ResourceList) -> None:
    assert pod_requests(p) == expected


# --- the rules, one at a time ---------------------------------------------------------------------


def test_containers_are_summed_per_resource() -> None:
    p = pod([app("a", cpu="1", memory="1Gi"), app("b", cpu="500m", gpu=1), app("c", memory="512Mi", gpu=2)])
    assert pod_requests(p) == {"cpu": 1500, "memory": Gi + 512 * Mi, "nvidia.com/gpu": 3}


def test_init_containers_are_a_per_resource_max_not_a_sum() -> None:
    p = pod([app(cpu="1", memory="8Gi")], [init("i1", cpu="4", memory="1Gi"), init("i2", cpu="2", memory="2Gi")])
    # cpu: the first init container's 4 beats the app's 1; memory: the app's 8Gi beats every init container.
    assert pod_requests(p) == {"cpu": 4000, "memory": 8 * Gi}


def test_init_containers_can_raise_a_resource_the_app_does_not_request() -> None:
    p = pod([app(cpu="1")], [init(gpu=1, memory="1Gi")])
    assert pod_requests(p) == {"cpu": 1000, "memory": Gi, "nvidia.com/gpu": 1}


def test_sidecars_run_beside_the_app_containers() -> None:
    p = pod([app(cpu="1", memory="1Gi")], [sidecar("s1", cpu="250m"), sidecar("s2", memory="128Mi")])
    assert pod_requests(p) == {"cpu": 1250, "memory": Gi + 128 * Mi}


def test_a_plain_init_container_runs_with_the_sidecars_started_before_it() -> None:
    p = pod([app(cpu="100m")], [sidecar("s1", cpu="1"), init("i1", cpu="2"), sidecar("s2", cpu="4")])
    # phases: s1 = 1; i1 with s1 = 3; s1 + s2 = 5; running = s1 + s2 + app = 5.1
    assert pod_requests(p)["cpu"] == 5100
    p = pod([app(cpu="100m")], [sidecar("s1", cpu="1"), init("i1", cpu="10"), sidecar("s2", cpu="4")])
    # i1 with s1 = 11 beats running = 5.1
    assert pod_requests(p)["cpu"] == 11_000


def test_a_sidecar_started_after_an_init_container_does_not_count_against_it() -> None:
    p = pod([app(cpu="1")], [init("i1", cpu="6"), sidecar("s1", cpu="4")])
    assert pod_requests(p)["cpu"] == 6000  # not 10: i1 ran before s1 started; running is 4 + 1 = 5


def test_overhead_is_added_on_top_of_everything() -> None:
    p = pod([app(cpu="1")], [init(cpu="4")], overhead=res(cpu="250m", memory="120Mi", gpu=0))
    assert pod_requests(p) == {"cpu": 4250, "memory": 120 * Mi}


def test_explicit_zero_requests_are_left_out() -> None:
    assert pod_requests(pod([app(cpu="0", memory="0")])) == {}
    assert pod_requests(pod([])) == {}


# --- non-zero requests (scoring defaults) ---------------------------------------------------------


NON_ZERO = [
    ("no requests at all", pod([app()]), (DEF_CPU, DEF_MEM)),
    ("two empty containers", pod([app("a"), app("b")]), (2 * DEF_CPU, 2 * DEF_MEM)),
    ("cpu only", pod([app(cpu="500m")]), (500, DEF_MEM)),
    ("memory only", pod([app(memory="1Gi")]), (DEF_CPU, Gi)),
    ("explicit zero cpu stays zero", pod([app(cpu="0")]), (0, DEF_MEM)),
    ("explicit zero memory stays zero", pod([app(memory="0")]), (DEF_CPU, 0)),
    ("explicit zeros", pod([app(cpu="0", memory="0")]), (0, 0)),
    ("defaults are per container", pod([app("a", cpu="1"), app("b", memory="1Gi")]), (1100, DEF_MEM + Gi)),
    ("an empty init container defaults too", pod([app(cpu="1")], [init()]), (1000, DEF_MEM)),
    ("an init container with memory only", pod([app()], [init(memory="1Gi")]), (DEF_CPU, Gi)),
    ("an init container with cpu only", pod([app()], [init(cpu="2")]), (2000, DEF_MEM)),
    (
        "an empty sidecar defaults and runs beside the app",
        pod([app()], [sidecar()]),
        (2 * DEF_CPU, 2 * DEF_MEM),
    ),
    (
        "an empty init container after an empty sidecar",
        pod([app()], [sidecar(), init()]),
        (2 * DEF_CPU, 2 * DEF_MEM),
    ),
    (
        "a big init container after a defaulted sidecar",
        pod([app(cpu="1", memory="1Gi")], [sidecar(), init(cpu="3", memory="0")]),
        (3100, Gi + DEF_MEM),
    ),
    ("overhead is added", pod([app()], overhead=res(cpu="250m", memory="64Mi")), (350, DEF_MEM + 64 * Mi)),
    ("no containers, only overhead", pod([], overhead=res(cpu="1")), (1000, 0)),
]


@pytest.mark.parametrize(("p", "expected"), [pytest.param(p, e, id=name) for name, p, e in NON_ZERO])
def test_pod_non_zero_requests(p: Pod, expected: tuple[int, int]) -> None:
    assert pod_non_zero_requests(p) == expected


def test_non_zero_does_not_touch_other_resources_or_the_plain_requests() -> None:
    p = pod([app(gpu=1)])
    assert pod_requests(p) == {"nvidia.com/gpu": 1}
    assert pod_non_zero_requests(p) == (DEF_CPU, DEF_MEM)
    assert p.containers[0].requests == {"nvidia.com/gpu": 1}  # the pod itself is not changed


# --- a reference model, and properties ------------------------------------------------------------


def reference_requests(p: Pod, non_zero: bool) -> ResourceList:
    """The KEP-753 formula written as phases: each init container's phase (a plain one beside the sidecars
    started before it, a sidecar with every sidecar up to it), and the running phase (all sidecars and all app
    containers). The pod needs the per-resource maximum over the phases, plus its overhead."""

    def of(c: Container) -> ResourceList:
        r = dict(c.requests)
        if non_zero:
            r.setdefault("cpu", DEF_CPU)
            r.setdefault("memory", DEF_MEM)
        return r

    phases: list[ResourceList] = []
    for i, c in enumerate(p.init_containers):
        started = [of(s) for s in p.init_containers[:i] if s.restart_policy == "Always"]
        phase: ResourceList = {}
        for r in [*started, of(c)]:
            for k, v in r.items():
                phase[k] = phase.get(k, 0) + v
        phases.append(phase)
    running: ResourceList = {}
    for r in [of(s) for s in p.init_containers if s.restart_policy == "Always"] + [of(c) for c in p.containers]:
        add_into(running, r)
    phases.append(running)
    total: ResourceList = {}
    for ph in phases:
        max_into(total, ph)
    add_into(total, p.overhead)
    return total


NAMES = ["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage"]
requests_st = st.dictionaries(st.sampled_from(NAMES), st.integers(min_value=0, max_value=10**6), max_size=4)


@st.composite
def pods(draw: st.DrawFn) -> Pod:
    containers = [Container(f"c{i}", requests=r) for i, r in enumerate(draw(st.lists(requests_st, max_size=4)))]
    inits = [
        Container(f"i{i}", requests=r, restart_policy="Always" if always else "")
        for i, (r, always) in enumerate(draw(st.lists(st.tuples(requests_st, st.booleans()), max_size=5)))
    ]
    return pod(containers, inits, draw(requests_st))


@given(pods())
def test_pod_requests_match_the_phase_model(p: Pod) -> None:
    assert pod_requests(p) == {k: v for k, v in reference_requests(p, non_zero=False).items() if v}
    ref = reference_requests(p, non_zero=True)
    assert pod_non_zero_requests(p) == (ref.get("cpu", 0), ref.get("memory", 0))


@given(pods())
def test_non_zero_requests_are_never_below_the_requests(p: Pod) -> None:
    req = pod_requests(p)
    cpu, mem = pod_non_zero_requests(p)
    assert cpu >= req.get("cpu", 0)
    assert mem >= req.get("memory", 0)
    if all("cpu" in c.requests and "memory" in c.requests for c in p.containers + p.init_containers):
        assert (cpu, mem) == (req.get("cpu", 0), req.get("memory", 0))


@given(pods())
def test_turning_a_plain_init_container_into_a_sidecar_never_lowers_the_requests(p: Pod) -> None:
    before = pod_requests(p)
    for c in p.init_containers:
        c.restart_policy = "Always"
    after = pod_requests(p)
    assert all(after.get(k, 0) >= v for k, v in before.items())


# --- decoding container resources -----------------------------------------------------------------


def decode(spec: dict[str, Any]) -> tuple[Pod, ErrorList]:
    errors = ErrorList(file="pod.yaml")
    p = Pod("p")
    decode_pod_spec(Reader(errors), spec, "spec", p)
    return p, errors


def one(resources: dict[str, Any], *, init_container: bool = False) -> dict[str, Any]:
    c = {"name": "c", "resources": resources}
    if init_container:
        return {"containers": [{"name": "app"}], "initContainers": [c]}
    return {"containers": [c]}


def test_limits_without_requests_default_the_request_to_the_limit() -> None:
    p, errors = decode(one({"limits": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": 1}}))
    assert not errors
    c = p.containers[0]
    assert c.requests == {"cpu": 2000, "memory": Gi, "nvidia.com/gpu": 1}
    assert c.limits == {"cpu": 2000, "memory": Gi, "nvidia.com/gpu": 1}
    assert pod_requests(p) == {"cpu": 2000, "memory": Gi, "nvidia.com/gpu": 1}


def test_a_request_given_is_kept_and_only_missing_ones_default_to_the_limit() -> None:
    p, errors = decode(one({"requests": {"cpu": "500m"}, "limits": {"cpu": "2", "memory": "1Gi"}}))
    assert not errors
    assert p.containers[0].requests == {"cpu": 500, "memory": Gi}


def test_init_containers_default_requests_to_limits_too() -> None:
    p, errors = decode(one({"limits": {"cpu": "3"}}, init_container=True))
    assert not errors
    assert p.init_containers[0].requests == {"cpu": 3000}
    assert pod_requests(p) == {"cpu": 3000}
    assert pod_non_zero_requests(p) == (3000, DEF_MEM)


def test_a_sidecar_is_an_init_container_with_restart_policy_always() -> None:
    spec = {
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}],
        "initContainers": [{"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}],
    }
    p, errors = decode(spec)
    assert not errors
    assert p.init_containers[0].restart_policy == "Always"
    assert pod_requests(p) == {"cpu": 2000}


def test_restart_policy_only_always_and_only_on_init_containers() -> None:
    _, errors = decode({"containers": [{"name": "app", "restartPolicy": "Always"}]})
    assert [(e.path, e.message) for e in errors.items] == [
        ("spec.containers[0].restartPolicy", "Forbidden: may not be set for non-init containers")
    ]
    _, errors = decode({"containers": [{"name": "app"}], "initContainers": [{"name": "i", "restartPolicy": "Never"}]})
    assert [e.path for e in errors.items] == ["spec.initContainers[0].restartPolicy"]
    assert 'supported values: "Always"' in errors.items[0].message


def test_request_above_limit_is_an_error() -> None:
    _, errors = decode(one({"requests": {"cpu": "3"}, "limits": {"cpu": "2"}}))
    assert [(e.file, e.path) for e in errors.items] == [("pod.yaml", "spec.containers[0].resources.requests.cpu")]
    assert "less than or equal to cpu limit" in errors.items[0].message


@pytest.mark.parametrize("amount", ["0.5", 0.5, "500m", "1.5", "1001m"])
def test_extended_resources_must_be_integers(amount: object) -> None:
    _, errors = decode(one({"requests": {"nvidia.com/gpu": amount}, "limits": {"nvidia.com/gpu": amount}}))
    paths = sorted(e.path for e in errors.items)
    assert paths == [
        "spec.containers[0].resources.limits.nvidia.com/gpu",
        "spec.containers[0].resources.requests.nvidia.com/gpu",
    ]
    assert all(e.message == "must be an integer" for e in errors.items)


@pytest.mark.parametrize("amount", ["1", 1, "1.0", "1000m", "1e0", 2.0])
def test_integral_extended_resources_in_any_spelling_are_fine(amount: object) -> None:
    p, errors = decode(one({"limits": {"example.com/foo": amount}}))
    assert not errors
    assert p.containers[0].requests == p.containers[0].limits


def test_extended_resource_requests_must_equal_limits_when_both_are_given() -> None:
    _, errors = decode(one({"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}}))
    assert [(e.path, e.message) for e in errors.items] == [
        ("spec.containers[0].resources.requests.nvidia.com/gpu", "must be equal to nvidia.com/gpu limit")
    ]
    # Below the limit is fine for native resources, not for extended ones; equal is fine for both.
    _, errors = decode(
        one({"requests": {"nvidia.com/gpu": 2, "cpu": "1"}, "limits": {"nvidia.com/gpu": 2, "cpu": "2"}})
    )
    assert not errors


def test_integer_rule_does_not_apply_to_native_resources() -> None:
    p, errors = decode(one({"requests": {"cpu": "0.5", "memory": "1.5", "hugepages-2Mi": "0.5"}}))
    assert not errors
    assert p.containers[0].requests == {"cpu": 500, "memory": 2, "hugepages-2Mi": 1}


def test_bad_quantities_are_reported_at_their_path() -> None:
    _, errors = decode(one({"requests": {"cpu": "1.5.3Gi"}, "limits": {"memory": "-1"}}))
    assert sorted(e.path for e in errors.items) == [
        "spec.containers[0].resources.limits.memory",
        "spec.containers[0].resources.requests.cpu",
    ]


def test_overhead_is_decoded() -> None:
    p, errors = decode({"containers": [{"name": "c"}], "overhead": {"cpu": "250m", "memory": "120Mi"}})
    assert not errors
    assert p.overhead == {"cpu": 250, "memory": 120 * Mi}
    assert pod_requests(p) == {"cpu": 250, "memory": 120 * Mi}
    assert pod_non_zero_requests(p) == (350, DEF_MEM + 120 * Mi)


_amounts = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage"]), st.integers(0, 3000), max_size=4
)
_containers = st.lists(
    st.builds(Container, st.sampled_from(["a", "b"]), _amounts, restart_policy=st.sampled_from(["", "Always"])),
    max_size=3,
)


@given(_containers, _containers, _amounts, st.booleans(), st.booleans())
def test_requests_and_non_zero_together_are_each_on_its_own(
    containers: list[Container], init: list[Container], overhead: ResourceList, sidecars: bool, in_sum: bool
) -> None:
    """pod_requests_and_non_zero (make_pod_info's one pass over a pod of app containers only) answers what
    pod_requests and pod_non_zero_requests answer, the requests' entries in the same order, for pods with and
    without init containers (sidecars or not) and overhead, zero entries included, in every release's formula."""
    pod = Pod("p", containers=containers, init_containers=init, overhead=overhead)
    requests, cpu, mem = pod_requests_and_non_zero(pod, sidecars, in_sum)
    assert list(requests.items()) == list(pod_requests(pod, sidecars).items())
    assert (cpu, mem) == pod_non_zero_requests(pod, sidecars, in_sum)
