"""Coscheduling on the live cluster: PodGroups are watched and delivered to the plugin as cluster events; a gang's
members wait at Permit, holding their room, and are bound only once the gang is complete; a wait that times out
is written on the pods as any other failure; with --write-podgroup-status, PodGroup status as scheduler-plugins'
controller writes it."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from live.fakeapi import FakeApiServer
from live.harness import DEPLOY, all_bound, check_cluster, load, node, pod, wait, write_config
from packsched.framework.podinfo import PodInfo
from packsched.live.kube import KubernetesPort
from packsched.live.port import POD_GROUPS, optional
from packsched.live.serve import ServeOptions, Server
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import CycleResult, QueuedPod

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
TIMEOUT = "rejected due to timeout after waiting 1s at plugin Coscheduling"
DEADLINE_S = 30  # generous: the machine running the tests may be loaded


COSCHEDULING = {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]}  # plugins.multiPoint


def _gang_config(tmp: Path, reject_percentage: int = 10) -> str:
    args = {"podGroupRejectPercentage": reject_percentage}
    return write_config(tmp, plugin_config=[{"name": "Coscheduling", "args": args}], multi_point=COSCHEDULING)


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
    # kube-scheduler's permit_wait_duration_seconds: each rejected wait by its code, none allowed; at least the two
    # first waits, which lasted the group's timeout (1 s)
    text = run.server.metrics.exposition().decode()
    rejected = _sample(text, 'scheduler_permit_wait_duration_seconds_count{result="Unschedulable"}')
    assert 2 <= rejected <= waited
    assert _sample(text, 'scheduler_permit_wait_duration_seconds_bucket{le="0.512",result="Unschedulable"}') < rejected
    assert 'result="Success"' not in text.split("scheduler_permit_wait_duration_seconds", 1)[1].split("# HELP")[0]


def _sample(text: str, series: str) -> float:
    """The value of the one series ``series`` (name and labels as exposed) in a Prometheus exposition."""
    (line,) = [ln for ln in text.splitlines() if ln.rpartition(" ")[0] == series]
    return float(line.rpartition(" ")[2])


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
        kinds = len([r for r in server.watched() if not optional(r)])  # (this cluster serves no DRA: not watched)

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


def _set_phase(api: FakeApiServer, names: list[str], phase: str) -> None:
    """What the kubelet would report (there is none here)."""
    with api.lock:
        for n in names:
            p = api._get("pods", "default", n)
            api._update("pods", "default", n, {**p, "status": {**p["status"], "phase": phase}})


def _statuses(api: FakeApiServer, name: str) -> list[dict[str, Any]]:
    """Every status the PodGroup has had, in order (one per change of the object after its creation)."""
    with api.lock:
        return [
            dict(e.obj.get("status") or {})
            for e in api.history
            if e.plural == "podgroups" and e.obj["metadata"]["name"] == name and e.type == "MODIFIED"
        ]


def test_pod_group_status_written_as_upstreams_controller(api: FakeApiServer, tmp_path: Path) -> None:
    """With --write-podgroup-status: Pending while fewer pods exist than minMember, Scheduling once they do, Running
    once minMember run, Finished once minMember succeeded (and then left alone); zero counts absent; merge-patched
    through the status subresource, only when it changes; the RBAC file for it grants exactly that patch."""
    api.create("nodes", node("n0", cpu="4"))
    api.create("podgroups", _pod_group("train", 3))
    api.create("podgroups", _pod_group("lonely", 2))  # no pods yet
    names = ["w0", "w1", "w2"]
    api.create_many("pods", [_member(n, "train") for n in names])

    def status(name: str) -> dict[str, Any]:
        return dict((api.get("podgroups", "default", name) or {}).get("status") or {})

    with _Serving(api, tmp_path, _gang_config(tmp_path), pod_group_status=True) as run:
        writer = run.server.controller.pod_group_status
        assert api.wait_for(all_bound(names), DEADLINE_S)
        assert wait(lambda: status("lonely") == {"phase": "Pending"}, DEADLINE_S)
        assert wait(lambda: status("train") == {"phase": "Scheduling"}, DEADLINE_S)  # bound, not running yet
        _set_phase(api, names, "Running")
        assert wait(lambda: status("train") == {"phase": "Running", "running": 3}, DEADLINE_S)
        api.create("pods", _member("extra", "lonely", cpu="100"))  # fits nowhere: counted all the same
        api.create("pods", pod("other", scheduler="default-scheduler", labels={GROUP_LABEL: "lonely"}))  # not ours
        assert wait(lambda: status("lonely") == {"phase": "Scheduling"}, DEADLINE_S)
        _set_phase(api, names, "Succeeded")
        assert wait(lambda: status("train") == {"phase": "Finished", "succeeded": 3}, DEADLINE_S)
        for n in names:
            api.delete("pods", "default", n)
        # a finished group is left alone: the deletions were seen and looked at, and nothing was written
        assert wait(lambda: not writer._members.get("default/train") and not writer._dirty, DEADLINE_S)
        assert status("train") == {"phase": "Finished", "succeeded": 3}
    trail = _statuses(api, "train")
    assert trail[0] == {"phase": "Scheduling"} and trail[-1] == {"phase": "Finished", "succeeded": 3}
    assert {"phase": "Running", "running": 3} in trail
    assert all(a != b for a, b in itertools.pairwise(trail)), trail  # only changes were written
    assert _statuses(api, "lonely") == [{"phase": "Pending"}, {"phase": "Scheduling"}]
    patches = [p for m, p, _ in api.stats.log if m == "PATCH" and "/podgroups/" in p]
    assert all(p.endswith("/status") for p in patches)
    assert len(patches) == len(trail) + 2 == writer.writes
    docs = yaml.safe_load_all((DEPLOY / "rbac-podgroup-status.yaml").read_text())
    rules = [rule for d in docs if d["kind"] == "ClusterRole" for rule in d["rules"]]
    assert rules == [{"apiGroups": ["scheduling.x-k8s.io"], "resources": ["podgroups/status"], "verbs": ["patch"]}]


def test_pod_group_status_writer_event_by_event() -> None:
    """Counted: every pod carrying the group's label in its namespace (the older label too), whatever its phase;
    a pod relabelled or deleted leaves its group; a finished group is left alone; nothing is written while the
    watch shows what would be; a refused write is tried again later, one for a group deleted meanwhile is not."""
    from live.test_cache import StubPort
    from packsched.api.gangs import PodGroup
    from packsched.live.podgroup_status import RETRY_S, PodGroupStatusController
    from packsched.live.port import ADDED, DELETED, MODIFIED, PODS, ApiError

    port = StubPort()
    now = [0.0]
    writer = PodGroupStatusController(port, True, clock=lambda: now[0])  # type: ignore[arg-type]
    groups = {"default/g": PodGroup("g", "default", 2)}

    def member(name: str, phase: str, group: str = "g", namespace: str = "default", legacy: bool = False) -> Any:
        label = "pod-group.scheduling.sigs.k8s.io" if legacy else GROUP_LABEL
        return {
            "metadata": {"name": name, "namespace": namespace, "labels": {label: group}},
            "status": {"phase": phase},
        }

    def written() -> list[Any]:
        out = [w[1]["status"] for w in port.writes]
        port.writes.clear()
        return out

    writer.observe(POD_GROUPS, ADDED, {"metadata": {"name": "g", "namespace": "default"}, "spec": {"minMember": 2}})
    writer.observe(PODS, ADDED, member("a", "Running"))
    writer.observe(PODS, ADDED, member("x", "Running", namespace="other"))  # another namespace's group "g"
    writer.sync(groups)
    assert written() == [{"phase": "Pending", "running": 1, "succeeded": None, "failed": None}]
    writer.sync(groups)
    assert written() == []  # nothing changed
    writer.observe(PODS, ADDED, member("b", "Failed", legacy=True))
    writer.sync(groups)
    assert written() == [{"phase": "Failed", "running": 1, "succeeded": None, "failed": 1}]
    writer.observe(PODS, MODIFIED, member("b", "Running", group="h"))  # relabelled: no longer a member
    writer.sync(groups)
    assert written() == []  # Failed is final (upstream's controller stops reconciling the group)
    # a group the watch shows as what it should be: nothing to write
    writer = PodGroupStatusController(port, True, clock=lambda: now[0])  # type: ignore[arg-type]
    shown = {"metadata": {"name": "g", "namespace": "default"}, "status": {"phase": "Scheduling", "running": 1}}
    writer.observe(POD_GROUPS, ADDED, shown)
    writer.observe(PODS, ADDED, member("a", "Running"))
    writer.observe(PODS, ADDED, member("b", "Pending"))
    writer.sync(groups)
    assert written() == []
    # refused: tried again after RETRY_S
    port.patch_status = lambda *a: (_ for _ in ()).throw(ApiError(403, "Forbidden", "no"))  # type: ignore[method-assign]
    writer.observe(PODS, DELETED, member("b", "Pending"))
    writer.sync(groups)
    assert writer.writes == 0 and writer._dirty == {"default/g"}
    del port.patch_status
    now[0] = RETRY_S / 2
    writer.sync(groups)
    assert written() == []
    now[0] = RETRY_S
    writer.sync(groups)
    assert written() == [{"phase": "Pending", "running": 1, "succeeded": None, "failed": None}]
    # a group deleted meanwhile: its 404 is not retried
    port.patch_status = lambda *a: (_ for _ in ()).throw(ApiError(404, "NotFound", "g"))  # type: ignore[method-assign]
    writer.observe(PODS, MODIFIED, member("a", "Succeeded"))
    writer.sync(groups)
    assert not writer._dirty
    # off: nothing is looked at
    off = PodGroupStatusController(port, False)  # type: ignore[arg-type]
    off.observe(PODS, ADDED, member("a", "Running"))
    off.sync(groups)
    assert not off._members and not off._dirty


def test_pod_group_status_writer_fills_occupied_by() -> None:
    """status.occupiedBy: written as the group leaves Pending, the owners (ownerReferences by name, in the pod's
    namespace, sorted) of the member whose name sorts first; kept after, whatever later pods say; never removed."""
    from live.test_cache import StubPort
    from packsched.api.gangs import PodGroup
    from packsched.live.podgroup_status import PodGroupStatusController
    from packsched.live.port import ADDED, MODIFIED, PODS

    port = StubPort()
    writer = PodGroupStatusController(port, True, clock=lambda: 0.0)  # type: ignore[arg-type]
    groups = {"default/g": PodGroup("g", "default", 2)}

    def member(name: str, phase: str, *owners: str) -> Any:
        refs = [{"apiVersion": "batch/v1", "kind": "Job", "name": o, "uid": o} for o in owners]
        meta = {"name": name, "namespace": "default", "labels": {GROUP_LABEL: "g"}, "ownerReferences": refs}
        return {"metadata": meta, "status": {"phase": phase}}

    def written() -> list[Any]:
        out = [w[1]["status"] for w in port.writes]
        port.writes.clear()
        return out

    writer.observe(POD_GROUPS, ADDED, {"metadata": {"name": "g", "namespace": "default"}, "spec": {"minMember": 2}})
    writer.observe(PODS, ADDED, member("b", "Pending", "train-b"))
    writer.sync(groups)
    assert written() == [{"phase": "Pending", "running": None, "succeeded": None, "failed": None}]
    writer.observe(PODS, ADDED, member("a", "Pending", "train", "other"))
    writer.sync(groups)
    scheduling = {"phase": "Scheduling", "running": None, "succeeded": None, "failed": None}
    assert written() == [{**scheduling, "occupiedBy": "default/other,default/train"}]
    writer.observe(PODS, MODIFIED, member("a", "Running", "elsewhere"))  # its owners changed: too late
    writer.observe(PODS, MODIFIED, member("b", "Running", "train-b"))
    writer.sync(groups)
    running = {"phase": "Running", "running": 2, "succeeded": None, "failed": None}
    assert written() == [{**running, "occupiedBy": "default/other,default/train"}]
    # the watch shows what was written: nothing more to write
    shown = {"phase": "Running", "running": 2, "occupiedBy": "default/other,default/train"}
    writer.observe(POD_GROUPS, MODIFIED, {"metadata": {"name": "g", "namespace": "default"}, "status": shown})
    writer.sync(groups)
    assert written() == []
    # pods without owners: nothing to fill
    bare = PodGroupStatusController(port, True, clock=lambda: 0.0)  # type: ignore[arg-type]
    bare.observe(PODS, ADDED, member("a", "Pending"))
    bare.observe(PODS, ADDED, member("b", "Pending"))
    bare.sync(groups)
    assert written() == [scheduling]


def test_pod_group_status_with_occupied_by_through_the_api_server(api: FakeApiServer, tmp_path: Path) -> None:
    """serve --write-podgroup-status against the fake API server: a Job's members (owned by the Job) give the group
    occupiedBy as it leaves Pending, and the field stays as the group runs."""
    api.create("nodes", node("n0", cpu="4"))
    api.create("podgroups", _pod_group("train", 2))
    names = ["w0", "w1"]
    owner = [{"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "u-train", "controller": True}]
    members = [_member(n, "train") for n in names]
    for m in members:
        m["metadata"]["ownerReferences"] = owner
    api.create_many("pods", members)

    def status() -> dict[str, Any]:
        return dict((api.get("podgroups", "default", "train") or {}).get("status") or {})

    with _Serving(api, tmp_path, _gang_config(tmp_path), pod_group_status=True):
        assert api.wait_for(all_bound(names), DEADLINE_S)
        assert wait(lambda: status() == {"phase": "Scheduling", "occupiedBy": "default/train"}, DEADLINE_S)
        _set_phase(api, names, "Running")
        assert wait(lambda: status() == {"phase": "Running", "running": 2, "occupiedBy": "default/train"}, DEADLINE_S)
    assert all(s.get("occupiedBy") == "default/train" for s in _statuses(api, "train"))
