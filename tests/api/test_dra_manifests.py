"""Reading the DRA kinds (``packsched.api.dra``): DeviceClass, ResourceClaim, ResourceClaimTemplate and
ResourceSlice in resource.k8s.io/v1, v1beta2 (the same shape) and v1beta1 (a request's fields beside its name, a
device's under ``basic``), and every bad field reported at its path."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
import yaml

from packsched.api.cluster import Cluster
from packsched.api.dra import EXACT_COUNT, Allocation, DeviceResult, DraObjects
from packsched.api.errors import ErrorList
from packsched.api.manifests import decode_document
from packsched.api.objects import Pod, PodResourceClaim, Toleration
from packsched.live.claims import allocation_json

V1, V1BETA2, V1BETA1 = "resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"


def decode(text: str) -> tuple[Cluster, list[tuple[str, str]]]:
    errors = ErrorList()
    cluster = decode_document(yaml.safe_load(text), "test.yaml", errors)
    return cluster, [(e.path, e.message) for e in errors.items]


def ok(text: str) -> DraObjects:
    cluster, errors = decode(text)
    assert errors == []
    return cluster.dra


def errors_of(text: str) -> dict[str, str]:
    _cluster, errors = decode(text)
    assert errors, "expected errors"
    return dict(errors)


CLAIM_V1 = """
apiVersion: {v}
kind: ResourceClaim
metadata: {{name: c, namespace: ns, uid: u-1}}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu
        count: 2
        adminAccess: false
        selectors: [{{cel: {{expression: 'device.driver == "gpu.example.com"'}}}}]
        tolerations: [{{key: dirty, operator: Exists, effect: NoSchedule}}]
    - name: nic
      firstAvailable:
      - {{name: fast, deviceClassName: nic-fast, allocationMode: All}}
      - {{name: slow, deviceClassName: nic, count: 1, tolerations: [{{key: k, value: v}}]}}
    constraints:
    - {{requests: [gpu, nic/fast], matchAttribute: gpu.example.com/numa}}
    - {{distinctAttribute: gpu.example.com/index}}
    config: [{{opaque: {{driver: gpu.example.com, parameters: {{}}}}}}]
"""


@pytest.mark.parametrize("version", [V1, V1BETA2])
def test_a_claim_in_v1_and_v1beta2(version: str) -> None:
    dra = ok(CLAIM_V1.format(v=version))
    claim = dra.claims["ns/c"]
    assert claim.uid == "u-1" and claim.allocation is None and not claim.deleting
    gpu, nic = claim.spec.requests
    assert gpu.name == "gpu" and gpu.first_available == ()
    assert gpu.exactly is not None
    assert (gpu.exactly.device_class, gpu.exactly.mode, gpu.exactly.count) == ("gpu", EXACT_COUNT, 2)
    assert gpu.exactly.admin_access is False
    assert gpu.exactly.selectors == ('device.driver == "gpu.example.com"',)
    [tol] = gpu.exactly.tolerations
    assert (tol.key, tol.operator, tol.value, tol.effect) == ("dirty", "Exists", "", "NoSchedule")
    assert nic.exactly is None
    (fast_name, fast), (slow_name, slow) = nic.first_available
    assert (fast_name, fast.device_class, fast.mode, fast.count) == ("fast", "nic-fast", "All", 0)
    assert (slow_name, slow.count, slow.admin_access) == ("slow", 1, None)
    assert [(t.key, t.operator, t.value) for t in slow.tolerations] == [("k", "Equal", "v")]
    match, distinct = claim.spec.constraints
    assert match.requests == ("gpu", "nic/fast") and match.match_attribute == "gpu.example.com/numa"
    assert distinct.requests == () and distinct.distinct_attribute == "gpu.example.com/index"


def test_a_claim_in_v1beta1_has_the_request_fields_beside_the_name() -> None:
    dra = ok(
        """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c, deletionTimestamp: "2024-01-01T00:00:00Z"}
spec:
  devices:
    requests:
    - {name: all, deviceClassName: gpu, allocationMode: All, adminAccess: true}
    - name: pick
      firstAvailable: [{name: one, deviceClassName: gpu}]
"""
    )
    claim = dra.claims["default/c"]
    assert claim.deleting and claim.uid == "claim-c"
    every, pick = claim.spec.requests
    assert every.exactly is not None
    assert (every.exactly.mode, every.exactly.count, every.exactly.admin_access) == ("All", 0, True)
    assert pick.exactly is None and [n for n, _ in pick.first_available] == ["one"]


def test_v1_request_fields_beside_the_name_are_unknown() -> None:
    errors = errors_of(
        """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec: {devices: {requests: [{name: r, deviceClassName: gpu}]}}
"""
    )
    assert "spec.devices.requests[0].deviceClassName" in errors
    assert errors["spec.devices.requests[0]"].startswith("Required value: exactly one of `exactly` or `firstAvailable`")


def test_a_claim_status_is_read() -> None:
    dra = ok(
        """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}
status:
  allocation:
    devices:
      results:
      - {request: r, driver: gpu.example.com, pool: n1, device: gpu-0, adminAccess: true}
      - {request: r, driver: gpu.example.com, pool: n1, device: gpu-1}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]
  reservedFor:
  - {resource: pods, name: p, uid: x}
  - {apiGroup: example.com, resource: things, name: t, uid: y}
"""
    )
    claim = dra.claims["default/c"]
    assert claim.allocation is not None
    assert claim.allocation.results == (
        DeviceResult("r", "gpu.example.com", "n1", "gpu-0", True),
        DeviceResult("r", "gpu.example.com", "n1", "gpu-1", None),
    )
    assert claim.allocation.node_selector is not None
    assert claim.allocation.node_selector[0].match_fields[0].values == ("n1",)
    assert claim.reserved_for == ["default/p"]  # only pods count
    assert dra.allocated_devices() == {("gpu.example.com", "n1", "gpu-1")}  # admin access does not count


@pytest.mark.parametrize("version", [V1, V1BETA2, V1BETA1])
def test_a_claim_template(version: str) -> None:
    request = "{name: r, deviceClassName: gpu}" if version == V1BETA1 else "{name: r, exactly: {deviceClassName: gpu}}"
    dra = ok(
        f"""
apiVersion: {version}
kind: ResourceClaimTemplate
metadata: {{name: t, namespace: ns}}
spec:
  metadata: {{labels: {{a: b}}}}
  spec: {{devices: {{requests: [{request}]}}}}
"""
    )
    template = dra.templates["ns/t"]
    assert template.name == "t" and template.namespace == "ns"
    [req] = template.spec.requests
    assert req.exactly is not None and req.exactly.device_class == "gpu" and req.exactly.count == 1


def test_a_template_claim_is_made_once_per_pod() -> None:
    dra = ok(
        """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}}
"""
    )
    pod = Pod("p", "default", resource_claims=(PodResourceClaim("g", template_name="t"),))
    name = dra.pod_claim_name(pod, pod.resource_claims[0])
    assert name is not None and name.startswith("p-g-")
    assert dra.pod_claim_name(pod, pod.resource_claims[0]) == name
    assert dra.claims[f"default/{name}"].owner_pod == "default/p"
    assert dra.generation == 1
    missing = Pod("q", "default", resource_claims=(PodResourceClaim("g", template_name="nope"),))
    assert dra.pod_claim_name(missing, missing.resource_claims[0]) is None
    # the claim is released (and deallocated) when the pod completes, deleted with the pod
    claim = dra.claims[f"default/{name}"]
    claim.allocation, claim.reserved_for = Allocation(), ["default/p"]
    dra.release(pod, deleted=False)
    assert claim.allocation is None and claim.reserved_for == []
    dra.release(pod, deleted=True)
    assert f"default/{name}" not in dra.claims
    dra.release(pod, deleted=True)  # nothing left: no error


def test_device_class() -> None:
    dra = ok(
        """
apiVersion: resource.k8s.io/v1beta2
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
  config: [{opaque: {driver: gpu.example.com, parameters: {}}}]
  extendedResourceName: example.com/gpu
"""
    )
    cls = dra.classes["gpu"]
    assert cls.selectors == ('device.driver == "gpu.example.com"',)
    assert cls.extended_resource_name == "example.com/gpu" and cls.has_config


def test_bad_selectors_are_reported_at_their_paths() -> None:
    errors = errors_of(
        """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - {}
  - {cel: {}}
  - {cel: {expression: 'device.driver =='}}
  - {cel: {expression: 'nope == 1'}}
"""
    )
    assert errors["spec.selectors[0].cel"] == "Required value"
    assert errors["spec.selectors[1].cel.expression"] == "Required value"
    assert "compilation failed" in errors["spec.selectors[2].cel.expression"]
    assert "undeclared reference to 'nope'" in errors["spec.selectors[3].cel.expression"]


def test_bad_requests_are_reported_at_their_paths() -> None:
    subs = ", ".join(f"{{name: s{i}, deviceClassName: gpu}}" for i in range(9))
    errors = errors_of(
        f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c}}
spec:
  devices:
    requests:
    - {{exactly: {{deviceClassName: gpu}}}}
    - {{name: Bad_Name, exactly: {{deviceClassName: gpu}}}}
    - {{name: dup, exactly: {{deviceClassName: ""}}}}
    - {{name: dup, exactly: {{deviceClassName: Not_A_Name, count: -1}}}}
    - name: all
      exactly:
        deviceClassName: gpu
        allocationMode: All
        count: 2
        capacity: {{requests: {{Bad_Name/x: 1, memory: -1}}}}
    - name: both
      exactly: {{deviceClassName: gpu}}
      firstAvailable: [{{name: a, deviceClassName: gpu}}]
    - name: subs
      firstAvailable:
      - {{deviceClassName: gpu}}
      - {{name: x, deviceClassName: gpu, tolerations: [{{key: k, operator: Exists, value: v, effect: Sometimes}}]}}
      - {{name: x, deviceClassName: gpu}}
    - name: many
      firstAvailable: [{subs}]
    constraints:
    - {{requests: [nope], matchAttribute: gpu.example.com/numa}}
    - {{matchAttribute: gpu.example.com/numa, distinctAttribute: gpu.example.com/index}}
    - {{}}
    - {{matchAttribute: numa}}
    - {{distinctAttribute: Bad_Domain/numa}}
    - {{distinctAttribute: gpu.example.com/9lives}}
"""
    )
    p = "spec.devices.requests"
    assert errors[f"{p}[0].name"] == "Required value"
    assert "a lowercase RFC 1123 label" in errors[f"{p}[1].name"]
    assert errors[f"{p}[2].exactly.deviceClassName"] == "Required value"
    assert errors[f"{p}[3].name"] == 'Duplicate value: "dup"'
    assert "Not_A_Name" in errors[f"{p}[3].exactly.deviceClassName"]
    assert errors[f"{p}[3].exactly.count"] == "Invalid value: -1: must be greater than zero"
    assert "must not be specified when allocationMode is 'All'" in errors[f"{p}[4].exactly.count"]
    assert "RFC 1123 subdomain" in errors[f"{p}[4].exactly.capacity.requests.Bad_Name/x"]
    assert "must be greater than or equal to 0" in errors[f"{p}[4].exactly.capacity.requests.memory"]
    assert "not both" in errors[f"{p}[5]"]
    assert errors[f"{p}[6].firstAvailable[0].name"] == "Required value"
    assert errors[f"{p}[6].firstAvailable[2].name"] == 'Duplicate value: "x"'
    assert "must be empty when `operator` is 'Exists'" in errors[f"{p}[6].firstAvailable[1].tolerations[0].value"]
    assert "Sometimes" in errors[f"{p}[6].firstAvailable[1].tolerations[0].effect"]
    assert errors[f"{p}[7].firstAvailable"] == "Too many: 9: must have at most 8 items"
    c = "spec.devices.constraints"
    assert "must be the name of a request in the claim" in errors[f"{c}[0].requests[0]"]
    assert errors[f"{c}[1]"].startswith("Required value: exactly one of `matchAttribute` or `distinctAttribute`")
    assert errors[f"{c}[2]"].startswith("Required value: exactly one of `matchAttribute` or `distinctAttribute`")
    assert "must be a fully qualified name" in errors[f"{c}[3].matchAttribute"]
    assert f"{c}[4].distinctAttribute" in errors
    assert "must be a C identifier" in errors[f"{c}[5].distinctAttribute"]


SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: p, generation: 3, resourceSliceCount: 2}
  nodeName: n1
  devices:
  - name: gpu-0
    attributes:
      model: {string: a100}
      numa: {int: 1}
      healthy: {bool: true}
      driverVersion: {version: 1.2.3}
      other.io/x: {int: 7}
    capacity:
      memory: {value: 80Gi}
    allowMultipleAllocations: true
    taints: [{key: dirty, value: "yes", effect: NoSchedule}]
"""


def test_a_slice_in_v1() -> None:
    dra = ok(SLICE)
    [s] = dra.slices
    assert (s.name, s.driver, s.pool, s.generation, s.slice_count, s.node_name) == (
        "s",
        "gpu.example.com",
        "p",
        3,
        2,
        "n1",
    )
    [d] = s.devices
    assert d.name == "gpu-0"
    assert d.cel.attributes == (
        ("model", "string", "a100"),
        ("numa", "int", 1),
        ("healthy", "bool", True),
        ("driverVersion", "version", "1.2.3"),
        ("other.io/x", "int", 7),
    )
    assert d.cel.capacity == (("memory", Fraction(80 * 2**30)),)
    assert d.cel.allow_multiple_allocations
    assert [(t.key, t.value, t.effect) for t in d.taints] == [("dirty", "yes", "NoSchedule")]
    # Device.attribute: fully qualified, or bare when the domain is the driver's
    assert d.attribute("gpu.example.com/numa") == ("int", 1)
    assert d.attribute("other.io/x") == ("int", 7)
    assert d.attribute("other.io/numa") is None
    assert d.attribute("gpu.example.com/nope") is None


def test_a_slice_in_v1beta1_has_devices_under_basic() -> None:
    dra = ok(
        """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: p, resourceSliceCount: 1}
  allNodes: true
  devices:
  - name: gpu-0
    basic:
      attributes: {numa: {int: 0}}
      capacity: {memory: 1Gi}
"""
    )
    [s] = dra.slices
    assert s.all_nodes and s.generation == 0
    [d] = s.devices
    assert d.cel.attributes == (("numa", "int", 0),)
    assert d.cel.capacity == (("memory", Fraction(2**30)),)


def test_a_partitionable_slice_with_per_device_node_selection() -> None:
    dra = ok(
        """
apiVersion: resource.k8s.io/v1beta2
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: p, resourceSliceCount: 1}
  perDeviceNodeSelection: true
  sharedCounters:
  - name: gpu-0-counters
    counters: {memory: {value: 8Gi}}
  devices:
  - name: gpu-0-part-0
    nodeName: n1
    consumesCounters:
    - counterSet: gpu-0-counters
      counters: {memory: {value: 4Gi}}
  - name: gpu-0-part-1
    allNodes: true
  - name: gpu-0-part-2
    nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}
"""
    )
    [s] = dra.slices
    assert s.per_device
    assert s.shared_counters == (("gpu-0-counters", (("memory", Fraction(8 * 2**30)),)),)
    part0, part1, part2 = s.devices
    assert part0.node_name == "n1"
    assert part0.consumes == (("gpu-0-counters", (("memory", Fraction(4 * 2**30)),)),)
    assert part1.all_nodes
    assert part2.node_selector is not None and part2.node_selector[0].match_expressions[0].key == "zone"


def test_bad_slices_are_reported_at_their_paths() -> None:
    errors = errors_of(
        """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  pool: {resourceSliceCount: 0}
  nodeName: n1
  allNodes: true
  sharedCounters:
  - name: c
    counters: {memory: {value: lots}}
  devices:
  - attributes:
      Bad-Name: {int: 1}
      two: {int: 1, string: a}
      ver: {version: "1.2"}
    capacity: {memory: {value: x}}
    consumesCounters:
    - counterSet: c
      counters: {memory: {value: y}}
    taints: [{effect: Sometimes}, {key: k}]
    bindsToNode: true
    bindingConditions: [ready]
  - name: d
    nodeSelector: {nodeSelectorTerms: []}
"""
    )
    assert errors["spec.driver"] == "Required value"
    assert errors["spec.pool.name"] == "Required value"
    assert errors["spec.pool.resourceSliceCount"] == "Invalid value: 0: must be greater than zero"
    assert "multiple fields are set" in errors["spec"]
    assert "lots" in errors["spec.sharedCounters[0].counters.memory.value"]
    d = "spec.devices[0]"
    assert errors[f"{d}.name"] == "Required value"
    assert "must be a C identifier" in errors[f"{d}.attributes.Bad-Name"]
    assert errors[f"{d}.attributes.two"] == "Invalid value: exactly one value must be specified"
    assert "semver.org spec 2.0.0" in errors[f"{d}.attributes.ver.version"]
    assert "'x'" in errors[f"{d}.capacity.memory.value"]
    assert "'y'" in errors[f"{d}.consumesCounters[0].counters.memory.value"]
    assert errors[f"{d}.taints[0].key"] == "Required value"
    assert "Sometimes" in errors[f"{d}.taints[0].effect"]
    assert errors[f"{d}.taints[1].effect"] == "Required value"
    assert f"{d}.bindsToNode" not in errors
    assert errors[f"{d}.bindingFailureConditions"] == (
        "Invalid value: bindingFailureConditions are required to use bindingConditions"
    )
    assert "at least one node selector term" in errors["spec.devices[1].nodeSelector.nodeSelectorTerms"]


def test_a_slice_must_say_which_nodes() -> None:
    errors = errors_of(SLICE.replace("  nodeName: n1\n", ""))
    assert errors["spec"].startswith("Required value: exactly one of `nodeName`, `nodeSelector`")


def test_a_slice_has_at_most_128_devices() -> None:
    data: dict[str, Any] = yaml.safe_load(SLICE)
    data["spec"]["devices"] = [{"name": f"d{i}"} for i in range(129)]
    errors = ErrorList()
    decode_document(data, "test.yaml", errors)
    assert [(e.path, e.message) for e in errors.items] == [
        ("spec.devices", "Too many: 129: must have at most 128 items")
    ]


def _policy_slice(policy: str, multi: str = "true") -> str:
    return f"""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: s}}
spec:
  driver: gpu.example.com
  pool: {{name: p, generation: 1, resourceSliceCount: 1}}
  nodeName: n1
  devices:
  - name: gpu-0
    allowMultipleAllocations: {multi}
    capacity:
      memory: {{value: 8Gi, requestPolicy: {policy}}}
"""


def test_request_policies_are_read() -> None:
    dra = ok(_policy_slice("{default: 1Gi, validValues: [1Gi, 2Gi, 8Gi]}"))
    [d] = dra.slices[0].devices
    [(name, policy)] = d.policies
    assert name == "memory" and d.allow_multiple
    assert policy.default == 2**30 and policy.valid_values == (2**30, 2 * 2**30, 8 * 2**30)
    dra = ok(_policy_slice("{default: 1Gi, validRange: {min: 1Gi, step: 1Gi, max: 4Gi}}"))
    [(_name, policy)] = dra.slices[0].devices[0].policies
    assert (policy.has_range, policy.range_min, policy.range_step, policy.range_max) == (
        True,
        2**30,
        2**30,
        4 * 2**30,
    )


def test_bad_request_policies_are_reported_at_their_paths() -> None:
    p = "spec.devices[0].capacity.memory.requestPolicy"
    errors = errors_of(_policy_slice("{default: 1Gi}", multi="false"))
    assert errors[p] == "Forbidden: allowMultipleAllocations must be true"
    errors = errors_of(_policy_slice("{default: 1Gi, validValues: [1Gi], validRange: {min: 1Gi}}"))
    assert "cannot specify" in errors[p]
    errors = errors_of(_policy_slice("{validValues: [2Gi, 1Gi, 16Gi]}"))
    assert errors[f"{p}.default"] == "Required value: required when validValues is defined"
    errors = errors_of(_policy_slice("{default: 3Gi, validValues: [2Gi, 1Gi, 16Gi]}"))
    assert "sorted in ascending order" in errors[f"{p}.validValues[1]"]
    assert "option is larger than capacity value" in errors[f"{p}.validValues[2]"]
    assert "default value is not valid" in errors[f"{p}.validValues"]
    errors = errors_of(_policy_slice("{default: 1Gi, validValues: [1Gi, 1Gi]}"))
    assert "Duplicate value" in errors[f"{p}.validValues[1]"]
    errors = errors_of(_policy_slice("{default: 1Gi, validRange: {step: 1Gi}}"))
    assert errors[f"{p}.validRange.min"] == "Required value: required when validRange is defined"
    errors = errors_of(_policy_slice("{default: 1, validRange: {min: 2, max: 1, step: 0}}"))
    assert "default is less than min" in errors[f"{p}.validRange.default"]
    assert "min is larger than max" in errors[f"{p}.validRange.max"]
    assert "must be greater than zero" in errors[f"{p}.validRange.step"]
    errors = errors_of(_policy_slice("{default: 1200m, validRange: {min: 500m, step: 1}}"))
    assert "not a multiple of a given step (1) from (500m)" in errors[f"{p}.validRange.step"]


def test_shares_in_a_claims_status_are_read() -> None:
    text = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: g
      exactly: {deviceClassName: gpu, capacity: {requests: {memory: 1Gi}}}
status:
  allocation:
    devices:
      results:
      - {request: g, driver: d, pool: p, device: gpu-0, shareID: %s, consumedCapacity: {memory: 1Gi}}
"""
    dra = ok(text % "0b5b3f0e-5f7c-4d36-9a55-1f6e2f4f8a11")
    claim = dra.claims["default/c"]
    assert claim.spec.requests[0].exactly is not None
    assert claim.spec.requests[0].exactly.capacity == (("memory", Fraction(2**30)),)
    assert claim.allocation is not None
    [r] = claim.allocation.results
    assert r.share_id == "0b5b3f0e-5f7c-4d36-9a55-1f6e2f4f8a11"
    assert r.consumed == (("memory", Fraction(2**30)),)
    state = dra.allocated_state(True)
    assert state.dedicated == set() and state.shared == {("d", "p", "gpu-0")}
    assert state.capacity == {("d", "p", "gpu-0"): {"memory": Fraction(2**30)}}
    assert dra.allocated_state(False).dedicated == {("d", "p", "gpu-0")}
    errors = errors_of(text % "Not-A-UID")
    assert "UUID" in errors["status.allocation.devices.results[0].shareID"]


def test_result_tolerations_are_read_and_written_back() -> None:
    """DRADeviceTaints: the allocator copies a request's tolerations into its results, where the device taint
    eviction controller reads them; a claim's status keeps them (tolerationSeconds included) both ways."""
    result = {
        "request": "r",
        "driver": "d",
        "pool": "p",
        "device": "gpu-0",
        "tolerations": [
            {"operator": "Exists", "key": "dirty", "effect": "NoExecute", "tolerationSeconds": 30},
            {"operator": "Equal", "key": "k", "value": "v"},
        ],
    }
    text = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}
status: {allocation: {devices: {results: [%s]}}}
"""
    dra = ok(text % yaml.safe_dump(result, default_flow_style=True).strip())
    alloc = dra.claims["default/c"].allocation
    assert alloc is not None
    assert alloc.results[0].tolerations == (
        Toleration("dirty", "Exists", "", "NoExecute", 30),
        Toleration("k", "Equal", "v", ""),
    )
    assert allocation_json(alloc)["devices"] == {"results": [result]}
    errors = errors_of(text % "{request: r, driver: d, pool: p, device: g, tolerations: [{tolerationSeconds: x}]}")
    assert "status.allocation.devices.results[0].tolerations[0].tolerationSeconds" in errors
