"""Coscheduling on the live cluster: PodGroups are watched and delivered to the plugin as cluster events; a gang's
members wait at Permit, holding their room, and are bound only once the gang is complete; a wait that times out
is written on the pods as any other failure; with --write-podgroup-status, PodGroup status as scheduler-plugins'
controller writes it."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import yaml

from live.fakeapi import FakeApiServer
from live.harness import all_bound, check_cluster, load, node, pod, wait, write_config
from packsched.framework.podinfo import PodInfo
from packsched.live.kube import KubernetesPort
from packsched.live.port import POD_GROUPS
from packsched.live.serve import ServeOptions, Server
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import CycleResult, QueuedPod

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
TIMEOUT = "rejected due to timeout after waiting 1s at plugin Coscheduling"
DEADLINE_S = 30  # generous: the machine running the tests may be loaded


def _gang_config(tmp: Path, reject_percentage: int = 10) -> str:
    path = write_config(tmp)
    data = yaml.safe_load(Path(path).read_text())
    profile = data["profiles"][0]
    profile["plugins"]["multiPoint"] = {
        "enabled": [{"name": "Coscheduling"}],
        "disabled": [{"name": "PrioritySort"}],
    }
    profile["pluginConfig"].append({"name": "Coscheduling", "args": {"podGroupRejectPercentage": reject_percentage}})
    Path(path).write_text(yaml.safe_dump(data))
    return path


def _pod_group(name: str, min_member: int, timeout_s: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member}
    if timeout_s is not None:
        spec["scheduleTimeoutSeconds"] = timeout_s
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _member(name: str, group: str, cpu: str = "500m") -> dict[str, Any]:
    return pod(name, cpu=cpu, labels={GROUP_LABEL: group})


class _Serving:
    """serve against the fake API server, every scheduling cycle's outcome noted as the scheduler decided it (before
    the binding cycle starts), with the binding requests the API server had received by then."""

    def __init__(self, api: FakeApiServer, tmp: Path, config: str, **options: Any) -> None:
        self.api = api
        port = KubernetesPort.connect(api.kubeconfig(str(tmp / "kc")), timeout_s=2)
        opts = ServeOptions(bind_address="127.0.0.1", port=0, watch_timeout_s=5, **options)
        self.server = Server(port, load(config), in_tree_registry(), opts)
        self.cycles: list[tuple[float, str, str, int]] = []  # (time, pod, waiting|binding|failed, binds so far)
        scheduler = self.server.controller.scheduler
        schedule_one = scheduler.schedule_one

        def noted(info: PodInfo, *, explain: bool = False, queued: QueuedPod | None = None) -> CycleResult:
            result = schedule_one(info, explain=explain, queued=queued)
            outcome = "waiting" if result.waiting else "binding" if result.binding is not None else "failed"
            self.cycles.append((time.monotonic(), info.pod.name, outcome, self.bind_requests()))
            return result

        scheduler.schedule_one = noted  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def bind_requests(self) -> int:
        with self.api.lock:
            return sum(1 for m, p, _ in self.api.stats.log if m == "POST" and p.endswith("/binding"))

    def __enter__(self) -> _Serving:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive(), "serve did not stop"


def _condition(api: FakeApiServer, name: str) -> dict[str, Any]:
    p = api.get("pods", "default", name) or {}
    conds = [c for c in (p.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"]
    return conds[0] if conds else {}


def _events(api: FakeApiServer, name: str) -> list[dict[str, Any]]:
    return [e for e in api.objects("events") if e["regarding"]["name"] == name]


def test_a_gang_is_bound_only_once_its_last_member_is_placed(api: FakeApiServer, tmp_path: Path) -> None:
    api.create("nodes", node("n0", cpu="4"))
    api.create("podgroups", _pod_group("train", 3))
    names = ["w0", "w1", "w2"]
    api.create_many("pods", [_member(n, "train") for n in names])
    with _Serving(api, tmp_path, _gang_config(tmp_path)) as run:
        assert api.wait_for(all_bound(names), DEADLINE_S), f"not all bound: {run.cycles}"
        assert POD_GROUPS in [i.res for i in run.server.informers]
        assert wait(lambda: len([e for n in names for e in _events(api, n)]) == 3, DEADLINE_S)
    # two members placed and held at Permit, the third completes the gang: one cycle each, nothing bound before
    # the third was placed
    assert [outcome for _, _, outcome, _ in run.cycles] == ["waiting", "waiting", "binding"]
    assert [binds for _, _, _, binds in run.cycles] == [0, 0, 0]
    completed = run.cycles[-1][0]
    with api.lock:
        binds = [t for (m, p, _), t in zip(api.stats.log, api.stats.times, strict=True) if p.endswith("/binding")]
    assert len(binds) == 3 and all(t >= completed for t in binds)
    # nothing was written about the waiting members: one Scheduled event each, no FailedScheduling
    for n in names:
        assert [e["reason"] for e in _events(api, n)] == ["Scheduled"]
        assert _condition(api, n)["status"] == "True"
    check_cluster(api, expect_bound=3)


def test_a_gang_whose_last_member_fits_nowhere_times_out_and_is_never_bound(api: FakeApiServer, tmp_path: Path) -> None:
    """Two members fit and wait; the third fits nowhere, one missing out of 3 is within podGroupRejectPercentage
    (50), so they keep their room until the group's scheduleTimeoutSeconds: then the first to time out is rejected
    ("rejected due to timeout"), its sibling with it (Unreserve), and both get the failure's event and condition."""
    api.create("nodes", node("n0", cpu="2"))
    api.create("podgroups", _pod_group("train", 3, timeout_s=1))
    api.create_many("pods", [_member("w0", "train"), _member("w1", "train"), _member("w2", "train", cpu="3")])
    placed = ["w0", "w1"]
    with _Serving(api, tmp_path, _gang_config(tmp_path, reject_percentage=50)) as run:

        def timed_out() -> bool:
            return any(TIMEOUT in _condition(api, n).get("message", "") for n in placed)

        assert wait(timed_out, DEADLINE_S), f"no timeout: {run.cycles}"
        first_wait = next(t for t, _, outcome, _ in run.cycles if outcome == "waiting")
        assert time.monotonic() - first_wait >= 1.0  # not before the group's timeout
        assert wait(lambda: all(_condition(api, n).get("status") == "False" for n in placed), DEADLINE_S)
        assert wait(
            lambda: any(
                TIMEOUT in e["note"] for n in placed for e in _events(api, n) if e["reason"] == "FailedScheduling"
            ),
            DEADLINE_S,
        )
    assert api.stats.bindings == {}
    # the placed members waited, the third failed; each wait that ended in a rejection counts as an unschedulable
    # attempt, as kube-scheduler counts it
    assert {name for _, name, outcome, _ in run.cycles if outcome == "waiting"} == set(placed)
    assert {name for _, name, outcome, _ in run.cycles if outcome == "failed"} == {"w2"}
    for n in placed:
        cond = _condition(api, n)
        assert cond["reason"] == "Unschedulable"
        assert cond["message"].startswith("0/1 nodes are available: 1 ")
        assert TIMEOUT in cond["message"] or "rejection in Unreserve" in cond["message"]
    assert "Insufficient cpu" in _condition(api, "w2")["message"]
    failed = sum(1 for _, _, outcome, _ in run.cycles if outcome == "failed")
    waited = sum(1 for _, _, outcome, _ in run.cycles if outcome == "waiting")  # the last waits may still be on
    assert failed + 2 <= _attempts(run.server, "unschedulable") <= failed + waited


def _attempts(server: Server, result: str) -> float:
    text = server.metrics.exposition().decode()
    (line,) = [
        ln
        for ln in text.splitlines()
        if ln.startswith("scheduler_schedule_attempts_total{") and f'result="{result}"' in ln
    ]
    return float(line.rsplit(" ", 1)[1])


def test_pod_groups_reach_the_plugin_as_cluster_events(tmp_path: Path) -> None:
    """Added, changed, deleted, and deleted then created again under the same name (another uid); a group's creation
    time is read onto the scheduler's clock (what Coscheduling's queue order compares with pods' queue times)."""
    from live.test_cache import StubPort
    from packsched.framework.interface import ClusterEvent
    from packsched.live.controller import Controller
    from packsched.live.port import ADDED, DELETED, MODIFIED

    now = [100.0]
    ctl = Controller(StubPort(), load(_gang_config(tmp_path)), in_tree_registry(), clock=lambda: now[0])  # type: ignore[arg-type]
    ctl.informers.wall = lambda: 1_800_000_060.0  # 2027-01-15T08:01:00Z
    seen: list[ClusterEvent] = []
    dispatch = ctl.scheduler.dispatch

    def spy(event: ClusterEvent) -> None:
        seen.append(event)
        dispatch(event)

    ctl.scheduler.dispatch = spy  # type: ignore[method-assign]
    pg = _pod_group("train", 3)
    pg["metadata"].update({"uid": "u1", "creationTimestamp": "2027-01-15T08:00:00Z"})
    ctl.handle(POD_GROUPS, ADDED, pg)
    (plugin,) = [p for f in ctl.scheduler.frameworks.values() for p in f.plugins.values() if p.name == "Coscheduling"]
    assert plugin.groups["default/train"].min_member == 3  # type: ignore[attr-defined]
    assert plugin.groups["default/train"].created == 40.0  # type: ignore[attr-defined]  # a minute before now
    now[0] = 200.0
    ctl.handle(POD_GROUPS, MODIFIED, {**pg, "spec": {"minMember": 2}, "status": {"phase": "Pending"}})
    assert plugin.groups["default/train"].min_member == 2  # type: ignore[attr-defined]
    assert plugin.groups["default/train"].created == 40.0  # type: ignore[attr-defined]  # as first read
    again = {**pg, "metadata": {**pg["metadata"], "uid": "u2", "creationTimestamp": "2027-01-15T08:01:00Z"}}
    ctl.handle(POD_GROUPS, MODIFIED, again)
    assert plugin.groups["default/train"].created == 200.0  # type: ignore[attr-defined]
    ctl.handle(POD_GROUPS, MODIFIED, {**again, "spec": {"minMember": 0}})  # unreadable: left out, counted
    assert ctl.stats.decode_errors == 1
    ctl.handle(POD_GROUPS, DELETED, again)
    ctl.handle(POD_GROUPS, DELETED, again)  # already gone: nothing
    assert "default/train" not in plugin.groups  # type: ignore[attr-defined]
    assert [(e.resource, e.action) for e in seen] == [
        ("PodGroup", "Add"),
        ("PodGroup", "Update"),
        ("PodGroup", "Delete"),
        ("PodGroup", "Add"),
        ("PodGroup", "Delete"),
    ]


def test_serve_watches_pod_groups_only_for_coscheduling(api: FakeApiServer, tmp_path: Path) -> None:
    def watched(config: str) -> set[Any]:
        port = KubernetesPort.connect(api.kubeconfig(str(tmp_path / "kubeconfig")))
        server = Server(port, load(config), in_tree_registry(), ServeOptions(serve_http=False))
        try:
            return set(server.watched())
        finally:
            port.close()

    assert POD_GROUPS in watched(_gang_config(tmp_path))
    assert POD_GROUPS not in watched(write_config(tmp_path))


def test_without_the_pod_group_crd_serve_waits_for_it(api: FakeApiServer, tmp_path: Path) -> None:
    """As for ElasticQuotas: the PodGroup informer cannot list, so serve is not ready and schedules nothing, and
    says why; once the CRD is installed the informer lists and the gang is bound."""
    api.unserved.add("podgroups")
    api.create("nodes", node("n0", cpu="4"))
    names = ["w0", "w1"]
    api.create_many("pods", [_member(n, "train") for n in names])
    with _Serving(api, tmp_path, _gang_config(tmp_path)) as run:
        server = run.server
        kinds = len(server.watched())

        def stuck() -> bool:  # every other informer listed; the PodGroup one failed, and again
            informers = list(server.informers)
            return len(informers) == kinds and all(
                i.synced.is_set() if i.res != POD_GROUPS else i.errors >= 2 for i in informers
            )

        assert wait(stuck, DEADLINE_S)
        assert server.ready() == (False, "informers not synced: podgroups")
        assert run.cycles == [] and api.stats.bindings == {}
        api.unserved.discard("podgroups")  # the CRD is installed
        api.create("podgroups", _pod_group("train", 2))
        assert api.wait_for(all_bound(names), DEADLINE_S)
        assert server.ready() == (True, "ok")
    check_cluster(api, expect_bound=2)
