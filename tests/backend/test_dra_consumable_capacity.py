"""Consumable capacity (DRAConsumableCapacity) in the DRA allocator, against the consumable-capacity cases of
upstream's shared allocator test table (dynamic-resource-allocation v0.37.2,
``structured/internal/allocatortesting/allocator_testing.go``): the same inputs and the same allocations or
errors, written as data. upstream compares share IDs against a fixed one; here a share is ``share=True`` and its
ID is checked to be a UUID. ``len(CASES)`` cases are ported (the count is pinned below); DRAFractionalCapacityRange
(1.37) has its own table, ``FRACTIONAL_CASES``: upstream's two cases (the gate on and off) and two of packsched's
(a request not on a step without the gate, a request finer than a milli unit).

Then a property test: whatever claims and devices, no device's capacity is consumed beyond its value and no device
that does not allow multiple allocations is allocated twice.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packsched.api.dra import (
    ALL,
    CapacityPolicy,
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
from packsched.api.objects import Node
from packsched.backend.dra.allocator import AllocationError, Allocator, Features

A = "driver-a"
N1 = "node-1"
C0, C1 = "capacity-0", "capacity-1"
ON = Features(consumable_capacity=True)
ON_PL = Features(consumable_capacity=True, prioritized_list=True)
ON_PART = Features(consumable_capacity=True, prioritized_list=True, partitionable_devices=True)
OFF_PL = Features(prioritized_list=True)
MULTI_CLASS = f'device.driver == "{A}" && device.allowMultipleAllocations == true'
SINGLE_CLASS = f'device.driver == "{A}" && device.allowMultipleAllocations == false'
PLAIN_CLASS = f'device.driver == "{A}"'
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def rng(default: Any = 2, low: Any = 2, step: Any = 2, high: Any = 4) -> CapacityPolicy:
    """upstream withCapacityRequestPolicyRange: default 2, range min 2, step 2, max 4."""
    q = lambda v: None if v is None else Fraction(v)  # noqa: E731
    return CapacityPolicy(q(default), (), q(low), q(high), q(step), True)


def values(default: Any, *more: Any) -> CapacityPolicy:
    """upstream withCapacityRequestPolicyValidValues: the default first, then ``more``."""
    return CapacityPolicy(Fraction(default), tuple(Fraction(v) for v in (default, *more)))


def dev(
    name: str,
    capacity: dict[str, Any] | None = None,
    multi: bool = True,
    policies: dict[str, CapacityPolicy] | None = None,
    attrs: dict[str, tuple[str, Any]] | None = None,
    consumes: dict[str, dict[str, Any]] | None = None,
) -> DraDevice:
    return DraDevice(
        name,
        CelDevice(
            A,
            tuple((k, kind, v) for k, (kind, v) in (attrs or {}).items()),
            tuple((k, Fraction(v)) for k, v in (capacity or {}).items()),
            multi,
        ),
        consumes=tuple(
            (cs, tuple((c, Fraction(v)) for c, v in counters.items())) for cs, counters in (consumes or {}).items()
        ),
        policies=tuple((policies or {}).items()),
    )


def req(
    name: str, cap: Any = None, count: int = 1, mode: str = "ExactCount", selectors: tuple[str, ...] = ()
) -> DeviceRequest:
    return DeviceRequest(name, exact(cap, count, mode, selectors))


def exact(cap: Any = None, count: int = 1, mode: str = "ExactCount", selectors: tuple[str, ...] = ()) -> ExactRequest:
    """``cap``: None (no ``capacity``), an amount of capacity-0, or {name: amount}."""
    if cap is not None and not isinstance(cap, dict):
        cap = {C0: cap}
    capacity = None if cap is None else tuple(sorted((k, Fraction(v)) for k, v in cap.items()))
    return ExactRequest("class-a", selectors, mode, 0 if mode == ALL else count, None, (), capacity)


def subs(name: str, *items: tuple[str, ExactRequest]) -> DeviceRequest:
    return DeviceRequest(name, None, tuple(items))


def claim(name: str, *requests: DeviceRequest, constraints: tuple[DeviceConstraint, ...] = ()) -> ResourceClaim:
    return ResourceClaim(name, "default", ClaimSpec(tuple(requests), constraints))


def res(request: str, device: str, consumed: dict[str, Any] | None = None, share: bool = True) -> tuple[Any, ...]:
    """An expected result: the request, the device, the consumed capacity (None: not set) and whether it is a
    share."""
    got = None if consumed is None else tuple(sorted((k, Fraction(v)) for k, v in consumed.items()))
    return (request, device, got, share)


def one_slice(*devices: DraDevice, pool: tuple[str, int] = ("pool-1", 1)) -> ResourceSlice:
    return ResourceSlice("slice-1", A, pool[0], 1, pool[1], node_name=N1, devices=devices)


def counters_slice(sets: dict[str, dict[str, Any]]) -> ResourceSlice:
    shared = tuple((cs, tuple((c, Fraction(v)) for c, v in counters.items())) for cs, counters in sets.items())
    return ResourceSlice("slice-2", A, "pool-1", 1, 2, node_name=N1, shared_counters=shared)


def did(device: str) -> tuple[str, str, str]:
    return (A, "pool-1", device)


STRING_ATTR = "driver-a/stringAttribute"
GI = 2**30
MEM_AT_LEAST = 'device.capacity["driver-a"].memory.compareTo(quantity("%dGi")) >= 0'
BOOL_TRUE = 'device.attributes["driver-a"].boolAttribute'

CASES: dict[str, dict[str, Any]] = {
    "consumable-capacity-disabled-feature": {
        "features": Features(),
        "claims": [claim("claim-0", req("req-0", 1))],
        "slices": [one_slice(dev("device-1", multi=False))],
        "class": PLAIN_CLASS,
        "error": "claim default/claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature "
        "is disabled",
    },
    "consumable-capacity-disabled-feature-with-prioritized-list": {
        "features": OFF_PL,
        "claims": [claim("claim-0", subs("req-0", ("subReq-0", exact(1)), ("subReq-1", exact(1))))],
        "slices": [one_slice(dev("device-1", multi=False))],
        "class": PLAIN_CLASS,
        "error": "claim default/claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity "
        "feature is disabled",
    },
    "consumable-capacity-multi-allocatable-device-with-missing-capacity-request": {
        "claims": [claim("claim-0", req("req-0", 1))],
        "slices": [one_slice(dev("device-1", {C1: 1}))],
        "class": PLAIN_CLASS,
        "want": None,
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request": {
        "claims": [claim("claim-0", req("req-0", 1, mode=ALL))],
        "slices": [one_slice(dev("device-1", {C1: 1}))],
        "want": None,
    },
    "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request": {
        "claims": [claim("claim-0", req("req-0")), claim("claim-1", req("req-0"))],
        "slices": [one_slice(dev("device-1"))],
        "want": [[res("req-0", "device-1")], [res("req-0", "device-1")]],
    },
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request": {
        "claims": [claim("claim-0", req("req-0")), claim("claim-1", req("req-0"))],
        "slices": [one_slice(dev("device-1", {C0: 1}), dev("device-2", {C0: 1}))],
        "want": [[res("req-0", "device-1", {C0: 1})], [res("req-0", "device-2", {C0: 1})]],
    },
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block": {
        "claims": [claim("claim-0", req("req-0")), claim("claim-1", req("req-0"))],
        "slices": [one_slice(dev("device-1", {C0: 2}))],
        "want": None,
    },
    "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request": {
        "claims": [claim("claim-0", req("req-0", 1)), claim("claim-1", req("req-0", 1))],
        "slices": [one_slice(dev("device-1", {C0: 2}))],
        "want": [[res("req-0", "device-1", {C0: 1})], [res("req-0", "device-1", {C0: 1})]],
    },
    "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request": {
        "claims": [claim("claim-0", req("req-0")), claim("claim-1", req("req-0"))],
        "slices": [one_slice(dev("device-1", {C0: 4}, policies={C0: rng()}))],
        "want": [[res("req-0", "device-1", {C0: 2})], [res("req-0", "device-1", {C0: 2})]],
    },
    "consumable-capacity-multi-allocatable-device-with-zero-request-policy": {
        "claims": [claim("claim-0", req("req-0")), claim("claim-1", req("req-0"))],
        "slices": [one_slice(dev("device-1", {C0: 1}, policies={C0: values(0)}))],
        "want": [[res("req-0", "device-1", {C0: 0})], [res("req-0", "device-1", {C0: 0})]],
    },
    "consumable-capacity-multi-allocatable-device-violates-zero-request-policy": {
        "claims": [claim("claim-0", req("req-0", 1))],
        "slices": [one_slice(dev("device-1", {C0: 1}, policies={C0: values(0)}))],
        "want": None,
    },
    "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request": {
        "claims": [claim("claim-0", req("req-0", 1)), claim("claim-1", req("req-0", 1))],
        "slices": [one_slice(dev("device-1", {C0: 4}, policies={C0: rng()}))],
        "want": [[res("req-0", "device-1", {C0: 2})], [res("req-0", "device-1", {C0: 2})]],
    },
    "consumable-capacity-multi-allocatable-device-with-range-policy-step": {
        "claims": [claim("claim-0", req("req-0", 3))],
        "slices": [one_slice(dev("device-1", {C0: 4}, policies={C0: rng()}))],
        "want": [[res("req-0", "device-1", {C0: 4})]],
    },
    "consumable-capacity-range-policy-request-above-int64-rejected": {
        "claims": [claim("claim-0", req("req-0", 2**64))],
        "slices": [one_slice(dev("device-1", {C0: 4}, policies={C0: rng()}))],
        "error": "cannot be represented",
    },
    "consumable-capacity-range-policy-rounded-value-overflow-rejected": {
        "claims": [claim("claim-0", req("req-0", 2**63 - 1))],
        "slices": [one_slice(dev("device-1", {C0: 4}, policies={C0: rng()}))],
        "error": "cannot be represented",
    },
    "consumable-capacity-range-policy-overflow-aborts-not-skip": {
        "claims": [claim("claim-0", req("req-0", 2**64))],
        "slices": [one_slice(dev("device-1", {C0: 4}, policies={C0: rng()}), dev("device-2", {C0: 2**65}))],
        "error": "cannot be represented",
    },
    "consumable-capacity-range-policy-allocation-mode-all-overflow-aborts": {
        "claims": [claim("claim-0", req("req-0", 2**64, mode=ALL))],
        "slices": [one_slice(dev("device-1", {C0: 4}, policies={C0: rng()}))],
        "error": "cannot be represented",
    },
    "consumable-capacity-negative-request-aborts": {
        "claims": [claim("claim-0", req("req-0", -5))],
        "slices": [one_slice(dev("device-1", {C0: 10}))],
        "error": "negative",
    },
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy": {
        "claims": [claim("claim-0", req("req-0", 2))],
        "slices": [one_slice(dev("device-1", {C0: 4}, policies={C0: values(1, 2)}))],
        "want": [[res("req-0", "device-1", {C0: 2})]],
    },
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up": {
        "claims": [claim("claim-0", req("req-0", 2))],
        "slices": [one_slice(dev("device-1", {C0: 3}, policies={C0: values(1, 3)}))],
        "want": [[res("req-0", "device-1", {C0: 3})]],
    },
    "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request": {
        "claims": [claim("claim-0", req("req-0", 1)), claim("claim-1", req("req-0", 2))],
        "slices": [one_slice(dev("device-1", {C0: 2}, policies={C0: rng()}))],
        "want": None,
    },
    "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy": {
        "claims": [claim("claim-0", req("req-0", 6))],
        "slices": [one_slice(dev("device-1", {C0: 10}, policies={C0: rng()}))],
        "want": None,
    },
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining": {
        "claims": [claim("claim-0", req("req-0", 2))],
        "capacity": {did("device-1"): {C0: 2}},
        "slices": [one_slice(dev("device-1", {C0: 4}, policies={C0: rng()}))],
        "want": [[res("req-0", "device-1", {C0: 2})]],
    },
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": {
        "claims": [claim("claim-0", req("req-0", 2))],
        "capacity": {did("device-1"): {C0: 2}},
        "slices": [
            one_slice(dev("device-1", {C0: 2}, policies={C0: rng()}), dev("device-2", {C0: 2}, policies={C0: rng()}))
        ],
        "want": [[res("req-0", "device-2", {C0: 2})]],
    },
    "consumable-capacity-with-multi-allocatable-device-backtrack": {
        "claims": [
            claim(
                "claim-0",
                req("req-0", 2),
                req("req-1", 2),
                constraints=(DeviceConstraint((), STRING_ATTR),),
            ),
            claim("claim-1", req("req-0", 2)),
        ],
        "class": PLAIN_CLASS,
        "slices": [
            one_slice(
                dev("device-2", {C0: 2}, policies={C0: rng()}, attrs={"stringAttribute": ("string", "v1")}),
                dev("device-1", {C0: 4}, policies={C0: rng()}, attrs={"stringAttribute": ("string", "v2")}),
            )
        ],
        "want": [
            [res("req-0", "device-1", {C0: 2}), res("req-1", "device-1", {C0: 2})],
            [res("req-0", "device-2", {C0: 2})],
        ],
    },
    "consumable-capacity-multi-allocatable-device-with-subrequest": {
        "features": ON_PL,
        "claims": [
            claim(
                "claim-0",
                subs("req-0", ("subReq-0", exact(4)), ("subReq-1", exact(2)), ("subReq-1", exact())),
            )
        ],
        "slices": [one_slice(dev("device-1", {C0: 2}, policies={C0: rng()}))],
        "want": [[res("req-0/subReq-1", "device-1", {C0: 2})]],
    },
    "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity": {
        "claims": [claim("claim-0", req("req-0", 2))],
        "capacity": {did("device-1"): {C0: 2}},
        "slices": [one_slice(dev("device-1", {C0: 2}, policies={C0: rng()}))],
        "want": None,
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity": {
        "claims": [claim("claim-0", req("req-0", 2, mode=ALL))],
        "slices": [one_slice(dev("device-1", {C0: 2}), dev("device-2"))],
        "want": [[res("req-0", "device-1", {C0: 2})]],
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity": {
        "claims": [claim("claim-0", req("req-0", 2, mode=ALL))],
        "slices": [one_slice(dev("device-1", {C0: 2}), dev("device-2", {C0: 1}))],
        "want": [[res("req-0", "device-1", {C0: 2})]],
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient": {
        "claims": [claim("claim-0", req("req-0", 1), req("req-1", 1, mode=ALL))],
        "class": PLAIN_CLASS,
        "slices": [one_slice(dev("device-1", {C0: 2}), dev("device-2", {C0: 1}))],
        "want": [
            [
                res("req-0", "device-1", {C0: 1}),
                res("req-1", "device-1", {C0: 1}),
                res("req-1", "device-2", {C0: 1}),
            ]
        ],
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient": {
        "claims": [claim("claim-0", req("req-0", 1, mode=ALL))],
        "capacity": {did("device-1"): {C0: 1}},
        "class": PLAIN_CLASS,
        "slices": [one_slice(dev("device-1", {C0: 2}), dev("device-2", {C0: 1}))],
        "want": [[res("req-0", "device-1", {C0: 1}), res("req-0", "device-2", {C0: 1})]],
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient": {
        "claims": [claim("claim-0", req("req-0", 1), req("req-1", 1, mode=ALL))],
        "class": PLAIN_CLASS,
        "slices": [one_slice(dev("device-1", {C0: 1}), dev("device-2", {C0: 1}))],
        "want": None,
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient": {
        "claims": [claim("claim-0", req("req-0", 1, mode=ALL))],
        "capacity": {did("device-1"): {C0: 1}},
        "class": PLAIN_CLASS,
        "slices": [one_slice(dev("device-1", {C0: 1}), dev("device-2", {C0: 1}))],
        "want": None,
    },
    "consumable-capacity-dedicated-device-with-consumable-capacity-request": {
        "claims": [claim("claim-0", req("req-0", 1))],
        "class": SINGLE_CLASS,
        "slices": [one_slice(dev("device-1", {C0: 1}, multi=False))],
        "want": [[res("req-0", "device-1", None, share=False)]],
    },
    "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request": {
        "claims": [claim("claim-0", req("req-0", 1)), claim("claim-1", req("req-0", 1))],
        "class": SINGLE_CLASS,
        "slices": [one_slice(dev("device-1", {C0: 2}, multi=False, policies={C0: rng()}))],
        "want": None,
    },
    "consumable-capacity-requests-are-not-modified": {
        "claims": [claim("claim-0", req("req-0", 2), req("req-1", 10**21))],
        "class": PLAIN_CLASS,
        "slices": [one_slice(dev("device-1", {C0: 10**21 + 2}, policies={C0: rng(10**21, 2, None, None)}))],
        "want": [[res("req-0", "device-1", {C0: 2}), res("req-1", "device-1", {C0: 10**21})]],
    },
    "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector": {
        "claims": [claim("claim-0", req("req-0", 1))],
        "class": SINGLE_CLASS,
        "slices": [one_slice(dev("device-1", {C0: 1}))],
        "want": None,
    },
    "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": {
        "claims": [claim("claim-0", req("req-0", 1))],
        "allocated": {did("device-1")},
        "slices": [one_slice(dev("device-1", {C0: 2}, policies={C0: rng()}))],
        "want": None,
    },
    "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable": {
        "claims": [claim("claim-0", req("req-0", 1))],
        "capacity": {did("device-1"): {C0: 1}},
        "slices": [one_slice(dev("device-1", {C0: 2}, multi=False, policies={C0: rng()}))],
        "want": None,
    },
    "allow-multiple-allocations-with-shared-device-counter-cross-cycle": {
        "features": ON_PART,
        "claims": [claim("claim-0", req("req-0", 1, selectors=(f'device.attributes["{A}"].mode == "b"',)))],
        "shared": {did("device-1")},
        "capacity": {did("device-1"): {C0: 1}},
        "slices": [
            one_slice(
                dev("device-1", {C0: 1}, attrs={"mode": ("string", "a")}, consumes={"counter-set-1": {C0: 1}}),
                dev("device-2", {C0: 1}, attrs={"mode": ("string", "b")}, consumes={"counter-set-1": {C0: 1}}),
                pool=("pool-1", 2),
            ),
            counters_slice({"counter-set-1": {C0: 1}}),
        ],
        "want": None,
    },
    "partitionable-consumable-capacity-shared-device-counter-not-recharged": {
        "features": ON_PART,
        "claims": [claim("claim-0", req("req-0"))],
        "shared": {did("device-1")},
        "class": PLAIN_CLASS,
        "slices": [
            one_slice(dev("device-1", consumes={"counter-set-1": {"c": 1}}), pool=("pool-1", 2)),
            counters_slice({"counter-set-1": {"c": 1}}),
        ],
        "want": [[res("req-0", "device-1")]],
    },
    "consumable-capacity-with-partitionable-device-multiple-capacity-pools": {
        "features": ON_PART,
        "claims": [
            claim(
                "claim-0",
                req("req-0", 1),
                req("req-2", 2),
                subs(
                    "req-1",
                    (
                        "subReq-0",
                        exact(1, selectors=(f'device.capacity["{A}"]["{C0}"].compareTo(quantity("4")) >= 0',)),
                    ),
                    (
                        "subReq-1",
                        exact(1, selectors=(f'device.capacity["{A}"]["{C0}"].compareTo(quantity("2")) >= 0',)),
                    ),
                ),
            )
        ],
        "class": PLAIN_CLASS,
        "slices": [
            one_slice(
                *(
                    dev(
                        name,
                        {C0: c0, C1: 4},
                        policies={C1: rng()},
                        consumes={"counter-set-1": {C0: c0}, "counter-set-2": {C1: 4}},
                    )
                    for name, c0 in (("device-1", 2), ("device-2", 4), ("device-3", 2))
                ),
                pool=("pool-1", 2),
            ),
            counters_slice({"counter-set-1": {C0: 4}, "counter-set-2": {C1: 8}}),
        ],
        "want": [
            [
                res("req-0", "device-1", {C0: 1, C1: 2}),
                res("req-2", "device-3", {C0: 2, C1: 2}),
                res("req-1/subReq-1", "device-1", {C0: 1, C1: 2}),
            ]
        ],
    },
    "with-distinct-constraints": {
        "claims": [
            claim(
                "claim-0",
                req("req-0"),
                req("req-1"),
                req("req-2"),
                req("req-3"),
                constraints=(
                    DeviceConstraint(("req-0", "req-1"), "", "driver-a/boolAttribute"),
                    DeviceConstraint(("req-0", "req-1", "req-2"), "", "driver-a/driverVersion"),
                    DeviceConstraint(("req-0", "req-1", "req-2", "req-3"), "", "driver-a/numa"),
                ),
            )
        ],
        "class": PLAIN_CLASS,
        "slices": [
            one_slice(
                *(
                    dev(
                        f"device-{i + 1}",
                        attrs={"driverVersion": ("version", v), "numa": ("int", i), "boolAttribute": ("bool", b)},
                    )
                    for i, (v, b) in enumerate((("1.0.0", True), ("1.0.1", False), ("1.0.2", True), ("1.0.0", True)))
                )
            )
        ],
        "want": [[res(f"req-{i}", f"device-{i + 1}") for i in range(4)]],
    },
    # shares of devices that consume shared counters, and distinct attributes over shares
    "allow-multiple-allocations-with-partitionable-device": {
        "features": ON_PART,
        "claims": [
            claim(
                "claim-0",
                req("req-0"),
                subs(
                    "req-1",
                    ("subReq-0", exact(selectors=(MEM_AT_LEAST % 6,))),
                    ("subReq-1", exact(selectors=(MEM_AT_LEAST % 4,))),
                ),
            )
        ],
        "slices": [
            one_slice(
                *(
                    dev(f"device-{i}", {"memory": m * GI}, consumes={"counter-set-1": {"memory": m * GI}})
                    for i, m in ((1, 4), (2, 6), (3, 4))
                ),
                pool=("pool-1", 2),
            ),
            counters_slice({"counter-set-1": {"memory": 8 * GI}}),
        ],
        "want": [[res("req-0", "device-1", {"memory": 4 * GI}), res("req-1/subReq-1", "device-3", {"memory": 4 * GI})]],
    },
    "with-distinct-constraints-with-subrequests": {
        "features": ON_PL,
        "class": PLAIN_CLASS,
        "claims": [
            claim(
                "claim-0",
                *(
                    subs(f"req-{i}", ("subReq-0", exact(selectors=(BOOL_TRUE,))), ("subReq-1", exact()))
                    for i in range(3)
                ),
                constraints=(DeviceConstraint(("req-0", "req-1"), "", "driver-a/boolAttribute"),),
            )
        ],
        "slices": [
            one_slice(
                dev("device-1", attrs={"boolAttribute": ("bool", True)}),
                dev("device-2", attrs={"boolAttribute": ("bool", False)}),
            )
        ],
        # the constraint binds req-0 and req-1 only: req-1 falls back to subReq-1, req-2 shares device-1
        "want": [
            [res("req-0/subReq-0", "device-1"), res("req-1/subReq-1", "device-2"), res("req-2/subReq-0", "device-1")]
        ],
    },
    "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint": {
        "claims": [
            claim("claim-0", req("req-0", 1), req("req-1", 1), constraints=(DeviceConstraint((), "", STRING_ATTR),))
        ],
        "slices": [
            one_slice(
                dev(
                    "device-1",
                    {C0: 2},
                    policies={C0: rng()},
                    attrs={"stringAttribute": ("string", "stringAttributeValue")},
                )
            )
        ],
        "want": None,
    },
    "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint": {
        "claims": [
            claim("claim-0", req("req-0", 2), req("req-1", 2), constraints=(DeviceConstraint((), "", STRING_ATTR),))
        ],
        "slices": [
            one_slice(
                dev(
                    "device-1",
                    {C0: 4},
                    policies={C0: rng()},
                    attrs={"stringAttribute": ("string", "stringAttributeValue1")},
                ),
                pool=("pool-1", 2),
            ),
            one_slice(
                dev(
                    "device-2",
                    {C0: 4},
                    policies={C0: rng()},
                    attrs={"stringAttribute": ("string", "stringAttributeValue2")},
                ),
                pool=("pool-1", 2),
            ),
        ],
        "want": [[res("req-0", "device-1", {C0: 2}), res("req-1", "device-2", {C0: 2})]],
    },
}

# DRAFractionalCapacityRange (1.37): a fractional range rounds in milli units.
FRACTIONAL = Features(consumable_capacity=True, fractional_capacity_range=True)
FRACTIONAL_CASES: dict[str, dict[str, Any]] = {
    "consumable-capacity-fractional-range-gate-enabled-round-up": {
        "features": FRACTIONAL,
        "claims": [claim("claim-0", req("req-0", Fraction(250, 1000)))],
        "slices": [one_slice(dev("device-1", {C0: 1}, policies={C0: rng("200/1000", "200/1000", "100/1000", 1)}))],
        "want": [[res("req-0", "device-1", {C0: Fraction(3, 10)})]],
    },
    "consumable-capacity-fractional-range-gate-disabled": {
        "features": ON,
        "claims": [claim("claim-0", req("req-0", Fraction(200, 1000)))],
        "slices": [one_slice(dev("device-1", {C0: 1}, policies={C0: rng("200/1000", "200/1000", "100/1000", 1)}))],
        # whole units: 200m is 1 (Quantity.Value() rounds up), and so are the min and the step
        "want": [[res("req-0", "device-1", {C0: 1})]],
    },
    "fractional-range-whole-units-without-the-gate": {
        "features": ON,
        "claims": [claim("claim-0", req("req-0", Fraction(250, 1000)))],
        "slices": [one_slice(dev("device-1", {C0: 1}, policies={C0: rng("200/1000", "200/1000", "100/1000", 1)}))],
        # whole units: Quantity.Value() rounds 250m, the step 100m and the min 200m all up to 1, so the share
        # takes 1 (min + 0 steps), where milli units give 300m
        "want": [[res("req-0", "device-1", {C0: 1})]],
    },
    "fractional-range-request-finer-than-milli-aborts": {
        "features": FRACTIONAL,
        "claims": [claim("claim-0", req("req-0", Fraction(2501, 10000)))],
        "slices": [one_slice(dev("device-1", {C0: 1}, policies={C0: rng("200/1000", "200/1000", "100/1000", 1)}))],
        "error": "is not a representable milli value",
    },
}


def _run(case: dict[str, Any]) -> list[Any] | None:
    classes = {"class-a": DeviceClass("class-a", (case.get("class", MULTI_CLASS),))}
    allocator = Allocator(
        case.get("features", ON),
        set(case.get("allocated", set())),
        classes,
        case["slices"],
        set(case.get("shared", set())),
        {d: {k: Fraction(v) for k, v in c.items()} for d, c in case.get("capacity", {}).items()},
    )
    return allocator.allocate(Node(N1, labels={"region": "region-1"}), case["claims"])


@pytest.mark.parametrize("name", sorted(CASES | FRACTIONAL_CASES))
def test_upstream_consumable_capacity_case(name: str) -> None:
    case = (CASES | FRACTIONAL_CASES)[name]
    if "error" in case:
        with pytest.raises(AllocationError, match=re.escape(case["error"])):
            _run(case)
        return
    got = _run(case)
    if case["want"] is None:
        assert got is None
        return
    assert got is not None
    assert len(got) == len(case["want"])
    for alloc, want in zip(got, case["want"], strict=True):
        have = [(r.request, r.device, r.consumed, r.share_id is not None) for r in alloc.results]
        assert sorted(have, key=repr) == sorted(want, key=repr)
        for r in alloc.results:
            assert r.share_id is None or UUID.match(r.share_id)
        shares = [r.share_id for r in alloc.results if r.share_id is not None]
        assert len(set(shares)) == len(shares)


def test_ported_case_count() -> None:
    assert len(CASES) == 47
    assert len(FRACTIONAL_CASES) == 4


def test_share_ids_repeat_between_runs() -> None:
    case = CASES["consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request"]
    first, second = _run(case), _run(case)
    assert first is not None and second is not None
    assert [r.share_id for a in first for r in a.results] == [r.share_id for a in second for r in a.results]
    assert first[0].results[0].share_id != first[1].results[0].share_id


# -- property: no over-consumption, no double allocation of exclusive devices -------------------------------------


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[DraDevice], list[ResourceClaim]]:
    devices = []
    for i in range(draw(st.integers(1, 4))):
        multi = draw(st.booleans())
        capacity = {C0: draw(st.integers(0, 8))}
        policies = {}
        if multi and draw(st.booleans()):
            policies[C0] = rng(2, 2, draw(st.sampled_from([1, 2])), None)
            capacity[C0] = max(capacity[C0], 4)
        devices.append(dev(f"device-{i}", capacity, multi=multi, policies=policies))
    claims = []
    for c in range(draw(st.integers(1, 4))):
        requests = [
            req(f"req-{r}", draw(st.one_of(st.none(), st.integers(0, 5))), count=draw(st.integers(1, 2)))
            for r in range(draw(st.integers(1, 2)))
        ]
        claims.append(claim(f"claim-{c}", *requests))
    return devices, claims


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_capacity_is_never_over_consumed(scenario: tuple[list[DraDevice], list[ResourceClaim]]) -> None:
    devices, claims = scenario
    by_name = {d.name: d for d in devices}
    classes = {"class-a": DeviceClass("class-a", (PLAIN_CLASS,))}
    held: set[tuple[str, str, str]] = set()
    capacity: dict[tuple[str, str, str], dict[str, Fraction]] = {}
    # The claims one after the other, each seeing what the earlier ones took (as successive scheduling cycles).
    for c in claims:
        allocator = Allocator(ON, set(held), classes, [one_slice(*devices)], set(capacity), capacity)
        got = allocator.allocate(Node(N1), [c])
        if got is None:
            continue
        for r in got[0].results:
            device = by_name[r.device]
            if r.share_id is None:
                assert r.device_id not in held and r.device_id not in capacity
                held.add(r.device_id)
                continue
            assert device.allow_multiple
            assert r.device_id not in held
            have = capacity.setdefault(r.device_id, {})
            for name, amount in r.consumed or ():
                have[name] = have.get(name, Fraction(0)) + amount
    for d, used in capacity.items():
        values_of = dict(by_name[d[2]].cel.capacity)
        for name, amount in used.items():
            assert 0 <= amount <= values_of[name]
