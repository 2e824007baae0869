"""The simulator and live mode hand every cluster change to the scheduler's one set of reactions
(``packsched/eventhandlers.py``): the same sequence of changes, driven through both, moves the same queued pods at
the same points, and places every pod."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from live.harness import load, node, pod, write_config
from live.test_cache import StubPort
from packsched.api.annotations import ARRIVAL_TIME
from packsched.api.manifests import load_manifests
from packsched.backend.queue import SchedulingQueue
from packsched.live.controller import Controller
from packsched.live.port import ADDED, DELETED, MODIFIED, NODES, PODS, Obj
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import DELETED as SIM_DELETED
from packsched.sim.engine import RUNNING, Simulation

HOSTNAME = "kubernetes.io/hostname"
Moves = list[tuple[str, list[str]]]


@pytest.fixture
def moves(monkeypatch: pytest.MonkeyPatch) -> Iterator[Moves]:
    """Every move of queued pods, as (which move, the keys of the pods it moved); moves that moved nothing left
    out (the drivers hear of different no-op changes, e.g. live mode's nodes arrive as events)."""
    log: Moves = []
    move_all, move_some = SchedulingQueue.move_all, SchedulingQueue.move_some

    def logged_all(self: SchedulingQueue, now: float, keep: Any = None, stay: Any = None) -> int:
        before = set(self.unschedulable)
        n = move_all(self, now, keep, stay)
        if n:
            log.append(("move_all", sorted(before - set(self.unschedulable))))
        return n

    def logged_some(self: SchedulingQueue, now: float, which: Any) -> int:
        before = set(self.unschedulable)
        n = move_some(self, now, which)
        if n:
            log.append(("move_some", sorted(before - set(self.unschedulable))))
        return n

    monkeypatch.setattr(SchedulingQueue, "move_all", logged_all)
    monkeypatch.setattr(SchedulingQueue, "move_some", logged_some)
    yield log


def _objects() -> tuple[list[Obj], list[Obj], Obj, Obj]:
    """Two small nodes; b (required affinity to app=a) and big (fits no node yet); then a; then a large node."""
    nodes = [node("n0", cpu="2"), node("n1", cpu="2")]
    b = pod("b", cpu="500m")
    term = {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": HOSTNAME}
    b["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    big = pod("big", cpu="3")
    a = pod("a", cpu="500m", labels={"app": "a"})
    large = node("n2", cpu="4")
    return nodes, [b, big], a, large


def _simulate(tmp_path: Path, moves: Moves) -> tuple[Moves, dict[str, str]]:
    nodes, first, a, large = _objects()
    a = copy.deepcopy(a)
    a["metadata"]["annotations"] = {ARRIVAL_TIME: "10s"}
    docs = [{"apiVersion": "v1", "kind": "Node", **n} for n in nodes]
    docs += [{"apiVersion": "v1", "kind": "Pod", **p} for p in [*first, a]]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    config = load(write_config(tmp_path))
    sim = Simulation(load_manifests([str(path)]), config, in_tree_registry())
    sim.run_until(20.0)  # b and big tried, a bound at 10 s, b after it
    after_a = list(moves)
    large_node = load_manifests_node(tmp_path, large)
    sim.set_node(large_node)
    sim.run_until(40.0)
    sim.remove_pod("default/a", SIM_DELETED, "deleted", replace_it=False)
    sim.run_until(60.0)
    placed = {key: str(rec.node) for key, rec in sim.records.items() if rec.phase == RUNNING}
    assert after_a == [("move_some", ["default/b"])]
    return list(moves), placed


def load_manifests_node(tmp_path: Path, raw: Obj) -> Any:
    path = tmp_path / "node.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Node", **raw}))
    return load_manifests([str(path)]).nodes[0]


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _live(tmp_path: Path, moves: Moves) -> tuple[Moves, dict[str, str]]:
    nodes, first, a, large = _objects()
    port = StubPort()
    clock = _Clock()
    ctl = Controller(port, load(write_config(tmp_path)), in_tree_registry(), clock=clock)
    rv = iter(range(1, 1000))

    def obj(raw: Obj, uid: str, node_name: str = "") -> Obj:
        out = copy.deepcopy(raw)
        out["metadata"].update({"uid": uid, "resourceVersion": str(next(rv))})
        if "spec" in out and "containers" in out["spec"]:
            out["metadata"].setdefault("namespace", "default")
            if node_name:
                out["spec"]["nodeName"] = node_name
        return out

    def run(until: float) -> None:
        """Try every pod that is ready until ``until``, the watch confirming each bind at once."""
        while clock.now < until:
            while ctl.step():
                for name, chosen in port.binds[len(confirmed) :]:
                    raw = next(p for p in [*first, a] if p["metadata"]["name"] == name)
                    ctl.handle(PODS, MODIFIED, obj(raw, f"uid-{name}", chosen))
                    confirmed.append((name, chosen))
            clock.now += 0.5

    confirmed: list[tuple[str, str]] = []
    for n in nodes:
        ctl.handle(NODES, ADDED, obj(n, n["metadata"]["name"]))
    for p in first:
        ctl.handle(PODS, ADDED, obj(p, f"uid-{p['metadata']['name']}"))
    run(1010.0)
    ctl.handle(PODS, ADDED, obj(a, "uid-a"))
    run(1020.0)
    after_a = list(moves)
    ctl.handle(NODES, ADDED, obj(large, "n2"))
    run(1040.0)
    ctl.handle(PODS, DELETED, obj(a, "uid-a", dict(confirmed)["a"]))
    run(1060.0)
    assert after_a == [("move_some", ["default/b"])]
    placed = {f"default/{name}": chosen for name, chosen in confirmed if name != "a"}
    return list(moves), placed


def test_simulator_and_live_mode_move_the_same_pods_on_the_same_changes(tmp_path: Path, moves: Moves) -> None:
    (tmp_path / "sim").mkdir()
    (tmp_path / "live").mkdir()
    sim_moves, sim_placed = _simulate(tmp_path / "sim", moves)
    moves.clear()
    live_moves, live_placed = _live(tmp_path / "live", moves)
    # b moves when a is bound (its affinity term matches a); big when the large node comes; a's deletion moves
    # nothing (nothing waits any more)
    assert sim_moves == live_moves == [("move_some", ["default/b"]), ("move_all", ["default/big"])]
    assert sim_placed["default/big"] == live_placed["default/big"] == "n2"
    assert sim_placed["default/b"] == live_placed["default/b"]


def test_a_node_status_update_that_changes_nothing_moves_no_pod_and_keeps_the_caches(
    tmp_path: Path, moves: Moves
) -> None:
    """Live mode: a node's update that changes nothing the scheduler reads of it (the kubelet's status update: a new
    resourceVersion and condition heartbeats) moves no waiting pod and keeps the snapshot's node generation (the
    pod classes' kept verdicts and scores stay); a new label moves the waiting pod, as upstream's
    NodeSchedulingPropertiesChange would."""
    port = StubPort()
    clock = _Clock()
    ctl = Controller(port, load(write_config(tmp_path)), in_tree_registry(), clock=clock)
    raw = node("n0", cpu="2")
    ctl.handle(NODES, ADDED, {**raw, "metadata": {**raw["metadata"], "uid": "n0", "resourceVersion": "1"}})
    big = pod("big", cpu="3")
    big["metadata"].update({"uid": "uid-big", "resourceVersion": "2", "namespace": "default"})
    ctl.handle(PODS, ADDED, big)
    while ctl.step():
        pass
    sched = ctl.scheduler
    assert "default/big" in sched.queue.unschedulable  # fits no node
    generation = sched.snapshot.node_generation
    beat = copy.deepcopy(raw)
    beat["metadata"].update({"uid": "n0", "resourceVersion": "3"})
    beat["status"]["conditions"] = [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-11-26T22:00:00Z"}]
    ctl.handle(NODES, MODIFIED, beat)
    assert moves == []
    assert sched.snapshot.node_generation == generation
    relabelled = copy.deepcopy(beat)
    relabelled["metadata"].update({"resourceVersion": "4", "labels": {**raw["metadata"]["labels"], "tier": "a"}})
    ctl.handle(NODES, MODIFIED, relabelled)
    assert moves == [("move_all", ["default/big"])]
    assert sched.snapshot.node_generation > generation
