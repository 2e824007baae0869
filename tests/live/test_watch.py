"""What serve watches beside nodes and pods, through its real informers against the fake API server: namespace
labels (InterPodAffinity's namespaceSelector), Services and controllers (PodTopologySpread's default constraints),
claims, volumes and CSINodes (the volume plugins).

Each cluster is laid out so that bin packing (the shipped profile's RequestedToCapacityRatio) alone would choose
another node than the one the watched objects call for: a pod lands where the test expects only when they were
seen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from live.fakeapi import FakeApiServer
from live.harness import all_bound, check_cluster, load, node, pod, start, wait, write_config
from packsched.live.kube import KubernetesPort
from packsched.live.port import (
    DRA_RESOURCES,
    ELASTIC_QUOTAS,
    NAMESPACES,
    NODES,
    PDBS,
    PODS,
    PRIORITY_CLASSES,
    SERVICES,
    STORAGE_RESOURCES,
    WORKLOADS,
    Resource,
)
from packsched.live.serve import ServeOptions, Server
from packsched.plugins.registry import in_tree_registry

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
OTHER = "default-scheduler"  # pods already running, bound by another scheduler


def _node_of(api: FakeApiServer, name: str, namespace: str = "default") -> str:
    return str(api.get("pods", namespace, name)["spec"]["nodeName"])  # type: ignore[index]


def _bound(api: FakeApiServer, name: str, namespace: str = "default") -> bool:
    p = api.get("pods", namespace, name)
    return bool(p and p["spec"].get("nodeName"))


def _anti_affinity(p: dict[str, Any], app: str, team: str) -> dict[str, Any]:
    p["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": app}},
                    "namespaceSelector": {"matchLabels": {"team": team}},
                    "topologyKey": HOSTNAME,
                }
            ]
        }
    }
    return p


def test_namespace_selector_reads_namespace_labels_and_their_changes(api: FakeApiServer, tmp_path: Path) -> None:
    for n in ("n0", "n1", "n2"):
        api.create("nodes", node(n))
    api.create("namespaces", {"metadata": {"name": "team-a", "labels": {"team": "a"}}})
    api.create("namespaces", {"metadata": {"name": "team-b"}})
    # n0 is the fullest, then n1: bin packing prefers them in that order
    api.create(
        "pods", pod("web-a", cpu="2", namespace="team-a", labels={"app": "web"}, node_name="n0", scheduler=OTHER)
    )
    api.create(
        "pods", pod("web-b", cpu="1", namespace="team-b", labels={"app": "web"}, node_name="n1", scheduler=OTHER)
    )
    api.create("pods", _anti_affinity(pod("p1"), "web", "a"))
    run = start(api, tmp_path)
    try:
        assert api.wait_for(lambda s: _bound(s, "p1"), 10)
        assert _node_of(api, "p1") == "n1"  # not beside team-a's web pod
        # team-b joins team a: its web pod now repels too (the namespace's new labels, and no stale match cached)
        ns = api.get("namespaces", "", "team-b")
        assert ns is not None
        ns["metadata"]["labels"] = {"team": "a"}
        api.update("namespaces", ns)
        snap_ns = run.server.controller.scheduler.snapshot.namespaces
        assert wait(lambda: snap_ns.get("team-b", {}).get("team") == "a", 10)
        api.create("pods", _anti_affinity(pod("p2"), "web", "a"))
        assert api.wait_for(lambda s: _bound(s, "p2"), 10)
        assert _node_of(api, "p2") == "n2"
        # a deleted namespace has only the label every namespace carries
        api.delete("namespaces", "", "team-a")
        assert wait(lambda: "team-a" not in snap_ns, 10)
    finally:
        run.stop()
    check_cluster(api)


HOSTNAME_SPREAD = [
    {
        "name": "PodTopologySpread",
        "args": {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "DoNotSchedule"}],
        },
    }
]


def test_default_spread_selects_by_services_and_controllers(api: FakeApiServer, tmp_path: Path) -> None:
    api.create("nodes", node("n0"))
    api.create("nodes", node("n1"))
    api.create("pods", pod("old-svc", labels={"app": "svc"}, node_name="n0", scheduler=OTHER))
    api.create("pods", pod("old-rs", labels={"app": "rs"}, node_name="n0", scheduler=OTHER))
    api.create("services", {"metadata": {"name": "svc", "namespace": "default"}, "spec": {"selector": {"app": "svc"}}})
    rs = {
        "metadata": {"name": "rs", "namespace": "default", "uid": "rs-uid"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "rs"}},
            "template": {"metadata": {"labels": {"app": "rs"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
    }
    api.create("replicasets", rs)
    owned = pod("new-rs", labels={"app": "rs"})
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}
    ]
    api.create("pods", pod("new-svc", labels={"app": "svc"}))
    api.create("pods", owned)
    api.create("pods", pod("loner", labels={"app": "loner"}))  # nothing selects it: no default constraint
    run = start(api, tmp_path, plugin_config=HOSTNAME_SPREAD)
    try:
        assert api.wait_for(all_bound(["new-svc", "new-rs", "loner"]), 10)
        # skew 1 on hostname: each pod goes beside none of its own (bin packing alone would pick n0, the fuller)
        assert _node_of(api, "new-svc") == "n1"
        assert _node_of(api, "new-rs") == "n1"
        assert _node_of(api, "loner") == "n1"  # n1 is the fuller by then
        spread = run.server.controller.scheduler.frameworks["packsched"].plugins["PodTopologySpread"]
        assert set(spread.services) == {"default/svc"}  # type: ignore[attr-defined]
        assert spread.selectors[("default", "ReplicaSet", "rs")] is not None  # type: ignore[attr-defined]
        api.delete("services", "default", "svc")
        assert wait(lambda: not spread.services, 10)  # type: ignore[attr-defined]
    finally:
        run.stop()
    check_cluster(api)


def _pv(name: str, *, zone: str = "", driver: str = "", claim: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "sc"}
    labels = {}
    if zone:
        labels[ZONE] = zone
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]
            }
        }
    if driver:
        spec["csi"] = {"driver": driver, "volumeHandle": f"h-{name}"}
    if claim:
        spec["claimRef"] = {"namespace": "default", "name": claim}
    return {"metadata": {"name": name, "labels": labels}, "spec": spec, "status": {"phase": "Bound"}}


def _pvc(name: str, volume: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "sc",
            "volumeName": volume,
        },
        "status": {"phase": "Bound"},
    }


def _with_claim(p: dict[str, Any], claim: str) -> dict[str, Any]:
    p["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return p


def test_a_claim_bound_to_a_zonal_volume_lands_in_its_zone(api: FakeApiServer, tmp_path: Path) -> None:
    api.create("nodes", node("a0", labels={ZONE: "a"}))
    api.create("nodes", node("b0", labels={ZONE: "b"}))
    api.create("pods", pod("filler", cpu="2", node_name="a0", scheduler=OTHER))  # bin packing prefers a0
    api.create("storageclasses", {"metadata": {"name": "sc"}, "provisioner": "ebs.csi"})
    api.create("pods", _with_claim(pod("db"), "data"))  # its claim does not exist yet
    run = start(api, tmp_path)
    try:
        run.wait_ready()
        assert wait(lambda: run.server.controller.stats.unschedulable >= 1, 10)
        assert not _bound(api, "db")
        api.create("persistentvolumes", _pv("pv-b", zone="b", claim="data"))
        api.create("persistentvolumeclaims", _pvc("data", "pv-b"))  # the pod waiting for it is tried again
        assert api.wait_for(lambda s: _bound(s, "db"), 10)
        assert _node_of(api, "db") == "b0"
        storage = run.server.controller.storage
        assert set(storage.claims) == {"default/data"} and set(storage.volumes) == {"pv-b"}
        assert set(storage.classes) == {"sc"}
        api.delete("persistentvolumeclaims", "default", "data")
        api.delete("persistentvolumes", "", "pv-b")
        api.delete("storageclasses", "", "sc")
        assert wait(lambda: not storage.claims and not storage.volumes and not storage.classes, 10)
    finally:
        run.stop()
    check_cluster(api)


def test_a_csinode_limit_keeps_a_volume_off_a_full_node(api: FakeApiServer, tmp_path: Path) -> None:
    api.create("nodes", node("n0"))
    api.create("nodes", node("n1"))
    api.create("storageclasses", {"metadata": {"name": "sc"}, "provisioner": "ebs.csi"})
    for i in (0, 1):
        api.create("persistentvolumes", _pv(f"pv{i}", driver="ebs.csi", claim=f"c{i}"))
        api.create("persistentvolumeclaims", _pvc(f"c{i}", f"pv{i}"))
    csi = {"name": "ebs.csi", "nodeID": "x", "allocatable": {"count": 1}}
    api.create("csinodes", {"metadata": {"name": "n0"}, "spec": {"drivers": [csi]}})
    api.create(
        "pods", _with_claim(pod("old", cpu="2", node_name="n0", scheduler=OTHER), "c0")
    )  # n0's one volume; bin packing's pick
    api.create("pods", _with_claim(pod("new"), "c1"))
    api.create("pods", _with_claim(pod("later"), "c1"))  # the same volume again, once n0 may take one more
    run = start(api, tmp_path)
    try:
        assert api.wait_for(lambda s: _bound(s, "new"), 10)
        assert _node_of(api, "new") == "n1"
        assert api.wait_for(lambda s: _bound(s, "later"), 10)
        assert _node_of(api, "later") == "n1"  # pv1 is attached there already: no new attachment
        # n0's limit is raised: a pod with a fresh volume may go there again
        cur = api.get("csinodes", "", "n0")
        assert cur is not None
        cur["spec"]["drivers"][0]["allocatable"]["count"] = 5
        api.update("csinodes", cur)
        storage = run.server.controller.storage
        assert wait(lambda: storage.csi_nodes["n0"].drivers["ebs.csi"] == 5, 10)
        api.create("persistentvolumes", _pv("pv2", driver="ebs.csi", claim="c2"))
        api.create("persistentvolumeclaims", _pvc("c2", "pv2"))
        assert wait(lambda: "default/c2" in storage.claims, 10)
        api.create("pods", _with_claim(pod("third"), "c2"))
        assert api.wait_for(lambda s: _bound(s, "third"), 10)
        assert _node_of(api, "third") == "n0"
    finally:
        run.stop()
    check_cluster(api)


def test_serve_watches_only_what_its_profiles_read(api: FakeApiServer, tmp_path: Path) -> None:
    def watched(disabled: list[str]) -> set[Resource]:
        data = yaml.safe_load(Path(write_config(tmp_path)).read_text())
        data["profiles"][0]["plugins"]["multiPoint"] = {"disabled": [{"name": n} for n in disabled]}
        path = tmp_path / "bare.yaml"
        path.write_text(yaml.safe_dump(data))
        port = KubernetesPort.connect(api.kubeconfig(str(tmp_path / "kubeconfig")))
        server = Server(port, load(str(path)), in_tree_registry(), ServeOptions(serve_http=False))
        try:
            return set(server.watched())
        finally:
            port.close()

    base = {NODES, PODS, PDBS, PRIORITY_CLASSES}
    volumes = ["VolumeBinding", "VolumeZone", "VolumeRestrictions", "NodeVolumeLimits", "DynamicResources"]
    # the default profile reads them all (ElasticQuotas are for CapacityScheduling)
    assert watched([]) == base | {NAMESPACES, SERVICES, *WORKLOADS, *STORAGE_RESOURCES, *DRA_RESOURCES}
    assert watched(["InterPodAffinity", "PodTopologySpread", *volumes]) == base
    assert watched(["InterPodAffinity", "PodTopologySpread", *volumes[1:]]) == base | set(STORAGE_RESOURCES)
    assert watched(["InterPodAffinity", "PodTopologySpread", *volumes[:-1]]) == base | set(DRA_RESOURCES)
    assert watched(["PodTopologySpread", *volumes]) == base | {NAMESPACES}
    assert watched(["InterPodAffinity", *volumes]) == base | {SERVICES, *WORKLOADS}
    # the live adapter's other handlers are told apart from these
    assert ELASTIC_QUOTAS not in watched([])


def test_handlers_leave_out_unreadable_objects_and_ignore_controller_status(tmp_path: Path) -> None:
    from live.test_cache import StubPort
    from packsched.framework.interface import ClusterEvent
    from packsched.live.controller import Controller
    from packsched.live.port import ADDED, DELETED, MODIFIED, PVCS, REPLICA_SETS

    ctl = Controller(StubPort(), load(write_config(tmp_path)), in_tree_registry())  # type: ignore[arg-type]
    seen: list[ClusterEvent] = []
    ctl.scheduler.dispatch = seen.append  # type: ignore[method-assign]
    rs: dict[str, Any] = {
        "metadata": {"name": "rs", "namespace": "default"},
        "spec": {
            "replicas": 500,  # read without making its pods
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c"}]}},
        },
    }
    ctl.handle(REPLICA_SETS, ADDED, rs)
    ctl.handle(REPLICA_SETS, MODIFIED, {**rs, "status": {"replicas": 3}})  # same selector: no event
    rs["spec"]["selector"] = {"matchLabels": {"app": "a", "tier": "b"}}
    rs["spec"]["template"]["metadata"]["labels"]["tier"] = "b"
    ctl.handle(REPLICA_SETS, MODIFIED, rs)
    ctl.handle(REPLICA_SETS, DELETED, rs)
    ctl.handle(REPLICA_SETS, DELETED, rs)  # already gone: nothing
    assert [(e.resource, e.action) for e in seen] == [
        ("Workload", "Add"),
        ("Workload", "Update"),
        ("Workload", "Delete"),
    ]
    ctl.handle(SERVICES, DELETED, {"metadata": {"name": "never-seen", "namespace": "default"}})
    assert len(seen) == 3
    bad = {"metadata": {"name": "c", "namespace": "default"}, "spec": {"accessModes": ["Sometimes"]}}
    ctl.handle(PVCS, ADDED, bad)
    assert ctl.stats.decode_errors == 1 and not ctl.storage.claims and ctl.storage.generation == 0
    ctl.handle(NAMESPACES, ADDED, {"metadata": {"name": "x", "labels": {"a": 1}}})  # a label that is no string
    assert ctl.stats.decode_errors == 2 and "x" not in ctl.snapshot.namespaces
