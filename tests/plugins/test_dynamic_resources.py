"""DynamicResources end to end through the command line: claims from templates and by name, PreEnqueue's wait,
Filter's reasons (a CEL runtime error included), devices freed when a pod completes, PreBind's status, the
default profile per --kube-version, and bad DRA manifests (exit 2, file and field path)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from helpers import simulate_placements
from packsched.api.manifests import load_manifests
from packsched.cli.main import app
from packsched.config.loader import default_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation

runner = CliRunner()

NODES = """
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
    attributes: {model: {string: a}}
"""


def pod(name: str, claim: str = "", template: str = "", annotations: str = "") -> str:
    ref = f"resourceClaimName: {claim}" if claim else f"resourceClaimTemplateName: {template}"
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}{", annotations: " + annotations if annotations else ""}}}
spec:
  containers:
  - name: c
    resources: {{claims: [{{name: g}}]}}
  resourceClaims:
  - name: g
    {ref}
"""


TEMPLATE = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly: {deviceClassName: gpu%s}
"""


def test_a_missing_template_keeps_the_pod_waiting(tmp_path: Path) -> None:
    got = simulate_placements(tmp_path, NODES + pod("p", template="nope"))
    node, reason = got["default/p"]
    assert node is None
    assert 'pod "default/p": ResourceClaim not created yet' in reason


def test_a_missing_claim_keeps_the_pod_waiting(tmp_path: Path) -> None:
    got = simulate_placements(tmp_path, NODES + pod("p", claim="nope"))
    assert 'could not find ResourceClaim "default/nope"' in got["default/p"][1]


def test_the_only_device_goes_to_one_pod(tmp_path: Path) -> None:
    got = simulate_placements(tmp_path, NODES + TEMPLATE % "" + pod("a", template="one") + pod("b", template="one"))
    assert got["default/a"] == ("n1", None)
    node, reason = got["default/b"]
    assert node is None
    assert "0/2 nodes are available: 2 cannot allocate all claims." in reason


def test_a_claim_shared_by_name_is_allocated_once(tmp_path: Path) -> None:
    claim = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared}
spec:
  devices:
    requests:
    - name: g
      exactly: {deviceClassName: gpu}
"""
    got = simulate_placements(tmp_path, NODES + claim + pod("a", claim="shared") + pod("b", claim="shared"))
    assert got["default/a"] == ("n1", None)
    assert got["default/b"] == ("n1", None)


def test_prebind_writes_the_allocation_and_a_completed_pod_frees_the_device(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    text = NODES + TEMPLATE % "" + pod("a", template="one", annotations='{"packsched.io/run-duration": "60"}')
    text += pod("b", template="one")
    path.write_text(text)
    cluster = load_manifests([str(path)])
    sim = Simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry())
    sim.run_until(1.0)
    [claim_a] = [c for c in cluster.dra.claims.values() if c.owner_pod == "default/a"]
    assert claim_a.name.startswith("a-g-") and len(claim_a.name) == len("a-g-") + 5
    assert claim_a.allocation is not None
    assert [r.device for r in claim_a.allocation.results] == ["gpu-0"]
    assert claim_a.reserved_for == ["default/a"]
    sim.run_until(120.0)
    assert claim_a.allocation is None  # reserved for no pod: deallocated
    [claim_b] = [c for c in cluster.dra.claims.values() if c.owner_pod == "default/b"]
    assert claim_b.allocation is not None and claim_b.reserved_for == ["default/b"]


def test_a_cel_runtime_error_ends_the_cycle_with_an_error(tmp_path: Path) -> None:
    # upstream: the allocator's error is an Error status, the pod's message is the framework's wrapping of it
    # (no "0/2 nodes are available", no PostFilter); the wording per release as recorded by conformance/
    # (recorded once from a scenario of an early gen_dra that put a selector on a GPU attribute on a NIC request)
    template = TEMPLATE % (", selectors: [{cel: {expression: 'device.attributes[\"gpu.example.com\"].nope == 1'}}]")
    text = NODES + template + pod("p", template="one")
    node, reason = simulate_placements(tmp_path, text, "--kube-version", "1.37")["default/p"]
    assert node is None
    assert reason.startswith('running "DynamicResources" filter plugin: claim default/p-g-')
    assert reason.endswith(
        ": selector #0 on device gpu.example.com/n1/gpu-0: CEL runtime error: no such key: nope. consider using CEL "
        "optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields"
    )
    node, reason = simulate_placements(tmp_path, text, "--kube-version", "1.35")["default/p"]
    assert reason.startswith('running "DynamicResources" filter plugin: claim default/p-g-')
    assert reason.endswith(": selector #0: CEL runtime error: no such key: nope")


def test_explain_shows_the_error_on_every_node(tmp_path: Path) -> None:
    template = TEMPLATE % (", selectors: [{cel: {expression: 'device.attributes[\"gpu.example.com\"].nope == 1'}}]")
    path = tmp_path / "cluster.yaml"
    path.write_text(NODES + template + pod("p", template="one"))
    run = runner.invoke(app, ["explain", str(path), "--pod", "default/p", "--kube-version", "1.35", "-o", "json"])
    assert run.exit_code == 0, run.output
    data = json.loads(run.stdout)
    assert data["selected"] is None
    assert data["reason"].startswith('running "DynamicResources" filter plugin: ')
    assert {n["code"] for n in data["nodes"]} == {"Error"}


def test_a_missing_class_is_prefilters_reason(tmp_path: Path) -> None:
    got = simulate_placements(tmp_path, NODES + TEMPLATE % "-x" + pod("p", template="one"))
    assert "0/2 nodes are available: request g: device class gpu-x does not exist." in got["default/p"][1]


def test_before_1_34_the_default_profile_has_no_dynamic_resources(tmp_path: Path) -> None:
    text = NODES + TEMPLATE % "" + pod("a", template="one") + pod("b", template="one")
    got = simulate_placements(tmp_path, text, "--kube-version", "1.33")
    assert got["default/a"][0] is not None and got["default/b"][0] is not None  # claims ignored


def test_a_selector_that_does_not_compile_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(NODES.replace('device.driver == "gpu.example.com"', "noSuchVar"))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "spec.selectors[0].cel.expression" in result.output
    assert "undeclared reference to 'noSuchVar'" in result.output
    assert "Traceback" not in result.output


def test_bad_dra_fields_are_reported_at_their_paths(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    bad = TEMPLATE.replace("deviceClassName: gpu%s", "deviceClassName: gpu, count: 0, allocationMode: Some")
    bad += pod("p", template="one").replace("claims: [{name: g}]", "claims: [{name: h}]")
    path.write_text(bad)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    out = " ".join(result.output.split())
    assert "spec.spec.devices.requests[0].exactly.allocationMode" in out
    assert 'spec.containers[0].resources.claims[0].name: Unsupported value: "h"' in out


def test_each_replica_of_a_deployment_gets_its_own_claim(tmp_path: Path) -> None:
    deployment = """
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        resources: {claims: [{name: g}]}
      resourceClaims:
      - name: g
        resourceClaimTemplateName: one
"""
    got = simulate_placements(tmp_path, NODES + TEMPLATE % "" + deployment)
    nodes = sorted(str(node) for node, _reason in got.values())
    assert nodes == ["None", "n1"]  # one GPU: the second replica's own claim cannot be allocated


def claim_yaml(name: str, extra: str = "", meta: str = "") -> str:
    return f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}{meta}}}
spec:
  devices:
    requests:
    - name: g
      exactly: {{deviceClassName: gpu}}
{extra}"""


def test_a_claim_being_deleted_keeps_the_pod_waiting(tmp_path: Path) -> None:
    text = NODES + claim_yaml("gone", meta=', deletionTimestamp: "2024-01-01T00:00:00Z"') + pod("p", claim="gone")
    node, reason = simulate_placements(tmp_path, text)["default/p"]
    assert node is None
    assert 'resourceclaim "gone" is being deleted' in reason


def test_postfilter_deallocates_a_claim_allocated_for_an_unreachable_node(tmp_path: Path) -> None:
    """Allocated to a device of a node that is gone, reserved for no pod: PostFilter deallocates it, and the claim's
    status write requeues the pod (upstream's claim-change hint), which after its backoff gets n1's device."""
    status = """status:
  allocation:
    devices:
      results: [{request: g, driver: gpu.example.com, pool: n9, device: gpu-0}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n9]}]}]
"""
    text = NODES + claim_yaml("stale", status) + pod("p", claim="stale")
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    result = runner.invoke(app, ["simulate", str(path), "-o", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (placement,) = data["placements"]
    assert placement["node"] == "n1"
    failed = [e for e in data["events"] if e["pod"] == "default/p" and e["kind"] == "unschedulable"]
    assert len(failed) == 1
    assert (
        "2 resourceclaim not available on the node. deallocation of ResourceClaim completed, preemption:"
        in (failed[0]["reason"])
    )


def test_a_claim_reserved_for_another_pod_on_an_unreachable_node_is_kept(tmp_path: Path) -> None:
    status = """status:
  allocation:
    devices:
      results: [{request: g, driver: gpu.example.com, pool: n9, device: gpu-0}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n9]}]}]
  reservedFor: [{resource: pods, name: other, uid: x}]
"""
    text = NODES + claim_yaml("held", status) + pod("p", claim="held")
    node, reason = simulate_placements(tmp_path, text)["default/p"]
    assert node is None
    assert "resourceclaim not available on the node" in reason


def test_score_prefers_the_node_where_the_first_subrequest_fits(tmp_path: Path) -> None:
    # n1 (listed first) has only a device of the second choice; n2 has one of the first choice
    big = """
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: big}
spec:
  selectors:
  - cel: {expression: 'device.driver == "big.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-big}
spec:
  driver: big.example.com
  nodeName: n2
  pool: {name: n2, generation: 1, resourceSliceCount: 1}
  devices:
  - name: big-0
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: pick}
spec:
  spec:
    devices:
      requests:
      - name: g
        firstAvailable:
        - {name: big, deviceClassName: big}
        - {name: small, deviceClassName: gpu}
"""
    got = simulate_placements(tmp_path, NODES + big + pod("a", template="pick") + pod("b", template="pick"))
    assert got["default/a"] == ("n2", None)  # the first choice
    assert got["default/b"] == ("n1", None)  # the first choice is taken: the second


def two_claim_pod(name: str) -> str:
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers: [{{name: c}}]
  resourceClaims:
  - {{name: g, resourceClaimTemplateName: one}}
  - {{name: s, resourceClaimName: held}}
"""


HELD_ON_N1 = """status:
  allocation:
    devices:
      results: [{request: g, driver: gpu.example.com, pool: n1, device: gpu-0}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]
  reservedFor: [{resource: pods, name: other, uid: x}]
"""


def test_cannot_allocate_comes_before_a_claim_allocated_elsewhere(tmp_path: Path) -> None:
    # kube-scheduler 1.35/1.37 Filter: the claims to allocate are tried first; "resourceclaim not available on the
    # node" is the verdict only where they could be allocated. The only GPU is held (on n1) by claim "held", so
    # the template's claim can be allocated nowhere: both nodes say "cannot allocate all claims", n2 included
    # although "held" is not available there (recorded by conformance/: tests/data/conformance/*/dra-dra0102 #8).
    text = NODES + TEMPLATE % "" + claim_yaml("held", HELD_ON_N1) + two_claim_pod("p")
    node, reason = simulate_placements(tmp_path, text, "--kube-version", "1.35")["default/p"]
    assert node is None
    assert reason.startswith("0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, ")
    # 1.37: PostFilter deallocates nothing and says nothing (recorded: tests/data/conformance/1.37/dra-dra0102 #9)
    node, reason = simulate_placements(tmp_path, text, "--kube-version", "1.37")["default/p"]
    assert reason.startswith("0/2 nodes are available: 2 cannot allocate all claims. preemption: ")


def test_a_claim_allocated_elsewhere_is_the_verdict_where_the_rest_fits(tmp_path: Path) -> None:
    # a second GPU on n2: the template's claim fits there, and "held" (on n1) is then n2's verdict
    slice_n2 = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-gpus}
spec:
  driver: gpu.example.com
  nodeName: n2
  pool: {name: n2, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
"""
    text = NODES + slice_n2 + TEMPLATE % "" + claim_yaml("held", HELD_ON_N1) + two_claim_pod("p")
    node, reason = simulate_placements(tmp_path, text)["default/p"]
    assert node is None
    assert "1 cannot allocate all claims, 1 resourceclaim not available on the node." in reason


def test_a_claim_owned_by_its_pod_is_the_pods_claim(tmp_path: Path) -> None:
    # exported from a cluster: the resourceclaim controller's claim (owned by the pod) and the pod's
    # status.resourceClaimStatuses naming it
    made = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: p-g-x7k2q
  annotations: {resource.kubernetes.io/pod-claim-name: g}
  ownerReferences: [{apiVersion: v1, kind: Pod, name: p, uid: u1, controller: true}]
spec:
  devices:
    requests:
    - {name: g, exactly: {deviceClassName: gpu}}
"""
    owned = pod("p", template="one") + "status: {resourceClaimStatuses: [{name: g, resourceClaimName: p-g-x7k2q}]}\n"
    assert simulate_placements(tmp_path, NODES + TEMPLATE % "" + made + owned)["default/p"] == ("n1", None)
    stolen = owned.replace("name: p}", "name: q}")  # pod q names p's claim: not made for it
    node, reason = simulate_placements(tmp_path, NODES + TEMPLATE % "" + made + stolen)["default/q"]
    assert node is None
    assert "ResourceClaim default/p-g-x7k2q was not created for Pod default/q (Pod is not owner)" in reason
    node, reason = simulate_placements(tmp_path, NODES + TEMPLATE % "" + made + stolen, "--kube-version", "1.35")[
        "default/q"
    ]
    assert "ResourceClaim default/p-g-x7k2q was not created for pod default/q (pod is not owner)" in reason


def test_explain_shows_the_devices_each_claim_gets_on_each_node(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(NODES + TEMPLATE % "" + pod("p", template="one"))
    run = runner.invoke(app, ["explain", str(path), "--pod", "default/p", "-o", "json"])
    assert run.exit_code == 0, run.output
    nodes = {n["node"]: n for n in json.loads(run.stdout)["nodes"]}
    (claim,) = nodes["n1"]["claims"]
    assert claim["claim"].startswith("default/p-g-")
    assert claim["devices"] == [{"request": "g", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]
    assert "claims" not in nodes["n2"]  # rejected: no devices there
