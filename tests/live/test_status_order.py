"""Status writes are ordered per pod: a failure written while the API server was away reaches it after the pod's
successful re-bind only as a dropped write, never as a PodScheduled=False condition over the bind's True (issue 24:
4-12 bound pods kept "Binding rejected: 503" for good after a 20 s outage)."""

from __future__ import annotations

import copy
import time
from pathlib import Path

from live.harness import load, node, pod, write_config
from live.test_cache import StubPort
from packsched.live.controller import Controller
from packsched.live.port import ADDED, MODIFIED, NODES, PODS, ApiError
from packsched.live.recorder import Recorder
from packsched.plugins.registry import in_tree_registry


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _reasons(port: StubPort) -> list[str]:
    return [
        c["reason"]
        for kind, body in port.writes
        if kind == "patch"
        for c in body["status"].get("conditions", [])
        if c["type"] == "PodScheduled"
    ]


def test_a_failure_written_during_an_outage_is_dropped_after_the_pod_is_bound(tmp_path: Path) -> None:
    port = StubPort()
    held = [True]  # the API server is away: the recorder holds its writes
    recorder = Recorder(port, "packsched", paused=lambda: held[0])
    clock = _Clock()
    ctl = Controller(port, load(write_config(tmp_path)), in_tree_registry(), recorder=recorder, clock=clock)
    recorder.start()
    try:
        ctl.handle(NODES, ADDED, {**copy.deepcopy(node("n0")), "metadata": {"name": "n0", "uid": "n0"}})
        raw = copy.deepcopy(pod("a"))
        raw["metadata"].update({"uid": "uid-a", "resourceVersion": "2", "namespace": "default"})
        ctl.handle(PODS, ADDED, raw)
        port.bind_error = ApiError(503, "ServiceUnavailable", "apiserver is shutting down")
        assert ctl.step() and not port.binds  # refused: "Binding rejected" is written... later
        port.bind_error = None
        clock.now += 30.0  # the outage is over, the backoff too
        assert ctl.step() and port.binds == [("a", "n0")]
        bound = copy.deepcopy(raw)
        bound["spec"]["nodeName"] = "n0"
        bound["metadata"]["resourceVersion"] = "3"
        ctl.handle(PODS, MODIFIED, bound)
        held[0] = False
        deadline = time.monotonic() + 10
        while recorder.stats.stale < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        recorder.stop()
    assert recorder.stats.stale == 1
    assert "SchedulerError" not in _reasons(port)  # the server keeps the bind's PodScheduled=True
