"""kube-scheduler 1.37's pod-group cycle in simulations (podgroup_placement.py), the cases of 1.37.2's
``schedule_one_podgroup_test.go`` that a whole scheduler shows (TestSubmitPodGroupAlgorithmResult,
TestPodGroupCycle_PodGroupPostFilter, TestPodGroupCycle_NominatedNodes, TestScheduleOnePodGroup_*) in our own
scenarios: two nodes of 8 GPUs, a gang of 3 x 4 GPUs (minCount 3) and a pod holding one node's 8 GPUs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from packsched.cli.main import app

EX = Path(__file__).resolve().parents[2] / "examples" / "gangs"
CONFIG = str(EX / "config-upstream-1.37.yaml")
runner = CliRunner()

NODES = """apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status:
  allocatable: {cpu: "96", memory: 1000Gi, nvidia.com/gpu: "8", pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
status:
  allocatable: {cpu: "96", memory: 1000Gi, nvidia.com/gpu: "8", pods: "110"}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


def blocker(bound: bool) -> str:
    node = "\n  nodeName: gpu-0" if bound else ""
    return f"""---
apiVersion: v1
kind: Pod
metadata:
  name: blocker
  namespace: default
  annotations: {{packsched.io/run-duration: 10m}}
spec:{node}
  restartPolicy: Never
  containers:
  - name: c
    image: x
    resources:
      requests: {{nvidia.com/gpu: "8"}}
      limits: {{nvidia.com/gpu: "8"}}
"""


def gang(group_spec: str = "", pod_spec: str = "", api: str = "scheduling.k8s.io/v1beta1", min_count: int = 3) -> str:
    return f"""---
apiVersion: {api}
kind: PodGroup
metadata: {{name: train, namespace: default}}
spec:
  schedulingPolicy: {{gang: {{minCount: {min_count}}}}}{group_spec}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: default}}
spec:
  parallelism: 3
  completions: 3
  template:
    metadata:
      annotations: {{packsched.io/run-duration: 1h}}
    spec:
      schedulingGroup: {{podGroupName: train}}
      restartPolicy: Never{pod_spec}
      containers:
      - name: worker
        image: x
        resources:
          requests: {{nvidia.com/gpu: "4"}}
          limits: {{nvidia.com/gpu: "4"}}
"""


def simulate(tmp_path: Path, text: str, *args: str) -> dict[str, Any]:
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    result = runner.invoke(app, ["simulate", str(path), "-o", "json", *(args or ("--config", CONFIG))])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def events(sim: dict[str, Any], until: float = 0.0) -> list[tuple[float, str, str, str]]:
    return [
        (e["time"], e["kind"], e["pod"], e.get("reason") or e.get("node") or "")
        for e in sim["events"]
        if e["time"] <= until
    ]


NO_FIT = "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
CANNOT = "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"


def test_a_gang_that_does_not_fit_goes_back_whole_with_upstreams_words(tmp_path: Path) -> None:
    """Two workers fit, the third does not: GangScheduling's PlacementFeasible ends the cycle, nothing is held at
    Permit; the placed workers carry the group's status (PlacementFeasible's words, then pod-group preemption's
    verdict: the blocker has the gang's priority, so no victims), the third its own FitError, with no preemption
    message (no PostFilter per pod). They come back after their backoff, and the gang starts when the blocker
    ends."""
    sim = simulate(tmp_path, NODES + blocker(False) + gang())
    # a placed pod's own status is made from the group's message, with upstream's error first
    group = (
        f"pod group is unschedulable, {CANNOT}, pod group preemption: No preemption victims found for incoming "
        "preemptor"
    )
    assert events(sim) == [
        (0.0, "scheduled", "default/blocker", "gpu-1"),
        (0.0, "unschedulable", "default/train-0", group),
        (0.0, "unschedulable", "default/train-1", group),
        (0.0, "unschedulable", "default/train-2", NO_FIT),
    ]
    # the group's entity backs off 1 s doubling, capped at 10 s times the square root of its pods (17.320508075 s);
    # its expiry is truncated to a whole second and the backoff queue is flushed each whole second, so the gang is
    # tried at the flush after it: 0 + 1 -> 2, 2 + 2 -> 5, 5 + 4 -> 10, 10 + 8 -> 19, 19 + 16 -> 36,
    # 36 + 17.32 -> 54
    times = [e[0] for e in events(sim, 100.0) if e[2] == "default/train-0"]
    assert times[:8] == [0.0, 2.0, 5.0, 10.0, 19.0, 36.0, 54.0, 72.0]
    assert not [e for e in sim["events"] if e["kind"] == "waiting" and e["time"] < 600]
    bound = {e["pod"]: e["time"] for e in sim["events"] if e["kind"] == "scheduled" and e["pod"] != "default/blocker"}
    assert min(bound.values()) >= 600.0 and len(bound) == 3


def test_pod_group_preemption_evicts_the_lower_priority_pod_and_nominates_the_gang(tmp_path: Path) -> None:
    """The gang's PodGroup and pods have priority 1000, the bound blocker 0: DefaultPreemption's PodGroupPostFilter
    removes every lower-priority pod, finds the gang fits, keeps the victims it needs (the blocker) and nominates
    each worker where the gang fits; the workers wait for the next cycle, after their backoff (1 s, then the next
    whole-second flush: 2 s)."""
    text = NODES + blocker(True) + gang("\n  priorityClassName: high", "\n      priorityClassName: high")
    sim = simulate(tmp_path, text)
    # waiting for preemption, the placed pods carry the group's status itself (no error first)
    group = f"{CANNOT}, pod group preemption: found a placement for podgroup, preempting 1 victims"
    first = events(sim)
    assert first[0][:3] == (0.0, "preempted", "default/blocker")
    assert [e for e in first if e[1] == "unschedulable"] == [
        (0.0, "unschedulable", "default/train-0", group),
        (0.0, "unschedulable", "default/train-1", group),
        (0.0, "unschedulable", "default/train-2", NO_FIT),
    ]
    nominated = {e[2]: e[3] for e in first if e[1] == "nominated"}
    assert set(nominated) == {"default/train-0", "default/train-1", "default/train-2"}
    placed = {e["pod"]: e["node"] for e in sim["events"] if e["kind"] == "scheduled"}
    assert placed == nominated and {e["time"] for e in sim["events"] if e["kind"] == "scheduled"} == {2.0}
    assert sim["summary"] == {"pods": 4, "preempted": 1, "succeeded": 3}


def test_a_gang_that_never_preempts_says_so_after_dynamic_resources(tmp_path: Path) -> None:
    """preemptionPolicy Never on the gang's pods: pod-group preemption refuses (Unschedulable), so DynamicResources'
    verdict comes first in the message."""
    text = (
        NODES
        + blocker(True)
        + gang("\n  priorityClassName: high", "\n      priorityClassName: high\n      preemptionPolicy: Never")
    )
    sim = simulate(tmp_path, text)
    assert events(sim)[0] == (
        0.0,
        "unschedulable",
        "default/train-0",
        f"pod group is unschedulable, {CANNOT}, deallocation and deletion of ResourceClaims completed, pod group "
        "preemption: not eligible due to preemptionPolicy=Never.",
    )
    assert "preempted" not in sim["summary"]


def test_without_default_preemption_only_dynamic_resources_answers(tmp_path: Path) -> None:
    config = tmp_path / "no-preemption.yaml"
    config.write_text(
        Path(CONFIG)
        .read_text()
        .replace(
            "kind: KubeSchedulerConfiguration\n",
            "kind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins:\n"
            "    multiPoint:\n      disabled: [{name: DefaultPreemption}]\n",
            1,
        )
    )
    sim = simulate(tmp_path, NODES + blocker(False) + gang(), "--config", str(config))
    assert events(sim)[1][3] == (
        f"pod group is unschedulable, {CANNOT}, deallocation and deletion of ResourceClaims completed"
    )


def test_pods_whose_priority_differs_from_their_pod_groups_fail_with_an_error(tmp_path: Path) -> None:
    """validatePodGroup: the pods have priority 1000 (their class), their PodGroup none (0): every attempt fails
    with that error, nothing is placed."""
    sim = simulate(tmp_path, NODES + gang("", "\n      priorityClassName: high"))
    why = "all pods in a single pod group should have the same priority as the pod group's priority, got 1000 and 0"
    assert events(sim) == [(0.0, "unschedulable", f"default/train-{i}", why) for i in range(3)]
    assert not [e for e in sim["events"] if e["kind"] == "scheduled"]


def test_a_1_36_pod_group_is_not_served_by_1_37(tmp_path: Path) -> None:
    """scheduling.k8s.io/v1alpha2 is not served by kube-scheduler 1.37: the pods wait for their PodGroup."""
    sim = simulate(tmp_path, NODES + gang(api="scheduling.k8s.io/v1alpha2"))
    placed = {p["pod"]: p for p in sim["placements"]}
    assert placed["default/train-0"]["reason"] == (
        'waiting for pods\'s pod group "train" to appear in scheduling queue'
    )
    assert not [e for e in sim["events"] if e["kind"] == "scheduled"]


def test_a_gang_already_placed_in_part_needs_only_the_rest(tmp_path: Path) -> None:
    """minCount 2 with one member bound already (nodeName): a cycle with the other two fits once one of them is
    placed (PlacementFeasible counts the bound one); the blocker leaves room for one."""
    text = NODES + blocker(True) + gang(min_count=2)
    text = text.replace("parallelism: 3\n  completions: 3", "parallelism: 2\n  completions: 2")
    text += """---
apiVersion: v1
kind: Pod
metadata: {name: train-bound, namespace: default, annotations: {packsched.io/run-duration: 1h}}
spec:
  nodeName: gpu-1
  schedulingGroup: {podGroupName: train}
  restartPolicy: Never
  containers:
  - name: worker
    image: x
    resources:
      requests: {nvidia.com/gpu: "4"}
      limits: {nvidia.com/gpu: "4"}
"""
    sim = simulate(tmp_path, text)
    # the pod left over by a group that fitted is tried again at once (1.37's queue takes such a group back without
    # backoff); its group is then unschedulable (nothing placed), and it goes through backoff
    assert events(sim) == [
        (0.0, "scheduled", "default/train-0", "gpu-1"),
        (0.0, "unschedulable", "default/train-1", NO_FIT),
        (0.0, "unschedulable", "default/train-1", NO_FIT),
    ]
    retries = [e[0] for e in events(sim, 10.0) if e[2] == "default/train-1"]
    assert retries[:2] == [0.0, 0.0] and retries[2] > 0.0


def test_a_v1beta1_pod_group_is_checked_as_the_api_server_checks_it(tmp_path: Path) -> None:
    text = NODES + gang(
        "\n  priorityClassName: nope\n  priority: 2000000000\n  parentCompositePodGroupName: root"
        "\n  disruptionMode: {single: {}, all: {}}"
    )
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = runner.invoke(app, ["simulate", str(path), "--config", CONFIG])
    assert result.exit_code == 2
    err = " ".join(result.stderr.split())
    assert f"{path}: document 4: spec.parentCompositePodGroupName: Forbidden: a CompositePodGroup hierarchy" in err
    assert "spec.priority: Invalid value: 2000000000: must be less than or equal to 1000000000" in err
    assert "spec.disruptionMode: Invalid value" in err
    assert "Traceback" not in result.output


def test_a_lowered_min_count_lets_a_gang_held_at_pre_enqueue_in(tmp_path: Path) -> None:
    """The scenario step setMinCount changes a 1.37 PodGroup's minCount: 3 workers of a gang of minCount 4 wait at
    PreEnqueue; at 30s minCount becomes 3, GangScheduling's hint for the PodGroup update (minCount went down) lets
    them in, and they are bound together then."""
    from packsched.plugins.registry import in_tree_registry
    from packsched.sim.scenario import load_scenario, run_scenario

    (tmp_path / "base.yaml").write_text(NODES + gang(min_count=4))
    (tmp_path / "config.yaml").write_text(Path(CONFIG).read_text())
    (tmp_path / "s.yaml").write_text(
        """apiVersion: packsched.io/v1alpha1
kind: Scenario
metadata: {name: lower}
spec:
  base: base.yaml
  config: config.yaml
  steps:
  - {at: 30s, setMinCount: {namespace: default, name: train, minCount: 3}}
  - {at: 31s, cordon: {nodes: [gpu-0]}}
"""
    )
    base, lowered, later = run_scenario(load_scenario(str(tmp_path / "s.yaml")), in_tree_registry())
    assert (base.running, base.pending) == (0, 3)
    assert set(base.pending_reasons) == {"waiting for minCount pods from a gang to appear in scheduling queue"}
    assert (lowered.running, lowered.pending, lowered.until) == (3, 0, 31.0)
    assert later.gangs is not None


def test_set_min_count_is_checked(tmp_path: Path) -> None:
    from packsched.api.errors import InputError
    from packsched.plugins.registry import in_tree_registry
    from packsched.sim.scenario import load_scenario, run_scenario

    (tmp_path / "base.yaml").write_text(NODES + gang())
    (tmp_path / "config.yaml").write_text(Path(CONFIG).read_text())
    text = """apiVersion: packsched.io/v1alpha1
kind: Scenario
metadata: {name: lower}
spec:
  base: base.yaml
  config: config.yaml
  steps:
  - {at: 30s, setMinCount: {namespace: default, name: NAME, minCount: COUNT}}
"""
    (tmp_path / "s.yaml").write_text(text.replace("NAME", "train").replace("COUNT", "0"))
    try:
        load_scenario(str(tmp_path / "s.yaml"))
    except InputError as exc:
        assert "spec.steps[0].setMinCount.minCount: Invalid value: 0: must be greater than or equal to 1" in str(exc)
    else:
        raise AssertionError("minCount 0 accepted")
    (tmp_path / "s.yaml").write_text(text.replace("NAME", "nowhere").replace("COUNT", "2"))
    try:
        run_scenario(load_scenario(str(tmp_path / "s.yaml")), in_tree_registry())
    except InputError as exc:
        assert "spec.steps[0].setMinCount.name: Not found: no PodGroup default/nowhere" in str(exc)
    else:
        raise AssertionError("an unknown PodGroup accepted")


def test_without_gang_scheduling_a_group_fits_once_one_pod_is_placed(tmp_path: Path) -> None:
    """GangScheduling disabled: no PlacementFeasible plugin, so the group fits as soon as one pod is placed; the two
    that fit are bound at once and the third keeps its FitError, without preemption (no PostFilter per pod, and no
    PodGroupPostFilter for a group that fits)."""
    config = tmp_path / "no-gang.yaml"
    config.write_text(
        Path(CONFIG)
        .read_text()
        .replace(
            "kind: KubeSchedulerConfiguration\n",
            "kind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins:\n"
            "    multiPoint:\n      disabled: [{name: GangScheduling}]\n",
            1,
        )
    )
    sim = simulate(tmp_path, NODES + blocker(True) + gang(), "--config", str(config))
    assert events(sim) == [
        (0.0, "scheduled", "default/train-0", "gpu-1"),
        (0.0, "scheduled", "default/train-1", "gpu-1"),
        (0.0, "unschedulable", "default/train-2", NO_FIT),
        (0.0, "unschedulable", "default/train-2", NO_FIT),  # left over by a group that fitted: tried again at once
    ]


def test_the_pod_group_post_filter_point_cannot_be_configured(tmp_path: Path) -> None:
    config = tmp_path / "pgpf.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    podGroupPostFilter:\n"
        "      disabled: [{name: DefaultPreemption}]\n"
    )
    path = tmp_path / "c.yaml"
    path.write_text(NODES + gang())
    flags = ["--kube-version", "1.37", "--feature-gates", "GenericWorkload=true"]
    result = runner.invoke(app, ["simulate", str(path), "--config", str(config), *flags])
    assert result.exit_code == 2
    assert (
        "profiles[0].plugins.podGroupPostFilter: disabling plugins at podGroupPostFilter is not supported by packsched"
        in " ".join(result.stderr.split())
    )


def test_a_group_with_a_gated_pod_is_held_back_whole(tmp_path: Path) -> None:
    """A basic group of two pods, one of them with a scheduling gate: 1.37's queue holds the group's entity back
    while any of its pods is gated, so neither pod is tried."""
    text = NODES + gang().replace("{gang: {minCount: 3}}", "{basic: {}}")
    text += """---
apiVersion: v1
kind: Pod
metadata: {name: gated, namespace: default}
spec:
  schedulingGates: [{name: example.com/hold}]
  schedulingGroup: {podGroupName: train}
  containers:
  - {name: c, image: x}
"""
    sim = simulate(tmp_path, text)
    assert not [e for e in sim["events"] if e["kind"] == "scheduled"]
    placed = {p["pod"]: p["reason"] for p in sim["placements"]}
    assert placed["default/gated"].startswith("waiting for scheduling gates")


def test_pod_group_preemption_reprieves_the_victims_the_gang_does_not_need(tmp_path: Path) -> None:
    """Two lower-priority pods: the blocker (8 GPUs on gpu-0) and a small one (2 GPUs on gpu-1); a gang of two
    workers (minCount 2, 8 GPUs in all). With both removed the gang is placed (GPUs are not scored: where the
    scores tie); put back one by one, the pod whose node the gang did not fill stays: one victim, not two."""
    small = blocker(True).replace("name: blocker", "name: small").replace("gpu-0", "gpu-1").replace('"8"', '"2"')
    two = gang("\n  priorityClassName: high", "\n      priorityClassName: high", min_count=2)
    two = two.replace("parallelism: 3\n  completions: 3", "parallelism: 2\n  completions: 2")
    sim = simulate(tmp_path, NODES + blocker(True) + small + two)
    preempted = [e[2] for e in events(sim) if e[1] == "preempted"]
    assert len(preempted) == 1
    assert "preempting 1 victims" in next(e for e in events(sim) if e[1] == "unschedulable")[3]
    placed = {e["pod"]: e["node"] for e in sim["events"] if e["kind"] == "scheduled"}
    assert set(placed) == {"default/train-0", "default/train-1"}
    # the pod kept still fits beside the workers placed on its node; the victim would not have
    gpus = {"default/blocker": ("gpu-0", 8), "default/small": ("gpu-1", 2)}
    (kept,) = set(gpus) - set(preempted)
    for pod, fits in ((kept, True), (preempted[0], False)):
        node, own = gpus[pod]
        assert (own + 4 * list(placed.values()).count(node) <= 8) is fits


DRA_GANG = """apiVersion: v1
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
  - name: gpu-1
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: g, namespace: default}
spec:
  schedulingPolicy: {gang: {minCount: 2}}
"""

# allocated to a device of a node that is gone (n9), reserved for no pod
STALE_STATUS = """
status:
  allocation:
    devices:
      results: [{request: g, driver: gpu.example.com, pool: n9, device: gpu-0}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n9]}]}]
"""


def dra_worker(name: str, claim: str, stale: bool) -> str:
    return f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {claim}}}
spec:
  devices:
    requests:
    - name: g
      exactly: {{deviceClassName: gpu}}{STALE_STATUS if stale else ""}
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, annotations: {{packsched.io/run-duration: 1h}}}}
spec:
  schedulingGroup: {{podGroupName: g}}
  containers:
  - name: c
    resources: {{claims: [{{name: g}}]}}
  resourceClaims:
  - name: g
    resourceClaimName: {claim}
"""


def test_dynamic_resources_frees_a_gangs_claim_allocated_on_a_node_that_is_gone(tmp_path: Path) -> None:
    """w0's claim is allocated on a node that is gone: no node is available to w0, the gang cannot reach minCount,
    and DynamicResources' PodGroupPostFilter deallocates the claim (the status write requeues the gang). After the
    backoff (1 s, then the next whole-second flush: 2 s) both claims get n1's devices and the gang is bound."""
    sim = simulate(tmp_path, DRA_GANG + dra_worker("w0", "c0", True) + dra_worker("w1", "c1", False))
    first = events(sim)
    assert first == [
        (0.0, "unschedulable", "default/w0", "0/2 nodes are available: 2 resourceclaim not available on the node."),
        (0.0, "unschedulable", "default/w1", "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"),
    ]
    placed = {(e["time"], e["pod"], e["node"]) for e in sim["events"] if e["kind"] == "scheduled"}
    assert placed == {(2.0, "default/w0", "n1"), (2.0, "default/w1", "n1")}
    assert sim["summary"] == {"pods": 2, "succeeded": 2}


def test_two_pods_sharing_a_claim_to_free_end_the_cycle_with_the_second_writes_conflict(tmp_path: Path) -> None:
    """w0 and w1 share the stale claim (minCount 1, so both are tried): w0's state deallocates it, w1's writes it
    from the copy its PreFilter read, which the API server refuses as a conflict: the group's status is that Error.
    The claim is free all the same, and the next cycle places the group."""
    w1 = dra_worker("w1", "c0", False)
    w1 = w1[w1.index("---", 3) :]  # w1 names w0's claim
    sim = simulate(tmp_path, DRA_GANG.replace("minCount: 2", "minCount: 1") + dra_worker("w0", "c0", True) + w1)
    conflict = (
        'error in "DynamicResources" PodGroupPostFilter plugins: Operation cannot be fulfilled on '
        'resourceclaims.resource.k8s.io "c0": the object has been modified; please apply your changes to the latest '
        "version and try again"
    )
    assert events(sim) == [(0.0, "unschedulable", f"default/w{i}", conflict) for i in range(2)]
    assert sim["summary"] == {"pods": 2, "succeeded": 2}


def test_the_pod_left_over_by_a_gang_that_fitted_is_tried_at_once_then_backs_off_from_the_entitys_count(
    tmp_path: Path,
) -> None:
    """minCount 2 of 3 and room for two: the gang fits, train-2 is left over and tried again at once (the queue
    requeues a group that fitted without backoff, its counts reset); then each rejection counts for the entity,
    from 1: 1 s, 2 s, 4 s, 8 s, then the cap for one pod (10 s), each expiry left at the next whole-second flush
    (per-pod attempts, which the queue counted before, gave 2 s, 6 s, 14 s, 24 s, 34 s)."""
    sim = simulate(tmp_path, NODES + blocker(True) + gang(min_count=2))
    tried = [e[0] for e in events(sim, 40.0) if e[2] == "default/train-2" and e[1] == "unschedulable"]
    assert tried == [0.0, 0.0, 2.0, 5.0, 10.0, 19.0, 30.0]
    assert {e[2] for e in events(sim) if e[1] == "scheduled"} == {"default/train-0", "default/train-1"}
