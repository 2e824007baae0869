"""Live mode with DRA against the fake API server: serve watches DeviceClasses, ResourceSlices and ResourceClaims and,
as kube-scheduler's DynamicResources does, writes each claim's status.allocation and reservedFor before it binds
the pod; it waits for claims made from templates (the resourceclaim controller's job, played here by the test),
handles a conflict on the claim write, shares a claim between pods, creates the claim for DRA-backed extended
resources and names it in the pod's status.extendedResourceClaimStatus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from live.fakeapi import FakeApiServer
from live.harness import Running, all_bound, node, pod, start, wait
from packsched.live.port import DRA_RESOURCES

DRIVER = "gpu.example.com"
CLAIM_STATUS = r"/resourceclaims/[^/]+/status$"


def device_class(name: str = "gpu", extended: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"metadata": {"name": name}, "spec": spec}


def resource_slice(node_name: str, devices: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{node_name}-gpus"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}"} for i in range(devices)],
        },
    }


def claim_spec(count: int = 1) -> dict[str, Any]:
    exactly = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count}
    return {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}


def claim(name: str, owner: dict[str, Any] | None = None, count: int = 1) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if owner is not None:
        ref = {"apiVersion": "v1", "kind": "Pod", "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}
        meta["ownerReferences"] = [{**ref, "controller": True}]
    return {"metadata": meta, "spec": claim_spec(count)}


def claim_pod(name: str, *, template: str = "", claim_name: str = "") -> dict[str, Any]:
    out = pod(name, cpu="100m")
    ref: dict[str, Any] = {"name": "gpu"}
    if template:
        ref["resourceClaimTemplateName"] = template
    else:
        ref["resourceClaimName"] = claim_name
    out["spec"]["resourceClaims"] = [ref]
    return out


def cluster(api: FakeApiServer, nodes: int = 1, devices: int = 2, version: str = "v1") -> None:
    api.serve_dra(version)
    api.create("deviceclasses", device_class())
    for i in range(nodes):
        api.create("nodes", node(f"n{i}"))
        api.create("resourceslices", resource_slice(f"n{i}", devices))


def requests(api: FakeApiServer) -> list[tuple[str, str]]:
    return [(m, p) for m, p, _ in api.stats.log]


def first(log: list[tuple[str, str]], method: str, suffix: str) -> int:
    return next(i for i, (m, p) in enumerate(log) if m == method and p.endswith(suffix))


def reserved(api: FakeApiServer, name: str) -> list[str]:
    got = api.get("resourceclaims", "default", name) or {}
    return [r["name"] for r in (got.get("status") or {}).get("reservedFor") or []]


def serve(api: FakeApiServer, tmp_path: Path, **opts: Any) -> Running:
    run = start(api, tmp_path, **opts)
    run.wait_ready()
    return run


@pytest.mark.parametrize("claim_first", [True, False], ids=["claim-then-status", "status-then-claim"])
def test_template_claim_allocated_and_reserved_before_the_pod_is_bound(
    api: FakeApiServer, tmp_path: Path, claim_first: bool
) -> None:
    """The controller makes the claim and names it in the pod's status, in either order: the pod is tried again
    on the later of the two (the pod's update, or the claim's creation)."""
    cluster(api)
    run = serve(api, tmp_path)
    try:
        created = api.create("pods", claim_pod("p", template="gpu-template"))
        ctl = run.server.controller
        # its claim is not made yet: the pod waits at PreEnqueue, as upstream's
        assert wait(lambda: ctl.queue.is_gated("default/p"), 10)
        assert not (api.get("pods", "default", "p") or {}).get("spec", {}).get("nodeName")
        # the resourceclaim controller makes the claim from the template, then names it in the pod's status
        if claim_first:
            api.create("resourceclaims", claim("p-gpu-x7k2q", owner=created))
        api.patch_status(
            "pods",
            "default",
            "p",
            {"status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x7k2q"}]}},
        )
        if not claim_first:
            # the pod names a claim that does not exist yet: it waits at PreEnqueue for the claim
            assert wait(lambda: "could not find ResourceClaim" in ctl.queue.reason("default/p"), 10)
            api.create("resourceclaims", claim("p-gpu-x7k2q", owner=created))
        assert api.wait_for(all_bound(["p"]), 15)
    finally:
        run.stop()
    got = api.get("resourceclaims", "default", "p-gpu-x7k2q")
    assert got is not None
    allocation = got["status"]["allocation"]
    results = allocation["devices"]["results"]
    assert [(r["request"], r["driver"], r["pool"]) for r in results] == [("gpu", DRIVER, "n0")]
    assert results[0]["device"] in ("gpu-0", "gpu-1")
    fields = allocation["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"]
    assert fields == [{"key": "metadata.name", "operator": "In", "values": ["n0"]}]
    assert got["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": created["metadata"]["uid"]}]
    assert "resource.kubernetes.io/delete-protection" in got["metadata"]["finalizers"]
    log = requests(api)
    assert first(log, "PUT", "/resourceclaims/p-gpu-x7k2q/status") < first(log, "POST", "/pods/p/binding")


def test_a_conflict_on_the_claim_write_reads_the_claim_again(api: FakeApiServer, tmp_path: Path) -> None:
    cluster(api)
    api.create("resourceclaims", claim("c"))
    api.inject("PUT", CLAIM_STATUS, status=409, count=1)
    run = serve(api, tmp_path)
    try:
        api.create("pods", claim_pod("p", claim_name="c"))
        assert api.wait_for(all_bound(["p"]), 15)
        assert run.server.controller.claim_writer.conflicts == 1
    finally:
        run.stop()
    assert api.stats.faults_fired == 1
    log = requests(api)
    puts = [i for i, (m, p) in enumerate(log) if m == "PUT" and p.endswith("/resourceclaims/c/status")]
    assert len(puts) == 2  # refused once, then written
    assert ("GET", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c") in log[puts[0] : puts[1]]
    assert reserved(api, "c") == ["p"]
    assert puts[1] < first(log, "POST", "/pods/p/binding")


def test_a_shared_claim_is_allocated_once_and_reserved_for_both_pods(api: FakeApiServer, tmp_path: Path) -> None:
    cluster(api, nodes=2, devices=1)
    api.create("resourceclaims", claim("shared"))
    run = serve(api, tmp_path)
    try:
        api.create_many("pods", [claim_pod(n, claim_name="shared") for n in ("a", "b")])
        assert api.wait_for(all_bound(["a", "b"]), 20)
    finally:
        run.stop()
    assert sorted(reserved(api, "shared")) == ["a", "b"]
    nodes = {api.get("pods", "default", n)["spec"]["nodeName"] for n in ("a", "b")}  # type: ignore[index]
    got = api.get("resourceclaims", "default", "shared")
    assert got is not None
    pool = got["status"]["allocation"]["devices"]["results"][0]["pool"]
    assert nodes == {pool}  # both where the claim's device is
    assert api.stats.bindings == {"default/a": 1, "default/b": 1}


def test_a_failed_bind_takes_the_pod_out_of_the_claim_and_retries(api: FakeApiServer, tmp_path: Path) -> None:
    cluster(api)
    api.create("resourceclaims", claim("c"))
    api.inject("POST", r"/pods/p/binding$", status=500, count=1)
    run = serve(api, tmp_path)
    try:
        api.create("pods", claim_pod("p", claim_name="c"))
        assert api.wait_for(all_bound(["p"]), 20)
    finally:
        run.stop()
    log = requests(api)
    binds = [i for i, (m, p) in enumerate(log) if m == "POST" and p.endswith("/pods/p/binding")]
    unreserve = first(log, "PATCH", "/resourceclaims/c/status")
    assert binds[0] < unreserve < binds[1]  # out of reservedFor after the failure, reserved again before the bind
    assert reserved(api, "c") == ["p"]
    assert api.stats.bindings == {"default/p": 1}


def test_extended_resource_served_by_dra(api: FakeApiServer, tmp_path: Path) -> None:
    """example.com/gpu comes through DRA (the node does not advertise it); example.com/nic, which a class serves too,
    through the node's device plugin (advertised): the claim and the pod's request mappings are for the gpus only."""
    api.serve_dra()
    api.create("deviceclasses", device_class(extended="example.com/gpu"))
    api.create("deviceclasses", device_class("nic", extended="example.com/nic"))
    n0 = node("n0")
    for field in ("capacity", "allocatable"):
        n0["status"][field]["example.com/nic"] = "1"
    api.create("nodes", n0)
    api.create("resourceslices", resource_slice("n0", 2))
    run = serve(api, tmp_path)
    try:
        p = pod("p", cpu="100m")
        p["spec"]["containers"][0]["resources"]["requests"].update({"example.com/gpu": "2", "example.com/nic": "1"})
        p["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "2", "example.com/nic": "1"}
        created = api.create("pods", p)
        assert api.wait_for(all_bound(["p"]), 15)
    finally:
        run.stop()
    claims = api.objects("resourceclaims")
    assert len(claims) == 1
    made = claims[0]
    meta = made["metadata"]
    assert meta["name"].startswith("p-extended-resources-")
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    owner = meta["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "Pod",
        "p",
        created["metadata"]["uid"],
        True,
    )
    (request,) = made["spec"]["devices"]["requests"]
    assert request["exactly"] == {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}
    assert sorted(r["device"] for r in made["status"]["allocation"]["devices"]["results"]) == ["gpu-0", "gpu-1"]
    assert reserved(api, meta["name"]) == ["p"]
    bound = api.get("pods", "default", "p")
    assert bound is not None
    assert bound["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "c", "resourceName": "example.com/gpu", "requestName": request["name"]}],
        "resourceClaimName": meta["name"],
    }
    log = requests(api)
    create = first(log, "POST", "/namespaces/default/resourceclaims")
    status = first(log, "PUT", f"/resourceclaims/{meta['name']}/status")
    pod_status = first(log, "PATCH", "/pods/p/status")
    assert create < status < pod_status < first(log, "POST", "/pods/p/binding")


@pytest.mark.parametrize("discovery", [True, False], ids=["discovered", "discovery-failed"])
def test_older_dra_version_is_watched_and_written(api: FakeApiServer, tmp_path: Path, discovery: bool) -> None:
    """A cluster serving resource.k8s.io/v1beta2 only: its discovery document says so (or, when it cannot be read,
    each informer tries v1, then v1beta2), and claims are written at that version."""
    cluster(api, version="v1beta2")
    api.create("resourceclaims", claim("c"))
    if not discovery:
        api.inject("GET", r"^/apis/resource.k8s.io$", status=503)
    run = serve(api, tmp_path)
    try:
        api.create("pods", claim_pod("p", claim_name="c"))
        assert api.wait_for(all_bound(["p"]), 15)
    finally:
        run.stop()
    log = requests(api)
    assert ("PUT", "/apis/resource.k8s.io/v1beta2/namespaces/default/resourceclaims/c/status") in log
    assert reserved(api, "c") == ["p"]
    v1 = [p for _, p in log if p.startswith("/apis/resource.k8s.io/v1/")]
    assert len(v1) == (0 if discovery else len(DRA_RESOURCES))  # v1 asked only when discovery did not answer


def test_a_cluster_without_dra_is_not_watched_for_it(api: FakeApiServer, tmp_path: Path) -> None:
    """Its discovery document is not found: no DRA informer starts (one request in all), and pods are scheduled."""
    run = serve(api, tmp_path)
    try:
        assert not [i for i in run.server.informers if i.res.group == "resource.k8s.io"]
        api.create("nodes", node("n0"))
        api.create("pods", pod("plain", cpu="100m"))
        assert api.wait_for(all_bound(["plain"]), 15)
    finally:
        run.stop()
    assert [(m, p) for m, p in requests(api) if "resource.k8s.io" in p] == [("GET", "/apis/resource.k8s.io")]


def test_post_filter_deallocates_a_claim_no_pod_uses_on_the_server(api: FakeApiServer, tmp_path: Path) -> None:
    """The claim is allocated on a node the pod does not fit (too little cpu) and reserved for no pod: PostFilter
    clears its allocation on the API server, the claim's watch moves the pod, and it is allocated and bound
    elsewhere."""
    api.serve_dra()
    api.create("deviceclasses", device_class())
    api.create("nodes", node("n0", cpu="200m"))
    api.create("nodes", node("n1"))
    for name in ("n0", "n1"):
        api.create("resourceslices", resource_slice(name, 1))
    stale = claim("c")
    stale["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": "n0", "device": "gpu-0"}]},
            "nodeSelector": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n0"]}]}]
            },
        }
    }
    api.create("resourceclaims", stale)
    run = serve(api, tmp_path)
    try:
        p = claim_pod("p", claim_name="c")
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "500m"
        api.create("pods", p)
        assert api.wait_for(all_bound(["p"]), 20)
    finally:
        run.stop()
    assert api.get("pods", "default", "p")["spec"]["nodeName"] == "n1"  # type: ignore[index]
    got = api.get("resourceclaims", "default", "c")
    assert got is not None
    assert got["status"]["allocation"]["devices"]["results"][0]["pool"] == "n1"
    assert reserved(api, "c") == ["p"]
    writes = [p for m, p in requests(api) if m == "PUT" and p.endswith("/resourceclaims/c/status")]
    assert len(writes) == 2  # deallocated, then allocated on n1 with the pod reserved


def test_a_batch_of_dra_events_moves_the_waiting_pods_once(tmp_path: Path) -> None:
    """Claims listed after the pods that wait for them: the batch runs the held-back pods' PreEnqueue once, not once
    per claim, and only for the pods using those claims (upstream's queueing hint); a new slice moves every pod."""
    from live.harness import load, write_config
    from live.test_cache import StubPort
    from packsched.live.controller import Controller
    from packsched.live.port import ADDED, PODS, RESOURCE_CLAIMS, RESOURCE_SLICES
    from packsched.plugins.registry import in_tree_registry

    ctl = Controller(StubPort(), load(write_config(tmp_path)), in_tree_registry())  # type: ignore[arg-type]
    moves: list[frozenset[str] | None] = []
    real = ctl.scheduler.dra_changed

    def changed(claims: frozenset[str] | None) -> None:
        moves.append(claims)
        real(claims)

    ctl.informers.dra.changed = changed
    for i in range(6):
        p = claim_pod(f"p{i}", claim_name=f"c{i}")
        p["metadata"]["uid"] = f"uid-{i}"
        ctl.sink(PODS, ADDED, p)
    ctl.drain(0)
    assert moves == [] and all(ctl.queue.is_gated(f"default/p{i}") for i in range(6))
    for i in range(5):
        ctl.sink(RESOURCE_CLAIMS, ADDED, claim(f"c{i}"))
    ctl.drain(0)
    assert moves == [frozenset(f"default/c{i}" for i in range(5))]
    assert not any(ctl.queue.is_gated(f"default/p{i}") for i in range(5))
    assert ctl.queue.is_gated("default/p5")  # (its claim is not there)
    ctl.sink(RESOURCE_SLICES, ADDED, resource_slice("n0", 1))
    ctl.drain(0)
    assert moves[-1] is None  # a slice: every pod


def test_a_record_of_serve_with_claims_verifies(api: FakeApiServer, tmp_path: Path) -> None:
    """serve --record with DRA objects (events of classes, slices and claims recorded) and verify-record: the
    replay reads the same claims and decides as serve did."""
    import json

    from typer.testing import CliRunner

    from packsched.cli.main import app

    cluster(api, nodes=2, devices=1)
    api.create("resourceclaims", claim("shared"))
    record = tmp_path / "decisions.jsonl"
    run = serve(api, tmp_path, record=str(record))
    try:
        api.create_many("pods", [claim_pod(n, claim_name="shared") for n in ("a", "b")])
        assert api.wait_for(all_bound(["a", "b"]), 20)
    finally:
        assert run.stop() == 0
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert {ln["resource"] for ln in lines if "event" in ln} >= {"deviceclasses", "resourceslices", "resourceclaims"}
    res = CliRunner().invoke(app, ["verify-record", str(record), "-o", "json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["differences"] == []
    assert report["counts"]["decisions"] == len([ln for ln in lines if "decision" in ln]) >= 2


def test_an_extended_resource_claim_left_by_an_earlier_cycle_is_deleted(api: FakeApiServer, tmp_path: Path) -> None:
    """The claim an earlier scheduler made for p's extended resources is still on the server (its binding failed,
    and so did its deletion), allocated on n0's two devices: as upstream, every node refuses p (`cannot schedule
    extended resource claim`), PostFilter deletes the claim (its finalizer first), and the deletion's watch event
    moves p, whose next attempt creates and allocates a new claim and binds."""
    api.serve_dra()
    api.create("deviceclasses", device_class(extended="example.com/gpu"))
    api.create("nodes", node("n0"))
    api.create("resourceslices", resource_slice("n0", 2))
    p = pod("p", cpu="100m")
    p["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "2"
    p["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "2"}
    created = api.create("pods", p)
    left = claim("p-extended-resources-old", owner=created, count=2)
    left["metadata"]["annotations"] = {"resource.kubernetes.io/extended-resource-claim": "true"}
    left["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    left["spec"]["devices"]["requests"][0]["name"] = "container-0-request-0"
    results = [
        {"request": "container-0-request-0", "driver": DRIVER, "pool": "n0", "device": f"gpu-{i}"} for i in (0, 1)
    ]
    left["status"] = {"allocation": {"devices": {"results": results}}, "reservedFor": []}
    api.create("resourceclaims", left)
    run = serve(api, tmp_path)
    try:
        assert api.wait_for(all_bound(["p"]), 20)
    finally:
        run.stop()
    assert api.get("resourceclaims", "default", "p-extended-resources-old") is None
    (made,) = api.objects("resourceclaims")
    assert made["metadata"]["name"].startswith("p-extended-resources-")
    assert sorted(r["device"] for r in made["status"]["allocation"]["devices"]["results"]) == ["gpu-0", "gpu-1"]
    assert reserved(api, made["metadata"]["name"]) == ["p"]
    log = requests(api)
    delete = first(log, "DELETE", "/resourceclaims/p-extended-resources-old")
    assert delete < first(log, "POST", "/namespaces/default/resourceclaims") < first(log, "POST", "/pods/p/binding")
