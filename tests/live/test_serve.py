"""packsched serve against the fake API server: end to end."""

from __future__ import annotations

import logging
import urllib.request
from pathlib import Path

import pytest

from live.fakeapi import FakeApiServer
from live.harness import SCHEDULER, all_bound, check_cluster, node, pod, start, wait


def test_binds_pending_pods_of_its_scheduler_name(api: FakeApiServer, tmp_path: Path) -> None:
    for i in range(3):
        api.create("nodes", node(f"n{i}", cpu="2", memory="4Gi"))
    names = [f"p{i}" for i in range(8)]
    for n in names:
        api.create("pods", pod(n))
    api.create("pods", pod("other", scheduler="default-scheduler"))
    run = start(api, tmp_path)
    try:
        assert api.wait_for(all_bound(names), 15), "not every pod was bound"
        placed = check_cluster(api, expect_bound=8)
        # Bin packing (RequestedToCapacityRatio): 4 pods of 500m fill a 2-cpu node before the next one is used.
        counts = sorted(list(placed.values()).count(n) for n in {"n0", "n1", "n2"})
        assert counts == [0, 4, 4]
        assert "default/other" not in placed  # another scheduler's pod is left alone
        # pods created while serving are bound too
        api.create("pods", pod("late"))
        assert api.wait_for(all_bound(["late"]), 10)
        # a Scheduled event for each bind (sent asynchronously)
        assert wait(lambda: sum(1 for e in api.objects("events") if e["reason"] == "Scheduled") == 9, 10)
        ev = next(e for e in api.objects("events") if e["regarding"]["name"] == "late")
        assert ev["note"].startswith("Successfully assigned default/late to ")
        assert ev["reportingController"] == "packsched" and ev["type"] == "Normal"
    finally:
        assert run.stop() == 0
    assert run.server.controller.stats.bound == 9


def test_unschedulable_pod_gets_condition_and_event_then_fits_when_a_node_joins(
    api: FakeApiServer, tmp_path: Path
) -> None:
    api.create("nodes", node("small", cpu="1", memory="1Gi"))
    api.create("pods", pod("big", cpu="3"))
    run = start(api, tmp_path)
    try:

        def has_condition(s: FakeApiServer) -> bool:
            p = s.store["pods"][("default", "big")]
            return any(
                c["type"] == "PodScheduled" and c["status"] == "False" and c["reason"] == "Unschedulable"
                for c in p["status"].get("conditions") or []
            )

        assert api.wait_for(has_condition, 10)
        cond = next(c for c in api.get("pods", "default", "big")["status"]["conditions"] if c["type"] == "PodScheduled")
        assert cond["message"] == (
            "0/1 nodes are available: 1 Insufficient cpu. "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        )
        assert wait(lambda: any(e["reason"] == "FailedScheduling" for e in api.objects("events")), 10)
        failed = next(e for e in api.objects("events") if e["reason"] == "FailedScheduling")
        assert failed["type"] == "Warning" and failed["note"] == cond["message"]
        api.create("nodes", node("large", cpu="4"))
        assert api.wait_for(all_bound(["big"]), 10)
        assert api.get("pods", "default", "big")["spec"]["nodeName"] == "large"
    finally:
        run.stop()
    check_cluster(api, expect_bound=1)


def test_health_ready_and_metrics(api: FakeApiServer, tmp_path: Path) -> None:
    api.create("nodes", node("n0"))
    api.create("pods", pod("a"))
    api.create("pods", pod("huge", cpu="64"))
    run = start(api, tmp_path)
    try:
        assert api.wait_for(all_bound(["a"]), 10)
        health = run.server.health
        assert health is not None
        base = f"http://127.0.0.1:{health.port}"
        assert wait(lambda: _get(base + "/readyz")[0] == 200, 10)
        assert _get(base + "/healthz") == (200, "ok\n")
        assert wait(lambda: 'result="unschedulable"' in _get(base + "/metrics")[1], 10)
        text = _get(base + "/metrics")[1]
        assert f'scheduler_schedule_attempts_total{{profile="{SCHEDULER}",result="scheduled"}} 1.0' in text
        assert "scheduler_scheduling_attempt_duration_seconds_bucket" in text
        assert 'scheduler_pending_pods{queue="unschedulable"}' in text
        assert "scheduler_preemption_attempts_total" in text
        assert 'leader_election_master_status{name="packsched"} 1.0' in text
    finally:
        run.stop()


def test_deleted_pods_free_room_and_deleted_nodes_leave_the_snapshot(api: FakeApiServer, tmp_path: Path) -> None:
    api.create("nodes", node("n0", cpu="1"))
    api.create("nodes", node("n1", cpu="1"))
    for n in ("a", "b", "c", "d", "e"):
        api.create("pods", pod(n, cpu="500m"))
    run = start(api, tmp_path)
    ctl = run.server.controller
    try:
        assert wait(lambda: len(api.stats.bindings) == 4 and len(ctl.queue.unschedulable) == 1, 10)
        (waiting,) = [k.split("/")[1] for k in ctl.queue.unschedulable]
        bound = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in api.objects("pods") if p["spec"].get("nodeName")}
        victim = next(n for n, where in bound.items() if where == "n0")
        api.delete("pods", "default", victim)  # room on n0: the waiting pod goes there
        assert api.wait_for(all_bound([waiting]), 10)
        assert api.get("pods", "default", waiting)["spec"]["nodeName"] == "n0"
        # n1 goes away: its pods leave the snapshot, the columns are renumbered, n0 is still full
        api.delete("nodes", "", "n1")
        assert wait(lambda: ctl.snapshot.n == 1, 5)
        assert ctl.snapshot.nodes[0].name == "n0" and int(ctl.snapshot.pod_count[0]) == 2
        assert int(ctl.snapshot.requested[ctl.snapshot.row["cpu"], 0]) == 1000
        api.create("pods", pod("f", cpu="500m"))
        assert wait(lambda: "default/f" in ctl.queue.unschedulable, 10)
        api.create("nodes", node("n2", cpu="1"))
        assert api.wait_for(all_bound(["f"]), 10)
        assert api.get("pods", "default", "f")["spec"]["nodeName"] == "n2"
    finally:
        run.stop()
    check_cluster(api)


def test_an_unreadable_pod_is_reported_not_scheduled(api: FakeApiServer, tmp_path: Path) -> None:
    api.create("nodes", node("n0"))
    api.create("pods", pod("bad", cpu="lots"))
    api.create("pods", pod("good"))
    run = start(api, tmp_path)
    try:
        assert api.wait_for(all_bound(["good"]), 10)
        assert wait(lambda: any(e["regarding"]["name"] == "bad" for e in api.objects("events")), 5)
    finally:
        run.stop()
    ev = next(e for e in api.objects("events") if e["regarding"]["name"] == "bad")
    assert ev["reason"] == "FailedScheduling" and ev["type"] == "Warning"
    assert ev["note"] == (
        "cannot read the pod: Pod default/bad: spec.containers[0].resources.requests.cpu: "
        "quantity 'lots' must start with a number (digits, optionally with one '.')"
    )
    assert not api.get("pods", "default", "bad")["spec"].get("nodeName")


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_says_once_when_its_caches_synced_and_binds_after(
    api: FakeApiServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One "caches synced" line (what bench/bench_live_start.py times), with what the informers listed: every pod
    of the list is queued before the first attempt, so the first bind comes after it."""
    caplog.set_level(logging.INFO, logger="packsched.live")
    for i in range(2):
        api.create("nodes", node(f"n{i}", cpu="2", memory="4Gi"))
    names = [f"p{i}" for i in range(3)]
    for n in names:
        api.create("pods", pod(n))
    run = start(api, tmp_path)
    try:
        assert api.wait_for(all_bound(names), 15), "not every pod was bound"
        api.create("pods", pod("late"))
        assert api.wait_for(all_bound(["late"]), 10)
    finally:
        assert run.stop() == 0
    synced = [r for r in caplog.records if r.getMessage() == "caches synced"]
    assert len(synced) == 1
    assert (synced[0].__dict__["pods"], synced[0].__dict__["nodes"]) == (3, 2)
    assert run.server.controller.stats.bound == 4


def test_not_ready_while_the_optional_kinds_are_still_looked_up(
    api: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The optional informers (DRA, GenericWorkload) start after a discovery request: until they have, serve is
    neither synced nor ready, even with every informer started so far synced (it reported ready before)."""
    import threading

    from packsched.live.serve import Server

    asked, answer = threading.Event(), threading.Event()
    served = Server._served_versions

    def slow_discovery(self: Server, group: str) -> tuple[str, ...] | None:
        asked.set()
        assert answer.wait(10)
        return served(self, group)

    monkeypatch.setattr(Server, "_served_versions", slow_discovery)
    api.create("nodes", node("n0"))
    run = start(api, tmp_path)
    try:
        assert asked.wait(10)
        required = list(run.server.informers)
        assert required and wait(lambda: all(i.synced.is_set() for i in required), 10)
        assert not run.server.synced()
        ok, why = run.server.ready()
        assert not ok and "not all started" in why
        answer.set()
        run.wait_ready()
        assert run.server.ready() == (True, "ok")
    finally:
        answer.set()
        run.stop()
