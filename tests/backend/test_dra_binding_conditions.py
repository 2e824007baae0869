"""Device binding conditions (DRADeviceBindingConditions with DRAResourceClaimDeviceStatus; the allocator's
DeviceBindingAndStatus): the binding-condition rows of upstream's allocator test table (dynamic-resource-allocation
v0.36.3, ``structured/internal/allocatortesting/allocator_testing.go``) as data, then what a user sees through
``simulate``: with the gate off (1.34-1.35 by default) the API server drops the fields and the devices are ordinary;
and the fields' validation. The wait at PreBind: ``tests/sim/test_dra_binding_conditions.py``.

A case: ``features``, the request counts of claim-0 (``requests``, with ``tolerate`` the NoSchedule taint), the
devices of the one device slice (name, binding conditions, failure conditions, extra), a counter slice when the
devices consume counters; ``want``: (request, device, binding conditions, failure conditions) per result, or None.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from packsched.api.dra import ClaimSpec, DeviceClass, DeviceRequest, ExactRequest, ResourceClaim, ResourceSlice
from packsched.api.dra import Device as DraDevice
from packsched.api.dracel import CelDevice
from packsched.api.objects import Node, NodeSelectorTerm, Requirement, Taint, Toleration
from packsched.backend.dra.allocator import Allocator, Features
from packsched.cli.main import app

A, N1 = "driver-a", "node-1"
GI = 2**30
TAINT = Taint("key1", "value1", "NoSchedule")
TOLERATE = Toleration("key1", "Equal", "value1", "NoSchedule")
BIND = Features(device_binding=True)
PART_BIND = Features(partitionable_devices=True, device_binding=True)


def dev(
    name: str,
    binding: tuple[str, ...] = (),
    failure: tuple[str, ...] = (),
    memory: int = 0,
    counter_set: str = "counter-set-1",
    **extra: Any,
) -> DraDevice:
    consumes = ((counter_set, (("memory", Fraction(memory * GI)),)),) if memory else ()
    return DraDevice(
        name,
        CelDevice(A, ()),
        consumes=consumes,
        taints=tuple(extra.get("taints", ())),
        binding_conditions=binding,
        binding_failure_conditions=failure,
        binds_to_node=extra.get("binds", False),
    )


def counters(name: str, counter_set: str = "counter-set-1", count: int = 2) -> ResourceSlice:
    return ResourceSlice(name, A, "pool-1", 1, count, shared_counters=((counter_set, (("memory", Fraction(8 * GI)),)),))


def devices(name: str, *devs: DraDevice, count: int = 1, **where: Any) -> ResourceSlice:
    return ResourceSlice(name, A, "pool-1", 1, count, devices=devs, **(where or {"node_name": N1}))


PREP, FAIL = ("IsPrepare",), ("BindingFailed",)
EARTH = (NodeSelectorTerm((Requirement("planet", "In", ("earth",)),)),)

CASES: dict[str, dict[str, Any]] = {
    "device-binding-conditions": {
        "features": BIND,
        "requests": [1],
        "slices": [devices("slice-1", dev("device-1", PREP, FAIL))],
        "want": [("req-0", "device-1", PREP, FAIL)],
    },
    "binding-conditions-multiple-devices": {
        "features": BIND,
        "requests": [2, 1],
        "slices": [
            devices(
                "slice-1",
                dev("device-1", PREP, FAIL),
                dev("device-2", ("IsPrepare2",), ("BindingFailed2",)),
                dev("device-3", ("IsPrepare3",), ("BindingFailed3",)),
            )
        ],
        "want": [
            ("req-0", "device-1", PREP, FAIL),
            ("req-0", "device-2", ("IsPrepare2",), ("BindingFailed2",)),
            ("req-1", "device-3", ("IsPrepare3",), ("BindingFailed3",)),
        ],
    },
    "binding-conditions-with-and-without": {
        "features": BIND,
        "requests": [1, 1],
        "slices": [devices("slice-1", dev("device-1"), dev("device-2", PREP, FAIL))],
        "want": [("req-0", "device-1", (), ()), ("req-1", "device-2", PREP, FAIL)],
    },
    "binding-conditions-without-feature-gate": {
        "features": Features(device_binding=False),
        "requests": [1],
        "slices": [devices("slice-1", dev("device-1", PREP, FAIL))],
        "want": None,
    },
    "node-restriction": {
        "features": BIND,
        "requests": [1],
        "slices": [devices("slice-1", dev("device-1", binds=True), node_selector=EARTH)],
        "want": [("req-0", "device-1", (), ())],
        "local": True,  # bindsToNode: the allocation is for this node, though the slice selects by label
    },
    "partitionable-devices-with-binding-conditions": {
        "features": PART_BIND,
        "requests": [1],
        "slices": [devices("slice-1", dev("device-1", PREP, FAIL, 4), count=2), counters("slice-2")],
        "want": [("req-0", "device-1", PREP, FAIL)],
    },
    "partitionable-devices-with-binding-conditions-multiple": {
        "features": PART_BIND,
        "requests": [2],
        "slices": [
            devices(
                "slice-1",
                dev("device-1", PREP, FAIL, 4),
                dev("device-2", ("IsPrepare2",), ("BindingFailed2",), 4),
                count=2,
            ),
            counters("slice-2"),
        ],
        "want": [("req-0", "device-1", PREP, FAIL), ("req-0", "device-2", ("IsPrepare2",), ("BindingFailed2",))],
    },
    "partitionable-devices-with-binding-conditions-some-devices-no-conditions": {
        "features": PART_BIND,
        "requests": [3],
        "slices": [
            devices(
                "slice-1",
                dev("device-1", PREP, FAIL, 2),
                dev("device-2", memory=2),
                dev("device-3", ("IsReady",), ("BindingTimeout",), 4),
                count=2,
            ),
            counters("slice-2"),
        ],
        "want": [
            ("req-0", "device-1", PREP, FAIL),
            ("req-0", "device-2", (), ()),
            ("req-0", "device-3", ("IsReady",), ("BindingTimeout",)),
        ],
    },
    "partitionable-devices-with-binding-conditions-multi-slices": {
        "features": PART_BIND,
        "requests": [2],
        "slices": [
            devices("slice-4", dev("device-1", PREP, FAIL, 4), count=4),
            counters("slice-3", count=4),
            devices("slice-2", dev("device-2", memory=4, counter_set="counter-set-2"), count=4),
            counters("slice-1", "counter-set-2", count=4),
        ],
        "want": [("req-0", "device-2", (), ()), ("req-0", "device-1", PREP, FAIL)],
    },
    "partitionable-devices-with-binding-conditions-and-taints-tolerated": {
        "features": Features(partitionable_devices=True, device_binding=True, device_taints=True),
        "requests": [2],
        "tolerate": True,
        "slices": [
            devices("slice-1", dev("device-1", PREP, FAIL, 4, taints=(TAINT,)), dev("device-2", memory=4), count=2),
            counters("slice-2"),
        ],
        "want": [("req-0", "device-1", PREP, FAIL), ("req-0", "device-2", (), ())],
    },
}


def _run(case: dict[str, Any]) -> Any:
    tolerations = (TOLERATE,) if case.get("tolerate") else ()
    requests = tuple(
        DeviceRequest(f"req-{i}", ExactRequest("class-a", (), "ExactCount", n, None, tolerations))
        for i, n in enumerate(case["requests"])
    )
    claim = ResourceClaim("claim-0", "default", ClaimSpec(requests))
    allocator = Allocator(
        case["features"], set(), {"class-a": DeviceClass("class-a", (f'device.driver == "{A}"',))}, case["slices"]
    )
    return allocator.allocate(Node(N1, labels={"planet": "earth"}), [claim])


@pytest.mark.parametrize("name", sorted(CASES))
def test_upstream_binding_condition_case(name: str) -> None:
    case = CASES[name]
    got = _run(case)
    if case["want"] is None:
        assert got is None
        return
    assert got is not None
    (alloc,) = got
    have = [(r.request, r.device, r.binding_conditions, r.binding_failure_conditions) for r in alloc.results]
    assert sorted(have) == sorted(case["want"])
    (term,) = alloc.node_selector or ()
    assert [(r.key, r.values) for r in term.match_fields] == [("metadata.name", (N1,))]


def test_ported_case_count() -> None:
    assert len(CASES) == 10


CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: fabric-gpu-0
    bindsToNode: true
    bindingConditions: [dra.example.com/attached]
    bindingFailureConditions: [dra.example.com/attach-failed]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly: {deviceClassName: gpu}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    resources: {claims: [{name: g}]}
  resourceClaims:
  - name: g
    resourceClaimTemplateName: one
"""


def _simulate(tmp_path: Path, *args: str) -> tuple[tuple[str | None, str | None], list[str]]:
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER)
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", "json", *args])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (placement,) = data["placements"]
    return (placement["node"], placement["reason"]), data["warnings"]


@pytest.mark.parametrize(
    "args",
    [("--kube-version", "1.35"), ("--kube-version", "1.37", "--feature-gates", "DRADeviceBindingConditions=false")],
)
def test_with_the_gate_off_the_api_server_drops_the_fields(tmp_path: Path, args: tuple[str, ...]) -> None:
    got, warnings = _simulate(tmp_path, *args)
    assert got == ("n1", None)  # an ordinary device
    assert any("dropped from 1 ResourceSlice(s)" in w and "DRADeviceBindingConditions off" in w for w in warnings)


def test_bad_binding_fields_are_reported_at_their_paths(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    bad = CLUSTER.replace(
        "bindingConditions: [dra.example.com/attached]",
        "bindingConditions: [a, a, b, c, d, -bad-]",
    ).replace("bindingFailureConditions: [dra.example.com/attach-failed]", "bindingFailureConditions: [b]")
    path.write_text(bad)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    out = " ".join(result.output.split())
    d = "spec.devices[0]"
    assert f"{d}.bindingConditions: Too many: 6: must have at most 4 items" in out
    assert f'{d}.bindingConditions[1]: Duplicate value: "a"' in out
    assert f"{d}.bindingConditions[5]: Invalid value: '-bad-'" in out
    assert f"{d}.bindingFailureConditions[0]: Invalid value: 'b': bindingFailureConditions must not overlap" in out
    assert "Traceback" not in out
