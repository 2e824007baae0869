"""DRAConsumableCapacity end to end: pods whose claims share one device within its capacity, the capacity already
consumed by allocated claims counted, the feature gate per release, and bad capacity policies reported (exit 2)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from helpers import simulate_placements
from packsched.cli.main import app

GPU = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
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
  - name: gpu-0
    allowMultipleAllocations: true
    capacity:
      milligpu:
        value: "1000"
        requestPolicy: {default: "1000", validRange: {min: "100", step: "100"}}
"""


def share_pod(name: str, milli: int) -> str:
    return f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}-gpu}}
spec:
  devices:
    requests:
    - name: g
      exactly:
        deviceClassName: gpu
        capacity: {{requests: {{milligpu: "{milli}"}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers:
  - name: c
    resources: {{claims: [{{name: g}}]}}
  resourceClaims:
  - name: g
    resourceClaimName: {name}-gpu
"""


def test_claims_share_a_device_within_its_capacity(tmp_path: Path) -> None:
    # 300 + 250 (rounded up to 300 by the 100 step) + 400 = 1000: the fourth claim does not fit
    text = GPU + share_pod("a", 300) + share_pod("b", 250) + share_pod("c", 400) + share_pod("d", 100)
    got = simulate_placements(tmp_path, text)
    assert got["default/a"] == ("n1", None)
    assert got["default/b"] == ("n1", None)
    assert got["default/c"] == ("n1", None)
    node, reason = got["default/d"]
    assert node is None
    assert "cannot allocate all claims" in reason


def test_a_request_without_an_amount_takes_the_default(tmp_path: Path) -> None:
    whole = share_pod("w", 100).replace('capacity: {requests: {milligpu: "100"}}', "count: 1")
    got = simulate_placements(tmp_path, GPU + whole + share_pod("a", 100))
    assert got["default/w"] == ("n1", None)  # the default: all 1000
    assert got["default/a"][0] is None


def test_capacity_consumed_by_allocated_claims_counts(tmp_path: Path) -> None:
    held = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held}
spec:
  devices:
    requests:
    - name: g
      exactly: {deviceClassName: gpu, capacity: {requests: {milligpu: "800"}}}
status:
  allocation:
    devices:
      results:
      - request: g
        driver: gpu.example.com
        pool: n1
        device: gpu-0
        shareID: 0b5b3f0e-5f7c-4d36-9a55-1f6e2f4f8a11
        consumedCapacity: {milligpu: "800"}
  reservedFor: [{resource: pods, name: holder, uid: u1}]
"""
    got = simulate_placements(tmp_path, GPU + held + share_pod("a", 200) + share_pod("b", 100))
    assert got["default/a"] == ("n1", None)
    assert got["default/b"][0] is None


def test_the_gate_follows_the_release(tmp_path: Path) -> None:
    text = GPU + share_pod("a", 300)
    off = simulate_placements(tmp_path, text, "--kube-version", "1.35")
    assert off["default/a"][0] is None
    assert "has capacity requests, but the DRAConsumableCapacity feature is disabled" in str(off["default/a"][1])
    on = simulate_placements(tmp_path, text, "--kube-version", "1.35", "--feature-gates", "DRAConsumableCapacity=true")
    assert on["default/a"] == ("n1", None)
    assert simulate_placements(tmp_path, text, "--kube-version", "1.36")["default/a"] == ("n1", None)


def test_without_the_gate_a_multi_allocatable_device_is_taken_whole(tmp_path: Path) -> None:
    no_capacity = GPU.replace(
        """    capacity:
      milligpu:
        value: "1000"
        requestPolicy: {default: "1000", validRange: {min: "100", step: "100"}}
""",
        "",
    )
    plain = "".join(
        share_pod(n, 100).replace('capacity: {requests: {milligpu: "100"}}', "count: 1") for n in ("a", "b")
    )
    shared = simulate_placements(tmp_path, no_capacity + plain)
    assert shared == {"default/a": ("n1", None), "default/b": ("n1", None)}  # no capacity: shares without limit
    whole = simulate_placements(
        tmp_path, no_capacity + plain, "--kube-version", "1.36", "--feature-gates", "DRAConsumableCapacity=false"
    )
    assert whole["default/a"] == ("n1", None)
    assert whole["default/b"][0] is None


def test_bad_request_policies_exit_2_with_their_paths(tmp_path: Path) -> None:
    bad = GPU.replace(
        'requestPolicy: {default: "1000", validRange: {min: "100", step: "100"}}',
        'requestPolicy: {default: "150", validRange: {min: "100", step: "100", max: "2000"}}',
    )
    path = tmp_path / "bad.yaml"
    path.write_text(bad)
    result = CliRunner().invoke(app, ["simulate", str(path)])
    assert result.exit_code == 2
    out = result.output
    assert str(path) in out or "bad.yaml" in out
    p = "spec.devices[0].capacity.milligpu.requestPolicy.validRange"
    assert f"{p}.step" in out and "value is not a multiple of a given step (100) from (100)" in out
    assert f"{p}.max" in out and "max is larger than capacity value: 1000" in out
    single = GPU.replace("allowMultipleAllocations: true", "allowMultipleAllocations: false")
    path.write_text(single)
    result = CliRunner().invoke(app, ["simulate", str(path)])
    assert result.exit_code == 2
    assert "spec.devices[0].capacity.milligpu.requestPolicy" in result.output
    assert "allowMultipleAllocations must be true" in result.output
    assert "Traceback" not in result.output
