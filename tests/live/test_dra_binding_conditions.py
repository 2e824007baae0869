"""Live mode with device binding conditions (DRADeviceBindingConditions, on by default in 1.37): PreBind writes the
claim's allocation, the device's binding conditions in its results, then waits on the watched claim until the
driver (here the test) sets them True in ``status.devices``; only then is the pod bound."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from types import SimpleNamespace
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


class _Clock:
    """The scheduler's clock in the live wait below: ``time.sleep`` in the plugin moves it on, nothing waits."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _live_wait(
    monkeypatch: pytest.MonkeyPatch, allocated_ago: float | None, timeout_s: float = 600.0
) -> tuple[str, float]:
    """Live PreBind's wait (``_wait_live``) for claim c, allocated ``allocated_ago`` seconds before the wait begins
    (None: no allocationTimestamp), whose device's binding condition never comes true: its verdict and how long it
    waited, on a clock the plugin's sleeps move."""
    from packsched.api.dra import Allocation, ClaimSpec, DeviceResult, DraObjects, ResourceClaim
    from packsched.config.versions import KubeVersion

    clock = _Clock()
    monkeypatch.setattr(dynamic_resources, "time", SimpleNamespace(sleep=clock.sleep))  # the plugin's time only
    result = DeviceResult("g", DRIVER, "n0", "gpu-0", binding_conditions=("attached",))
    claim = ResourceClaim("c", "default", ClaimSpec(), allocation=Allocation((result,)))
    claim.allocated_at = None if allocated_ago is None else clock.now - allocated_ago
    dra = DraObjects()
    dra.claims[claim.key] = claim

    class Handle:
        kube_version = KubeVersion(37)

        def clock(self) -> float:
            return clock.now

        def dra(self) -> DraObjects:
            return dra

    plugin = dynamic_resources.new_dynamic_resources({"bindingTimeout": f"{timeout_s:g}s"}, Handle())  # type: ignore[arg-type]
    start = clock.now
    verdict = plugin._wait_live(dra, [claim.key])
    return verdict.message, clock.now - start


def test_live_prebind_ends_when_a_claims_binding_outlives_the_timeout_since_its_allocation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """upstream isPodReadyForBinding, polled every 5 s: a claim allocated 590 s before PreBind (by an earlier
    attempt) times out 10 s into the wait, strictly after allocationTimestamp + bindingTimeout, with the claim's
    name (``device binding timeout: claim=c``), long before the wait's own 600 s (which it used to wait out); a claim
    without a timestamp waits those 600 s and ends with the wait's ``context deadline exceeded``; and with a timeout
    that is not a multiple of the poll the wait ends at its deadline, not at the next poll."""
    message, waited = _live_wait(monkeypatch, allocated_ago=590.0)
    assert message.endswith("device binding timeout: claim=c") and waited == 15.0  # polls at 0, 5, 10 (not yet), 15
    message, waited = _live_wait(monkeypatch, allocated_ago=None)
    assert message.endswith("device binding timeout: context deadline exceeded") and waited == 600.0
    message, waited = _live_wait(monkeypatch, allocated_ago=None, timeout_s=12.0)
    assert message.endswith("device binding timeout: context deadline exceeded") and waited == 12.0
