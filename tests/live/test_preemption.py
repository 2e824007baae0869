"""Preemption on the live cluster: the preemptor is nominated, victims are marked (DisruptionTarget) and removed
through the Eviction API (or deleted), and the preemptor is bound once they are gone."""

from __future__ import annotations

from pathlib import Path

from live.fakeapi import FakeApiServer
from live.harness import all_bound, check_cluster, node, pod, start, wait
from packsched.live.controller import DELETE


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


def test_preemption_evicts_victims_then_binds_the_preemptor(api: FakeApiServer, tmp_path: Path) -> None:
    _setup(api)
    run = start(api, tmp_path)
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
    assert api.stats.evictions == 2
    check_cluster(api, expect_bound=1)
    m = run.server.metrics.exposition().decode()
    assert "scheduler_preemption_attempts_total 1.0" in m
    assert "scheduler_preemption_victims_sum 2.0" in m


def test_eviction_refused_by_a_budget_keeps_victims_and_the_preemptor_waits(api: FakeApiServer, tmp_path: Path) -> None:
    _setup(api, labels={"app": "web"})
    api.create(
        "poddisruptionbudgets",
        {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 4, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    run = start(api, tmp_path)
    try:
        run.wait_ready()
        api.create("pods", pod("hi", cpu="1", priority_class="high"))
        assert wait(lambda: run.server.controller.stats.eviction_refusals >= 1, 10)
    finally:
        run.stop()
    assert len([p for p in api.objects("pods") if p["metadata"]["name"].startswith("low")]) == 4
    hi = api.get("pods", "default", "hi")
    assert hi is not None and not hi["spec"].get("nodeName")
    assert api.stats.evictions_refused >= 1
    check_cluster(api, expect_bound=0)


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
