"""The Kubernetes port against the fake API server: the semantics packsched relies on."""

from __future__ import annotations

from pathlib import Path

import pytest

from live.fakeapi import FakeApiServer
from live.harness import node, pod
from packsched.api.errors import InputError
from packsched.live.kube import KubernetesPort
from packsched.live.port import BOOKMARK, LEASES, NODES, PDBS, PODS, ApiError


def connect(api: FakeApiServer, tmp_path: Path, timeout_s: float = 5.0) -> KubernetesPort:
    return KubernetesPort.connect(api.kubeconfig(str(tmp_path / "kubeconfig")), timeout_s=timeout_s)


def test_list_then_watch_from_its_resource_version(api: FakeApiServer, tmp_path: Path) -> None:
    port = connect(api, tmp_path)
    api.create("nodes", node("a"))
    items, rv = port.list(NODES)
    assert [i["metadata"]["name"] for i in items] == ["a"]
    assert items[0]["kind"] == "Node" and items[0]["apiVersion"] == "v1"
    api.create("nodes", node("b"))
    api.create("pods", pod("p"))  # another resource: not in the nodes watch
    api.delete("nodes", "", "a")
    seen = []
    for ev in port.watch(NODES, rv, timeout_s=2):
        seen.append((ev.type, ev.obj["metadata"]["name"] if ev.type != BOOKMARK else "", ev.resource_version))
        if ev.type == BOOKMARK:
            break
    assert [(t, n) for t, n, _ in seen] == [("ADDED", "b"), ("DELETED", "a"), (BOOKMARK, "")]
    rvs = [int(r) for _, _, r in seen]
    assert rvs == sorted(rvs) and rvs[0] > int(rv)
    assert rvs[-1] == api.rv  # an idle watch's bookmark carries the newest version


def test_watch_from_a_compacted_version_is_410_gone(api: FakeApiServer, tmp_path: Path) -> None:
    port = connect(api, tmp_path)
    _, rv = port.list(NODES)
    api.create("nodes", node("a"))
    api.compact()
    with pytest.raises(ApiError) as err:
        list(port.watch(NODES, rv, timeout_s=2))
    assert err.value.gone
    _, rv2 = port.list(NODES)  # relist gives a version a watch can resume from
    events = port.watch(NODES, rv2, timeout_s=1)
    assert next(events).type == BOOKMARK


def test_bind_is_answered_with_status_and_a_second_bind_conflicts(api: FakeApiServer, tmp_path: Path) -> None:
    port = connect(api, tmp_path)
    created = api.create("pods", pod("p"))
    port.bind("default", "p", created["metadata"]["uid"], "n1")  # a Status answer: no error
    assert api.get("pods", "default", "p")["spec"]["nodeName"] == "n1"
    with pytest.raises(ApiError) as err:
        port.bind("default", "p", created["metadata"]["uid"], "n2")
    assert err.value.conflict
    with pytest.raises(ApiError) as err:
        port.bind("default", "missing", "", "n1")
    assert err.value.not_found
    assert api.stats.bindings == {"default/p": 1}


def test_eviction_refused_with_429_while_a_budget_forbids_it(api: FakeApiServer, tmp_path: Path) -> None:
    port = connect(api, tmp_path)
    for i in range(2):
        api.create("pods", pod(f"w{i}", labels={"app": "web"}, node_name="n1"))
    api.create(
        "poddisruptionbudgets",
        {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    with pytest.raises(ApiError) as err:
        port.evict("default", "w0", "")
    assert err.value.too_many_requests
    assert api.get("pods", "default", "w0") is not None
    port.update(
        PDBS,
        "default",
        "web",
        {
            **api.get("poddisruptionbudgets", "default", "web"),
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    port.evict("default", "w0", "")
    assert api.get("pods", "default", "w0") is None


def test_update_with_a_stale_resource_version_conflicts(api: FakeApiServer, tmp_path: Path) -> None:
    port = connect(api, tmp_path)
    lease = port.create(LEASES, "kube-system", {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}})
    port.update(LEASES, "kube-system", "l", {**lease, "spec": {"holderIdentity": "b"}})
    with pytest.raises(ApiError) as err:
        port.update(LEASES, "kube-system", "l", {**lease, "spec": {"holderIdentity": "c"}})
    assert err.value.conflict
    assert port.get(LEASES, "kube-system", "l")["spec"]["holderIdentity"] == "b"


def test_status_patch_merges_conditions_by_type(api: FakeApiServer, tmp_path: Path) -> None:
    port = connect(api, tmp_path)
    api.create("pods", pod("p"))
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m1"}
    port.patch_status(PODS, "default", "p", {"status": {"conditions": [cond], "nominatedNodeName": "n1"}})
    port.patch_status(PODS, "default", "p", {"status": {"conditions": [{**cond, "message": "m2"}]}})
    status = api.get("pods", "default", "p")["status"]
    assert [c["message"] for c in status["conditions"] if c["type"] == "PodScheduled"] == ["m2"]
    assert status["nominatedNodeName"] == "n1"
    port.patch_status(PODS, "default", "p", {"status": {"nominatedNodeName": None}})
    assert "nominatedNodeName" not in api.get("pods", "default", "p")["status"]


def test_requests_carry_the_kubeconfig_token(api: FakeApiServer, tmp_path: Path) -> None:
    api.token = "another"
    port = connect(api, tmp_path)
    api.token = "test-token"
    with pytest.raises(ApiError) as err:
        port.list(NODES)
    assert err.value.status == 401


def test_a_rotated_token_is_picked_up_after_a_401(api: FakeApiServer, tmp_path: Path) -> None:
    """Credentials are asked of the client's configuration at most every 30 s, and again at once after a 401 (a
    token the server no longer takes)."""
    port = connect(api, tmp_path)
    port.list(NODES)
    api.token = "rotated"
    # what the client's refresh hook does when the token rotates (an exec plugin, the service account's file)
    port._cfg.refresh_api_key_hook = lambda cfg: cfg.api_key.update(BearerToken="Bearer rotated")
    with pytest.raises(ApiError) as err:
        port.list(NODES)  # the cached header still carries the old token
    assert err.value.status == 401
    port.list(NODES)  # asked again: the new token


def test_transport_errors_are_status_0(tmp_path: Path) -> None:
    api = FakeApiServer().start()
    port = connect(api, tmp_path, timeout_s=1)
    api.stop()
    with pytest.raises(ApiError) as err:
        port.list(NODES)
    assert err.value.status == 0


def test_a_hung_request_times_out(api: FakeApiServer, tmp_path: Path) -> None:
    port = connect(api, tmp_path, timeout_s=0.5)
    api.inject("GET", r"/nodes$", hang_s=1.5)
    with pytest.raises(ApiError) as err:
        port.list(NODES)
    assert err.value.status == 0


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        ("current-context: x\ncontexts: []\n", "current-context", "is not defined under contexts"),
        (
            "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
            "clusters: [{name: k, cluster: {server: 'localhost:6443'}}]\n",
            "clusters[k].cluster.server",
            "must be an http:// or https:// URL",
        ),
        ("{}\n", "current-context", "Required value"),
        ("a: [\n", "", "not valid YAML"),
    ],
)
def test_bad_kubeconfig_names_file_and_field(tmp_path: Path, text: str, path: str, message: str) -> None:
    cfg = tmp_path / "kubeconfig"
    cfg.write_text(text)
    with pytest.raises(InputError) as err:
        KubernetesPort.connect(str(cfg))
    (e,) = err.value.errors
    assert e.file == str(cfg) and e.path == path and message in e.message


def test_missing_kubeconfig(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        KubernetesPort.connect(str(tmp_path / "nope"))
    assert "cannot read kubeconfig" in str(err.value)


def test_an_informer_lists_and_watches_a_custom_resource(api: FakeApiServer, tmp_path: Path) -> None:
    """Any kind is one Resource away: the ElasticQuota path, the way serve will watch it."""
    import threading

    from packsched.live.informer import Informer
    from packsched.live.port import ELASTIC_QUOTAS

    port = connect(api, tmp_path)
    eq = {"metadata": {"name": "team-a", "namespace": "team-a"}, "spec": {"min": {"cpu": "4"}, "max": {"cpu": "8"}}}
    api.create("elasticquotas", eq)
    seen: list[tuple[str, str]] = []
    stop = threading.Event()
    inf = Informer(port, ELASTIC_QUOTAS, lambda res, t, o: seen.append((t, o["metadata"]["name"])), stop, 2)
    inf.start()
    try:
        assert inf.synced.wait(5)
        api.create("elasticquotas", {**eq, "metadata": {"name": "team-b", "namespace": "team-b"}})
        api.delete("elasticquotas", "team-a", "team-a")
        assert api.wait_for(lambda _s: len(seen) == 3, 5)
    finally:
        stop.set()
        port.close()
        inf.join(5)
    assert seen == [("ADDED", "team-a"), ("ADDED", "team-b"), ("DELETED", "team-a")]
    port.patch_status(ELASTIC_QUOTAS, "team-b", "team-b", {"status": {"used": {"cpu": "2"}}})
    assert api.get("elasticquotas", "team-b", "team-b")["status"] == {"used": {"cpu": "2"}}
