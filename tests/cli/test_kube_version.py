"""--kube-version: every known difference between kube-scheduler releases, seen in a score or a message as a user
runs `packsched explain` / `simulate`, and the option itself (parse, default, errors, the --rtcr-semantics alias,
the config file's PackschedConfiguration document)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from packsched.api.objects import Container, Pod
from packsched.api.pods import pod_non_zero_requests, pod_requests
from packsched.cli.main import app
from packsched.config import catalog
from packsched.config.loader import default_config, load_config, resolve_version
from packsched.config.versions import NEWEST, KubeVersion, parse_kube_version
from packsched.plugins.registry import in_tree_registry

runner = CliRunner()
KNOWN = set(in_tree_registry())
Mi = 1024**2


def node(name: str, cpu: str = "4", memory: str = "8Gi", taints: str = "[]") -> str:
    return f"""---
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
spec: {{taints: {taints}}}
status: {{allocatable: {{cpu: "{cpu}", memory: {memory}, pods: "110"}}}}
"""


def pod(name: str, spec: str, node_name: str = "", priority: int = 0) -> str:
    bound = f"nodeName: {node_name}, " if node_name else ""
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec: {{{bound}priority: {priority}, {spec}}}
"""


def explain(tmp_path: Path, manifests: str, target: str, *args: str) -> dict[str, Any]:
    path = tmp_path / "cluster.yaml"
    path.write_text(manifests)
    res = runner.invoke(app, ["explain", str(path), "--pod", target, "-o", "json", *args])
    assert res.exit_code == 0, res.output
    data: dict[str, Any] = json.loads(res.stdout)
    return data


def by_node(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["node"]: n for n in data["nodes"]}


# -- the version object and its parsing ------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "minor"), [("1.31", 31), ("v1.25", 25), ("1.34.2", 34), (" 1.16 ", 16)])
def test_parse_kube_version(text: str, minor: int) -> None:
    assert parse_kube_version(text) == KubeVersion(minor)


@pytest.mark.parametrize("text", ["1.38", "1.15", "2.1", "latest", "", "1.3x"])
def test_parse_kube_version_rejects_unknown(text: str) -> None:
    with pytest.raises(ValueError, match=r"expected 1\.16 to 1\.37"):
        parse_kube_version(text)


def test_default_is_the_newest() -> None:
    assert NEWEST == 37
    assert default_config(KNOWN).kube_version == KubeVersion(37)
    assert str(KubeVersion()) == "1.37"


def test_rtcr_semantics_is_an_alias() -> None:
    assert resolve_version(None, "v1.16") == KubeVersion(16)
    assert resolve_version(None, "v1.17") == KubeVersion(17)
    assert resolve_version(None, "current") == KubeVersion(37)
    assert resolve_version(KubeVersion(19), "v1.17") == KubeVersion(19)
    with pytest.raises(ValueError, match=r"contradicts --kube-version 1\.31"):
        resolve_version(KubeVersion(31), "v1.16")
    assert KubeVersion(16).rtcr_semantics == "v1.16"
    assert KubeVersion(21).rtcr_semantics == "v1.17"
    assert KubeVersion(22).rtcr_semantics == "current"


# -- the CLI option ----------------------------------------------------------------------------------------------


CLUSTER = node("a") + pod("p", "containers: [{name: c, resources: {requests: {cpu: 100m}}}]")


@pytest.mark.parametrize("command", ["simulate", "explain", "validate"])
def test_unknown_version_exits_2_naming_the_option(tmp_path: Path, command: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER)
    extra = ["--pod", "p"] if command == "explain" else []
    res = runner.invoke(app, [command, str(path), *extra, "--kube-version", "1.99"])
    assert res.exit_code == 2
    assert "--kube-version" in res.output and "unknown kube-scheduler version '1.99'" in res.output


def test_serve_checks_the_version_before_connecting() -> None:
    res = runner.invoke(app, ["serve", "--kube-version", "one"])
    assert res.exit_code == 2
    assert "--kube-version" in res.output


def test_contradicting_alias_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER)
    res = runner.invoke(app, ["simulate", str(path), "--kube-version", "1.31", "--rtcr-semantics", "v1.16"])
    assert res.exit_code == 2
    assert "contradicts --kube-version 1.31" in res.output


def test_old_version_warns_that_only_rtcr_follows_it(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER)
    res = runner.invoke(app, ["simulate", str(path), "--kube-version", "1.20", "-o", "json"])
    assert res.exit_code == 0
    assert "only RequestedToCapacityRatio's arithmetic follows 1.20" in res.stderr


CONFIG_V1 = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def test_config_file_names_the_version(tmp_path: Path) -> None:
    path = tmp_path / "sched.yaml"
    path.write_text(
        CONFIG_V1 + "---\napiVersion: packsched.io/v1alpha1\nkind: PackschedConfiguration\nkubeVersion: '1.29'\n"
    )
    assert load_config(str(path), KNOWN).kube_version == KubeVersion(29)
    # the command line wins over the file
    assert load_config(str(path), KNOWN, kube_version=KubeVersion(31)).kube_version == KubeVersion(31)


def test_config_file_version_errors_have_field_paths(tmp_path: Path) -> None:
    path = tmp_path / "sched.yaml"
    path.write_text(
        CONFIG_V1 + "---\napiVersion: packsched.io/v9\nkind: PackschedConfiguration\nkubeVersion: '2.0'\nx: 1\n"
    )
    res = runner.invoke(app, ["validate", str(path)])
    assert res.exit_code == 2
    for text in (
        "PackschedConfiguration.x: unknown field",
        "PackschedConfiguration.apiVersion: must be packsched.io/v1alpha1",
        "PackschedConfiguration.kubeVersion: unknown kube-scheduler version '2.0'",
    ):
        assert text in res.output


# -- (a) NodeResourcesBalancedAllocation and pods that request nothing ------------------------------------------

BEST_EFFORT = (
    node("a")
    + node("b")
    + pod("big", "containers: [{name: c, resources: {requests: {cpu: '3', memory: 1Gi}}}]", node_name="a")
    + pod("be", "containers: [{name: c}]")
)


def test_balanced_allocation_scores_best_effort_pods_before_1_33(tmp_path: Path) -> None:
    old = by_node(explain(tmp_path, BEST_EFFORT, "be", "--kube-version", "1.32"))
    # node a: cpu 3/4, memory 1/8 -> std 0.3125 -> (1 - 0.3125) x 100 = 68.75 -> 68; node b empty -> 100
    assert old["a"]["scores"]["NodeResourcesBalancedAllocation"] == 68
    assert old["b"]["scores"]["NodeResourcesBalancedAllocation"] == 100
    new = by_node(explain(tmp_path, BEST_EFFORT, "be", "--kube-version", "1.33"))
    assert "NodeResourcesBalancedAllocation" not in new["a"]["scores"]
    assert "NodeResourcesBalancedAllocation" not in new["b"]["scores"]


BALANCE = (
    node("a")
    + node("b")
    + pod("big", "containers: [{name: c, resources: {requests: {cpu: '3', memory: 1Gi}}}]", node_name="a")
    + pod("q", "containers: [{name: c, resources: {requests: {cpu: 500m, memory: 4Gi}}}]")
)


def test_balanced_allocation_scores_the_change_in_balance_from_1_36(tmp_path: Path) -> None:
    # score(fractions) = trunc((1 - |cpu - memory| / 2) x 100)
    # node a, with q: cpu 3.5/4 = 0.875, memory 5/8 = 0.625 -> 87; without: 0.75, 0.125 -> 68
    # node b, with q: cpu 0.5/4 = 0.125, memory 4/8 = 0.5 -> 81; without (empty): 100
    old = by_node(explain(tmp_path, BALANCE, "q", "--kube-version", "1.35"))
    assert {n: v["scores"]["NodeResourcesBalancedAllocation"] for n, v in old.items()} == {"a": 87, "b": 81}
    # 1.36+: 50 + (50 + with - without) / 2 -> a: 50 + 69 // 2 = 84; b: 50 + 31 // 2 = 65
    for version in ("1.36", "1.37"):
        new = by_node(explain(tmp_path, BALANCE, "q", "--kube-version", version))
        assert {n: v["scores"]["NodeResourcesBalancedAllocation"] for n, v in new.items()} == {"a": 84, "b": 65}


# -- VolumeBinding's score (StorageCapacityScoring) ---------------------------------------------------------------


def labelled_node(name: str) -> str:
    return f"""---
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}
"""


def local_volume(name: str, size: str, on: str) -> str:
    return f"""---
apiVersion: v1
kind: PersistentVolume
metadata: {{name: {name}}}
spec:
  capacity: {{storage: {size}}}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  nodeAffinity:
    required:
      nodeSelectorTerms: [{{matchExpressions: [{{key: kubernetes.io/hostname, operator: In, values: [{on}]}}]}}]
"""


VOLUMES = (
    labelled_node("a")
    + labelled_node("b")
    + """---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, storageClassName: local}
"""
    + local_volume("pv-a", "2Gi", "a")
    + local_volume("pv-b", "4Gi", "b")
    + pod("db", "containers: [{name: c}], volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]")
    + pod("web", "containers: [{name: c}]")
)


def test_volume_binding_scores_from_1_37(tmp_path: Path) -> None:
    # default shape (0 %: 10, 100 %: 0, x10) -> 100 - utilisation: node a 1Gi/2Gi = 50 % -> 50; b 1Gi/4Gi -> 75
    new = by_node(explain(tmp_path, VOLUMES, "db", "--kube-version", "1.37"))
    assert {n: v["scores"]["VolumeBinding"] for n, v in new.items()} == {"a": 50, "b": 75}
    # a pod without claims: the plugin still scores, 0 everywhere (as kube-scheduler 1.37.2 records it)
    web = by_node(explain(tmp_path, VOLUMES, "web", "--kube-version", "1.37"))
    assert {n: v["scores"]["VolumeBinding"] for n, v in web.items()} == {"a": 0, "b": 0}
    # 1.36 (StorageCapacityScoring alpha and off): PreScore skips, no score
    for target in ("db", "web"):
        old = by_node(explain(tmp_path, VOLUMES, target, "--kube-version", "1.36"))
        assert all("VolumeBinding" not in v["scores"] for v in old.values())


BOUND_TO_A = (
    labelled_node("a")
    + labelled_node("b")
    + local_volume("pv-a", "2Gi", "a").replace(
        "  storageClassName: local", "  storageClassName: local\n  claimRef: {namespace: default, name: data}"
    )
    + """---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default, annotations: {pv.kubernetes.io/bind-completed: "yes"}}
spec: {accessModes: [ReadWriteOncePod], resources: {requests: {storage: 1Gi}}, volumeName: pv-a}
status: {phase: Bound}
"""
    + pod("holder", "containers: [{name: c}], volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]", "a")
    + pod("db", "containers: [{name: c}], volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]")
    + pod("web", "containers: [{name: c}], volumes: [{name: d, persistentVolumeClaim: {claimName: gone}}]")
)


RWOP_IN_USE = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)


def test_volume_messages_per_release(tmp_path: Path) -> None:
    # node b is outside the bound volume's node affinity (worded anew in 1.33); the claim is ReadWriteOncePod and
    # in use, so node a refuses it (worded anew in 1.27, with preemption)
    old = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
    for version, rwop in (("1.26", old), ("1.27", RWOP_IN_USE), ("1.37", RWOP_IN_USE)):
        got = by_node(explain(tmp_path, BOUND_TO_A, "db", "--kube-version", version))
        assert got["a"]["reasons"] == got["b"]["reasons"] == [rwop], version  # VolumeRestrictions comes first
    manifests = BOUND_TO_A.replace("accessModes: [ReadWriteOncePod]", "accessModes: [ReadWriteOnce]")
    for version, affinity in (
        ("1.32", "node(s) had volume node affinity conflict"),
        ("1.37", "node(s) didn't match PersistentVolume's node affinity"),
    ):
        assert by_node(explain(tmp_path, manifests, "db", "--kube-version", version))["b"]["reasons"] == [affinity]


def test_dynamic_resources_post_filter_without_its_state(tmp_path: Path) -> None:
    # a PreFilter before DynamicResources' rejects the pod (its claim does not exist): DynamicResources' PostFilter
    # finds no cycle state of its own, fails with "not found", and preemption does not run (1.34.4 - 1.37.2)
    for version in ("1.34", "1.37"):
        data = explain(tmp_path, BOUND_TO_A, "web", "--kube-version", version)
        assert data["reason"] == '0/2 nodes are available: persistentvolumeclaim "gone" not found. not found', version


SHAPED = (
    CONFIG_V1
    + """profiles:
- pluginConfig:
  - name: VolumeBinding
    args: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}
"""
)


@pytest.mark.parametrize(
    ("version", "error"),
    [
        ("1.37", None),
        ("1.36", "turn on the feature gate StorageCapacityScoring"),
        ("1.32", "turn on the feature gate VolumeCapacityPriority"),
    ],
)
def test_volume_binding_shape_needs_the_gate(tmp_path: Path, version: str, error: str | None) -> None:
    path = tmp_path / "sched.yaml"
    path.write_text(SHAPED)
    res = runner.invoke(app, ["validate", str(path), "--kube-version", version])
    if error is None:
        assert res.exit_code == 0, res.output
        return
    assert res.exit_code == 2
    assert (
        'profiles[0].pluginConfig[0].args.shape: Invalid value: [{"Utilization":0,"Score":0},'
        '{"Utilization":100,"Score":10}]: unexpected field `shape`, remove it or ' + error
    ) in res.output


# -- DefaultPreemption's word on a successful preemption (kubernetes#140180) ------------------------------------

PREEMPTS = (
    node("a", cpu="2")
    + pod("low", "containers: [{name: c, resources: {requests: {cpu: 1500m}}}]", node_name="a")
    + pod("high", "containers: [{name: c, resources: {requests: {cpu: '1'}}}]", priority=100)
)


def test_successful_preemption_says_where_from_1_37(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(PREEMPTS)

    def first_failure(version: str) -> str:
        res = runner.invoke(app, ["simulate", str(path), "-o", "json", "--kube-version", version])
        assert res.exit_code == 0, res.output
        events = json.loads(res.stdout)["events"]
        return str(next(e["reason"] for e in events if e["kind"] == "unschedulable"))

    assert first_failure("1.36") == "0/1 nodes are available: 1 Insufficient cpu."
    assert first_failure("1.37") == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: found a potential placement for pod on node a, preempting 1 victims"
    )


# -- ImageLocality and image volumes ----------------------------------------------------------------------------

IMAGES = (
    """---
apiVersion: v1
kind: Node
metadata: {name: a}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  images: [{names: ["data:v1"], sizeBytes: 524288000}]
"""
    + node("b")
    + pod("p", "containers: [{name: c, image: 'app:v1'}], volumes: [{name: d, image: {reference: 'data:v1'}}]")
)


def test_image_locality_counts_image_volumes_from_1_36(tmp_path: Path) -> None:
    def scores(version: str) -> dict[str, int]:
        data = by_node(explain(tmp_path, IMAGES, "p", "--kube-version", version))
        return {n: v["scores"]["ImageLocality"] for n, v in data.items()}

    # the container's image is on no node; the volume's (500 MiB) on one node of two: 500 x 1/2 = 250 MiB on a
    assert scores("1.35") == {"a": 0, "b": 0}  # containers only
    # 1.36: 100 x (250 - 23) / (1000 x 1 container - 23) = 23.2 -> 23
    assert scores("1.36") == {"a": 23, "b": 0}
    # 1.37: the bound counts the image volume too: 100 x 227 / (2000 - 23) = 11.5 -> 11
    assert scores("1.37") == {"a": 11, "b": 0}


# -- InterPodAffinity: namespace selectors an empty label set satisfies ---------------------------------------------

NAMESPACED = (
    labelled_node("a")
    + labelled_node("b")
    + """---
apiVersion: v1
kind: Namespace
metadata: {name: ns-a, labels: {team: a}}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns-b, labels: {team: b}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ns-a, labels: {app: web}}
spec: {nodeName: a, containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns-b}
spec:
  containers: [{name: c}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        namespaceSelector: {matchExpressions: [{key: team, operator: NotIn, values: [a]}]}
        topologyKey: kubernetes.io/hostname
"""
)


def test_pod_anti_affinity_namespace_selector_quirk_of_1_35_and_1_36(tmp_path: Path) -> None:
    # ns-a is labelled team=a, so the term does not select its pods: node a is fine (1.37, and 1.34 and before)
    for version in ("1.37", "1.34"):
        assert by_node(explain(tmp_path, NAMESPACED, "ns-b/p", "--kube-version", version))["a"]["reasons"] == []
    # 1.35-1.36 tested the NotIn selector against no labels at all, which it passes: every namespace counted
    for version in ("1.35", "1.36"):
        old = by_node(explain(tmp_path, NAMESPACED, "ns-b/p", "--kube-version", version))
        assert old["a"]["reasons"] == ["node(s) didn't match pod anti-affinity rules"]
        assert old["b"]["reasons"] == []


# -- (b) sidecars (restartable init containers, KEP-753) ---------------------------------------------------------


def _sidecar_pod() -> Pod:
    p = Pod(name="s")
    p.containers = [Container("app", {"cpu": 500, "memory": 100 * Mi})]
    p.init_containers = [
        Container("side", {"cpu": 300}, restart_policy="Always"),  # no memory request: 200Mi when scoring
        Container("init", {"cpu": 700, "memory": 50 * Mi}),
    ]
    return p


def test_sidecar_requests_follow_the_release() -> None:
    p = _sidecar_pod()
    # 1.29+: app + sidecar run together (800m); the init container runs beside the sidecar (1000m) -> 1000m
    assert pod_requests(p, sidecars=True) == {"cpu": 1000, "memory": 100 * Mi}
    # before 1.29 the sidecar is a plain init container: max(500, 300, 700)
    assert pod_requests(p, sidecars=False) == {"cpu": 700, "memory": 100 * Mi}
    # scoring requests, 1.32+: as above with 200Mi for the sidecar's missing memory: 100Mi + 200Mi, vs 200Mi + 50Mi
    assert pod_non_zero_requests(p, True, True) == (1000, 300 * Mi)
    # 1.29-1.31, a placed pod: max(app containers, each init container's value: a sidecar's is the sidecars up to
    # it (300m, no memory entry: 200Mi), a plain one's its own plus the sidecars before it (700m + 300m, 50Mi))
    assert pod_non_zero_requests(p, True, False) == (1000, 200 * Mi)
    # before 1.29: plain init containers everywhere
    assert pod_non_zero_requests(p, False, False) == (700, 200 * Mi)


SIDECAR_CLUSTER = node("a", cpu="1") + pod(
    "s",
    "initContainers: [{name: side, restartPolicy: Always, resources: {requests: {cpu: 300m}}}], "
    "containers: [{name: app, resources: {requests: {cpu: 800m}}}]",
)


def test_sidecar_decides_whether_the_pod_fits(tmp_path: Path) -> None:
    # 800m + 300m > 1 cpu once the sidecar runs beside the app (1.29+); before, max(800m, 300m) fits
    new = explain(tmp_path, SIDECAR_CLUSTER, "s", "--kube-version", "1.29")
    assert new["selected"] is None
    assert by_node(new)["a"]["reasons"] == ["Insufficient cpu"]
    old = explain(tmp_path, SIDECAR_CLUSTER, "s", "--kube-version", "1.28")
    assert old["selected"] == "a"


# kube-scheduler 1.31's own decisions (issue 22: recorded on a real 1.31 cluster, two empty 8 cpu / 16Gi nodes,
# the default profile): p000 has a sidecar (2 cpu, 1Gi), then an init container (1 cpu), then a 500m app.
SIDECAR_131 = (
    node("n1", cpu="8", memory="16Gi")
    + node("n2", cpu="8", memory="16Gi")
    + pod(
        "p000",
        "initContainers: [{name: side, restartPolicy: Always, resources: {requests: {cpu: '2', memory: 1Gi}}}, "
        "{name: init, resources: {requests: {cpu: '1'}}}], "
        "containers: [{name: app, resources: {requests: {cpu: 500m}}}]",
    )
    + pod("p001", "containers: [{name: app, resources: {requests: {cpu: '1', memory: 1Gi}}}]")
)


def test_sidecar_in_scoring_requests_as_kube_scheduler_1_31_scored_them(tmp_path: Path) -> None:
    # (a) the pod being scheduled counts its sidecars as PodRequests does, 1.31 too: 3 cpu (the init container beside
    # the sidecar) and 1Gi + 200Mi (the app's default beside the sidecar) -> (62 + 92) / 2 = 77 on each node
    first = by_node(explain(tmp_path, SIDECAR_131, "p000", "--kube-version", "1.31"))
    assert {n: v["scores"]["NodeResourcesFit"] for n, v in first.items()} == {"n1": 77, "n2": 77}
    # (b) placed, p000 counts 1.31's way: max(500m, 2 cpu, 1 + 2 cpu) and max(200Mi, 1Gi, 1Gi); p001 (1 cpu, 1Gi)
    # on its node: 4 cpu / 2Gi -> (50 + 87) / 2 = 68 (packsched gave 84 and 74 before)
    on = explain(tmp_path, SIDECAR_131, "p000", "--kube-version", "1.31")["selected"]
    second = by_node(explain(tmp_path, SIDECAR_131, "p001", "--kube-version", "1.31"))
    other = ({"n1", "n2"} - {on}).pop()
    assert (second[on]["scores"]["NodeResourcesFit"], second[other]["scores"]["NodeResourcesFit"]) == (68, 90)


# -- (c) preemption and nodes too small for the pod ----------------------------------------------------------------

TOO_BIG = (
    node("a", cpu="2") + node("b", cpu="2") + pod("huge", "containers: [{name: c, resources: {requests: {cpu: '3'}}}]")
)


def test_preemption_message_for_a_pod_larger_than_every_node(tmp_path: Path) -> None:
    # 1.34: DynamicResources (a default plugin from 1.34) has its PostFilter say so first, as 1.35 records it
    new = explain(tmp_path, TOO_BIG, "huge", "--kube-version", "1.34")
    assert new["reason"] == (
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling."
    )
    # 1.36.3's PostFilter still words it (recorded: tests/data/conformance/1.36)
    assert explain(tmp_path, TOO_BIG, "huge", "--kube-version", "1.36")["reason"] == new["reason"]
    newest = explain(tmp_path, TOO_BIG, "huge", "--kube-version", "1.37")
    assert newest["reason"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )
    old = explain(tmp_path, TOO_BIG, "huge", "--kube-version", "1.33")
    assert old["reason"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )


# -- (d) TaintToleration's message, SchedulingGates, the default plugin list ---------------------------------------

TAINTED = (
    node("a", taints="[{key: dedicated, value: infra, effect: NoSchedule}]")
    + node("b", taints="[{key: x, value: '', effect: PreferNoSchedule}, {key: gpu, effect: NoExecute}]")
    + pod("p", "containers: [{name: c}]")
)


def test_taint_message_names_the_taint_before_1_34(tmp_path: Path) -> None:
    old = explain(tmp_path, TAINTED, "p", "--kube-version", "1.31")
    assert old["reason"].startswith(
        "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, "
        "1 node(s) had untolerated taint {gpu: }."
    )
    new = explain(tmp_path, TAINTED, "p", "--kube-version", "1.34")
    assert new["reason"].startswith("0/2 nodes are available: 2 node(s) had untolerated taint(s).")


GATED = node("a") + pod("g", "schedulingGates: [{name: wait}], containers: [{name: c}]")


def test_scheduling_gates_hold_pods_from_1_27(tmp_path: Path) -> None:
    assert explain(tmp_path, GATED, "g", "--kube-version", "1.27")["selected"] is None
    assert explain(tmp_path, GATED, "g", "--kube-version", "1.26")["selected"] == "a"


@pytest.mark.parametrize(
    ("minor", "present", "absent"),
    [
        (34, {"SchedulingGates", "DynamicResources"}, {"EBSLimits", "AzureDiskLimits"}),
        (31, {"SchedulingGates"}, {"DynamicResources", "EBSLimits"}),
        (30, {"SchedulingGates", "EBSLimits", "GCEPDLimits", "AzureDiskLimits"}, {"DynamicResources"}),
        (26, {"EBSLimits"}, {"SchedulingGates", "DynamicResources"}),
    ],
)
def test_default_plugins_per_release(minor: int, present: set[str], absent: set[str]) -> None:
    names = {n for n, _ in catalog.default_multipoint(catalog.V1, KubeVersion(minor))}
    assert present <= names
    assert not absent & names
    cfg = default_config(KNOWN, KubeVersion(minor))
    omitted = set(cfg.profiles[0].omitted_default_plugins)
    enabled = {p.name for p in cfg.profiles[0].plugins.multi_point.enabled}
    assert (omitted | enabled) == names


def test_v1beta3_defaults_follow_the_release() -> None:
    assert "SchedulingGates" not in {n for n, _ in catalog.default_multipoint(catalog.V1BETA3, KubeVersion(26))}
    assert "SchedulingGates" in {n for n, _ in catalog.default_multipoint(catalog.V1BETA3, KubeVersion(28))}


def test_dra_extended_resources_from_1_36() -> None:
    # DRAExtendedResource: alpha and off in 1.34-1.35, beta and on in 1.36, GA in 1.37
    # (tests/plugins/test_dra_extended_resources.py runs it end to end)
    assert [m for m in range(25, 38) if KubeVersion(m).dra_extended_resource] == [36, 37]


# -- --feature-gates ---------------------------------------------------------------------------------------------

GANG_GATES = {"GenericWorkload": True, "GangScheduling": True}


@pytest.mark.parametrize(
    ("minor", "gates", "present"),
    [
        (35, {}, False),
        (35, {"GenericWorkload": True}, False),
        (35, GANG_GATES, True),
        (36, {"GenericWorkload": True}, False),
        (36, GANG_GATES, True),
        (36, {"GenericWorkload": True, "GangScheduling": False}, False),
        (37, {}, False),
        (37, {"GenericWorkload": False}, False),
        (34, {}, False),
    ],
)
def test_gang_scheduling_in_the_default_profile_per_gate(minor: int, gates: dict[str, bool], present: bool) -> None:
    version = KubeVersion(minor).with_gates(gates)
    names = [n for n, _ in catalog.default_multipoint(catalog.V1, version)]
    assert ("GangScheduling" in names) is present
    if present:  # appended last, as upstream's applyFeatureGates appends it
        assert names[-1] == "GangScheduling"
    cfg = default_config(KNOWN, KubeVersion(minor), gates)
    enabled = [p.name for p in cfg.profiles[0].plugins.multi_point.enabled]
    assert ("GangScheduling" in enabled) is present
    assert "GangScheduling" not in cfg.profiles[0].omitted_default_plugins


FLAG_COMMANDS = ["simulate", "explain", "validate", "quotas", "gangs"]


def _invoke(tmp_path: Path, command: str, *args: str) -> Any:
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER)
    extra = ["--pod", "p"] if command == "explain" else []
    return runner.invoke(app, [command, str(path), *extra, *args])


@pytest.mark.parametrize("command", FLAG_COMMANDS)
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--feature-gates", "Nope=true"], "--feature-gates: unrecognized feature gate: Nope"),
        (["--feature-gates", "GangScheduling=true", "--kube-version", "1.37"],
         "--feature-gates: unrecognized feature gate: GangScheduling"),
        (["--feature-gates", "GangScheduling=true", "--kube-version", "1.35"],
         "--feature-gates: GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
        (["--feature-gates", "DynamicResourceAllocation=false"],
         "--feature-gates: cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"),
        (["--feature-gates", "GenericWorkload=on"],
         '--feature-gates: invalid value of GenericWorkload=on, err: strconv.ParseBool: parsing "on": invalid syntax'),
        (["--feature-gates", "GenericWorkload"], "--feature-gates: missing bool value for GenericWorkload"),
        (["--feature-gates", "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"],
         "--feature-gates: packsched does not model feature gate TopologyAwareWorkloadScheduling on"),
        (["--feature-gates", "OpportunisticBatching=false", "--kube-version", "1.34"],
         "--feature-gates: unrecognized feature gate: OpportunisticBatching"),
    ],
)  # fmt: skip
def test_refused_feature_gates_exit_2_naming_the_gate(
    tmp_path: Path, command: str, args: list[str], message: str
) -> None:
    res = _invoke(tmp_path, command, *args)
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.stderr.split())


@pytest.mark.parametrize("value", ["true", "false"])
def test_opportunistic_batching_can_be_set_from_135(tmp_path: Path, value: str) -> None:
    for minor in ("1.35", "1.37"):
        res = _invoke(
            tmp_path, "simulate", "--kube-version", minor, "--feature-gates", f"OpportunisticBatching={value}"
        )
        assert res.exit_code == 0, res.output


def test_serve_checks_the_gates_before_connecting() -> None:
    res = runner.invoke(app, ["serve", "--feature-gates", "Nope=true"])
    assert res.exit_code == 2 and "unrecognized feature gate: Nope" in res.stderr


GANG_135 = (
    node("a") + "---\napiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\nmetadata: {name: w}\n"
    "spec: {podGroups: [{name: g, policy: {gang: {minCount: 2}}}]}\n"
    + pod("p", "workloadRef: {name: w, podGroup: g}, containers: [{name: c}]")
    + pod("q", "workloadRef: {name: w, podGroup: g}, containers: [{name: c}]")
)


def _kinds(tmp_path: Path, *args: str) -> list[str]:
    path = tmp_path / "gang.yaml"
    path.write_text(GANG_135)
    res = runner.invoke(app, ["simulate", str(path), "-o", "json", *args])
    assert res.exit_code == 0, res.output
    return [e["kind"] for e in json.loads(res.stdout)["events"]]


def test_accepted_gates_repeat_and_the_command_line_wins_over_the_file(tmp_path: Path) -> None:
    gang = ["waiting", "scheduled", "scheduled"]  # GangScheduling holds the first pod at Permit
    alone = ["scheduled", "scheduled"]
    assert _kinds(tmp_path, "--kube-version", "1.35") == alone
    flags = ["--feature-gates", "GenericWorkload=true", "--feature-gates", "GangScheduling=true"]
    assert _kinds(tmp_path, "--kube-version", "1.35", *flags) == gang
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        CONFIG_V1 + "---\napiVersion: packsched.io/v1alpha1\nkind: PackschedConfiguration\nkubeVersion: '1.35'\n"
        "featureGates: {GenericWorkload: true, GangScheduling: true}\n"
    )
    assert _kinds(tmp_path, "--config", str(cfg)) == gang
    assert _kinds(tmp_path, "--config", str(cfg), "--feature-gates", "GangScheduling=false") == alone
    # the file's gates are checked against the release the command line names
    res = runner.invoke(app, ["validate", str(cfg), "--kube-version", "1.37"])
    assert res.exit_code == 2
    assert "PackschedConfiguration.featureGates.GangScheduling: unrecognized feature gate: GangScheduling" in (
        " ".join(res.stderr.split())
    )


# -- DynamicResources' Score (1.35+) ----------------------------------------------------------------------------

DRA_SCORE_WEIGHT = (
    CONFIG_V1
    + """profiles:
- plugins:
    score:
      enabled: [{name: DynamicResources, weight: 3}]
"""
)


def test_dynamic_resources_scores_from_1_35(tmp_path: Path) -> None:
    cluster = node("a") + node("b") + pod("web", "containers: [{name: c, resources: {requests: {cpu: '1'}}}]")
    # 1.35+: a score plugin of the default profile, 0 for a pod without claims (recorded at 1.35.4-1.37.2)
    new = by_node(explain(tmp_path, cluster, "web", "--kube-version", "1.35"))
    assert {n: v["scores"]["DynamicResources"] for n, v in new.items()} == {"a": 0, "b": 0}
    # 1.34: a default plugin without Score (kube-scheduler 1.34.4's score_plugin_weights lack it)
    old = by_node(explain(tmp_path, cluster, "web", "--kube-version", "1.34"))
    assert all("DynamicResources" not in v["scores"] for v in old.values())
    # ... so a profile that gives it a score weight is refused, as 1.34 refuses it
    config = tmp_path / "sched.yaml"
    config.write_text(DRA_SCORE_WEIGHT)
    args = ["explain", str(tmp_path / "cluster.yaml"), "--pod", "web", "--config", str(config)]
    assert runner.invoke(app, [*args, "--kube-version", "1.35"]).exit_code == 0
    res = runner.invoke(app, [*args, "--kube-version", "1.34"])
    assert res.exit_code == 2
    assert "plugin 'DynamicResources' does not extend score plugin" in res.output
