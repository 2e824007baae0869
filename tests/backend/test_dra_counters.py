"""Shared counters (DRAPartitionableDevices) per kube-scheduler release: the rows of upstream's allocator test table
(``structured/internal/allocatortesting/allocator_testing.go``) that dynamic-resource-allocation v0.36.3 and v0.37.2
added for its counter fixes, written as data, each checked at every release packsched models DRA for.

- 1.36 (``Features.counters_1_36``): a device refused after it took its counters (a taint, a constraint, its
  capacity) gives them back, and so does a backtracked share; a refused share gives back its constraints; devices
  with shares allocated use their counters. upstream's rows state 1.36's answers; 1.34-1.35's answers here follow
  v0.35.4's allocateDevice, which keeps what it took (those releases have no such rows).
- 1.37 (``Features.counters_1_37``): counters per pool of each driver (before: per pool name), and a device with a
  share allocated but no consumed capacity is not charged its counters again.

A case: ``features`` (the gates on, besides the release's own differences), ``claims``, ``slices``, devices
``allocated`` whole or ``shared`` (with ``capacity`` consumed), the class's selector; ``want``: per release, a list
per claim of results (request, driver, device, consumed capacity or None, whether a share), or None (no allocation),
or an error's text.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from helpers import simulate_placements
from packsched.api.dra import (
    ALL,
    ClaimSpec,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    ExactRequest,
    ResourceClaim,
    ResourceSlice,
)
from packsched.api.dra import Device as DraDevice
from packsched.api.dracel import CelDevice
from packsched.api.objects import Node, Taint
from packsched.backend.dra.allocator import AllocationError, Allocator, Features
from packsched.config.versions import KubeVersion
from packsched.plugins.dynamicresources.dynamic_resources import allocator_features

A, B = "driver-a", "driver-b"
N1, N2 = "node-1", "node-2"
C0 = "capacity-0"
STRING_ATTR, INT_ATTR = "driver-a/stringAttribute", "driver-a/numa"
NO_SCHEDULE = Taint("taint-key", "taint-value", "NoSchedule")
RELEASES = (34, 35, 36, 37)


def dev(
    name: str,
    driver: str = A,
    attrs: dict[str, tuple[str, Any]] | None = None,
    capacity: dict[str, Any] | None = None,
    consumes: dict[str, dict[str, Any]] | None = None,
    multi: bool = False,
    taints: tuple[Taint, ...] = (),
) -> DraDevice:
    return DraDevice(
        name,
        CelDevice(
            driver,
            tuple((k, kind, v) for k, (kind, v) in (attrs or {}).items()),
            tuple((k, Fraction(v)) for k, v in (capacity or {}).items()),
            multi,
        ),
        consumes=tuple(
            (cs, tuple((c, Fraction(v)) for c, v in counters.items())) for cs, counters in (consumes or {}).items()
        ),
        taints=taints,
    )


def devices(name: str, *devs: DraDevice, driver: str = A, node: str = N1, count: int = 2) -> ResourceSlice:
    return ResourceSlice(name, driver, "pool-1", 1, count, node_name=node, devices=devs)


def counters(name: str, sets: dict[str, dict[str, Any]], driver: str = A, count: int = 2) -> ResourceSlice:
    shared = tuple((cs, tuple((c, Fraction(v)) for c, v in cs_counters.items())) for cs, cs_counters in sets.items())
    return ResourceSlice(name, driver, "pool-1", 1, count, shared_counters=shared)


def exact(
    cls: str = "class-a", count: int = 1, selectors: tuple[str, ...] = (), mode: str = "ExactCount", cap: Any = None
) -> ExactRequest:
    capacity = None if cap is None else ((C0, Fraction(cap)),)
    return ExactRequest(cls, selectors, mode, 0 if mode == ALL else count, None, (), capacity)


def req(name: str, *selectors: str, count: int = 1, mode: str = "ExactCount", cap: Any = None) -> DeviceRequest:
    return DeviceRequest(name, exact("class-a", count, selectors, mode, cap))


def claim(name: str, *requests: DeviceRequest, constraints: tuple[DeviceConstraint, ...] = ()) -> ResourceClaim:
    return ResourceClaim(name, "default", ClaimSpec(tuple(requests), constraints))


def kind(value: str) -> str:
    return f'device.attributes["{A}"].kind == "{value}"'


def res(request: str, device: str, driver: str = A, consumed: Any = None, share: bool = False) -> tuple[Any, ...]:
    got = None if consumed is None else ((C0, Fraction(consumed)),)
    return (request, driver, device, got, share)


ONE_C = {"counter-set-1": {"c": 1}}
PART = {"partitionable_devices": True}
PART_CAP = {"partitionable_devices": True, "consumable_capacity": True}
BEFORE_1_36 = (34, 35)
BEFORE_1_37 = (34, 35, 36)


def per_release(newer: Any, older: Any, older_releases: tuple[int, ...]) -> dict[int, Any]:
    return {m: older if m in older_releases else newer for m in RELEASES}


def same(want: Any) -> dict[int, Any]:
    return dict.fromkeys(RELEASES, want)


CASES: dict[str, dict[str, Any]] = {
    # v0.36.3's rows
    "all-devices-with-consumed-counters": {
        "features": PART,
        "claims": [claim("claim-0", req("req-0", mode=ALL))],
        "slices": [
            devices("slice-1", dev("device-1", consumes={"counter-set-1": {"memory": 4 * 2**30}})),
            counters("slice-2", {"counter-set-1": {"memory": 8 * 2**30}}),
        ],
        "want": same([[res("req-0", "device-1")]]),
    },
    "partitionable-all-mode-constraint-must-error-with-reserved-counter": {
        "features": PART,
        "claims": [claim("claim-0", req("req-0", mode=ALL), constraints=(DeviceConstraint(match_attribute=INT_ATTR),))],
        "slices": [
            devices(
                "slice-1",
                dev("device-1", attrs={"numa": ("int", 1)}),
                dev("device-2", attrs={"numa": ("int", 2)}, consumes=ONE_C),
            ),
            counters("slice-2", ONE_C),
        ],
        "want": same(
            "claim default/claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim "
            "constraint would not be satisfied"
        ),
    },
    "partitionable-devices-taint-releases-counter": {
        "features": {**PART, "device_taints": True},
        "claims": [claim("claim-0", req("req-0"))],
        "slices": [
            devices(
                "slice-1",
                dev("device-1", consumes=ONE_C, taints=(NO_SCHEDULE,)),
                dev("device-2", consumes=ONE_C),
            ),
            counters("slice-2", ONE_C),
        ],
        # 1.34-1.35: the tainted device-1 keeps the only counter, so device-2 does not fit
        "want": per_release([[res("req-0", "device-2")]], None, BEFORE_1_36),
    },
    "partitionable-devices-constraint-releases-counter": {
        "features": PART,
        "claims": [
            claim("claim-0", req("req-0", count=2), constraints=(DeviceConstraint(match_attribute=STRING_ATTR),))
        ],
        "slices": [
            devices(
                "slice-1",
                dev("device-1", attrs={"stringAttribute": ("string", "red")}, consumes=ONE_C),
                dev("device-2", attrs={"stringAttribute": ("string", "blue")}, consumes=ONE_C),
                dev("device-3", attrs={"stringAttribute": ("string", "blue")}, consumes=ONE_C),
            ),
            counters("slice-2", {"counter-set-1": {"c": 2}}),
        ],
        "want": per_release([[res("req-0", "device-2"), res("req-0", "device-3")]], None, BEFORE_1_36),
    },
    "partitionable-consumable-capacity-backtrack-releases-counter": {
        "features": PART_CAP,
        "claims": [claim("claim-0", req("req-0", kind("shared")), req("req-1", kind("counteronly")))],
        "slices": [
            devices(
                "slice-1",
                dev("device-1", attrs={"kind": ("string", "shared")}, consumes=ONE_C, multi=True),
                dev("device-2", attrs={"kind": ("string", "shared")}),
                dev("device-3", attrs={"kind": ("string", "counteronly")}, consumes=ONE_C),
            ),
            counters("slice-2", ONE_C),
        ],
        # 1.34-1.35: backtracking over device-1's share leaves its counter taken, and device-3 needs it
        "want": per_release([[res("req-0", "device-2"), res("req-1", "device-3")]], None, BEFORE_1_36),
    },
    "consumable-capacity-rejection-rolls-back-constraints": {
        "features": {"consumable_capacity": True},
        "claims": [
            claim("claim-0", req("req-0", f'device.attributes["{A}"].stringAttribute == "cap"', cap=2)),
            claim(
                "claim-1",
                DeviceRequest(
                    "req-0",
                    None,
                    (
                        (
                            "subReq-0",
                            exact(selectors=(f'device.attributes["{A}"].stringAttribute == "cap"',), mode=ALL, cap=2),
                        ),
                        ("subReq-1", exact(selectors=(f'device.attributes["{A}"].stringAttribute == "fb"',))),
                    ),
                ),
                constraints=(DeviceConstraint(match_attribute=STRING_ATTR),),
            ),
        ],
        "slices": [
            devices(
                "slice-1",
                dev("device-1", attrs={"stringAttribute": ("string", "cap")}, capacity={C0: 2}, multi=True),
                dev("device-2", attrs={"stringAttribute": ("string", "fb")}),
                count=1,
            )
        ],
        # 1.34-1.35: subReq-0's refused share of device-1 keeps "cap" in the constraint, which device-2 breaks
        "want": per_release(
            [[res("req-0", "device-1", consumed=2, share=True)], [res("req-0/subReq-1", "device-2")]],
            None,
            BEFORE_1_36,
        ),
    },
    "partitionable-empty-capacity-multiple-share-backtrack-keeps-counter-ownership": {
        "features": PART_CAP,
        "claims": [
            claim("claim-0", req("req-0", kind("shared"))),
            claim(
                "claim-1",
                req("req-1", f"{kind('shared')} || {kind('fallback')}"),
                req("req-2", kind("gate")),
                req("req-3", kind("shared")),
                constraints=(DeviceConstraint(("req-1", "req-2"), match_attribute=STRING_ATTR),),
            ),
        ],
        "slices": [
            devices(
                "slice-1",
                dev(
                    "device-1",
                    attrs={"kind": ("string", "shared"), "stringAttribute": ("string", "red")},
                    consumes=ONE_C,
                    multi=True,
                ),
                dev("device-2", attrs={"kind": ("string", "fallback"), "stringAttribute": ("string", "blue")}),
                dev("device-3", attrs={"kind": ("string", "gate"), "stringAttribute": ("string", "blue")}),
            ),
            counters("slice-2", ONE_C),
        ],
        "want": same(
            [
                [res("req-0", "device-1", share=True)],
                [res("req-1", "device-2"), res("req-2", "device-3"), res("req-3", "device-1", share=True)],
            ]
        ),
    },
    "allow-multiple-allocations-with-shared-device-counter-cross-cycle": {
        "features": PART_CAP,
        "class": f'device.driver == "{A}" && device.allowMultipleAllocations == true',
        "claims": [claim("claim-0", req("req-0", f'device.attributes["{A}"].mode == "b"', cap=1))],
        "shared": {(A, "pool-1", "device-1")},
        "capacity": {(A, "pool-1", "device-1"): {C0: 1}},
        "slices": [
            devices(
                "slice-1",
                dev(
                    "device-1",
                    attrs={"mode": ("string", "a")},
                    capacity={C0: 1},
                    consumes={"counter-set-1": {C0: 1}},
                    multi=True,
                ),
                dev(
                    "device-2",
                    attrs={"mode": ("string", "b")},
                    capacity={C0: 1},
                    consumes={"counter-set-1": {C0: 1}},
                    multi=True,
                ),
            ),
            counters("slice-2", {"counter-set-1": {C0: 1}}),
        ],
        # 1.34-1.35: device-1's share does not count against the counters, so device-2 gets them
        "want": per_release(None, [[res("req-0", "device-2", consumed=1, share=True)]], BEFORE_1_36),
    },
    # v0.37.2's rows
    "partitionable-consumable-capacity-shared-device-counter-not-recharged": {
        "features": PART_CAP,
        "claims": [claim("claim-0", req("req-0"))],
        "shared": {(A, "pool-1", "device-1")},
        "slices": [
            devices("slice-1", dev("device-1", consumes=ONE_C, multi=True)),
            counters("slice-2", ONE_C),
        ],
        # 1.36: the persisted share (no consumed capacity) pays the counter and the new share is charged again;
        # 1.34-1.35 do not count shares against counters at all
        "want": {
            34: [[res("req-0", "device-1", share=True)]],
            35: [[res("req-0", "device-1", share=True)]],
            36: None,
            37: [[res("req-0", "device-1", share=True)]],
        },
    },
    "partitionable-devices-counter-cache-not-crossed-between-driver-schemas": {
        "features": PART,
        "classes": {"class-a": A, "class-b": B},
        "claims": [
            claim("claim-0", req("req-0")),
            claim("claim-1", DeviceRequest("req-1", exact("class-b"))),
        ],
        "slices": [
            devices("slice-1", dev("device-1", consumes=ONE_C)),
            counters("slice-2", ONE_C),
            devices("slice-3", dev("device-2", B, consumes={"counter-set-2": {"d": 2}}), driver=B),
            counters("slice-4", {"counter-set-2": {"d": 1}}, driver=B),
        ],
        # before 1.37 driver-b's pool-1 is checked against driver-a's counters of the same pool name
        "want": per_release(None, [[res("req-0", "device-1")], [res("req-1", "device-2", B)]], BEFORE_1_37),
    },
    "partitionable-devices-devices-consume-counter-set-in-different-nodes": {
        "features": PART,
        "node": N2,
        "claims": [claim("claim-0", req("req-0"))],
        "allocated": {(A, "pool-1", "device-1")},
        "slices": [
            counters("slice-1", {"counter-set-1": {"memory": 8 * 2**30}}, count=3),
            devices("slice-2", dev("device-1", consumes={"counter-set-1": {"memory": 6 * 2**30}}), count=3),
            devices(
                "slice-3",
                dev("device-2", consumes={"counter-set-1": {"memory": 6 * 2**30}}),
                dev("device-3", consumes={"counter-set-1": {"memory": 2 * 2**30}}),
                node=N2,
                count=3,
            ),
        ],
        "want": same([[res("req-0", "device-3")]]),
    },
}


def features(minor: int, gates: dict[str, bool]) -> Features:
    """The allocator's features as DynamicResources sets them at ``1.<minor>``, with the case's gates on."""
    names = {
        "partitionable_devices": "DRAPartitionableDevices",
        "consumable_capacity": "DRAConsumableCapacity",
        "device_taints": "DRADeviceTaints",
    }
    return allocator_features(KubeVersion(minor).with_gates({names[k]: v for k, v in gates.items()}))


def _run(case: dict[str, Any], minor: int) -> list[Any] | None:
    default = case.get("class")
    classes = {
        name: DeviceClass(name, (default or f'device.driver == "{driver}"',))
        for name, driver in case.get("classes", {"class-a": A}).items()
    }
    allocator = Allocator(
        features(minor, case.get("features", {})),
        set(case.get("allocated", set())),
        classes,
        case["slices"],
        set(case.get("shared", set())),
        {d: {k: Fraction(v) for k, v in c.items()} for d, c in case.get("capacity", {}).items()},
    )
    found = allocator.allocate(Node(case.get("node", N1), labels={"region": "region-1"}), case["claims"])
    if found is None:
        return None
    return [
        sorted(((r.request, r.driver, r.device, r.consumed, r.share_id is not None) for r in a.results), key=repr)
        for a in found
    ]


@pytest.mark.parametrize("minor", RELEASES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_upstream_counter_case_per_release(name: str, minor: int) -> None:
    case = CASES[name]
    want = case["want"][minor]
    if isinstance(want, str):
        with pytest.raises(AllocationError) as err:
            _run(case, minor)
        assert want in str(err.value)
        return
    got = _run(case, minor)
    assert got == (None if want is None else [sorted(w, key=repr) for w in want])


def test_the_releases_differ_where_upstream_changed() -> None:
    """Each fix changes an answer: the rows are not the same at every release by accident of the data."""
    changed = {name for name, case in CASES.items() if len({repr(case["want"][m]) for m in RELEASES}) > 1}
    assert len(changed) == 7
    assert len(CASES) == 11


PARTITIONED_NODE = """
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
metadata: {name: n1-counters}
spec:
  driver: gpu.example.com
  pool: {name: n1, generation: 1, resourceSliceCount: 2}
  sharedCounters:
  - name: gpu-0
    counters: {memory: {value: 40Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-partitions}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 2}
  devices:
  - name: gpu-0-whole
    taints: [{key: maintenance, effect: NoSchedule}]
    consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 40Gi}}}]
  - name: gpu-0-half
    consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 20Gi}}}]
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


def test_a_tainted_partition_blocks_its_siblings_before_1_36(tmp_path: Path) -> None:
    """What a user sees: the whole-GPU partition is tainted; 1.36+ gives its counters back and the half partition
    fits, 1.35 (with the alpha gates on) keeps them taken and the pod waits."""
    got = simulate_placements(tmp_path, PARTITIONED_NODE, "--kube-version", "1.36")
    assert got["default/p"] == ("n1", None)
    gates = "DRAPartitionableDevices=true,DRADeviceTaints=true"
    node, reason = simulate_placements(tmp_path, PARTITIONED_NODE, "--kube-version", "1.35", "--feature-gates", gates)[
        "default/p"
    ]
    assert node is None and "1 cannot allocate all claims" in str(reason)
