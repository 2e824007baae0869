"""DRA-backed extended resources (KEP-5004, DRAExtendedResource on from 1.36): GPU nodes advertise no
``nvidia.com/gpu`` but publish ResourceSlices; the DeviceClass ``gpu.example.com`` serves ``nvidia.com/gpu``.
Pods asking ``nvidia.com/gpu: 2`` get two devices each through a claim the scheduler makes; NodeResourcesFit leaves
the resource to DynamicResources there and scores it from the devices; a node advertising the resource through a
device plugin keeps the plain check; at 1.35 (the gate off) the pods are unschedulable as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import simulate_placements
from packsched.api.dra import DeviceClass, DraObjects
from packsched.api.manifests import load_manifests
from packsched.api.objects import Container, Pod
from packsched.backend.dra.extended import claim_requests, class_for, request_mappings
from packsched.cli.main import app
from packsched.config.loader import default_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dra-extended-resources"

CLASS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  extendedResourceName: nvidia.com/gpu
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
"""


def node(name: str, gpus: int = 0) -> str:
    extra = f', nvidia.com/gpu: "{gpus}"' if gpus else ""
    return f"""
---
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "32", memory: 128Gi, pods: "110"{extra}}}}}
"""


def slice_of(name: str, devices: int) -> str:
    listed = "".join(f"\n  - name: gpu-{i}" for i in range(devices))
    return f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {name}-gpus}}
spec:
  driver: gpu.example.com
  nodeName: {name}
  pool: {{name: {name}, generation: 1, resourceSliceCount: 1}}
  devices:{listed}
"""


def pod(name: str, gpus: int = 2, annotations: str = "") -> str:
    meta = f"{{name: {name}" + (f", annotations: {annotations}}}" if annotations else "}")
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {meta}
spec:
  containers:
  - name: main
    resources: {{requests: {{nvidia.com/gpu: "{gpus}"}}, limits: {{nvidia.com/gpu: "{gpus}"}}}}
"""


BINPACK = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources:
        - {name: nvidia.com/gpu, weight: 1}
        requestedToCapacityRatio:
          shape:
          - {utilization: 0, score: 0}
          - {utilization: 100, score: 10}
"""


def test_pods_get_distinct_devices_and_free_them_when_done(tmp_path: Path) -> None:
    text = CLASS + node("gpu-1") + slice_of("gpu-1", 8) + node("gpu-2") + slice_of("gpu-2", 8)
    text += pod("short", annotations='{"packsched.io/run-duration": "60"}') + "".join(pod(f"p{i}") for i in range(8))
    path = tmp_path / "c.yaml"
    path.write_text(text)
    cluster = load_manifests([str(path)])
    sim = Simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry())
    sim.run_until(1.0)
    claims = {c.owner_pod: c for c in cluster.dra.claims.values() if c.extended}
    assert sorted(claims) == [
        "default/p0",
        "default/p1",
        "default/p2",
        "default/p3",
        "default/p4",
        "default/p5",
        "default/p6",
        "default/short",
    ]  # 16 devices, 2 per pod: p7 waits
    taken: list[tuple[str, str, str]] = []
    for owner, claim in claims.items():
        assert claim.name.startswith(owner.split("/")[1] + "-extended-resources-")
        assert claim.allocation is not None and claim.reserved_for == [owner]
        assert [r.request for r in claim.allocation.results] == ["container-0-request-0"] * 2
        taken += [r.device_id for r in claim.allocation.results]
    assert len(taken) == len(set(taken)) == 16  # no device given twice
    short = claims["default/short"]
    sim.run_until(120.0)
    assert short.allocation is None  # the pod completed: its claim is reserved for no pod, deallocated
    p7 = next(c for c in cluster.dra.claims.values() if c.owner_pod == "default/p7")
    assert p7.allocation is not None
    assert {r.device_id for r in p7.allocation.results} <= set(taken) - {
        r.device_id for o, c in claims.items() if o != "default/short" and c.allocation for r in c.allocation.results
    }


def test_bin_packing_prefers_the_node_with_fewer_free_devices(tmp_path: Path) -> None:
    # RequestedToCapacityRatio on nvidia.com/gpu alone, shape 0 -> 0, 100 -> 10 (scores x10: 0 -> 0, 100 -> 100).
    # Neither node advertises nvidia.com/gpu: allocatable = the class's devices (big: 8, small: 4), requested =
    # devices allocated + the pod's 2.
    #   a: big 2/8 = 25 % -> 25, small 2/4 = 50 % -> 50: small.
    #   b: big 2/8 -> 25, small (2 + 2)/4 = 100 % -> 100: small.
    #   c: small has no free device (DynamicResources: cannot allocate all claims): big.
    text = CLASS + node("big") + slice_of("big", 8) + node("small") + slice_of("small", 4)
    text += pod("a") + pod("b") + pod("c")
    config = tmp_path / "config.yaml"
    config.write_text(BINPACK)
    got = simulate_placements(tmp_path, text, "--config", str(config))
    assert got == {"default/a": ("small", None), "default/b": ("small", None), "default/c": ("big", None)}


def test_a_node_advertising_the_resource_keeps_the_device_plugin_check(tmp_path: Path) -> None:
    # dp advertises nvidia.com/gpu: 1 (a device plugin), so its slices are not used for the resource
    text = CLASS + node("dp", gpus=1) + slice_of("dp", 8) + pod("p")
    node_, reason = simulate_placements(tmp_path, text)["default/p"]
    assert node_ is None
    assert reason.startswith("0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")
    # where a node without the resource has devices, the pod goes there
    got = simulate_placements(tmp_path, text + node("dra") + slice_of("dra", 8))
    assert got["default/p"] == ("dra", None)


def test_a_resource_no_class_serves_cannot_fit(tmp_path: Path) -> None:
    text = CLASS + node("gpu-1") + slice_of("gpu-1", 8)
    text += pod("p").replace('nvidia.com/gpu: "2"}, limits', 'nvidia.com/gpu: "2", example.com/foo: "1"}, limits')
    node_, reason = simulate_placements(tmp_path, text)["default/p"]
    assert node_ is None
    assert "Insufficient example.com/foo" in reason


def test_before_1_36_the_gate_is_off_and_the_resource_is_insufficient(tmp_path: Path) -> None:
    text = CLASS + node("gpu-1") + slice_of("gpu-1", 8) + node("gpu-2") + slice_of("gpu-2", 8) + pod("p")
    for version in ("1.35", "1.34"):
        node_, reason = simulate_placements(tmp_path, text, "--kube-version", version)["default/p"]
        assert node_ is None
        assert reason.startswith("0/2 nodes are available: 2 Insufficient nvidia.com/gpu."), reason
    assert simulate_placements(tmp_path, text, "--kube-version", "1.36")["default/p"][0] in ("gpu-1", "gpu-2")


def test_preemption_frees_cpu_on_a_node_giving_devices(tmp_path: Path) -> None:
    # the DRA node is short of cpu only: preemption evicts the low-priority pod (the dry run runs the real filters,
    # DynamicResources reading placed pods), and the GPU pod gets its devices
    priority = "\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    filler = "\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: filler}\nspec:\n  containers:\n  - name: c\n"
    filler += '    resources: {requests: {cpu: "30"}}\n'
    gpu_pod = pod("p").replace("spec:\n", "spec:\n  priorityClassName: high\n")
    gpu_pod = gpu_pod.replace('{requests: {nvidia.com/gpu: "2"}', '{requests: {cpu: "8", nvidia.com/gpu: "2"}')
    got = simulate_placements(tmp_path, CLASS + node("gpu-1") + slice_of("gpu-1", 8) + priority + filler + gpu_pod)
    assert got["default/p"] == ("gpu-1", None)
    assert got["default/filler"][0] is None


def test_the_implicit_name_and_clashing_classes() -> None:
    dra = DraObjects(
        classes={
            "b": DeviceClass("b", extended_resource_name="example.com/x"),
            "a": DeviceClass("a", extended_resource_name="example.com/x"),
        }
    )
    assert class_for(dra, "deviceclass.resource.kubernetes.io/b") == dra.classes["b"]
    assert class_for(dra, "example.com/x") == dra.classes["a"]  # no creation times: the lowest name wins
    assert class_for(dra, "example.com/y") is None
    assert class_for(dra, "deviceclass.resource.kubernetes.io/nope") is None


def test_extended_resource_example() -> None:
    """examples/dra-extended-resources: bin packing of ``nvidia.com/gpu`` pods over DRA-published GPUs (dra-1: 8,
    dra-2: 4) and a device-plugin node (legacy-1: 2). RequestedToCapacityRatio, nvidia.com/gpu weight 5, cpu weight
    1, every pod 8 of 64 cpus (12 %, score 12):
      train-a (2): legacy-1 (5*100 + 12)/6 = 85, dra-2 (5*50 + 12)/6 = 44, dra-1 (5*25 + 12)/6 = 23: legacy-1.
      train-b (2): legacy-1 is full (Insufficient nvidia.com/gpu); dra-2 44 > dra-1 23: dra-2.
      train-c (4), train-d (4): dra-2 has 2 free (cannot allocate all claims): dra-1 twice.
      train-e (2): dra-1 is full: dra-2. train-f (2): no GPU left.
    At 1.35 (the gate off) only legacy-1 can take a GPU pod."""
    args = [str(EXAMPLE / "extended-resource.yaml"), "--config", str(EXAMPLE / "config-binpack.yaml"), "-o", "json"]
    expected: dict[str, str | None] = {
        "default/train-a": "legacy-1",
        "default/train-b": "dra-2",
        "default/train-c": "dra-1",
        "default/train-d": "dra-1",
        "default/train-e": "dra-2",
        "default/train-f": None,
    }
    for version, want in (
        ("1.37", expected),
        ("1.35", {k: v if v == "legacy-1" else None for k, v in expected.items()}),
    ):
        result = runner.invoke(app, ["simulate", *args, "--kube-version", version])
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert {p["pod"]: p["node"] for p in data["placements"]} == want, version
        if version == "1.37":
            # the utilisation counts a DRA node's GPUs as its nvidia.com/gpu allocatable (8 and 4 devices)
            gpu = {
                n["node"]: (n["requested"]["nvidia.com/gpu"], n["allocatable"]["nvidia.com/gpu"]) for n in data["nodes"]
            }
            assert gpu == {"dra-1": (8, 8), "dra-2": (4, 4), "legacy-1": (2, 2)}


def test_the_claim_has_one_request_per_container() -> None:
    cls = DeviceClass("gpu.example.com", extended_resource_name="nvidia.com/gpu")
    gpu = "nvidia.com/gpu"

    def requests(init_gpus: int) -> list[tuple[str, int]]:
        p = Pod(
            "p",
            init_containers=[
                Container("setup", requests={gpu: init_gpus}),
                Container("sidecar", requests={gpu: 1}, restart_policy="Always"),
            ],
            containers=[Container("main", requests={"cpu": 1000, gpu: 2})],
        )
        out = claim_requests(p, {gpu: cls})
        assert all(r.exactly is not None and r.exactly.device_class == "gpu.example.com" for r in out)
        return [(r.name, r.exactly.count if r.exactly else 0) for r in out]

    # the sidecar (index 1) and the app container (index 2, gpu sorts after cpu) get their own requests; the plain
    # init container first reuses the devices of the containers that start after it (1 + 2)
    assert requests(3) == [("container-1-request-0", 1), ("container-2-request-1", 2)]
    assert requests(4) == [("container-0-request-0", 1), ("container-1-request-0", 1), ("container-2-request-1", 2)]


# -- which request serves which container (status.extendedResourceClaimStatus.requestMappings, live mode) --------

GPU, GPU1, GPU_INIT = "example.com/gpu", "example.com/gpu1", "example.com/gpuinit"
MAPPING_CLASSES = {GPU: DeviceClass("class"), GPU1: DeviceClass("class1"), GPU_INIT: DeviceClass("classInit")}


def _c(name: str, resource: str, amount: int, sidecar: bool = False) -> Container:
    return Container(name, requests={resource: amount}, restart_policy="Always" if sidecar else "")


@pytest.mark.parametrize(
    ("containers", "init", "want"),
    [
        # upstream Test_createRequestsAndMappings_mappings: "two containers, two requests"
        ([_c("con0", GPU, 1), _c("con1", GPU1, 2)], [], [("con0", GPU, 0), ("con1", GPU1, 1)]),
        # "one init container, one regular container, one request"
        ([_c("con0", GPU, 1)], [_c("init-con0", GPU_INIT, 2)], [("init-con0", GPU_INIT, 0), ("con0", GPU, 1)]),
        # "three containers (two are init container), two requests": the smaller init request gives way to the
        # larger (plain init containers run one at a time)
        (
            [_c("con0", GPU, 1)],
            [_c("init-con0", GPU_INIT, 1), _c("init-con1", GPU_INIT, 2)],
            [("init-con0", GPU_INIT, 1), ("init-con1", GPU_INIT, 1), ("con0", GPU, 2)],
        ),
        # "four containers (two are init container, one sidecar), three requests": the first init container reuses
        # the sidecar's device
        (
            [_c("con0", GPU, 1)],
            [_c("init-con0", GPU_INIT, 1), _c("sidecar-con1", GPU_INIT, 1, sidecar=True), _c("init-con2", GPU_INIT, 2)],
            [("init-con0", GPU_INIT, 1), ("sidecar-con1", GPU_INIT, 1), ("init-con2", GPU_INIT, 2), ("con0", GPU, 3)],
        ),
    ],
)
def test_request_mappings_as_upstream(
    containers: list[Container], init: list[Container], want: list[tuple[str, str, int]]
) -> None:
    pod = Pod("p", containers=containers, init_containers=init)
    needed = {name: cls for name, cls in MAPPING_CLASSES.items() if any(name in c.requests for c in containers + init)}
    got = request_mappings(pod, needed)
    expected = [(c, r, f"container-{i}-request-0") for c, r, i in want]
    assert sorted(got, key=lambda m: (m[2], m[0])) == sorted(expected, key=lambda m: (m[2], m[0]))
    # every request named is one of the claim's
    names = {r.name for r in claim_requests(pod, needed)}
    assert {q for _c, _r, q in got} <= names


LEFTOVER = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: p-extended-resources-x7k2q
  annotations: {resource.kubernetes.io/extended-resource-claim: "true"}
  ownerReferences: [{apiVersion: v1, kind: Pod, name: p, uid: uid-p, controller: true}]
spec:
  devices:
    requests:
    - name: container-0-request-0
      exactly: {deviceClassName: gpu.example.com, count: 2}
status:
  allocation:
    devices:
      results:
      - {request: container-0-request-0, driver: gpu.example.com, pool: gpu-1, device: gpu-0}
      - {request: container-0-request-0, driver: gpu.example.com, pool: gpu-1, device: gpu-1}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [gpu-1]}]}]
"""


def test_a_claim_an_earlier_cycle_left_is_deleted_and_made_anew(tmp_path: Path) -> None:
    """A snapshot holds the claim an earlier scheduler made for p's extended resources (its binding failed, and so
    did its deletion): upstream's Filter refuses every node (`cannot schedule extended resource claim`), PostFilter
    deletes the claim, and the deletion's event requeues p, whose next attempt makes and allocates a new claim."""
    text = CLASS + node("gpu-1") + slice_of("gpu-1", 2) + LEFTOVER
    text += pod("p").replace("metadata: {name: p}", "metadata: {name: p, uid: uid-p}")
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    result = runner.invoke(app, ["simulate", str(path), "-o", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (placement,) = data["placements"]
    assert placement["node"] == "gpu-1"
    failed = [e for e in data["events"] if e["pod"] == "default/p" and e["kind"] == "unschedulable"]
    assert len(failed) == 1
    assert (
        "0/1 nodes are available: 1 cannot schedule extended resource claim. deletion of ResourceClaim completed, "
        "preemption:" in failed[0]["reason"]
    )
    cluster = load_manifests([str(path)])
    sim = Simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry())
    sim.run_until(60.0)
    assert "default/p-extended-resources-x7k2q" not in cluster.dra.claims
    (made,) = [c for c in cluster.dra.claims.values() if c.extended]
    assert made.owner_pod == "default/p" and made.reserved_for == ["default/p"]
    assert made.allocation is not None and {r.device for r in made.allocation.results} == {"gpu-0", "gpu-1"}


def test_a_claim_left_for_another_pod_uid_is_not_the_pods(tmp_path: Path) -> None:
    # the claim's owner has p's name but another uid (an earlier pod of that name): not p's, and it holds both
    # devices, so p cannot have them (upstream findExtendedResourceClaim compares the uid)
    text = CLASS + node("gpu-1") + slice_of("gpu-1", 2) + LEFTOVER.replace("uid: uid-p", "uid: uid-old")
    text += pod("p").replace("metadata: {name: p}", "metadata: {name: p, uid: uid-p}")
    node_, reason = simulate_placements(tmp_path, text)["default/p"]
    assert node_ is None
    assert "1 cannot allocate all claims" in reason, reason


def test_postfilter_counts_the_extended_resource_claim_as_a_claim(tmp_path: Path) -> None:
    # upstream PreFilter adds the claim for the pod's extended resources to its claims, so PostFilter does not take
    # the no-claims path: 1.36 says "still not schedulable" (1.37 says nothing), not "no new claims to deallocate"
    text = CLASS + node("gpu-1") + slice_of("gpu-1", 1) + pod("p")
    _node, reason = simulate_placements(tmp_path, text, "--kube-version", "1.36")["default/p"]
    assert reason is not None and "still not schedulable, preemption:" in reason, reason
    assert "no new claims to deallocate" not in reason
