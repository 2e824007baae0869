"""The claim writer's ``allocationTimestamp`` (live/claims.py), against a port that records the status writes: written
with the allocation when device binding conditions are on and the allocation has none, kept when it has one, absent
when they are off; a claim found deallocated meanwhile is an error, as upstream's PreBind reports it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from packsched.api.dra import Allocation, ClaimSpec, ClaimWriteError, DeviceResult, ResourceClaim
from packsched.api.objects import Pod
from packsched.live.claims import ClaimWriter
from packsched.live.port import RESOURCE_CLAIMS

WALL = 1_767_225_600.0  # 2026-01-01T00:00:00Z


class _Port:
    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj
        self.written: list[dict[str, Any]] = []

    def get(self, res: object, ns: str, name: str) -> dict[str, Any]:
        return copy.deepcopy(self.obj)

    def update(self, res: object, ns: str, name: str, obj: dict[str, Any]) -> dict[str, Any]:
        self.obj = copy.deepcopy(obj)
        return obj

    def update_status(self, res: object, ns: str, name: str, obj: dict[str, Any]) -> dict[str, Any]:
        self.written.append(copy.deepcopy(obj))
        return obj


def _write(status: dict[str, Any], allocation: Allocation | None, stamp: bool) -> dict[str, Any]:
    port = _Port({"metadata": {"name": "c", "namespace": "default"}, "status": status})
    writer = ClaimWriter(port, lambda: RESOURCE_CLAIMS)  # type: ignore[arg-type]
    writer.wall = lambda: WALL
    claim = ResourceClaim("c", "default", ClaimSpec())
    writer.reserve(claim, allocation, Pod(name="p", namespace="default", uid="u1"), stamp)
    (obj,) = port.written
    out: dict[str, Any] = obj["status"]
    return out


ALLOC = Allocation((DeviceResult("g", "gpu.example.com", "n0", "gpu-0"),))


def test_a_new_allocation_is_stamped_when_device_binding_is_on() -> None:
    status = _write({}, ALLOC, stamp=True)
    assert status["allocation"]["allocationTimestamp"] == "2026-01-01T00:00:00Z"
    assert status["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "u1"}]


def test_no_stamp_when_device_binding_is_off() -> None:
    assert "allocationTimestamp" not in _write({}, ALLOC, stamp=False)["allocation"]


def test_an_allocation_stamped_already_keeps_its_time() -> None:
    before = {"allocation": {"devices": {"results": []}, "allocationTimestamp": "2025-06-01T12:00:00Z"}}
    assert _write(before, None, stamp=True)["allocation"]["allocationTimestamp"] == "2025-06-01T12:00:00Z"


def test_an_allocated_claim_found_deallocated_is_an_error() -> None:
    with pytest.raises(ClaimWriteError, match="got deallocated elsewhere in the meantime"):
        _write({}, None, stamp=True)
