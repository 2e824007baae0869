"""The assumed-pod cache, event by event (no HTTP): a pod we bound is counted once, on its node, from the moment it
is chosen; stale events do not queue it again; the watch confirms or moves it; a failed bind forgets it."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from live.harness import load, node, pod, write_config
from packsched.live.controller import CONFLICT_WAIT_S, Controller
from packsched.live.port import ADDED, DELETED, MODIFIED, NODES, PODS, ApiError, Obj, Resource, WatchEvent
from packsched.plugins.registry import in_tree_registry


class StubPort:
    """Records writes; binding answers what the test says."""

    def __init__(self) -> None:
        self.binds: list[tuple[str, str]] = []
        self.bind_error: ApiError | None = None
        self.writes: list[tuple[str, Any]] = []

    def list(self, res: Resource, namespace: str = "") -> tuple[list[Obj], str]:
        return [], "1"

    def watch(self, res: Resource, resource_version: str, timeout_s: int) -> Iterator[WatchEvent]:
        return iter(())

    def get(self, res: Resource, namespace: str, name: str) -> Obj:
        raise ApiError(404, "NotFound", name)

    def create(self, res: Resource, namespace: str, body: Obj) -> Obj:
        self.writes.append(("create", body))
        return body

    def update(self, res: Resource, namespace: str, name: str, body: Obj) -> Obj:
        return body

    def update_status(self, res: Resource, namespace: str, name: str, body: Obj) -> Obj:
        self.writes.append(("update_status", body))
        return body

    def patch_status(self, res: Resource, namespace: str, name: str, patch: Obj) -> Obj:
        self.writes.append(("patch", patch))
        return patch

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        if self.bind_error is not None:
            raise self.bind_error
        self.binds.append((name, node))

    def evict(self, namespace: str, name: str, uid: str) -> None:
        return None

    def delete(self, res: Resource, namespace: str, name: str, uid: str = "", grace_s: int | None = None) -> None:
        return None

    def close(self) -> None:
        return None


def _obj(raw: dict[str, Any], uid: str, rv: int) -> Obj:
    out = copy.deepcopy(raw)
    out["metadata"].update({"uid": uid, "resourceVersion": str(rv)})
    if "spec" in out and "containers" in out["spec"]:  # pods are namespaced, nodes are not
        out["metadata"].setdefault("namespace", "default")
    return out


def _controller(tmp_path: Path) -> tuple[Controller, StubPort]:
    port = StubPort()
    ctl = Controller(port, load(write_config(tmp_path)), in_tree_registry())
    ctl.handle(NODES, ADDED, _obj(node("n0", cpu="2"), "n0", 1))
    ctl.handle(NODES, ADDED, _obj(node("n1", cpu="2"), "n1", 2))
    return ctl, port


def _cpu(ctl: Controller) -> dict[str, int]:
    row = ctl.snapshot.row["cpu"]
    return {n.name: int(ctl.snapshot.requested[row, i]) for i, n in enumerate(ctl.snapshot.nodes)}


def test_assumed_pod_counted_once_through_stale_and_confirming_events(tmp_path: Path) -> None:
    ctl, port = _controller(tmp_path)
    pending = _obj(pod("a", cpu="1"), "uid-a", 3)
    ctl.handle(PODS, ADDED, pending)
    assert ctl.step()
    ((name, chosen),) = port.binds
    assert name == "a" and _cpu(ctl)[chosen] == 1000  # assumed: counted before the watch confirms
    stale = copy.deepcopy(pending)  # e.g. a status change from before the binding
    stale["metadata"]["resourceVersion"] = "4"
    ctl.handle(PODS, MODIFIED, stale)
    assert "default/a" not in ctl.queue and not ctl.step()  # not queued again: never bound twice
    bound = copy.deepcopy(pending)
    bound["spec"]["nodeName"] = chosen
    ctl.handle(PODS, MODIFIED, bound)
    assert ctl.cache.node_of("default/a") == chosen and not ctl.cache.is_assumed("default/a")
    assert sum(_cpu(ctl).values()) == 1000 and int(ctl.snapshot.pod_count.sum()) == 1
    ctl.handle(PODS, DELETED, bound)
    assert sum(_cpu(ctl).values()) == 0 and "default/a" not in ctl.pods


def test_conflict_waits_for_the_watch_and_counts_the_pod_where_it_went(tmp_path: Path) -> None:
    ctl, port = _controller(tmp_path)
    pending = _obj(pod("a", cpu="1"), "uid-a", 3)
    ctl.handle(PODS, ADDED, pending)
    port.bind_error = ApiError(409, "Conflict", "already assigned")
    assert ctl.step()
    assert sum(_cpu(ctl).values()) == 0  # the assumption was dropped
    assert "default/a" not in ctl.queue and ctl.stats.conflicts == 1  # not retried: someone else bound it
    elsewhere = copy.deepcopy(pending)
    elsewhere["spec"]["nodeName"] = "n1"
    ctl.handle(PODS, MODIFIED, elsewhere)
    assert _cpu(ctl) == {"n0": 0, "n1": 1000}
    assert ctl.cache.node_of("default/a") == "n1"


def test_a_conflict_the_watch_never_resolves_is_tried_again_after_a_while(tmp_path: Path) -> None:
    now = [100.0]
    port = StubPort()
    ctl = Controller(port, load(write_config(tmp_path)), in_tree_registry(), clock=lambda: now[0])
    ctl.handle(NODES, ADDED, _obj(node("n0", cpu="2"), "n0", 1))
    ctl.handle(PODS, ADDED, _obj(pod("a", cpu="1"), "uid-a", 3))
    ctl.handle(PODS, ADDED, _obj(pod("b", cpu="1"), "uid-b", 4))
    port.bind_error = ApiError(409, "Conflict", "already assigned")
    assert ctl.step() and ctl.step()
    assert ctl.stats.conflicts == 2 and "default/a" not in ctl.queue
    ctl.handle(PODS, DELETED, _obj(pod("b", cpu="1"), "uid-b", 5))  # one of them goes away meanwhile
    now[0] += CONFLICT_WAIT_S / 2
    ctl._housekeeping(now[0])
    assert "default/a" not in ctl.queue
    now[0] += CONFLICT_WAIT_S / 2 + 1
    ctl._housekeeping(now[0])
    assert "default/a" in ctl.queue and "default/b" not in ctl.queue
    port.bind_error = None
    assert ctl.step() and port.binds[-1][0] == "a"


def test_failed_bind_forgets_and_retries_after_backoff(tmp_path: Path) -> None:
    ctl, port = _controller(tmp_path)
    ctl.handle(PODS, ADDED, _obj(pod("a", cpu="1"), "uid-a", 3))
    port.bind_error = ApiError(500, "InternalError", "etcd timeout")
    assert ctl.step()
    assert sum(_cpu(ctl).values()) == 0 and "default/a" in ctl.queue
    assert not ctl.step()  # backing off
    assert ctl.queue.counts(ctl.clock()).backoff == 1
    reasons = [w[1]["status"]["conditions"][0]["reason"] for w in port.writes if w[0] == "patch"]
    assert reasons == ["SchedulerError"]


def test_pod_recreated_under_the_same_name_is_a_new_pod(tmp_path: Path) -> None:
    ctl, _ = _controller(tmp_path)
    old = _obj(pod("a", cpu="1", node_name="n0"), "uid-1", 3)
    ctl.handle(PODS, ADDED, old)
    assert _cpu(ctl)["n0"] == 1000
    new = _obj(pod("a", cpu="500m"), "uid-2", 5)  # the DELETED of uid-1 was missed (a relist covers it)
    ctl.handle(PODS, ADDED, new)
    assert _cpu(ctl)["n0"] == 0 and "default/a" in ctl.queue


def test_pods_bound_to_a_node_not_seen_yet_are_counted_when_it_arrives(tmp_path: Path) -> None:
    ctl, _ = _controller(tmp_path)
    ctl.handle(PODS, ADDED, _obj(pod("a", cpu="1", node_name="n9"), "uid-a", 3))
    assert "n9" not in _cpu(ctl)
    ctl.handle(NODES, ADDED, _obj(node("n9", cpu="2"), "n9", 4))
    assert _cpu(ctl)["n9"] == 1000


def test_gated_pod_waits_with_the_scheduling_gated_condition_then_runs_when_ungated(tmp_path: Path) -> None:
    ctl, port = _controller(tmp_path)
    raw = pod("g")
    raw["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    gated = _obj(raw, "uid-g", 3)
    ctl.handle(PODS, ADDED, gated)
    assert not ctl.step() and "default/g" in ctl.queue.gated
    ((kind, patch),) = port.writes
    cond = patch["status"]["conditions"][0]
    assert (kind, cond["reason"], cond["message"]) == (
        "patch",
        "SchedulingGated",
        "Scheduling is blocked due to non-empty scheduling gates",
    )
    ungated = copy.deepcopy(gated)
    ungated["spec"]["schedulingGates"] = []
    ctl.handle(PODS, MODIFIED, ungated)
    assert ctl.step() and port.binds and port.binds[0][0] == "g"


def test_an_internal_error_on_one_pod_is_reported_and_retried_not_fatal(tmp_path: Path) -> None:
    now = [1000.0]
    port = StubPort()
    ctl = Controller(port, load(write_config(tmp_path)), in_tree_registry(), clock=lambda: now[0])
    ctl.handle(NODES, ADDED, _obj(node("n0", cpu="2"), "n0", 1))
    ctl.handle(PODS, ADDED, _obj(pod("a", cpu="1"), "uid-a", 3))
    real = ctl.scheduler.schedule_one
    calls = []

    def broken(info: Any, **kw: Any) -> Any:
        calls.append(info.key)
        if len(calls) == 1:
            raise RuntimeError("boom")
        return real(info, **kw)

    ctl.scheduler.schedule_one = broken  # type: ignore[method-assign]
    assert ctl.step()
    assert sum(_cpu(ctl).values()) == 0 and "default/a" in ctl.queue
    cond = next(w[1] for w in port.writes if w[0] == "patch")["status"]["conditions"][0]
    assert (cond["reason"], cond["message"]) == ("SchedulerError", "internal error: boom")
    assert not ctl.step()  # backing off
    now[0] += 2  # past podInitialBackoffSeconds
    assert ctl.step() and [name for name, _ in port.binds] == ["a"]


def test_clearing_a_nomination_clears_it_on_the_api_server(tmp_path: Path) -> None:
    ctl, port = _controller(tmp_path)
    raw = pod("waiting", cpu="1")
    raw["status"] = {"nominatedNodeName": "n1"}
    ctl.handle(PODS, ADDED, _obj(raw, "uid-w", 3))
    info = ctl.pods["default/waiting"].info
    assert ctl.scheduler.nominator.node_of("default/waiting") == ctl.snapshot.index["n1"]
    ctl.scheduler.clear_nomination(info)  # what preemption does to lower-priority pods nominated to its node
    assert ctl.scheduler.nominator.node_of("default/waiting") is None and info.pod.nominated_node_name == ""
    assert port.writes[-1] == ("patch", {"status": {"nominatedNodeName": None}})  # no recorder thread: written now


def test_a_bound_pod_whose_labels_change_is_counted_again_by_the_match_counts(tmp_path: Path) -> None:
    """The snapshot's per-node match counts (PodTopologySpread, InterPodAffinity) read labels: a relabelled pod is
    counted out under its old labels and in under the new ones, so no count goes stale or negative."""
    from packsched.api.objects import LabelSelector
    from packsched.backend.podcounts import PodFilter, pod_counts

    ctl, _ = _controller(tmp_path)
    web = PodFilter(frozenset({"default"}), LabelSelector((("app", "web"),)), False)
    counts = pod_counts(ctl.snapshot)
    raw = _obj(pod("a", cpu="1", labels={"app": "web"}, node_name="n0"), "uid-a", 3)
    ctl.handle(PODS, ADDED, raw)
    assert counts.counts(web).tolist() == [1, 0]
    relabelled = copy.deepcopy(raw)
    relabelled["metadata"]["labels"] = {"app": "db"}
    relabelled["metadata"]["resourceVersion"] = "4"
    ctl.handle(PODS, MODIFIED, relabelled)
    assert counts.counts(web).tolist() == [0, 0]
    ctl.handle(PODS, DELETED, relabelled)
    assert counts.counts(web).tolist() == [0, 0] and sum(_cpu(ctl).values()) == 0
