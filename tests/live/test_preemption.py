"""Preemption on the live cluster: the preemptor is nominated, victims are marked (DisruptionTarget) and then
deleted, as kube-scheduler does (or evicted through the Eviction API with ``evict``), and the preemptor is bound once
they are gone. In evict mode a budget's refusal stops that candidate and another one is tried."""

from __future__ import annotations

from pathlib import Path

from live.fakeapi import FakeApiServer
from live.harness import all_bound, check_cluster, load, node, pod, start, wait, write_config
from live.test_cache import StubPort, _obj
from packsched.live.controller import DELETE, EVICT, Controller
from packsched.live.port import ADDED, MODIFIED, NODES, PODS, PRIORITY_CLASSES
from packsched.plugins.registry import in_tree_registry


def _setup(api: FakeApiServer, labels: dict[str, str] | None = None) -> None:
    api.create("priorityclasses", {"metadata": {"name": "low"}, "value": 10})
    api.create("priorityclasses", {"metadata": {"name": "high"}, "value": 1000})
    api.create("nodes", node("n0", cpu="2", memory="4Gi"))
    for i in range(4):  # running pods placed by another scheduler fill the node
        api.create(
            "pods",
            pod(
                f"low{i}",
                cpu="500m",
                scheduler="default-scheduler",
                priority_class="low",
                node_name="n0",
                labels=labels,
            ),
        )


def _marked(api: FakeApiServer, name: str) -> bool:
    return any(
        e.obj["metadata"]["name"] == name
        and any(
            c["type"] == "DisruptionTarget" and c["reason"] == "PreemptionByScheduler"
            for c in e.obj.get("status", {}).get("conditions") or []
        )
        for e in api.history
        if e.plural == "pods"
    )


def _condition(api: FakeApiServer, name: str) -> dict[str, str] | None:
    p = api.get("pods", "default", name)
    conds = (p or {}).get("status", {}).get("conditions") or []
    return next((c for c in conds if c["type"] == "DisruptionTarget"), None)


def test_preemption_marks_then_deletes_victims_then_binds_the_preemptor(api: FakeApiServer, tmp_path: Path) -> None:
    _setup(api)
    # the default mode: delete, as kube-scheduler. SchedulerPopFromBackoffQ off: with it on, the preemptor is popped
    # from the backoff queue as soon as its victims' deletions move it, and its bind may come before the status write
    # of its nomination is sent, which the bind then drops (a bind starts a new outcome: PodStatusWriter.bound);
    # the 1 s backoff keeps the order this test checks
    run = start(api, tmp_path, gates={"SchedulerPopFromBackoffQ": False})
    try:
        run.wait_ready()
        api.create("pods", pod("hi", cpu="1", priority_class="high"))
        assert api.wait_for(all_bound(["hi"]), 15)
        assert wait(lambda: any(e["reason"] == "Preempted" for e in api.objects("events")), 5)
    finally:
        run.stop()
    hi = api.get("pods", "default", "hi")
    assert hi is not None and hi["spec"]["nodeName"] == "n0"
    assert hi["status"].get("nominatedNodeName") == "n0"  # written by the preemption attempt
    left = sorted(p["metadata"]["name"] for p in api.objects("pods") if p["metadata"]["name"].startswith("low"))
    assert len(left) == 2  # exactly the room the preemptor needs was freed
    victims = {f"low{i}" for i in range(4)} - set(left)
    assert all(_marked(api, v) for v in victims)
    assert api.stats.evictions == 0  # deleted, not evicted
    for v in victims:  # the condition is written before the delete is sent
        path = f"/api/v1/namespaces/default/pods/{v}"
        calls = [(m, p) for m, p, _ in api.stats.log if p in (path, path + "/status")]
        assert calls == [("PATCH", path + "/status"), ("DELETE", path)]
    check_cluster(api, expect_bound=1)
    m = run.server.metrics.exposition().decode()
    assert "scheduler_preemption_attempts_total 1.0" in m
    assert "scheduler_preemption_victims_sum 2.0" in m


def test_evict_mode_evicts_victims(api: FakeApiServer, tmp_path: Path) -> None:
    _setup(api)
    run = start(api, tmp_path, removal=EVICT)
    try:
        run.wait_ready()
        api.create("pods", pod("hi", cpu="1", priority_class="high"))
        assert api.wait_for(all_bound(["hi"]), 15)
    finally:
        run.stop()
    assert api.stats.evictions == 2
    check_cluster(api, expect_bound=1)


def test_evict_mode_a_blocking_budget_clears_the_condition_and_the_nomination(
    api: FakeApiServer, tmp_path: Path
) -> None:
    _setup(api, labels={"app": "web"})
    api.create(
        "poddisruptionbudgets",
        {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 4, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    run = start(api, tmp_path, removal=EVICT)
    try:
        run.wait_ready()
        api.create("pods", pod("hi", cpu="1", priority_class="high"))
        assert wait(lambda: run.server.controller.stats.eviction_refusals >= 1, 10)
        assert wait(lambda: any(e["reason"] == "FailedPreemption" for e in api.objects("events")), 5)

        def refused_now() -> list[str]:
            return [n for n in (f"low{i}" for i in range(4)) if (_condition(api, n) or {}).get("status") == "False"]

        # the condition is patched back by its own sender: it may land just after the event
        assert wait(lambda: bool(refused_now()), 5)
        refused = refused_now()
        assert wait(lambda: not (api.get("pods", "default", "hi") or {})["status"].get("nominatedNodeName"), 5)
    finally:
        run.stop()
    assert len([p for p in api.objects("pods") if p["metadata"]["name"].startswith("low")]) == 4
    assert refused  # the refused victim's DisruptionTarget went back to False
    assert all(_marked(api, n) for n in refused)  # after it had been True
    hi = api.get("pods", "default", "hi")
    assert hi is not None and not hi["spec"].get("nodeName")
    event = next(e for e in api.objects("events") if e["reason"] == "FailedPreemption")
    assert event["regarding"]["name"] == "hi" and event["type"] == "Warning"
    assert "refused" in event["note"] and "another candidate will be tried" in event["note"]
    assert api.stats.evictions_refused >= 1 and api.stats.evictions == 0
    check_cluster(api, expect_bound=0)


def test_evict_mode_refusal_then_another_candidate(api: FakeApiServer, tmp_path: Path) -> None:
    api.create("priorityclasses", {"metadata": {"name": "low"}, "value": 10})
    api.create("priorityclasses", {"metadata": {"name": "high"}, "value": 1000})
    for n, app in (("n0", "web"), ("n1", "db")):
        api.create("nodes", node(n, cpu="2", memory="4Gi"))
        api.create(
            "poddisruptionbudgets",
            {
                "metadata": {"name": app, "namespace": "default"},
                "spec": {"maxUnavailable": 2, "selector": {"matchLabels": {"app": app}}},
            },
        )
        for i in range(4):
            member = pod(
                f"{app}{i}",
                cpu="500m",
                scheduler="default-scheduler",
                priority_class="low",
                node_name=n,
                labels={"app": app},
            )
            # a controller's pods: maxUnavailable is taken of them (a budget over bare pods allows nothing)
            owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app, "uid": f"rs-{app}", "controller": True}
            member["metadata"]["ownerReferences"] = [owner]
            api.create("pods", member)
    # the budgets allow it by every count, and yet the first eviction is refused (the API server has the last word)
    api.inject("POST", r"/eviction$", status=429, count=1)
    run = start(api, tmp_path, removal=EVICT)
    try:
        run.wait_ready()
        api.create("pods", pod("hi", cpu="1", priority_class="high"))
        assert api.wait_for(all_bound(["hi"]), 20)
    finally:
        run.stop()
    first = next(p for m, p, _ in api.stats.log if m == "POST" and p.endswith("/eviction"))
    refused_app = first.split("/pods/")[1].split("/")[0][:-1]  # web0 -> web
    other = "db" if refused_app == "web" else "web"
    hi = api.get("pods", "default", "hi")
    assert hi is not None and hi["spec"]["nodeName"] == {"web": "n0", "db": "n1"}[other]
    survivors = [p["metadata"]["name"] for p in api.objects("pods") if p["metadata"]["name"].startswith(refused_app)]
    assert len(survivors) == 4  # the refused candidate lost nobody
    assert run.server.controller.stats.eviction_refusals == 1 and api.stats.evictions == 2
    check_cluster(api, expect_bound=1)


def test_delete_mode_removes_victims_even_against_a_budget(api: FakeApiServer, tmp_path: Path) -> None:
    # kube-scheduler's own preemption deletes victims: a budget only steers the choice of victims.
    _setup(api, labels={"app": "web"})
    api.create(
        "poddisruptionbudgets",
        {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 4, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    run = start(api, tmp_path, removal=DELETE)
    try:
        run.wait_ready()
        api.create("pods", pod("hi", cpu="1", priority_class="high"))
        assert api.wait_for(all_bound(["hi"]), 15)
    finally:
        run.stop()
    assert len([p for p in api.objects("pods") if p["metadata"]["name"].startswith("low")]) == 2
    check_cluster(api, expect_bound=1)


def test_a_preemptor_waiting_for_its_victims_says_so(tmp_path: Path) -> None:
    """Until the watch shows the victims gone, the preemptor is not tried again, and its condition says why in
    upstream's words (the victims here never go: the stub's delete does nothing)."""
    port = StubPort()
    now = [1000.0]
    ctl = Controller(port, load(write_config(tmp_path)), in_tree_registry(), removal=DELETE, clock=lambda: now[0])
    for name, value in (("low", 10), ("high", 1000)):
        ctl.handle(PRIORITY_CLASSES, ADDED, _obj({"metadata": {"name": name}, "value": value}, name, 1))
    ctl.handle(NODES, ADDED, _obj(node("n0", cpu="2"), "n0", 2))
    for i in range(4):
        raw = pod(f"low{i}", cpu="500m", scheduler="default-scheduler", priority_class="low", node_name="n0")
        raw["spec"]["priority"] = 10
        ctl.handle(PODS, ADDED, _obj(raw, f"uid-l{i}", 3 + i))
    hi = pod("hi", cpu="1", priority_class="high")
    hi["spec"]["priority"] = 1000
    ctl.handle(PODS, ADDED, _obj(hi, "uid-hi", 10))
    assert ctl.step()
    assert ctl.pods["default/hi"].info.pod.nominated_node_name == "n0" and ctl.stats.evictions == 2
    # a change to the node (a new label): the preemptor is tried again
    ctl.handle(NODES, MODIFIED, _obj(node("n0", cpu="2", labels={"touched": "yes"}), "n0", 11))
    now[0] += 11  # past any backoff
    cycles = ctl.scheduler.scheduling_cycle
    assert ctl.step() and ctl.stats.attempts == 1  # popped, but no attempt: its victims are still there
    assert ctl.scheduler.scheduling_cycle == cycles + 1  # counted as the failing cycle upstream runs
    conds = [w[1]["status"]["conditions"][0] for w in port.writes if w[0] == "patch" and "conditions" in w[1]["status"]]
    last = [c for c in conds if c["type"] == "PodScheduled"][-1]
    assert last["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: not eligible due to a terminating pod on the nominated node."
    )
    (waiting,) = ctl.queue.unschedulable
    assert "not eligible" in ctl.queue.reason(waiting)
