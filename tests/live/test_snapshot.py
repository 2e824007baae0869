"""``packsched snapshot`` against the fake API server: every kind scheduling reads, page by page, never a Secret;
the directory reads back as manifests, and an anonymised snapshot schedules the same way."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from live.fakeapi import FakeApiServer
from live.harness import node, pod
from packsched.api.manifests import load_manifests
from packsched.config.loader import default_config
from packsched.live.anonymize import hashed
from packsched.live.kube import KubernetesPort
from packsched.live.snapshot import INFO_FILE, SNAPSHOT_RESOURCES, SnapshotError, read_config_map, take_snapshot
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation

ROOT = Path(__file__).resolve().parents[2]


def _cluster(api: FakeApiServer) -> None:
    for i in range(7):
        api.create("nodes", node(f"node-{i}", cpu="4", labels={"topology.kubernetes.io/zone": f"zone-{i % 2}"}))
    api.create("namespaces", {"metadata": {"name": "team-a", "labels": {"tier": "gold"}}})
    api.create("namespaces", {"metadata": {"name": "team-b"}})
    api.create("priorityclasses", {"metadata": {"name": "high"}, "value": 1000})
    for i in range(9):
        p = pod(f"web-{i}", cpu="1", namespace="team-a", labels={"app": "web"}, node_name=f"node-{i % 3}")
        p["metadata"]["managedFields"] = [{"manager": "kubectl"}]
        p["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": "{}", "note": "x"}
        p["spec"]["containers"][0]["env"] = [{"name": "PASSWORD", "value": "hunter2"}]
        p["status"] = {"phase": "Running", "podIP": "10.0.0.1"}
        api.create("pods", p)
    done = pod("old-job", namespace="team-b", node_name="node-4")
    done["status"] = {"phase": "Succeeded"}
    api.create("pods", done)
    pending = pod("spread-me", namespace="team-a", labels={"app": "web"}, priority_class="high", cpu="1")
    pending["spec"]["schedulerName"] = "default-scheduler"
    pending["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ]
    pending["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["node-6"]}]}
                ]
            }
        }
    }
    api.create("pods", pending)
    api.create(
        "poddisruptionbudgets",
        {
            "metadata": {"name": "web", "namespace": "team-a"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    api.create(
        "elasticquotas",
        {"metadata": {"name": "q", "namespace": "team-a"}, "spec": {"min": {"cpu": "4"}, "max": {"cpu": "16"}}},
    )
    api.create("services", {"metadata": {"name": "web", "namespace": "team-a"}, "spec": {"selector": {"app": "web"}}})
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    selector = {"matchLabels": {"app": "web"}}
    api.create(
        "replicasets",
        {
            "metadata": {"name": "web-1", "namespace": "team-a"},
            "spec": {"replicas": 1, "selector": selector, "template": template},
        },
    )
    api.create(
        "deployments",
        {
            "metadata": {"name": "web", "namespace": "team-a"},
            "spec": {"replicas": 1, "selector": selector, "template": template},
        },
    )
    api.create(
        "statefulsets",
        {
            "metadata": {"name": "db", "namespace": "team-b"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "db"}},
                "serviceName": "db",
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "c", "image": "pg"}]},
                },
            },
        },
    )
    api.create(
        "jobs",
        {
            "metadata": {"name": "batch", "namespace": "team-b"},
            "spec": {
                "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}
            },
        },
    )
    api.create(
        "storageclasses",
        {"metadata": {"name": "fast"}, "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer"},
    )
    api.create(
        "persistentvolumes",
        {
            "metadata": {"name": "pv-1"},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "fast"},
        },
    )
    api.create(
        "persistentvolumeclaims",
        {
            "metadata": {"name": "data", "namespace": "team-b"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "fast",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    )
    api.create(
        "csinodes",
        {
            "metadata": {"name": "node-0"},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "node-0", "allocatable": {"count": 25}}]},
        },
    )
    api.create("secrets", {"metadata": {"name": "token", "namespace": "team-a"}, "data": {"password": "aHVudGVyMg=="}})
    api.create("configmaps", {"metadata": {"name": "other", "namespace": "team-a"}, "data": {"x": "y"}})


def _port(api: FakeApiServer, tmp_path: Path) -> KubernetesPort:
    return KubernetesPort.connect(api.kubeconfig(str(tmp_path / "kubeconfig")))


def _placements(directory: Path) -> dict[str, str]:
    cluster = load_manifests([str(directory)])
    sim = Simulation(cluster, default_config(list(in_tree_registry())), in_tree_registry())
    sim.run()
    return {key: rec.node or "" for key, rec in sim.records.items()}


def test_snapshot_reads_every_kind_in_pages_and_never_a_secret(api: FakeApiServer, tmp_path: Path) -> None:
    _cluster(api)
    port = _port(api, tmp_path)
    lines: list[str] = []
    try:
        report = take_snapshot(port, str(tmp_path / "snap"), page_size=4, progress=lines.append, server=port.host)
    finally:
        port.close()
    out = tmp_path / "snap"
    assert report.counts["Node"] == 7 and report.counts["Pod"] == 10  # the Succeeded pod is left out
    assert report.skipped_finished_pods == 1
    for kind in (
        "Namespace",
        "PriorityClass",
        "PodDisruptionBudget",
        "ElasticQuota",
        "Service",
        "ReplicaSet",
        "Deployment",
        "StatefulSet",
        "Job",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "StorageClass",
        "CSINode",
    ):
        assert report.counts[kind] >= 1, kind
    assert {f.name for f in out.iterdir()} == {f"{r.plural}.json" for r in SNAPSHOT_RESOURCES} | {INFO_FILE}
    # pagination: 7 nodes by 4 are two requests, the second with the first's continue token
    node_queries = [
        q for (m, path, _), q in zip(api.stats.log, api.stats.queries, strict=True) if path == "/api/v1/nodes"
    ]
    assert node_queries == ["limit=4", "limit=4&continue=4"]
    assert any("nodes: 4 so far" in line for line in lines)
    # never a Secret, never a ConfigMap list, nothing but GETs
    assert not [path for _, path, _ in api.stats.log if "secrets" in path or "configmaps" in path]
    assert {m for m, _, _ in api.stats.log} == {"GET"}
    # what scheduling never reads and what may be sensitive is gone
    pods = json.loads((out / "pods.json").read_text())["items"]
    web = next(p for p in pods if p["metadata"]["name"] == "web-0")
    assert "managedFields" not in web["metadata"] and "env" not in web["spec"]["containers"][0]
    assert web["metadata"]["annotations"] == {"note": "x"} and web["status"] == {"phase": "Running"}
    assert "hunter2" not in (out / "pods.json").read_text()
    # it reads back as manifests: bound pods stay where they are, the pending one is scheduled
    placed = _placements(out)
    assert placed["team-a/web-0"] == "node-0"
    assert placed["team-a/spread-me"] not in ("", "node-6")


def test_anonymised_snapshot_hides_names_and_schedules_the_same(api: FakeApiServer, tmp_path: Path) -> None:
    _cluster(api)
    port = _port(api, tmp_path)
    try:
        take_snapshot(port, str(tmp_path / "plain"))
        take_snapshot(port, str(tmp_path / "anon"), anonymize=True)
    finally:
        port.close()
    text = "".join(f.read_text() for f in (tmp_path / "anon").glob("*.json"))
    for secret in ("team-a", "web-0", "node-3", "zone-1", "spread-me", "nginx", '"web"'):
        assert secret not in text, secret
    plain, anon = _placements(tmp_path / "plain"), _placements(tmp_path / "anon")
    renamed = {f"{hashed(k.split('/')[0])}/{hashed(k.split('/')[1])}": hashed(v) if v else "" for k, v in plain.items()}
    assert anon == renamed  # selectors, spread, node affinity and owners still match what they matched


def test_a_kind_the_cluster_does_not_serve_is_left_out(api: FakeApiServer, tmp_path: Path) -> None:
    _cluster(api)
    api.unserved.add("elasticquotas")
    port = _port(api, tmp_path)
    try:
        report = take_snapshot(port, str(tmp_path / "snap"))
    finally:
        port.close()
    assert report.missing == ["ElasticQuota"] and "ElasticQuota" not in report.counts
    assert "Not served by the cluster (left out): ElasticQuota." in (tmp_path / "snap" / INFO_FILE).read_text()


def test_a_refused_list_fails_and_leaves_nothing(api: FakeApiServer, tmp_path: Path) -> None:
    _cluster(api)
    api.inject("GET", r"/persistentvolumeclaims$", 403, count=5)
    port = _port(api, tmp_path)
    try:
        with pytest.raises(SnapshotError, match=r"deploy/snapshot/rbac\.yaml"):
            take_snapshot(port, str(tmp_path / "snap"))
    finally:
        port.close()
    assert list(tmp_path.iterdir()) == [tmp_path / "kubeconfig"]  # no half-written directory


def test_cli_snapshot_with_a_namespace_and_the_scheduler_configmap(api: FakeApiServer, tmp_path: Path) -> None:
    _cluster(api)
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    api.create(
        "configmaps",
        {"metadata": {"name": "sched", "namespace": "kube-system"}, "data": {"config.yaml": yaml.safe_dump(config)}},
    )
    kubeconfig = api.kubeconfig(str(tmp_path / "kubeconfig"))
    out = tmp_path / "snap"
    cmd = [
        sys.executable,
        "-m",
        "packsched.cli.main",
        "snapshot",
        "--kubeconfig",
        kubeconfig,
        "-o",
        str(out),
        "-n",
        "team-b",
        "--scheduler-configmap",
        "kube-system/sched",
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "wrote" in run.stderr and run.stdout == ""
    pods = {p["metadata"]["name"] for p in json.loads((out / "pods.json").read_text())["items"]}
    assert pods == {f"web-{i}" for i in range(9)}  # team-b has only a finished pod; team-a's bound pods stay
    assert [d["metadata"]["name"] for d in json.loads((out / "services.json").read_text())["items"]] == []
    assert yaml.safe_load((out / "scheduler-config.yaml").read_text()) == config
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert again.returncode == 2 and "not an empty directory" in again.stderr


def test_the_snapshot_rbac_grants_exactly_what_snapshot_uses(api: FakeApiServer, tmp_path: Path) -> None:
    from live.test_deploy import _rbac_request

    _cluster(api)
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    api.create(
        "configmaps",
        {"metadata": {"name": "sched", "namespace": "kube-system"}, "data": {"config.yaml": yaml.safe_dump(config)}},
    )
    port = _port(api, tmp_path)
    try:
        text = read_config_map(port, "kube-system/sched")
        take_snapshot(port, str(tmp_path / "snap"), scheduler_config=text)
    finally:
        port.close()
    docs = list(yaml.safe_load_all((ROOT / "deploy" / "snapshot" / "rbac.yaml").read_text()))
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    (binding,) = [d for d in docs if d["kind"] == "ClusterRoleBinding"]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    granted = {
        (g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]
    }
    used = {_rbac_request(m, p, w)[:3] for m, p, w in api.stats.log}
    assert used == granted
    assert not [g for g in granted if g[1] == "secrets"]


def test_cli_snapshot_in_process_anonymised_then_simulated(api: FakeApiServer, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from packsched.cli.main import app

    _cluster(api)
    kubeconfig = api.kubeconfig(str(tmp_path / "kubeconfig"))
    config = tmp_path / "sched.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    out = tmp_path / "snap"
    runner = CliRunner()
    args = ["snapshot", "--kubeconfig", kubeconfig, "-o", str(out), "--anonymize", "--scheduler-config", str(config)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (out / "scheduler-config.yaml").read_text() == config.read_text()
    sim = runner.invoke(app, ["simulate", str(out), "--config", str(out / "scheduler-config.yaml"), "-o", "json"])
    assert sim.exit_code == 0, sim.output
    # bad uses: both config sources, a page size of 0, an unreadable config, a non-empty directory, no kubeconfig
    bad = [
        ["--scheduler-config", str(config), "--scheduler-configmap", "a/b"],
        ["--page-size", "0"],
        ["--scheduler-config", str(tmp_path / "missing.yaml")],
    ]
    for extra in bad:
        r = runner.invoke(app, ["snapshot", "--kubeconfig", kubeconfig, "-o", str(tmp_path / "new"), *extra])
        assert r.exit_code == 2, (extra, r.output)
    again = runner.invoke(app, ["snapshot", "--kubeconfig", kubeconfig, "-o", str(out)])
    assert again.exit_code == 2 and "not an empty directory" in again.output
    r = runner.invoke(app, ["snapshot", "--kubeconfig", kubeconfig, "--context", "nope", "-o", str(tmp_path / "x")])
    assert r.exit_code == 2 and "context 'nope' is not defined" in r.output
    r = runner.invoke(app, ["snapshot", "--kubeconfig", kubeconfig, "--context", "fake", "-o", str(tmp_path / "ctx")])
    assert r.exit_code == 0, r.output
    broken = tmp_path / "broken-kubeconfig"
    broken.write_text("clusters: []\n")
    r = runner.invoke(app, ["snapshot", "--kubeconfig", str(broken), "-o", str(tmp_path / "new")])
    assert r.exit_code == 2 and "current-context" in r.output
    api.inject("GET", r"/api/v1/nodes$", 403, count=1)
    r = runner.invoke(app, ["snapshot", "--kubeconfig", kubeconfig, "-o", str(tmp_path / "refused")])
    assert r.exit_code == 1 and "refused" in r.output and not (tmp_path / "refused").exists()
