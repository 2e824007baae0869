"""CapacityScheduling on the live cluster: ElasticQuotas are watched and, with every assigned pod, delivered to
the plugin as cluster events; a quota's max holds, and room freed by a deleted pod lets the next one in."""

from __future__ import annotations

from pathlib import Path

import yaml

from live.fakeapi import FakeApiServer
from live.harness import DEPLOY, check_cluster, load, node, pod, wait, write_config
from packsched.live.kube import KubernetesPort
from packsched.live.port import ELASTIC_QUOTAS
from packsched.live.serve import ServeOptions, Server
from packsched.plugins.registry import in_tree_registry


def _quota_config(tmp: Path) -> str:
    path = write_config(tmp)
    data = yaml.safe_load(Path(path).read_text())
    data["profiles"][0]["plugins"]["multiPoint"] = {"enabled": [{"name": "CapacityScheduling"}]}
    data["profiles"][0]["plugins"]["postFilter"] = {
        "enabled": [{"name": "CapacityScheduling"}],
        "disabled": [{"name": "*"}],
    }
    Path(path).write_text(yaml.safe_dump(data))
    return path


def test_elastic_quota_max_holds_and_freed_room_is_used(api: FakeApiServer, tmp_path: Path) -> None:
    import threading

    api.create("nodes", node("n0", cpu="8"))
    api.create(
        "elasticquotas",
        {
            "metadata": {"name": "q", "namespace": "team"},
            "spec": {"min": {"cpu": "1", "memory": "8Gi"}, "max": {"cpu": "1", "memory": "8Gi"}},
        },
    )
    names = ["a", "b", "c"]
    for n in names:
        api.create("pods", pod(n, cpu="500m", namespace="team"))
    port = KubernetesPort.connect(api.kubeconfig(str(tmp_path / "kc")), timeout_s=2)
    options = ServeOptions(bind_address="127.0.0.1", port=0, watch_timeout_s=5)
    server = Server(port, load(_quota_config(tmp_path)), in_tree_registry(), options)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    ctl = server.controller
    try:
        assert wait(lambda: len(api.stats.bindings) == 2 and len(ctl.queue.unschedulable) == 1, 10)
        assert ELASTIC_QUOTAS in [i.res for i in server.informers]
        (waiting,) = [k.split("/")[1] for k in ctl.queue.unschedulable]
        bound = [n for n in names if n != waiting]
        api.delete("pods", "team", bound[0])  # the quota has room again
        assert wait(lambda: bool((api.get("pods", "team", waiting) or {}).get("spec", {}).get("nodeName")), 10)
        # a bigger quota (an UPDATE event) lets one more in
        eq = api.get("elasticquotas", "team", "q")
        assert eq is not None
        eq["spec"] = {"min": {"cpu": "2", "memory": "8Gi"}, "max": {"cpu": "2", "memory": "8Gi"}}
        with api.lock:
            api._update("elasticquotas", "team", "q", eq)
        api.create("pods", pod("d", cpu="500m", namespace="team"))
        assert wait(lambda: bool((api.get("pods", "team", "d") or {}).get("spec", {}).get("nodeName")), 10)
    finally:
        server.stop.set()
        thread.join(10)
    # exactly what deploy/rbac-elasticquota.yaml grants: list and watch of elasticquotas
    docs = yaml.safe_load_all((DEPLOY / "rbac-elasticquota.yaml").read_text())
    rbac = [d for d in docs if d["kind"] == "ClusterRole"]
    granted = {
        (g, r, v)
        for d in rbac
        for rule in d["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }
    used = {
        ("scheduling.x-k8s.io", "elasticquotas", "watch" if w else "list")
        for m, p, w in api.stats.log
        if "/elasticquotas" in p and m == "GET"
    }
    assert {p for m, p, _ in api.stats.log if "/elasticquotas" in p and m != "GET"} == set()
    assert used == granted
    placed = check_cluster(api)
    assert sorted(placed) == sorted(f"team/{n}" for n in [*bound[1:], waiting, "d"])


def test_quota_status_used_written_as_upstreams_controller_and_gauges(api: FakeApiServer, tmp_path: Path) -> None:
    """With --write-quota-status: status.used counts Running pods only (no overhead), is patched only when it
    changes, and the RBAC file for it grants exactly that patch; the per-quota gauges show min, max and used."""
    import threading

    api.create("nodes", node("n0", cpu="8"))
    api.create(
        "elasticquotas",
        {
            "metadata": {"name": "q", "namespace": "team"},
            "spec": {"min": {"cpu": "1", "memory": "8Gi"}, "max": {"cpu": "4", "memory": "16Gi"}},
        },
    )
    api.create("pods", pod("a", cpu="500m", namespace="team"))
    api.create("pods", pod("b", cpu="250m", namespace="team"))
    port = KubernetesPort.connect(api.kubeconfig(str(tmp_path / "kc")), timeout_s=2)
    options = ServeOptions(bind_address="127.0.0.1", port=0, watch_timeout_s=5, quota_status=True)
    server = Server(port, load(_quota_config(tmp_path)), in_tree_registry(), options)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()

    def used() -> dict[str, str]:
        eq = api.get("elasticquotas", "team", "q") or {}
        return dict((eq.get("status") or {}).get("used") or {})

    try:
        assert wait(lambda: len(api.stats.bindings) == 2, 10)
        # bound but still Pending (no kubelet here): zero for every resource min or max lists
        assert wait(lambda: used() == {"cpu": "0", "memory": "0"}, 10)
        running = api.get("pods", "team", "a")
        assert running is not None
        running["status"]["phase"] = "Running"
        with api.lock:
            api._update("pods", "team", "a", running)
        assert wait(lambda: used() == {"cpu": "500m", "memory": "256Mi"}, 10)  # the harness pod asks 256Mi
        exposition = server.metrics.exposition().decode()
        assert 'packsched_elasticquota_used{name="q",namespace="team",resource="cpu"} 750.0' in exposition
        assert 'packsched_elasticquota_max{name="q",namespace="team",resource="cpu"} 4000.0' in exposition
        assert 'packsched_elasticquota_min{name="q",namespace="team",resource="memory"} 8.589934592e+09' in exposition
    finally:
        server.stop.set()
        thread.join(10)
    patches = [p for m, p, _ in api.stats.log if m == "PATCH" and "/elasticquotas/" in p]
    assert len(patches) == 2 and all(p.endswith("/elasticquotas/q/status") for p in patches)  # only on change
    docs = yaml.safe_load_all((DEPLOY / "rbac-elasticquota-status.yaml").read_text())
    rules = [rule for d in docs if d["kind"] == "ClusterRole" for rule in d["rules"]]
    assert rules == [{"apiGroups": ["scheduling.x-k8s.io"], "resources": ["elasticquotas/status"], "verbs": ["patch"]}]
