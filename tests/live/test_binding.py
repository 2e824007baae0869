"""Binding cycles off the scheduling thread: while binds are in flight the next pods are scheduled against the
assumed ones; answers arrive in any order; a failed bind forgets its pod (its room is free at once) and retries it.
No HTTP: a port whose binds wait until the test answers them."""

from __future__ import annotations

import copy
import threading
from pathlib import Path
from typing import Any

from live.harness import load, node, pod, wait, write_config
from live.test_cache import StubPort, _obj
from packsched.framework.status import Status
from packsched.live.binding import BindingDone, BindingPool
from packsched.live.controller import Controller
from packsched.live.port import ADDED, MODIFIED, NODES, PODS, ApiError, Obj, Resource
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import BindingCycle


class HeldPort(StubPort):
    """Every bind blocks until the test releases it, with success or the error it gives (once: a bind sent again
    is answered as the API server would, 409 when the pod is bound already)."""

    def __init__(self) -> None:
        super().__init__()
        self.gates: dict[str, threading.Event] = {}
        self.errors: dict[str, ApiError] = {}
        self.applied: dict[str, tuple[str, str]] = {}  # pod name -> (uid, node) of the binds applied
        self.sent: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        with self.lock:
            gate = self.gates.setdefault(name, threading.Event())
            self.sent.append((name, node))
        assert gate.wait(10), f"bind of {name} never released"
        with self.lock:
            error = self.errors.pop(name, None)
            if error is None and name in self.applied:
                error = ApiError(409, "Conflict", f"pod {name} is already assigned to node {self.applied[name][1]!r}")
            if error is None or (error.status == 0 and name in self.applied):
                self.binds.append((name, node))
        if error is not None:
            raise error

    def get(self, res: Resource, namespace: str, name: str) -> Obj:
        if name not in self.applied:
            return super().get(res, namespace, name)
        uid, node = self.applied[name]
        return {"metadata": {"name": name, "namespace": namespace, "uid": uid}, "spec": {"nodeName": node}}

    def release(self, name: str, error: ApiError | None = None, *, applied_on: tuple[str, str] | None = None) -> None:
        """``applied_on``: (uid, node) when the bind is applied though ``error`` (status 0) loses its answer."""
        with self.lock:
            if error is not None:
                self.errors[name] = error
            if applied_on is not None:
                self.applied[name] = applied_on
            self.gates.setdefault(name, threading.Event()).set()


def _setup(tmp_path: Path, workers: int = 4) -> tuple[Controller, HeldPort]:
    port = HeldPort()
    ctl = Controller(port, load(write_config(tmp_path)), in_tree_registry(), binding_workers=workers)
    ctl.handle(NODES, ADDED, _obj(node("n0", cpu="2"), "n0", 1))
    ctl.handle(NODES, ADDED, _obj(node("n1", cpu="2"), "n1", 2))
    ctl.binding.start()
    return ctl, port


def _cpu(ctl: Controller) -> dict[str, int]:
    row = ctl.snapshot.row["cpu"]
    return {n.name: int(ctl.snapshot.requested[row, i]) for i, n in enumerate(ctl.snapshot.nodes)}


def _answers(ctl: Controller, n: int) -> None:
    """Apply ``n`` binding answers (the scheduling thread's side)."""
    got = 0
    while got < n:
        got += ctl.drain(5.0)
        assert got or ctl.binding.in_flight, "no answer came"


def test_next_pods_are_scheduled_against_assumed_ones_and_answers_come_in_any_order(tmp_path: Path) -> None:
    ctl, port = _setup(tmp_path)
    raws = {f"p{i}": _obj(pod(f"p{i}", cpu="1"), f"uid-{i}", 10 + i) for i in range(5)}
    for raw in raws.values():
        ctl.handle(PODS, ADDED, raw)
    for _ in range(5):
        assert ctl.step()
    # four fit (2 x 2 cpu), all four in flight at once, counted on their nodes before any answer
    assert wait(lambda: len(port.sent) == 4, 5)
    assert ctl.binding.in_flight == 4 and _cpu(ctl) == {"n0": 2000, "n1": 2000}
    assert ctl.stats.unschedulable == 1  # the fifth saw the assumed pods: no room, no over-commit
    chosen = dict(port.sent)
    for name in ("p3", "p0", "p2", "p1"):  # answers in an order of their own
        port.release(name)
    _answers(ctl, 4)
    assert ctl.stats.bound == 4 and sorted(n for n, _ in port.binds) == ["p0", "p1", "p2", "p3"]
    # the watch confirms them (one before its answer would make no difference: see the next test)
    for name, node_name in chosen.items():
        bound = copy.deepcopy(raws[name])
        bound["spec"]["nodeName"] = node_name
        ctl.handle(PODS, MODIFIED, bound)
        assert not ctl.cache.is_assumed(f"default/{name}")
    assert _cpu(ctl) == {"n0": 2000, "n1": 2000} and ctl.binding.peak == 4
    ctl.binding.close(1.0)


def test_watch_confirmation_before_the_answer_and_a_lost_answer(tmp_path: Path) -> None:
    ctl, port = _setup(tmp_path)
    raw = _obj(pod("a", cpu="1"), "uid-a", 3)
    ctl.handle(PODS, ADDED, raw)
    assert ctl.step()
    assert wait(lambda: len(port.sent) == 1, 5)
    bound = copy.deepcopy(raw)
    bound["spec"]["nodeName"] = port.sent[0][1]
    ctl.handle(PODS, MODIFIED, bound)  # the watch is first: the bind went through
    assert not ctl.cache.is_assumed("default/a")
    # ... and its answer was lost: the binding sent again is refused as a conflict, and the pod is read on its node
    port.release("a", ApiError(0, "ReadTimeoutError", "read timed out"), applied_on=("uid-a", port.sent[0][1]))
    _answers(ctl, 1)
    assert ctl.stats.bound == 1 and ctl.stats.bind_errors == 0 and len(port.sent) == 2
    assert ctl.cache.node_of("default/a") == port.sent[0][1] and sum(_cpu(ctl).values()) == 1000
    assert "default/a" not in ctl.queue  # not retried: it is bound
    ctl.binding.close(1.0)


def test_a_failed_bind_forgets_the_assumed_pod_while_others_are_in_flight(tmp_path: Path) -> None:
    ctl, port = _setup(tmp_path)
    for i in range(3):
        ctl.handle(PODS, ADDED, _obj(pod(f"p{i}", cpu="1"), f"uid-{i}", 10 + i))
    for _ in range(3):
        assert ctl.step()
    assert wait(lambda: len(port.sent) == 3, 5)
    where = dict(port.sent)
    port.release("p1", ApiError(500, "InternalError", "etcd timeout"))
    _answers(ctl, 1)
    # forgotten: its room is free again while p0 and p2 are still being bound; it waits out its backoff
    assert sum(_cpu(ctl).values()) == 2000 and not ctl.cache.__contains__("default/p1")
    assert ctl.binding.in_flight == 2 and "default/p1" in ctl.queue and ctl.stats.bind_errors == 1
    assert _cpu(ctl) == {n: 1000 * sum(where[p] == n for p in ("p0", "p2")) for n in ("n0", "n1")}
    port.release("p0")
    port.release("p2")
    _answers(ctl, 2)
    assert ctl.stats.bound == 2 and ctl.binding.in_flight == 0
    ctl.binding.close(1.0)


def test_stopping_gives_up_the_bindings_not_sent(tmp_path: Path) -> None:
    done: list[BindingDone] = []
    started = threading.Event()
    release = threading.Event()

    def run(job: Any) -> Any:
        started.set()
        release.wait(5)
        return Status()

    pool = BindingPool(1, run, done.append)
    pool.start()
    jobs = [BindingDone(None, BindingCycle(None, None, None, "n", None), 0.0) for _ in range(3)]  # type: ignore[arg-type]
    for j in jobs:
        pool.submit(j)
    assert started.wait(5)
    threading.Timer(0.2, release.set).start()
    assert pool.close(5.0)
    assert [d.status.ok for d in done] == [True, False, False]  # on the wire: waited for; the others: given up
    assert "not sent" in done[1].status.message


def test_jobs_handed_over_at_once_reach_every_worker() -> None:
    """The scheduling thread wakes at most one waiting worker per job, and none while a worker is coming back for
    the next; the workers wake each other: jobs submitted in a burst still run on every worker at once."""
    workers = 4
    together = threading.Barrier(workers)
    done: list[BindingDone] = []

    def run(job: Any) -> Any:
        together.wait(5)  # all four at once, or BrokenBarrierError
        return Status()

    pool = BindingPool(workers, run, done.append)
    pool.start()
    for _ in range(3 * workers):
        pool.submit(BindingDone(None, BindingCycle(None, None, None, "n", None), 0.0))  # type: ignore[arg-type]
    assert pool.wait_idle(10)
    assert len(done) == 3 * workers and all(d.status.ok for d in done)
    assert pool.peak == 3 * workers
    pool.stop()
