"""The DRA allocator against a first part of upstream's shared allocator test table
(``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go``):
the same inputs, the same allocations or errors, written as data here. Cases about device configuration
(``with-class-device-config*``, ``claim-with-device-config``: packsched does not carry opaque configuration into
the result) and API shapes packsched rejects when reading (``unknown-selector``, ``unknown-allocation-mode``) are
left out; the count of ported cases is ``len(CASES)``.

A case: ``slices`` (name, node selection, pool, driver, devices; a pool is "name" or (name, slice count,
generation)), ``claims`` (name, requests, constraints), ``classes`` (name -> driver), ``allocated`` devices, the
node (name, region), features; ``want``: one list of (request, driver, pool, device[, admin]) per claim, with the
node selector ("node" for the node itself, a tuple of (key, values) label requirements, or None); or ``want`` None
(no allocation); or ``error``: a part of the error's text.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from packsched.api.dra import (
    ALL,
    ClaimSpec,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceResult,
    ExactRequest,
    ResourceClaim,
    ResourceSlice,
)
from packsched.api.dra import Device as DraDevice
from packsched.api.dracel import CelDevice
from packsched.api.objects import Node, NodeSelectorTerm, Requirement, Taint, Toleration
from packsched.backend.dra.allocator import AllocationError, Allocator, Features

A, B = "driver-a", "driver-b"
N1, N2 = "node-1", "node-2"
GI = 2**30


def dev(
    name: str, attrs: dict[str, Any] | None = None, capacity: dict[str, int] | None = None, **extra: Any
) -> tuple[Any, ...]:
    """``extra``: ``taints`` (Taint, ...), ``consumes`` {counter set: {counter: amount}}, ``node`` (per-device
    node name, or "all")."""
    return (name, attrs or {}, capacity or {}, extra)


def one() -> list[tuple[Any, ...]]:
    return [dev("device-1")]


def req(
    name: str, cls: str = "class-a", count: int = 1, *selectors: str, mode: str = "ExactCount", admin: Any = None
) -> DeviceRequest:
    return DeviceRequest(name, ExactRequest(cls, tuple(selectors), mode, count if mode != ALL else 0, admin))


def treq(name: str, *tolerations: Toleration, mode: str = "ExactCount", admin: Any = None) -> DeviceRequest:
    """A request of class-a for one device (every device with ``mode`` All) with tolerations."""
    count = 0 if mode == ALL else 1
    return DeviceRequest(name, ExactRequest("class-a", (), mode, count, admin, tuple(tolerations)))


def sub(
    name: str, cls: str = "class-a", count: int = 1, *selectors: str, mode: str = "ExactCount", tol: Any = ()
) -> tuple[str, ExactRequest]:
    return (name, ExactRequest(cls, tuple(selectors), mode, count if mode != ALL else 0, None, tuple(tol)))


def first_available(name: str, *subs: tuple[str, ExactRequest]) -> DeviceRequest:
    return DeviceRequest(name, None, tuple(subs))


def all_req(name: str, cls: str = "class-a", admin: Any = None) -> DeviceRequest:
    return req(name, cls, 0, mode=ALL, admin=admin)


def prioritized(name: str, *subs: tuple[str, str, int, str]) -> DeviceRequest:
    return DeviceRequest(
        name, None, tuple((s, ExactRequest(c, (), mode, n if mode != ALL else 0)) for s, c, n, mode in subs)
    )


def claim(name: str, *requests: DeviceRequest, constraints: tuple[DeviceConstraint, ...] = ()) -> tuple[Any, ...]:
    return (name, requests, constraints)


def match(attr: str, *requests: str) -> DeviceConstraint:
    return DeviceConstraint(tuple(requests), match_attribute=attr)


MEM1 = 'device.capacity["driver-a"].memory.compareTo(quantity("1Gi")) >= 0'
MEM2 = 'device.capacity["driver-a"].memory.compareTo(quantity("2Gi")) >= 0'
REGION1 = ("region", ("region-1",))
INT_A, VER_A, STR_A, BOOL_A = (
    "driver-a/numa",
    "driver-a/driverVersion",
    "driver-a/stringAttribute",
    "driver-a/boolAttribute",
)
ATTRS = {
    "driverVersion": ("version", "1.0.0"),
    "numa": ("int", 1),
    "stringAttribute": ("string", "stringAttributeValue"),
    "boolAttribute": ("bool", True),
}
DEFAULT_CLASSES = {"class-a": A}

CASES: dict[str, dict[str, Any]] = {
    "empty": {"claims": [], "slices": [], "want": []},
    "simple": {
        "claims": [claim("claim-0", req("req-0"))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": [("node", [("req-0", A, "pool-1", "device-1")])],
    },
    "other-node": {
        "claims": [claim("claim-0", req("req-0"))],
        "slices": [("slice-1", N1, "pool-1", B, one()), ("slice-2", N2, "pool-2", A, one())],
        "node": (N2, "region-2"),
        "want": [("node", [("req-0", A, "pool-2", "device-1")])],
    },
    "small-and-large": {
        "claims": [claim("claim-0", req("req-0", "class-a", 1, MEM1), req("req-1", "class-a", 1, MEM2))],
        "slices": [
            (
                "slice-1",
                N1,
                "pool-1",
                A,
                [dev("device-1", capacity={"memory": GI}), dev("device-2", capacity={"memory": 2 * GI})],
            )
        ],
        "want": [("node", [("req-0", A, "pool-1", "device-1"), ("req-1", A, "pool-1", "device-2")])],
    },
    "small-and-large-backtrack-requests": {
        "claims": [claim("claim-0", req("req-0", "class-a", 1, MEM1), req("req-1", "class-a", 1, MEM2))],
        "slices": [
            (
                "slice-1",
                N1,
                "pool-1",
                A,
                [dev("device-2", capacity={"memory": 2 * GI}), dev("device-1", capacity={"memory": GI})],
            )
        ],
        "want": [("node", [("req-0", A, "pool-1", "device-1"), ("req-1", A, "pool-1", "device-2")])],
    },
    "small-and-large-backtrack-claims": {
        "claims": [
            claim("claim-0", req("req-0", "class-a", 1, MEM1)),
            claim("claim-1", req("req-1", "class-a", 1, MEM2)),
        ],
        "slices": [
            (
                "slice-1",
                N1,
                "pool-1",
                A,
                [dev("device-2", capacity={"memory": 2 * GI}), dev("device-1", capacity={"memory": GI})],
            )
        ],
        "want": [("node", [("req-0", A, "pool-1", "device-1")]), ("node", [("req-1", A, "pool-1", "device-2")])],
    },
    "devices-split-across-different-slices": {
        "claims": [claim("claim-0", req("req-0", "class-a", 2))],
        "slices": [("slice-1", N1, "pool-1", A, one()), ("slice-2", N1, "pool-2", A, one())],
        "want": [("node", [("req-0", A, "pool-1", "device-1"), ("req-0", A, "pool-2", "device-1")])],
    },
    "obsolete-slice": {
        "claims": [claim("claim-0", req("req-0"))],
        "slices": [
            ("slice-1-obsolete", N1, ("pool-1", 2, 1), A, one()),
            ("slice-1-obsolete", N1, ("pool-1", 2, 2), A, [dev("device-2")]),
        ],
        "want": None,
    },
    "duplicate-slice": {
        "claims": [claim("claim-0", req("req-0"))],
        "slices": [("slice-1", N1, ("pool-1", 2, 1), A, one()), ("slice-1-2", N1, ("pool-1", 2, 1), A, one())],
        "error": "invalid resource pools were encountered",
    },
    "no-slices": {"claims": [claim("claim-0", req("req-0"))], "slices": [], "want": None},
    "not-enough-suitable-devices": {
        "claims": [claim("claim-0", req("req-0")), claim("claim-0", req("req-1"))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": None,
    },
    "no-classes": {
        "claims": [claim("claim-0", req("req-0"))],
        "classes": {},
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "could not retrieve device class class-a",
    },
    "unknown-class": {
        "claims": [claim("claim-0", req("req-0", "unknown-class"))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "could not retrieve device class unknown-class",
    },
    "empty-class": {
        "claims": [claim("claim-0", req("req-0", ""))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "claim default/claim-0, request req-0: missing device class name (unsupported request type?)",
    },
    "no-claims-to-allocate": {"claims": [], "slices": [("slice-1", N1, "pool-1", A, one())], "want": []},
    "all-devices-single": {
        "claims": [claim("claim-0", all_req("req-0"))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": [("node", [("req-0", A, "pool-1", "device-1")])],
    },
    "all-devices-many": {
        "claims": [claim("claim-0", all_req("req-0"))],
        "slices": [("slice-1", N1, "pool-1", A, one()), ("slice-1", N1, "pool-2", A, one())],
        "want": [("node", [("req-0", A, "pool-1", "device-1"), ("req-0", A, "pool-2", "device-1")])],
    },
    "all-devices-of-the-incomplete-pool": {
        "claims": [claim("claim-0", all_req("req-0"))],
        "slices": [("slice-1", N1, ("pool-1", 2, 1), A, one())],
        "error": (
            "claim default/claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is "
            "currently being updated"
        ),
    },
    "all-devices-plus-another": {
        "claims": [claim("claim-0", all_req("req-0")), claim("claim-1", req("req-0", "class-b"))],
        "classes": {"class-a": A, "class-b": B},
        "slices": [("slice-1", N1, "pool-1", A, one()), ("slice-1", N1, "pool-1", B, one())],
        "want": [("node", [("req-0", A, "pool-1", "device-1")]), ("node", [("req-0", B, "pool-1", "device-1")])],
    },
    "all-devices-plus-another-reversed": {
        "claims": [claim("claim-1", req("req-0", "class-b")), claim("claim-0", all_req("req-0"))],
        "classes": {"class-a": A, "class-b": B},
        "slices": [("slice-1", N1, "pool-1", A, one()), ("slice-1", N1, "pool-1", B, one())],
        "want": [("node", [("req-0", B, "pool-1", "device-1")]), ("node", [("req-0", A, "pool-1", "device-1")])],
    },
    "all-devices-many-plus-another": {
        "claims": [claim("claim-0", all_req("req-0")), claim("claim-1", req("req-0", "class-b"))],
        "classes": {"class-a": A, "class-b": B},
        "slices": [
            ("slice-1", N1, "pool-1", A, [dev("device-1"), dev("device-2")]),
            ("slice-1", N1, "pool-1", B, one()),
        ],
        "want": [
            ("node", [("req-0", A, "pool-1", "device-1"), ("req-0", A, "pool-1", "device-2")]),
            ("node", [("req-0", B, "pool-1", "device-1")]),
        ],
    },
    "all-devices-many-plus-another-reversed": {
        "claims": [claim("claim-1", req("req-0", "class-b")), claim("claim-0", all_req("req-0"))],
        "classes": {"class-a": A, "class-b": B},
        "slices": [
            ("slice-1", N1, "pool-1", A, [dev("device-1"), dev("device-2")]),
            ("slice-1", N1, "pool-1", B, one()),
        ],
        "want": [
            ("node", [("req-0", B, "pool-1", "device-1")]),
            ("node", [("req-0", A, "pool-1", "device-1"), ("req-0", A, "pool-1", "device-2")]),
        ],
    },
    "all-devices-no-solution": {
        "claims": [claim("claim-1", req("req-0")), claim("claim-0", all_req("req-0"))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": None,
    },
    "all-devices-no-solution-reversed": {
        "claims": [claim("claim-0", all_req("req-0")), claim("claim-1", req("req-0"))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": None,
    },
    "all-devices-slice-without-devices": {
        "claims": [claim("claim-0", all_req("req-0"))],
        "slices": [("slice-1", N1, "pool-1", A, [])],
        "want": None,
    },
    "all-devices-no-slices": {"claims": [claim("claim-0", all_req("req-0"))], "slices": [], "want": None},
    "all-devices-some-allocated": {
        "claims": [claim("claim-0", all_req("req-0"))],
        "allocated": [(A, "pool-1", "device-1")],
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1"), dev("device-2")])],
        "want": None,
    },
    "all-devices-some-allocated-admin-access": {
        "claims": [claim("claim-0", all_req("req-0", admin=True))],
        "allocated": [(A, "pool-1", "device-1")],
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1"), dev("device-2")])],
        "want": [("node", [("req-0", A, "pool-1", "device-1", True), ("req-0", A, "pool-1", "device-2", True)])],
    },
    "all-devices-some-allocating-admin-access": {
        "claims": [claim("claim-0", req("req-0", admin=True), all_req("req-1", admin=True))],
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1"), dev("device-2")])],
        "want": None,
    },
    "count-devices-some-allocated-admin-access": {
        "claims": [claim("claim-0", req("req-0", "class-a", 2, admin=True))],
        "allocated": [(A, "pool-1", "device-1")],
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1"), dev("device-2")])],
        "want": [("node", [("req-0", A, "pool-1", "device-1", True), ("req-0", A, "pool-1", "device-2", True)])],
    },
    "separate-claims-share-device-admin-access": {
        "claims": [claim("claim-0", req("req-0", admin=True)), claim("claim-1", req("req-0", admin=True))],
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1"), dev("device-2")])],
        "want": [
            ("node", [("req-0", A, "pool-1", "device-1", True)]),
            ("node", [("req-0", A, "pool-1", "device-1", True)]),
        ],
    },
    "admin-access-claims-device-allocating-for-non-admin-access": {
        "claims": [claim("claim-0", req("req-0")), claim("claim-1", req("req-0", admin=True))],
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1"), dev("device-2")])],
        "want": [("node", [("req-0", A, "pool-1", "device-1")]), ("node", [("req-0", A, "pool-1", "device-1", True)])],
    },
    "all-devices-slice-without-devices-prioritized-list": {
        "claims": [
            claim(
                "claim-0",
                prioritized("req-0", ("subReq-0", "class-a", 0, ALL), ("subReq-1", "class-b", 1, "ExactCount")),
            )
        ],
        "classes": {"class-a": A, "class-b": B},
        "slices": [("slice-1", N1, "pool-1", A, []), ("slice-2", N1, "pool-2", B, one())],
        "want": [("node", [("req-0/subReq-1", B, "pool-2", "device-1")])],
    },
    "all-devices-no-slices-prioritized-list": {
        "claims": [
            claim(
                "claim-0",
                prioritized("req-0", ("subReq-0", "class-a", 0, ALL), ("subReq-1", "class-b", 1, "ExactCount")),
            )
        ],
        "classes": {"class-a": A, "class-b": B},
        "slices": [("slice-2", N1, "pool-2", B, one())],
        "want": [("node", [("req-0/subReq-1", B, "pool-2", "device-1")])],
    },
    "all-devices-some-allocated-prioritized-list": {
        "claims": [
            claim(
                "claim-0",
                prioritized("req-0", ("subReq-0", "class-a", 0, ALL), ("subReq-1", "class-b", 1, "ExactCount")),
            )
        ],
        "classes": {"class-a": A, "class-b": B},
        "allocated": [(A, "pool-1", "device-1")],
        "slices": [
            ("slice-1", N1, "pool-1", A, [dev("device-1"), dev("device-2")]),
            ("slice-2", N1, "pool-2", B, one()),
        ],
        "want": [("node", [("req-0/subReq-1", B, "pool-2", "device-1")])],
    },
    "network-attached-device": {
        "claims": [claim("claim-0", req("req-0"))],
        "slices": [("slice-1", (REGION1,), "pool-1", A, one())],
        "want": [((REGION1,), [("req-0", A, "pool-1", "device-1")])],
    },
    "unsuccessful-allocation-network-attached-device": {
        "claims": [claim("claim-0", req("req-0"))],
        "slices": [("slice-1", (REGION1,), "pool-1", A, one())],
        "node": (N2, "region-2"),
        "want": None,
    },
    "many-network-attached-devices": {
        "claims": [claim("claim-0", req("req-0", "class-a", 4))],
        "slices": [
            ("slice-1", (REGION1,), "pool-1", A, one()),
            ("slice-1", "all", "pool-2", A, one()),
            ("slice-1", (("planet", ("earth",)),), "pool-3", A, one()),
            ("slice-1", "field:node-1", "pool-4", A, one()),
        ],
        "want": [
            (
                (REGION1, ("planet", ("earth",)), ("field:metadata.name", (N1,))),
                [("req-0", A, f"pool-{i}", "device-1") for i in range(1, 5)],
            )
        ],
    },
    "local-and-network-attached-devices": {
        "claims": [claim("claim-0", req("req-0", "class-a", 2))],
        "slices": [("slice-1", (REGION1,), "pool-1", A, one()), ("slice-1", N1, "pool-2", A, one())],
        "want": [("node", [("req-0", A, "pool-1", "device-1"), ("req-0", A, "pool-2", "device-1")])],
    },
    "several-different-drivers": {
        "claims": [claim("claim-0", req("req-0")), claim("claim-0", req("req-0", "class-b"))],
        "classes": {"class-a": A, "class-b": B},
        "slices": [
            ("slice-1", N1, "pool-1", A, [dev("device-1"), dev("device-2")]),
            ("slice-1", N1, "pool-1", B, one()),
        ],
        "want": [("node", [("req-0", A, "pool-1", "device-1")]), ("node", [("req-0", B, "pool-1", "device-1")])],
    },
    "already-allocated-devices": {
        "claims": [claim("claim-0", req("req-0"))],
        "allocated": [(A, "pool-1", "device-1"), (A, "pool-1", "device-2")],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": None,
    },
    "admin-access-disabled": {
        "features": Features(admin_access=False),
        "claims": [claim("claim-0", req("req-0", admin=True))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "claim default/claim-0, request req-0: admin access is requested, but the feature is disabled",
    },
    "admin-access-enabled": {
        "claims": [claim("claim-0", req("req-0", admin=True))],
        "allocated": [(A, "pool-1", "device-1"), (A, "pool-1", "device-2")],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": [("node", [("req-0", A, "pool-1", "device-1", True)])],
    },
    "with-constraint": {
        "claims": [
            claim(
                "claim-0",
                req("req-0"),
                req("req-1"),
                constraints=(match(INT_A), match(VER_A), match(STR_A), match(BOOL_A)),
            )
        ],
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", ATTRS), dev("device-2", ATTRS)])],
        "want": [("node", [("req-0", A, "pool-1", "device-1"), ("req-1", A, "pool-1", "device-2")])],
    },
    "with-constraint-non-existent-attribute": {
        "claims": [claim("claim-0", req("req-0"), constraints=(match("driver-a/NonExistentAttribute"),))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": None,
    },
    "with-constraint-not-matching-int-attribute": {
        "claims": [claim("claim-0", req("req-0", "class-a", 2), constraints=(match(INT_A),))],
        "slices": [
            ("slice-1", N1, "pool-1", A, [dev("device-1", {"numa": ("int", 1)}), dev("device-2", {"numa": ("int", 2)})])
        ],
        "want": None,
    },
    "with-constraint-not-matching-int-attribute-all-devices": {
        "claims": [claim("claim-0", all_req("req-0"), constraints=(match(INT_A),))],
        "slices": [
            ("slice-1", N1, "pool-1", A, [dev("device-1", {"numa": ("int", 1)}), dev("device-2", {"numa": ("int", 2)})])
        ],
        "error": (
            "claim default/claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim "
            "constraint would not be satisfied"
        ),
    },
    "with-constraint-not-matching-string-attribute": {
        "claims": [claim("claim-0", req("req-0", "class-a", 2), constraints=(match(STR_A),))],
        "slices": [
            (
                "slice-1",
                N1,
                "pool-1",
                A,
                [
                    dev("device-1", {"stringAttribute": ("string", "x")}),
                    dev("device-2", {"stringAttribute": ("string", "y")}),
                ],
            )
        ],
        "want": None,
    },
    "with-constraint-not-matching-bool-attribute": {
        "claims": [claim("claim-0", req("req-0", "class-a", 2), constraints=(match(BOOL_A),))],
        "slices": [
            (
                "slice-1",
                N1,
                "pool-1",
                A,
                [
                    dev("device-1", {"boolAttribute": ("bool", True)}),
                    dev("device-2", {"boolAttribute": ("bool", False)}),
                ],
            )
        ],
        "want": None,
    },
    "with-constraint-not-matching-version-attribute": {
        "claims": [claim("claim-0", req("req-0", "class-a", 2), constraints=(match(VER_A),))],
        "slices": [
            (
                "slice-1",
                N1,
                "pool-1",
                A,
                [
                    dev("device-1", {"driverVersion": ("version", "1.0.0")}),
                    dev("device-2", {"driverVersion": ("version", "2.0.0")}),
                ],
            )
        ],
        "want": None,
    },
    "with-constraint-for-request": {
        "claims": [claim("claim-0", req("req-0"), req("req-1"), constraints=(match(VER_A, "req-0"),))],
        "slices": [
            (
                "slice-1",
                N1,
                "pool-1",
                A,
                [
                    dev("device-1", {"driverVersion": ("version", "1.0.0")}),
                    dev("device-2", {"driverVersion": ("version", "2.0.0")}),
                ],
            )
        ],
        "want": [("node", [("req-0", A, "pool-1", "device-1"), ("req-1", A, "pool-1", "device-2")])],
    },
    "with-constraint-for-request-retry": {
        "claims": [claim("claim-0", req("req-0"), req("req-1"), constraints=(match(VER_A, "req-0"), match(STR_A)))],
        "slices": [
            (
                "slice-1",
                N1,
                "pool-1",
                A,
                [
                    dev("device-1", {"driverVersion": ("version", "1.0.0"), "stringAttribute": ("string", "a")}),
                    dev("device-2", {"driverVersion": ("version", "2.0.0"), "stringAttribute": ("string", "b")}),
                    dev("device-3", {"driverVersion": ("version", "3.0.0"), "stringAttribute": ("string", "b")}),
                ],
            )
        ],
        "want": [("node", [("req-0", A, "pool-1", "device-2"), ("req-1", A, "pool-1", "device-3")])],
    },
    "unknown-constraint": {
        "claims": [claim("claim-0", req("req-0"), constraints=(DeviceConstraint(),))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "empty constraint (unsupported constraint type?)",
    },
    "invalid-CEL-one-device": {
        "claims": [claim("claim-0", req("req-0", "class-a", 1, "noSuchVar"))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "undeclared reference",
    },
    "invalid-CEL-one-device-class": {
        "claims": [claim("claim-0", req("req-0"))],
        "class_selectors": {"class-a": ("noSuchVar",)},
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "undeclared reference",
    },
    "invalid-CEL-all-devices": {
        "claims": [claim("claim-0", req("req-0", "class-a", 0, "noSuchVar", mode=ALL))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "undeclared reference",
    },
    "too-many-devices-single-request": {
        "claims": [claim("claim-0", req("req-0", "class-a", 500))],
        "slices": [],
        "error": "exceeds the claim limit",
    },
}


# -- more of upstream's table: the prioritized list (firstAvailable), partitionable devices (shared counters),
# device taints and tolerations, admin access, distinct attributes and bad request shapes ----------------------

MEM4 = 'device.capacity["driver-a"].memory.compareTo(quantity("4Gi")) >= 0'
PARTITIONABLE, TAINTS = Features(partitionable_devices=True), Features(device_taints=True)
NS = Taint("taint-key", "taint-value", "NoSchedule")
NE = Taint("taint-key", "taint-value", "NoExecute")
TOL_NS = Toleration("taint-key", "Equal", "taint-value", "NoSchedule")
TOL_NE = Toleration("taint-key", "Exists", "", "NoExecute")
COUNTERS = ("slice-counters", None, ("pool-1", 2, 1), A, [], {"cs-1": {"memory": 8 * GI}})
VERSIONED = [
    dev("device-1", {"driverVersion": ("version", "1.0.0")}, {"memory": GI}),
    dev("device-2", {"driverVersion": ("version", "2.0.0")}, {"memory": 2 * GI}),
    dev("device-3", {"driverVersion": ("version", "1.0.0")}, {"memory": GI}),
]


def parts(*memory_gi: int, where: Any = N1) -> tuple[Any, ...]:
    """The device slice of pool-1 (beside COUNTERS): one device per amount, each consuming that much memory."""
    devices = [dev(f"device-{i}", consumes={"cs-1": {"memory": m * GI}}) for i, m in enumerate(memory_gi, 1)]
    return ("slice-1", where, ("pool-1", 2, 1), A, devices)


MORE_CASES: dict[str, dict[str, Any]] = {
    # prioritized list
    "prioritized-list-first-unavailable": {
        "claims": [claim("claim-0", first_available("req-0", sub("subreq-0", "class-b"), sub("subreq-1")))],
        "classes": {"class-a": A, "class-b": B},
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": [("node", [("req-0/subreq-1", A, "pool-1", "device-1")])],
    },
    "prioritized-list-non-available": {
        "claims": [claim("claim-0", first_available("req-0", sub("subreq-0", "class-b"), sub("subreq-1", count=2)))],
        "classes": {"class-a": A, "class-b": B},
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": None,
    },
    "prioritized-list-subrequests-with-expressions": {
        "claims": [
            claim(
                "claim-0", first_available("req-0", sub("subreq-0", "class-a", 1, MEM4), sub("s-1", "class-a", 1, MEM2))
            )
        ],
        "slices": [("slice-1", N1, "pool-1", A, VERSIONED[:2])],
        "want": [("node", [("req-0/s-1", A, "pool-1", "device-2")])],
    },
    "prioritized-list-subrequests-with-constraints-ref-parent-request": {
        "claims": [
            claim(
                "claim-0",
                req("req-0", "class-a", 1, MEM1),
                first_available("req-1", sub("subreq-0", "class-a", 1, MEM2), sub("subreq-1")),
                constraints=(match(VER_A, "req-0", "req-1"),),
            )
        ],
        "slices": [("slice-1", N1, "pool-1", A, VERSIONED)],
        "want": [("node", [("req-0", A, "pool-1", "device-1"), ("req-1/subreq-1", A, "pool-1", "device-3")])],
    },
    "prioritized-list-subrequests-with-constraints-ref-sub-request": {
        "claims": [
            claim(
                "claim-0",
                req("req-0", "class-a", 1, MEM1),
                first_available("req-1", sub("subreq-0", "class-a", 1, MEM2), sub("subreq-1")),
                constraints=(match(VER_A, "req-0", "req-1/subreq-0"),),
            )
        ],
        "slices": [("slice-1", N1, "pool-1", A, VERSIONED)],
        # the constraint does not hold subreq-1: the first free device does
        "want": [("node", [("req-0", A, "pool-1", "device-1"), ("req-1/subreq-1", A, "pool-1", "device-2")])],
    },
    "prioritized-list-subrequests-with-allocation-mode-all": {
        "claims": [claim("claim-0", first_available("req-0", sub("subreq-0", mode=ALL), sub("subreq-1")))],
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1"), dev("device-2")])],
        "allocated": [(A, "pool-1", "device-1")],
        "want": [("node", [("req-0/subreq-1", A, "pool-1", "device-2")])],
    },
    "prioritized-list-all-devices-first": {
        "claims": [claim("claim-0", first_available("req-0", sub("subreq-0", mode=ALL), sub("subreq-1")))],
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1"), dev("device-2")])],
        "want": [("node", [("req-0/subreq-0", A, "pool-1", "device-1"), ("req-0/subreq-0", A, "pool-1", "device-2")])],
    },
    "prioritized-list-disabled": {
        "claims": [claim("claim-0", first_available("req-0", sub("subreq-0")))],
        "features": Features(prioritized_list=False),
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "has subrequests, but the DRAPrioritizedList feature is disabled",
    },
    "prioritized-list-too-many-in-first-subrequest": {
        "claims": [claim("claim-0", first_available("req-0", sub("subreq-0", count=500), sub("subreq-1")))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": [("node", [("req-0/subreq-1", A, "pool-1", "device-1")])],
    },
    "prioritized-list-too-many-in-every-subrequest": {
        "claims": [claim("claim-0", first_available("req-0", sub("subreq-0", count=33), sub("subreq-1", count=40)))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "exceeds the claim limit",
    },
    "prioritized-list-with-backtracking": {
        "claims": [
            claim(
                "claim-0",
                first_available("req-0", sub("subreq-0", "class-a", 1, MEM2), sub("subreq-1", "class-a", 1, MEM1)),
                req("req-1", "class-a", 1, MEM2),
            )
        ],
        "slices": [("slice-1", N1, "pool-1", A, VERSIONED[:2])],
        "want": [("node", [("req-0/subreq-1", A, "pool-1", "device-1"), ("req-1", A, "pool-1", "device-2")])],
    },
    # partitionable devices: counters in their own slice of the pool, devices consuming them
    "partitionable-devices-single-device": {
        "claims": [claim("claim-0", req("req-0"))],
        "features": PARTITIONABLE,
        "slices": [COUNTERS, parts(4)],
        "want": [("node", [("req-0", A, "pool-1", "device-1")])],
    },
    "partitionable-devices-multiple-devices": {
        "claims": [claim("claim-0", req("req-0", "class-a", 2))],
        "features": PARTITIONABLE,
        "slices": [COUNTERS, parts(4, 4)],
        "want": [("node", [("req-0", A, "pool-1", "device-1"), ("req-0", A, "pool-1", "device-2")])],
    },
    "partitionable-devices-counters-exhausted": {
        "claims": [claim("claim-0", req("req-0", "class-a", 2))],
        "features": PARTITIONABLE,
        "slices": [COUNTERS, parts(6, 4)],
        "want": None,
    },
    "partitionable-devices-backtrack-to-smaller-partitions": {
        "claims": [claim("claim-0", req("req-0", "class-a", 2))],
        "features": PARTITIONABLE,
        "slices": [COUNTERS, parts(8, 4, 4)],
        "want": [("node", [("req-0", A, "pool-1", "device-2"), ("req-0", A, "pool-1", "device-3")])],
    },
    "partitionable-devices-allocated-device-consumes-counters": {
        "claims": [claim("claim-0", req("req-0"))],
        "features": PARTITIONABLE,
        "slices": [COUNTERS, parts(6, 4)],
        "allocated": [(A, "pool-1", "device-1")],
        "want": None,
    },
    "partitionable-devices-allocated-device-leaves-enough": {
        "claims": [claim("claim-0", req("req-0"))],
        "features": PARTITIONABLE,
        "slices": [COUNTERS, parts(4, 4)],
        "allocated": [(A, "pool-1", "device-1")],
        "want": [("node", [("req-0", A, "pool-1", "device-2")])],
    },
    "partitionable-devices-two-claims": {
        "claims": [claim("claim-0", req("req-0")), claim("claim-1", req("req-1"))],
        "features": PARTITIONABLE,
        "slices": [COUNTERS, parts(6, 2, 4)],
        "want": [
            ("node", [("req-0", A, "pool-1", "device-1")]),
            ("node", [("req-1", A, "pool-1", "device-2")]),
        ],
    },
    "partitionable-devices-disabled": {
        "claims": [claim("claim-0", req("req-0"))],
        "slices": [COUNTERS, parts(4)],
        "want": None,
    },
    "partitionable-devices-per-device-node-selection": {
        "claims": [claim("claim-0", req("req-0"))],
        "features": PARTITIONABLE,
        "slices": [("slice-1", "per-device", "pool-1", A, [dev("device-1", node=N2), dev("device-2", node=N1)])],
        "want": [("node", [("req-0", A, "pool-1", "device-2")])],
    },
    "partitionable-devices-per-device-all-nodes": {
        "claims": [claim("claim-0", req("req-0"))],
        "features": PARTITIONABLE,
        "slices": [("slice-1", "per-device", "pool-1", A, [dev("device-1", node="all")])],
        "want": [(None, [("req-0", A, "pool-1", "device-1")])],
    },
    "partitionable-devices-per-device-other-node": {
        "claims": [claim("claim-0", req("req-0"))],
        "features": PARTITIONABLE,
        "slices": [("slice-1", "per-device", "pool-1", A, [dev("device-1", node=N2)])],
        "want": None,
    },
    "partitionable-devices-per-device-disabled": {
        "claims": [claim("claim-0", req("req-0"))],
        "slices": [("slice-1", "per-device", "pool-1", A, [dev("device-1", node=N1)])],
        "want": None,
    },
    "partitionable-devices-missing-counter-set": {
        "claims": [claim("claim-0", req("req-0"))],
        "features": PARTITIONABLE,
        "slices": [
            COUNTERS,
            ("slice-1", N1, ("pool-1", 2, 1), A, [dev("device-1", consumes={"cs-2": {"memory": GI}})]),
        ],
        "error": "invalid resource pools were encountered",
    },
    "partitionable-devices-missing-counter": {
        "claims": [claim("claim-0", req("req-0"))],
        "features": PARTITIONABLE,
        "slices": [
            COUNTERS,
            ("slice-1", N1, ("pool-1", 2, 1), A, [dev("device-1", consumes={"cs-1": {"cores": 1}})]),
        ],
        "error": "invalid resource pools were encountered",
    },
    "partitionable-devices-duplicate-counter-set": {
        "claims": [claim("claim-0", req("req-0"))],
        "features": PARTITIONABLE,
        "slices": [
            ("slice-counters", None, ("pool-1", 3, 1), A, [], {"cs-1": {"memory": 8 * GI}}),
            ("slice-counters-2", None, ("pool-1", 3, 1), A, [], {"cs-1": {"memory": 8 * GI}}),
            ("slice-1", N1, ("pool-1", 3, 1), A, [dev("device-1", consumes={"cs-1": {"memory": GI}})]),
        ],
        "error": "invalid resource pools were encountered",
    },
    "partitionable-devices-all-devices-invalid-pool": {
        "claims": [claim("claim-0", all_req("req-0"))],
        "features": PARTITIONABLE,
        "slices": [
            COUNTERS,
            ("slice-1", N1, ("pool-1", 2, 1), A, [dev("device-1", consumes={"cs-2": {"memory": GI}})]),
        ],
        "error": "asks for all devices, but resource pool driver-a/pool-1 is currently invalid",
    },
    # device taints
    "tainted-two-devices": {
        "claims": [claim("claim-0", req("req-0"))],
        "features": TAINTS,
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", taints=[NS]), dev("device-2", taints=[NE])])],
        "want": None,
    },
    "tainted-one-device-two-taints": {
        "claims": [claim("claim-0", req("req-0"))],
        "features": TAINTS,
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", taints=[NS, NE])])],
        "want": None,
    },
    "tainted-two-devices-tolerated": {
        "claims": [claim("claim-0", treq("req-0", TOL_NS, TOL_NE))],
        "features": TAINTS,
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", taints=[NS]), dev("device-2", taints=[NE])])],
        "want": [("node", [("req-0", A, "pool-1", "device-1")])],
    },
    "tainted-one-device-two-taints-one-tolerated": {
        "claims": [claim("claim-0", treq("req-0", TOL_NS))],
        "features": TAINTS,
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", taints=[NS, NE])])],
        "want": None,
    },
    "tainted-one-device-two-taints-both-tolerated": {
        "claims": [claim("claim-0", treq("req-0", TOL_NS, TOL_NE))],
        "features": TAINTS,
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", taints=[NS, NE])])],
        "want": [("node", [("req-0", A, "pool-1", "device-1")])],
    },
    "tainted-effect-none": {
        "claims": [claim("claim-0", req("req-0"))],
        "features": TAINTS,
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", taints=[Taint("k", "v", "None")])])],
        "want": [("node", [("req-0", A, "pool-1", "device-1")])],
    },
    "tainted-disabled": {
        "claims": [claim("claim-0", req("req-0"))],
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", taints=[NS])])],
        "want": [("node", [("req-0", A, "pool-1", "device-1")])],
    },
    "tainted-prioritized-list": {
        "claims": [claim("claim-0", first_available("req-0", sub("subreq-0"), sub("subreq-1", tol=(TOL_NS,))))],
        "features": TAINTS,
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", taints=[NS])])],
        "want": [("node", [("req-0/subreq-1", A, "pool-1", "device-1")])],
    },
    "tainted-all-devices-single": {
        "claims": [claim("claim-0", treq("req-0", mode=ALL))],
        "features": TAINTS,
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", taints=[NS])])],
        "want": None,
    },
    "tainted-all-devices-single-toleration": {
        "claims": [claim("claim-0", treq("req-0", TOL_NS, mode=ALL))],
        "features": TAINTS,
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", taints=[NS])])],
        "want": [("node", [("req-0", A, "pool-1", "device-1")])],
    },
    "tainted-admin-access": {
        "claims": [claim("claim-0", treq("req-0", admin=True))],
        "features": TAINTS,
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", taints=[NS])])],
        "want": None,
    },
    "tainted-admin-access-toleration": {
        "claims": [claim("claim-0", treq("req-0", TOL_NS, admin=True))],
        "features": TAINTS,
        "slices": [("slice-1", N1, "pool-1", A, [dev("device-1", taints=[NS])])],
        "want": [("node", [("req-0", A, "pool-1", "device-1", True)])],
    },
    # admin access
    "admin-access-one-device-twice-in-one-claim": {
        "claims": [claim("claim-0", req("req-0", admin=True), req("req-1", admin=True))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": None,
    },
    "admin-access-two-claims-one-device": {
        "claims": [claim("claim-0", req("req-0", admin=True)), claim("claim-1", req("req-1", admin=True))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "want": [
            ("node", [("req-0", A, "pool-1", "device-1", True)]),
            ("node", [("req-1", A, "pool-1", "device-1", True)]),
        ],
    },
    "admin-access-disabled-all-devices": {
        "claims": [claim("claim-0", all_req("req-0", admin=True))],
        "features": Features(admin_access=False),
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "admin access is requested, but the feature is disabled",
    },
    # distinct attributes
    "with-distinct-constraint": {
        "claims": [
            claim("claim-0", req("req-0", "class-a", 2), constraints=(DeviceConstraint(distinct_attribute=INT_A),))
        ],
        "slices": [
            (
                "slice-1",
                N1,
                "pool-1",
                A,
                [
                    dev("device-1", {"numa": ("int", 1)}),
                    dev("device-2", {"numa": ("int", 1)}),
                    dev("device-3", {"numa": ("int", 2)}),
                ],
            )
        ],
        "want": [("node", [("req-0", A, "pool-1", "device-1"), ("req-0", A, "pool-1", "device-3")])],
    },
    "with-distinct-constraint-no-solution": {
        "claims": [
            claim("claim-0", req("req-0", "class-a", 2), constraints=(DeviceConstraint(distinct_attribute=INT_A),))
        ],
        "slices": [
            ("slice-1", N1, "pool-1", A, [dev("device-1", {"numa": ("int", 1)}), dev("device-2", {"numa": ("int", 1)})])
        ],
        "want": None,
    },
    "with-constraint-all-devices-not-matching": {
        "claims": [claim("claim-0", all_req("req-0"), constraints=(match(INT_A),))],
        "slices": [
            ("slice-1", N1, "pool-1", A, [dev("device-1", {"numa": ("int", 1)}), dev("device-2", {"numa": ("int", 2)})])
        ],
        "error": "cannot add device driver-a/pool-1/device-2 because a claim constraint would not be satisfied",
    },
    # request shapes the API rejects, which the allocator reports as errors
    "unknown-allocation-mode": {
        "claims": [claim("claim-0", req("req-0", mode="Some"))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "unsupported count mode Some",
    },
    "missing-device-class-name": {
        "claims": [claim("claim-0", req("req-0", ""))],
        "slices": [("slice-1", N1, "pool-1", A, one())],
        "error": "missing device class name",
    },
}
CASES |= MORE_CASES


def _terms(spec: Any) -> tuple[NodeSelectorTerm, ...]:
    exprs, fields = [], []
    for key, values in spec:
        if key.startswith("field:"):
            fields.append(Requirement(key[6:], "In", tuple(values)))
        else:
            exprs.append(Requirement(key, "In", tuple(values)))
    return (NodeSelectorTerm(tuple(exprs), tuple(fields)),)


def _slice(spec: tuple[Any, ...]) -> ResourceSlice:
    """(name, where, pool, driver, devices[, shared counters {set: {counter: amount}}]); where "per-device":
    each device says its node."""
    name, where, pool, driver, devices = spec[:5]
    shared = spec[5] if len(spec) > 5 else {}
    pool_name, count, generation = (pool, 1, 1) if isinstance(pool, str) else pool
    kw: dict[str, Any] = {}
    if where is None:
        pass  # a slice of shared counters only
    elif where == "per-device":
        kw["per_device"] = True
    elif where == "all":
        kw["all_nodes"] = True
    elif isinstance(where, str) and where.startswith("field:"):
        kw["node_selector"] = _terms([("field:metadata.name", (where[6:],))])
    elif isinstance(where, str):
        kw["node_name"] = where
    else:
        kw["node_selector"] = _terms(where)
    devs = tuple(
        DraDevice(
            n,
            CelDevice(
                driver,
                tuple((k, kind, v) for k, (kind, v) in attrs.items()),
                tuple((k, Fraction(v)) for k, v in cap.items()),
            ),
            consumes=tuple(
                (cs, tuple((c, Fraction(v)) for c, v in counters.items()))
                for cs, counters in extra.get("consumes", {}).items()
            ),
            taints=tuple(extra.get("taints", ())),
            node_name="" if extra.get("node") in (None, "all") else extra["node"],
            all_nodes=extra.get("node") == "all",
        )
        for n, attrs, cap, extra in (d if len(d) > 3 else (*d, {}) for d in devices)
    )
    counters = tuple(
        (cs, tuple((c, Fraction(v)) for c, v in cs_counters.items())) for cs, cs_counters in shared.items()
    )
    return ResourceSlice(name, driver, pool_name, generation, count, devices=devs, shared_counters=counters, **kw)


def _run(case: dict[str, Any]) -> list[Any] | None:
    classes = {
        n: DeviceClass(n, case.get("class_selectors", {}).get(n, (f'device.driver == "{d}"',)))
        for n, d in case.get("classes", DEFAULT_CLASSES).items()
    }
    node_name, region = case.get("node", (N1, "region-1"))
    node = Node(node_name, labels={"region": region, "planet": "earth"})
    claims = [ResourceClaim(n, "default", ClaimSpec(tuple(r), tuple(c))) for n, r, c in case["claims"]]
    allocator = Allocator(
        case.get("features", Features()),
        set(case.get("allocated", [])),
        classes,
        [_slice(s) for s in case["slices"]],
    )
    return allocator.allocate(node, claims)


def _want(case: dict[str, Any]) -> list[tuple[Any, list[DeviceResult]]] | None:
    """(terms, results) per claim; terms None: the allocation has no node selector (every node)."""
    if case["want"] is None:
        return None
    out = []
    for selector, results in case["want"]:
        node_name = case.get("node", (N1,))[0]
        if selector is None:
            terms = None
        elif selector == "node":
            terms = _terms([("field:metadata.name", (node_name,))])
        else:
            terms = _terms(selector)
        out.append((terms, [DeviceResult(*r[:4], r[4] if len(r) > 4 else None) for r in results]))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_upstream_allocator_case(name: str) -> None:
    case = CASES[name]
    if "error" in case:
        with pytest.raises(AllocationError) as err:
            _run(case)
        assert case["error"] in str(err.value)
        return
    got = _run(case)
    want = _want(case)
    if want is None:
        assert got is None
        return
    assert got is not None
    assert len(got) == len(want)
    for alloc, (terms, results) in zip(got, want, strict=True):
        assert sorted(alloc.results, key=repr) == sorted(results, key=repr)
        if terms is None:
            assert alloc.node_selector is None
            continue
        assert alloc.node_selector is not None
        assert len(alloc.node_selector) == 1
        have, expect = alloc.node_selector[0], terms[0]
        assert {(r.key, r.operator, frozenset(r.values)) for r in have.match_expressions} == {
            (r.key, r.operator, frozenset(r.values)) for r in expect.match_expressions
        }
        assert {(r.key, frozenset(r.values)) for r in have.match_fields} == {
            (r.key, frozenset(r.values)) for r in expect.match_fields
        }


def test_ported_case_count() -> None:
    assert len(CASES) == 57 + len(MORE_CASES) == 57 + 47
