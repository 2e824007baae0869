"""Helpers for the live adapter's tests: objects, a config, packsched serving against the fake API server."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from live.fakeapi import FakeApiServer
from packsched.config import load_config
from packsched.config.types import KubeSchedulerConfiguration
from packsched.live.kube import KubernetesPort
from packsched.live.serve import ServeOptions, Server
from packsched.plugins.registry import in_tree_registry

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SCHEDULER = "packsched"


def deploy_config_text() -> str:
    """The KubeSchedulerConfiguration shipped in deploy/configmap.yaml (the tests run what users run)."""
    cm = yaml.safe_load((DEPLOY / "configmap.yaml").read_text())
    return str(cm["data"]["config.yaml"])


def write_config(
    tmp: Path,
    fast_election: bool = True,
    qps: float = 1000,
    burst: int = 100,
    plugin_config: list[dict[str, Any]] | None = None,
    multi_point: dict[str, Any] | None = None,
) -> str:
    """The shipped config, its Lease in kube-system, with leader-election timings shortened (``fast_election``:
    leaseDuration 2 s, renewDeadline 1.5 s) for tests, and the client's rate limit raised
    (kube-scheduler's default, 50 requests a second, would make every test wait on it): the qps the comparison
    with kube-scheduler on a real cluster used. ``plugin_config``: entries added to the profile's pluginConfig;
    ``multi_point``: the profile's plugins.multiPoint (plugins enabled and disabled)."""
    data = yaml.safe_load(deploy_config_text())
    data["clientConnection"] = {"qps": qps, "burst": burst}
    data["profiles"][0].setdefault("pluginConfig", []).extend(plugin_config or [])
    if multi_point is not None:
        data["profiles"][0]["plugins"]["multiPoint"] = multi_point
    data["leaderElection"]["resourceNamespace"] = "kube-system"
    if fast_election:
        data["leaderElection"].update({"leaseDuration": "2s", "renewDeadline": "1500ms", "retryPeriod": "200ms"})
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def load(path: str) -> KubeSchedulerConfiguration:
    return load_config(path, set(in_tree_registry()))


def node(
    name: str, cpu: str = "4", memory: str = "8Gi", pods: int = 110, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": str(pods)},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": str(pods)},
        },
    }


def pod(
    name: str,
    cpu: str = "500m",
    memory: str = "256Mi",
    scheduler: str = SCHEDULER,
    namespace: str = "default",
    priority_class: str = "",
    labels: dict[str, str] | None = None,
    node_name: str = "",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels or {}}, "spec": spec}


@dataclass
class Running:
    server: Server
    thread: threading.Thread
    result: list[int]

    def wait_ready(self, timeout_s: float = 10.0) -> None:
        assert wait(lambda: self.server.synced(), timeout_s), "informers did not sync"

    def stop(self, timeout_s: float = 10.0) -> int:
        self.server.stop.set()
        self.thread.join(timeout_s)
        assert not self.thread.is_alive(), "serve did not stop"
        return self.result[0]


def start(
    api: FakeApiServer,
    tmp: Path,
    timeout_s: float = 2.0,
    qps: float = 1000,
    burst: int = 100,
    plugin_config: list[dict[str, Any]] | None = None,
    multi_point: dict[str, Any] | None = None,
    fast_election: bool = False,
    gates: dict[str, bool] | None = None,
    **opts: Any,
) -> Running:
    """``plugin_config``, ``multi_point``, ``fast_election``: as for :func:`write_config` (but the lease's timings
    are kube-scheduler's defaults unless a test is about losing or taking over the lease: on a loaded machine a
    1.5 s renewDeadline can pass between two renewals and stop the scheduler mid-test)."""
    kubeconfig = api.kubeconfig(str(tmp / "kubeconfig"))
    config = write_config(
        tmp, fast_election, qps=qps, burst=burst, plugin_config=plugin_config, multi_point=multi_point
    )
    cfg = load(config)
    if gates:  # feature gates set over the release's defaults (``--feature-gates``)
        cfg.kube_version = cfg.kube_version.with_gates(gates)
    port = KubernetesPort.connect(kubeconfig, timeout_s=timeout_s, qps=cfg.client_qps, burst=cfg.client_burst)
    options = ServeOptions(bind_address="127.0.0.1", port=0, watch_timeout_s=5, **opts)
    server = Server(port, cfg, in_tree_registry(), options)
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(server.run()), daemon=True)
    thread.start()
    return Running(server, thread, result)


def all_bound(names: list[str]) -> Any:
    def check(s: FakeApiServer) -> bool:
        return all((s.store["pods"].get(("default", n)) or {}).get("spec", {}).get("nodeName") for n in names)

    return check


def check_cluster(api: FakeApiServer, expect_bound: int | None = None) -> dict[str, str]:
    """Every packsched pod bound at most once by the API's count, none lost, no node over-committed."""
    from packsched.api.quantity import parse_quantity

    pods = api.objects("pods")
    nodes = {n["metadata"]["name"]: n for n in api.objects("nodes")}
    placed: dict[str, str] = {}
    use: dict[str, list[int]] = {n: [0, 0, 0] for n in nodes}
    for p in pods:
        key = f"{p['metadata']['namespace']}/{p['metadata']['name']}"
        node_name = p["spec"].get("nodeName")
        if p["spec"].get("schedulerName") == SCHEDULER and node_name:
            assert api.stats.bindings.get(key) == 1, f"{key} bound {api.stats.bindings.get(key)} times"
        if node_name:
            placed[key] = node_name
            req = p["spec"]["containers"][0]["resources"]["requests"]
            use.setdefault(node_name, [0, 0, 0])
            use[node_name][0] += int(parse_quantity(req["cpu"]) * 1000)
            use[node_name][1] += int(parse_quantity(req["memory"]))
            use[node_name][2] += 1
    for name, (cpu, mem, count) in use.items():
        if name not in nodes:
            continue  # a node deleted under its pods (they wait for the pod garbage collector)
        alloc = nodes[name]["status"]["allocatable"]
        assert cpu <= int(parse_quantity(alloc["cpu"]) * 1000), f"node {name} over-committed on cpu"
        assert mem <= int(parse_quantity(alloc["memory"])), f"node {name} over-committed on memory"
        assert count <= int(alloc["pods"]), f"node {name} has too many pods"
    twice = {k: n for k, n in api.stats.bindings.items() if n != 1}
    assert not twice, f"bound more than once: {twice}"  # deleted pods included
    if expect_bound is not None:
        assert len([k for k in placed if k in api.stats.bindings]) == expect_bound
    return placed


def wait(predicate: Any, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False
