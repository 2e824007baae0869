"""``packsched snapshot`` against the fake API server: every kind scheduling reads, page by page, never a Secret;
the directory reads back as manifests, and an anonymised snapshot schedules the same way."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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


def _rbac() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """deploy/snapshot/rbac.yaml: the rules of its ClusterRole, and those of its Role (each with its namespace)."""
    docs = list(yaml.safe_load_all((ROOT / "deploy" / "snapshot" / "rbac.yaml").read_text()))
    (cluster_role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    (role,) = [d for d in docs if d["kind"] == "Role"]
    bindings = {d["kind"]: d for d in docs if d["kind"].endswith("Binding")}
    assert bindings["ClusterRoleBinding"]["roleRef"]["name"] == cluster_role["metadata"]["name"]
    assert bindings["RoleBinding"]["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role["metadata"]["name"],
    }
    assert bindings["RoleBinding"]["metadata"]["namespace"] == role["metadata"]["namespace"]
    assert bindings["RoleBinding"]["subjects"] == bindings["ClusterRoleBinding"]["subjects"]
    namespaced = [dict(rule, namespace=role["metadata"]["namespace"]) for rule in role["rules"]]
    return cluster_role["rules"], namespaced


def _allowed(request: tuple[str, str, str, str, str]) -> bool:
    """Whether the shipped RBAC lets a request through, as the API server's authorizer would."""
    group, resource, verb, ns, name = request
    cluster_rules, namespaced = _rbac()
    for rule in [*cluster_rules, *namespaced]:
        if rule.get("namespace", ns) != ns or name not in rule.get("resourceNames", [name]):
            continue
        if group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"]:
            return True
    return False


def test_the_snapshot_rbac_grants_exactly_what_snapshot_uses(api: FakeApiServer, tmp_path: Path) -> None:
    """Lists of what scheduling reads, and get on the one ConfigMap named (issue 24: it was every ConfigMap)."""
    from live.test_deploy import _rbac_request

    _cluster(api)
    cluster_rules, (config_rule,) = _rbac()
    assert config_rule["resources"] == ["configmaps"] and config_rule["verbs"] == ["get"]
    (name,) = config_rule["resourceNames"]
    ref = f"{config_rule['namespace']}/{name}"
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    api.create(
        "configmaps",
        {"metadata": {"name": name, "namespace": config_rule["namespace"]}, "data": {"c.yaml": yaml.safe_dump(config)}},
    )
    port = _port(api, tmp_path)
    try:
        text = read_config_map(port, ref)
        take_snapshot(port, str(tmp_path / "snap"), scheduler_config=text)
    finally:
        port.close()
    used = {_rbac_request(m, p, w) for m, p, w in api.stats.log}
    assert [u for u in used if not _allowed(u)] == []
    granted = {
        (g, r, v)
        for rule in [*cluster_rules, config_rule]
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }
    assert {u[:3] for u in used} == granted
    assert not [g for g in granted if g[1] == "secrets"]
    assert not [r for r in cluster_rules if "configmaps" in r["resources"]]  # no ConfigMap cluster-wide
    for other in (("", "configmaps", "get", config_rule["namespace"], "other"), ("", "configmaps", "get", "x", name)):
        assert not _allowed(other), other
    assert not _allowed(("", "configmaps", "list", config_rule["namespace"], ""))


def test_a_refused_configmap_says_how_to_grant_it(api: FakeApiServer, tmp_path: Path) -> None:
    api.inject("GET", r"/configmaps/sched$", 403, count=1)
    port = _port(api, tmp_path)
    try:
        with pytest.raises(SnapshotError, match=r"Role grants it on one ConfigMap: set its namespace to kube-system"):
            read_config_map(port, "kube-system/sched")
    finally:
        port.close()


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


# -- interrupted snapshots leave nothing; SNAPSHOT.md's commands work (issue 24) --------------------------------


@pytest.mark.parametrize(
    ("signum", "code", "word"), [(signal.SIGTERM, 143, "terminated (SIGTERM)"), (signal.SIGINT, 130, "interrupted")]
)
def test_a_signal_during_snapshot_leaves_nothing(
    api: FakeApiServer, tmp_path: Path, signum: int, code: int, word: str
) -> None:
    """SIGTERM (what timeout, systemd and CI send) in the middle of a snapshot: as Ctrl-C, the temporary
    .snapshot-XXXX folder and its JSON files are removed and no -o directory appears; it used to stay behind."""
    _cluster(api)
    api.inject("GET", r"/persistentvolumeclaims$", 500, hang_s=60)  # the snapshot waits here, files written
    out = tmp_path / "work" / "snap"
    out.parent.mkdir()
    kubeconfig = api.kubeconfig(str(tmp_path / "kc"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "packsched.cli.main", "snapshot", "--kubeconfig", kubeconfig, "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background job's is ignored
    )
    deadline = time.monotonic() + 60
    while not any("persistentvolumeclaims" in path for _, path, _ in api.stats.log) and proc.poll() is None:
        assert time.monotonic() < deadline, "the snapshot never listed persistentvolumeclaims"
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".snapshot-")]  # the work in progress
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    assert list(out.parent.iterdir()) == []
    assert stderr.splitlines()[-1] == f"{word}: no snapshot written"
    assert "Traceback" not in stderr and stdout == ""


def test_a_full_disk_during_snapshot_is_one_error_and_leaves_nothing(
    api: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write error half-way through a file: one line naming the file, exit code 2, no directory left."""
    from typer.testing import CliRunner

    from packsched.cli.main import app
    from packsched.live import snapshot

    real_open = open

    class FullDisk:
        def __init__(self, path: str, *args: Any, **kwargs: Any) -> None:
            self.fh = real_open(path, *args, **kwargs)
            self.path = path

        def __enter__(self) -> FullDisk:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

        def write(self, text: str) -> int:
            if self.path.endswith("pods.json"):
                self.fh.write(text[:100])
                raise OSError(28, "No space left on device")
            return int(self.fh.write(text))

    _cluster(api)
    monkeypatch.setattr(snapshot, "open", FullDisk, raising=False)
    out = tmp_path / "work" / "snap"
    out.parent.mkdir()
    kubeconfig = api.kubeconfig(str(tmp_path / "kc"))
    result = CliRunner().invoke(app, ["snapshot", "--kubeconfig", kubeconfig, "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == f"error: {out / 'pods.json'}: cannot write: No space left on device"
    assert list(out.parent.iterdir()) == []


def test_the_commands_snapshot_md_suggests_run(api: FakeApiServer, tmp_path: Path) -> None:
    """SNAPSHOT.md suggested ``packsched explain DIR POD``, which fails (``--pod`` is required): every command it
    suggests now runs, DIR and NAMESPACE/NAME filled in."""
    from typer.testing import CliRunner

    from packsched.cli.main import app

    _cluster(api)
    config = tmp_path / "sched.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    port = _port(api, tmp_path)
    try:
        take_snapshot(port, str(tmp_path / "with"), scheduler_config=config.read_text())
        take_snapshot(port, str(tmp_path / "without"))
    finally:
        port.close()
    for folder in ("with", "without"):
        snap = tmp_path / folder
        text = (snap / INFO_FILE).read_text()
        (block,) = re.findall(r"```sh\n(.*?)```", text, re.S)
        commands = block.strip().splitlines()
        assert [c.split()[:2] for c in commands] == [["packsched", "simulate"], ["packsched", "explain"]]
        assert ("--config DIR/scheduler-config.yaml" in block) == (folder == "with")
        for command in commands:
            args = shlex.split(command.replace("NAMESPACE/NAME", "team-a/spread-me").replace("DIR", str(snap)))[1:]
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0, (command, result.output)
