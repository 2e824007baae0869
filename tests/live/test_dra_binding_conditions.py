"""Live mode with device binding conditions (DRADeviceBindingConditions, on by default in 1.37): PreBind writes the
claim's allocation, the device's binding conditions in its results, then waits on the watched claim until the
driver (here the test) sets them True in ``status.devices``; only then is the pod bound."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import pytest

from live.fakeapi import FakeApiServer
from live.harness import all_bound, node, pod, start
from packsched.plugins.dynamicresources import dynamic_resources

DRIVER = "gpu.example.com"


def _cluster(api: FakeApiServer) -> None:
    api.serve_dra("v1")
    api.create(
        "deviceclasses",
        {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
    )
    api.create("nodes", node("n0"))
    device = {"name": "gpu-0", "bindingConditions": ["attached"], "bindingFailureConditions": ["attach-failed"]}
    spec = {"driver": DRIVER, "nodeName": "n0", "pool": {"name": "n0", "generation": 1, "resourceSliceCount": 1}}
    api.create("resourceslices", {"metadata": {"name": "n0-gpus"}, "spec": {**spec, "devices": [device]}})
    exactly = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    api.create(
        "resourceclaims",
        {
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "g", "exactly": exactly}]}},
        },
    )


def _allocated(s: FakeApiServer) -> bool:
    got = s.store["resourceclaims"].get(("default", "c")) or {}
    return bool((got.get("status") or {}).get("allocation"))


def _allocated_then_served(api: FakeApiServer, tmp_path: Path, stamp: str) -> Any:
    """Claim c allocated at ``stamp`` (its device's binding conditions not true, no pod holding it), serve started,
    and pod p, which uses c, created."""
    result = {
        "request": "g",
        "driver": DRIVER,
        "pool": "n0",
        "device": "gpu-0",
        "bindingConditions": ["attached"],
        "bindingFailureConditions": ["attach-failed"],
    }
    allocation = {"devices": {"results": [result]}, "allocationTimestamp": stamp}
    api.patch_status("resourceclaims", "default", "c", {"status": {"allocation": allocation}})
    run = start(api, tmp_path)
    run.wait_ready()
    claimed = pod("p", cpu="100m")
    claimed["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimName": "c"}]
    api.create("pods", claimed)
    return run


def test_prebind_waits_for_the_drivers_conditions(
    api: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dynamic_resources, "BINDING_POLL_S", 0.02)
    _cluster(api)
    run = start(api, tmp_path)
    run.wait_ready()
    try:
        claimed = pod("p", cpu="100m")
        claimed["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimName": "c"}]
        api.create("pods", claimed)
        assert api.wait_for(_allocated, 15)
        got: Any = api.get("resourceclaims", "default", "c")
        (result,) = got["status"]["allocation"]["devices"]["results"]
        assert (result["bindingConditions"], result["bindingFailureConditions"]) == (["attached"], ["attach-failed"])
        stamp = got["status"]["allocation"]["allocationTimestamp"]  # PreBind's, as upstream writes it (to the second)
        assert abs(dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() - time.time()) < 120
        assert not all_bound(["p"])(api)  # the condition is not there yet: PreBind waits
        condition = {
            "type": "attached",
            "status": "True",
            "reason": "Done",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
        status = {"devices": [{"driver": DRIVER, "pool": "n0", "device": "gpu-0", "conditions": [condition]}]}
        api.patch_status("resourceclaims", "default", "c", {"status": status})
        assert api.wait_for(all_bound(["p"]), 15)
    finally:
        run.stop()
    assert api.stats.bindings == {"default/p": 1}


def test_filter_finds_a_binding_past_its_timeout_by_the_claims_allocation_timestamp(
    api: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A claim allocated an hour ago (its ``allocationTimestamp``) whose device's binding conditions never came
    true and that no pod holds: Filter finds it past the binding timeout (10 minutes), PostFilter deallocates it,
    and the pod's next attempt allocates it afresh (a new timestamp): as upstream, and as the simulator does."""
    monkeypatch.setattr(dynamic_resources, "BINDING_POLL_S", 0.02)
    _cluster(api)
    old = "2026-01-01T00:00:00Z"
    run = _allocated_then_served(api, tmp_path, old)
    try:

        def stamped_again(s: FakeApiServer) -> bool:
            got = (s.store["resourceclaims"].get(("default", "c")) or {}).get("status") or {}
            return (got.get("allocation") or {}).get("allocationTimestamp") not in (None, old)

        assert api.wait_for(stamped_again, 15)
    finally:
        run.stop()
    assert api.stats.bindings == {}  # its conditions are still not true: PreBind waits


def test_prebind_ends_when_a_claims_binding_outlives_the_timeout_since_its_allocation(
    api: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim was allocated 599 s ago (by an earlier attempt), its device's binding conditions not true yet and no
    pod holding it: Filter still finds it in time, PreBind reserves the pod in it and polls; a second later the
    claim's 600 s are over and PreBind ends with upstream's ``device binding timeout: claim=c`` (isPodReadyForBinding),
    long before the wait's own 600 s; the pod is not bound."""
    monkeypatch.setattr(dynamic_resources, "BINDING_POLL_S", 0.02)
    _cluster(api)
    almost = dt.datetime.fromtimestamp(time.time() - 599, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    run = _allocated_then_served(api, tmp_path, almost)
    try:

        def timed_out(s: FakeApiServer) -> bool:
            return any("device binding timeout: claim=c" in str(e.get("note", "")) for e in s.objects("events"))

        assert api.wait_for(timed_out, 15)
    finally:
        run.stop()
    assert api.stats.bindings == {}
