"""deploy/: valid Kubernetes objects, a config packsched loads, RBAC that grants exactly what the code uses, and the
guide's steps."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from live.fakeapi import FakeApiServer
from live.harness import DEPLOY, ROOT, all_bound, deploy_config_text, load, node, pod, start, wait
from live.test_dra import claim, claim_pod, device_class, resource_slice
from packsched.api.manifests import load_manifests
from packsched.config.loader import load_config_data
from packsched.plugins.registry import in_tree_registry

GUIDE = ROOT / "docs" / "guides" / "live.md"

REQUIRED: dict[str, tuple[str, bool]] = {  # kind -> (apiVersion, namespaced)
    "Namespace": ("v1", False),
    "ServiceAccount": ("v1", True),
    "ConfigMap": ("v1", True),
    "Pod": ("v1", True),
    "ClusterRole": ("rbac.authorization.k8s.io/v1", False),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io/v1", False),
    "Role": ("rbac.authorization.k8s.io/v1", True),
    "RoleBinding": ("rbac.authorization.k8s.io/v1", True),
    "Deployment": ("apps/v1", True),
    "CustomResourceDefinition": ("apiextensions.k8s.io/v1", False),
}
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _objects() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(p for p in DEPLOY.glob("*.yaml") if p.name != "packsched-config.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is not None:
                out.append((path.name, doc))
    return out


def _by_kind(kind: str) -> list[dict[str, Any]]:
    return [d for _, d in _objects() if d.get("kind") == kind]


def test_every_manifest_is_a_valid_object() -> None:
    objs = _objects()
    assert {d["kind"] for _, d in objs} >= {"Deployment", "ConfigMap", "ClusterRole", "CustomResourceDefinition"}
    for name, doc in objs:
        kind = doc.get("kind")
        assert kind in REQUIRED, f"{name}: unexpected kind {kind}"
        api_version, namespaced = REQUIRED[kind]
        assert doc.get("apiVersion") == api_version, f"{name}: {kind} needs apiVersion {api_version}"
        meta = doc.get("metadata") or {}
        assert DNS_SUBDOMAIN.match(meta.get("name", "")), f"{name}: {kind} metadata.name"
        if namespaced:
            assert meta.get("namespace") in ("packsched-system", "default"), f"{name}: {kind} namespace"
        else:
            assert "namespace" not in meta, f"{name}: {kind} is cluster-scoped"


def _schema_problems(doc: dict[str, Any]) -> list[str]:
    """Decode ``doc`` with the official client's model of its kind (the Kubernetes OpenAPI schema: types and
    required fields) and encode it back: a field the schema does not define is lost on the way, and reported."""
    from kubernetes import client

    models = {
        "Deployment": client.V1Deployment,
        "ConfigMap": client.V1ConfigMap,
        "Namespace": client.V1Namespace,
        "ServiceAccount": client.V1ServiceAccount,
        "ClusterRole": client.V1ClusterRole,
        "ClusterRoleBinding": client.V1ClusterRoleBinding,
        "Role": client.V1Role,
        "RoleBinding": client.V1RoleBinding,
        "Pod": client.V1Pod,
        "CustomResourceDefinition": client.V1CustomResourceDefinition,
    }
    back = client.ApiClient().sanitize_for_serialization(models[doc["kind"]].from_dict(doc))

    def lost(a: Any, b: Any, path: str) -> list[str]:
        if isinstance(a, dict) and isinstance(b, dict):
            return [p for k in a for p in (lost(a[k], b[k], f"{path}.{k}") if k in b else [f"{path}.{k}"])]
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            return [p for i, (x, y) in enumerate(zip(a, b, strict=True)) for p in lost(x, y, f"{path}[{i}]")]
        return [] if a == b else [f"{path}: {a!r} became {b!r}"]

    return lost(doc, back, "")


def test_every_manifest_matches_the_kubernetes_schema() -> None:
    for name, doc in _objects():
        assert _schema_problems(doc) == [], f"{name}: {doc['kind']} {doc['metadata']['name']}"


def test_the_schema_check_catches_a_typo() -> None:
    (dep,) = _by_kind("Deployment")
    dep["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    assert _schema_problems(dep) == [".spec.template.spec.containers[0].imagePullPolicyy"]
    del dep["spec"]["template"]["spec"]["containers"][0]["name"]  # a required field
    with pytest.raises(ValueError, match="name"):
        _schema_problems(dep)


def test_configmap_holds_a_config_packsched_loads() -> None:
    cfg = load_config_data(yaml.safe_load(deploy_config_text()), "configmap.yaml", set(in_tree_registry()))
    (profile,) = cfg.profiles
    assert profile.scheduler_name == "packsched"
    fit = profile.plugin_config["NodeResourcesFit"]
    assert fit.scoring_strategy.type == "RequestedToCapacityRatio"
    le = cfg.leader_election
    assert le.leader_elect and (le.resource_namespace, le.resource_name) == ("packsched-system", "packsched")
    # the standalone copy for running outside the cluster is the same configuration
    assert yaml.safe_load((DEPLOY / "packsched-config.yaml").read_text()) == yaml.safe_load(deploy_config_text())
    assert load(str(DEPLOY / "packsched-config.yaml")).profiles[0].scheduler_name == "packsched"


def test_deployment_and_pod_specs_read_by_packsched_and_wired_together() -> None:
    cluster = load_manifests([str(DEPLOY / "deployment.yaml"), str(DEPLOY / "example-pod.yaml")])
    assert {p.name for p in cluster.pods} == {"packsched-0", "packsched-1", "hello-packsched"}
    (dep,) = _by_kind("Deployment")
    spec = dep["spec"]
    assert spec["replicas"] == 2
    tmpl = spec["template"]
    assert spec["selector"]["matchLabels"].items() <= tmpl["metadata"]["labels"].items()
    (container,) = tmpl["spec"]["containers"]
    args = container["args"]
    assert args[0] == "serve"
    config_path = next(a.split("=", 1)[1] for a in args if a.startswith("--config="))
    mount = next(m for m in container["volumeMounts"] if config_path.startswith(m["mountPath"] + "/"))
    volume = next(v for v in tmpl["spec"]["volumes"] if v["name"] == mount["name"])
    (cm,) = _by_kind("ConfigMap")
    assert volume["configMap"]["name"] == cm["metadata"]["name"]
    assert config_path.rsplit("/", 1)[1] in cm["data"]
    port = int(next(a.split("=", 1)[1] for a in args if a.startswith("--port=")))
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port}
    sa = tmpl["spec"]["serviceAccountName"]
    assert sa in {s["metadata"]["name"] for s in _by_kind("ServiceAccount")}
    (example,) = [p for p in cluster.pods if p.name == "hello-packsched"]
    assert example.scheduler_name == "packsched"
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["packsched"]' in dockerfile and container["image"] == "packsched:0.1.0"


def test_role_bindings_point_at_existing_roles_and_the_service_account() -> None:
    roles = {("ClusterRole", r["metadata"]["name"]) for r in _by_kind("ClusterRole")}
    roles |= {("Role", r["metadata"]["name"]) for r in _by_kind("Role")}
    accounts = {(s["metadata"]["namespace"], s["metadata"]["name"]) for s in _by_kind("ServiceAccount")}
    bindings = _by_kind("ClusterRoleBinding") + _by_kind("RoleBinding")
    # the base role, leader election, the two optional ElasticQuota grants, the two optional PodGroup grants and
    # the optional GenericWorkload grant
    assert len(bindings) == 7
    for b in bindings:
        assert (b["roleRef"]["kind"], b["roleRef"]["name"]) in roles
        assert b["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
        for s in b["subjects"]:
            assert (s["namespace"], s["name"]) in accounts


def _crd(name: str) -> dict[str, Any]:
    (crd,) = [c for c in _by_kind("CustomResourceDefinition") if c["metadata"]["name"] == name]
    return crd


def test_elasticquota_crd() -> None:
    crd = _crd("elasticquotas.scheduling.x-k8s.io")
    spec = crd["spec"]
    name = crd["metadata"]["name"]
    assert name == f"{spec['names']['plural']}.{spec['group']}" == "elasticquotas.scheduling.x-k8s.io"
    assert spec["scope"] == "Namespaced" and spec["names"]["kind"] == "ElasticQuota"
    assert set(spec["names"]["shortNames"]) == {"eq", "eqs"}
    (version,) = spec["versions"]
    assert version["name"] == "v1alpha1" and version["served"] and version["storage"]
    assert version["subresources"] == {"status": {}}
    props = version["schema"]["openAPIV3Schema"]["properties"]
    assert set(props["spec"]["properties"]) == {"min", "max"}
    assert set(props["status"]["properties"]) == {"used"}
    spec_props, status_props = props["spec"]["properties"], props["status"]["properties"]
    lists = [spec_props["min"], spec_props["max"], status_props["used"]]
    for rl in lists:
        assert rl["additionalProperties"]["x-kubernetes-int-or-string"] is True


def test_podgroup_crd() -> None:
    """As scheduler-plugins' CRD: what api/kinds.py reads of a PodGroup, the bounds it checks, a status subresource
    (what serve --write-podgroup-status patches), and the fields of the status it writes."""
    from packsched.api.gangs import POD_GROUP_API_VERSIONS, POD_GROUP_SPEC, POD_GROUP_STATUS

    crd = _crd("podgroups.scheduling.x-k8s.io")
    spec = crd["spec"]
    assert spec["scope"] == "Namespaced" and spec["names"]["kind"] == "PodGroup"
    assert set(spec["names"]["shortNames"]) == {"pg", "pgs"}
    (version,) = spec["versions"]
    assert f"{spec['group']}/{version['name']}" in POD_GROUP_API_VERSIONS
    assert version["served"] and version["storage"] and version["subresources"] == {"status": {}}
    props = version["schema"]["openAPIV3Schema"]["properties"]
    assert tuple(props["spec"]["properties"]) == POD_GROUP_SPEC
    assert set(props["status"]["properties"]) == set(POD_GROUP_STATUS)
    min_member = props["spec"]["properties"]["minMember"]
    assert (min_member["type"], min_member["format"], min_member["minimum"]) == ("integer", "int32", 1)
    assert props["spec"]["properties"]["scheduleTimeoutSeconds"]["format"] == "int32"
    assert props["spec"]["properties"]["minResources"]["additionalProperties"]["x-kubernetes-int-or-string"]
    for count in ("running", "succeeded", "failed"):
        assert props["status"]["properties"][count]["type"] == "integer"


# -- RBAC against what the code does --------------------------------------------------------------------------


DISCOVERY = re.compile(r"^/apis/[^/]+/?$")


def _rbac_request(method: str, path: str, watch: bool) -> tuple[str, str, str, str, str]:
    """(apiGroup, resource[/subresource], verb, namespace, name) of one API request, as the authorizer sees it."""
    parts = path.strip("/").split("/")
    group = "" if parts[0] == "api" else parts[1]
    rest = parts[2:] if parts[0] == "api" else parts[3:]
    ns = ""
    if rest and rest[0] == "namespaces" and len(rest) > 2:
        ns, rest = rest[1], rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    if len(rest) > 2:
        resource += "/" + rest[2]
    verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method, "")
    if method == "GET":
        verb = "watch" if watch else ("get" if name else "list")
    return group, resource, verb, ns, name


# Granted apart, each for the configuration that needs it: ElasticQuotas for CapacityScheduling (checked against
# what serve uses in test_quota.py), PodGroups for Coscheduling (checked here), scheduling.k8s.io's Workloads and
# PodGroups for GenericWorkload (checked in test_generic_workload.py).
QUOTA_FILES = ("rbac-elasticquota.yaml", "rbac-elasticquota-status.yaml")
GENERIC_WORKLOAD_FILES = ("rbac-generic-workload.yaml",)
POD_GROUP_FILES = ("rbac-podgroup.yaml", "rbac-podgroup-status.yaml")
CUSTOM_GROUP = "scheduling.x-k8s.io"


def _rules() -> list[tuple[dict[str, Any], str]]:
    """Every rule of the shipped roles but the ElasticQuota and GenericWorkload ones, with the namespace of its Role
    ("" for a ClusterRole)."""
    out = []
    for name, doc in _objects():
        if name in QUOTA_FILES + GENERIC_WORKLOAD_FILES or doc["kind"] not in ("ClusterRole", "Role"):
            continue
        ns = doc["metadata"]["namespace"] if doc["kind"] == "Role" else ""
        out += [(rule, ns) for rule in doc["rules"]]
    return out


def _allowed(req: tuple[str, str, str, str, str]) -> bool:
    group, resource, verb, ns, name = req
    for rule, role_ns in _rules():
        if role_ns and role_ns != ns:
            continue
        if group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"]:
            names = rule.get("resourceNames")
            if not names or name in names:
                return True
    return False


def _granted() -> set[tuple[str, str, str]]:
    rules = [r for r, _ in _rules()]
    return {(g, res, v) for r in rules for g in r["apiGroups"] for res in r["resources"] for v in r["verbs"]}


def test_custom_resources_are_granted_only_by_their_own_files() -> None:
    """A cluster without the CRDs (a configuration without CapacityScheduling or Coscheduling) needs none of them."""
    for name, doc in _objects():
        if doc["kind"] in ("ClusterRole", "Role"):
            custom = any(CUSTOM_GROUP in rule["apiGroups"] for rule in doc["rules"])
            assert custom == (name in QUOTA_FILES + POD_GROUP_FILES), name


def test_rbac_grants_exactly_what_serve_uses(api: FakeApiServer, tmp_path: Path) -> None:
    """Run serve through binding, a failure (repeated: an event series), preemption by eviction and by deletion,
    leader election and an outage, then with Coscheduling and --write-podgroup-status through a gang, then on a
    cluster serving DRA through a claim written after a conflict and an extended-resource claim made, each bound
    after a failed bind; every request must be allowed by the shipped RBAC (with its namespace for the Lease), and
    every grant used."""
    api.create("priorityclasses", {"metadata": {"name": "low"}, "value": 10})
    api.create("priorityclasses", {"metadata": {"name": "high"}, "value": 1000})
    api.create("nodes", node("n0", cpu="1", memory="4Gi"))
    for i in range(2):
        api.create(
            "pods", pod(f"low{i}", cpu="500m", scheduler="default-scheduler", priority_class="low", node_name="n0")
        )
    used: set[tuple[str, str, str, str, str]] = set()
    api.create("pods", pod("huge", cpu="64"))  # never fits: its FailedScheduling events become a series (update)
    # a bind applied whose answer is lost (the client gives up first): serve sends it again, is refused as a
    # conflict, and reads the pod to see where it went
    api.inject("POST", r"/binding$", count=1, hang_s=1.5, apply_first=True)
    # (every run with leader election's short test timings: the lease is renewed, its update among the requests)
    for mode, hi in (("evict", "hi1"), ("delete", "hi2")):
        run = start(api, tmp_path, removal=mode, timeout_s=0.5, fast_election=True)
        try:
            run.wait_ready()
            api.create("pods", pod(hi, cpu="500m", priority_class="high"))
            assert api.wait_for(all_bound([hi]), 15)
            recorder = run.server.recorder
            assert wait(lambda r=recorder: r.stats.sent >= 3, 5)  # type: ignore[misc]
            if mode == "delete":
                api.outage(0.6)  # the API server goes away (less than renewDeadline): serve probes it
                assert wait(lambda: any(m == "GET" and "/nodes/" in p for m, p, _ in api.stats.log), 5)
                assert api.wait_for(lambda s: not s.is_down(), 5)
                api.create("nodes", node("n1", cpu="1", memory="4Gi"))  # a change: "huge" is tried again
                assert wait(lambda r=recorder: r.stats.aggregated >= 1, 15)  # type: ignore[misc]
        finally:
            run.stop()
    # a gang: PodGroups listed and watched, their status patched
    api.create("podgroups", {"metadata": {"name": "gang", "namespace": "default"}, "spec": {"minMember": 2}})
    api.create_many("pods", [pod(n, cpu="100m", labels={"scheduling.x-k8s.io/pod-group": "gang"}) for n in "ab"])
    coscheduling = {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]}
    run = start(api, tmp_path, multi_point=coscheduling, pod_group_status=True, fast_election=True)
    try:
        assert api.wait_for(all_bound(["a", "b"]), 15)
        assert wait(lambda: "phase" in (api.get("podgroups", "default", "gang") or {}).get("status", {}), 15)
    finally:
        run.stop()
    # DRA: classes, slices and claims watched; claims written (one read again after a conflict), the claim for
    # extended resources created, and after a failed bind the pod taken out of reservedFor, that claim deleted
    api.serve_dra()
    api.create("deviceclasses", device_class(extended="example.com/gpu"))
    api.create("nodes", node("d0", cpu="4", memory="8Gi"))
    api.create("resourceslices", resource_slice("d0", 4))
    api.create("resourceclaims", claim("c"))
    api.inject("PUT", r"/resourceclaims/c/status$", status=409, count=1)
    for name in ("dra", "ext"):
        api.inject("POST", rf"/pods/{name}/binding$", status=500, count=1)
    run = start(api, tmp_path, fast_election=True)
    try:
        run.wait_ready()
        api.create("pods", claim_pod("dra", claim_name="c"))
        ext = pod("ext", cpu="100m")
        ext["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
        api.create("pods", ext)
        assert api.wait_for(all_bound(["dra", "ext"]), 20)
    finally:
        run.stop()
    # (discovery documents, /apis/<group>, are non-resource URLs every authenticated user may read: system:discovery)
    used = {_rbac_request(m, p, w) for m, p, w in api.stats.log if not DISCOVERY.match(p)}
    # the Lease is in kube-system in the tests (resourceNamespace); the shipped Role is in packsched-system
    used = {(g, r, v, "packsched-system" if r == "leases" else ns, n) for g, r, v, ns, n in used}
    denied = sorted(u for u in used if not _allowed(u))
    assert not denied, f"requests the shipped RBAC denies: {denied}"
    unused = _granted() - {(g, r, v) for g, r, v, _, _ in used}
    assert not unused, f"grants the code never uses: {sorted(unused)}"


# -- the guide ------------------------------------------------------------------------------------------------


def _guide_commands() -> list[str]:
    text = GUIDE.read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    return [line.strip() for b in blocks for line in b.splitlines() if line.strip()]


def test_guide_applies_the_shipped_manifests_in_a_working_order() -> None:
    applied = [c.split("-f", 1)[1].strip() for c in _guide_commands() if c.startswith("kubectl apply -f")]
    files = {p.name for p in DEPLOY.glob("*.yaml")} - {"packsched-config.yaml"}
    assert {Path(a).name for a in applied} == files  # every manifest, each from deploy/
    order = [Path(a).name for a in applied]
    assert order.index("namespace.yaml") < order.index("rbac.yaml") < order.index("deployment.yaml")
    assert order.index("configmap.yaml") < order.index("deployment.yaml") < order.index("example-pod.yaml")
    assert any(c.startswith("docker build -f deploy/Dockerfile") for c in _guide_commands())


def guide_serve_command() -> list[str]:
    (cmd,) = [c for c in _guide_commands() if c.startswith("packsched serve")]
    return cmd.split()


@pytest.mark.parametrize("flag", ["--config", "--kubeconfig", "--no-leader-elect", "--port"])
def test_guide_serve_command_uses_real_options(flag: str) -> None:
    assert flag in " ".join(guide_serve_command())


def test_guide_rate_limit_example_raises_the_burst_with_the_qps() -> None:
    """The guide tells a busy cluster to raise both clientConnection.qps and .burst: its example kept burst at the
    default 100 (issue 24), so bursts stayed capped. It raises both above kube-scheduler's defaults (50/100), the
    burst at least the qps, and packsched reads it."""
    section = GUIDE.read_text().split("## Client rate limit", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```yaml\n(.*?)```", section, re.S)
    connection = yaml.safe_load(block)["clientConnection"]
    assert connection["qps"] > 50 and connection["burst"] > 100
    assert connection["burst"] >= connection["qps"]
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    cfg = load_config_data({**config, "clientConnection": connection}, "guide", in_tree_registry())
    assert (cfg.client_qps, cfg.client_burst) == (connection["qps"], connection["burst"])
