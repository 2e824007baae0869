"""Binding cycles off the scheduling thread, as kube-scheduler runs each in a goroutine of its own: a bounded pool
of worker threads runs PreBind and Bind (the ``pods/binding`` POST) and hands every answer back to the scheduling
thread, which alone touches the cache, the queue and the plugins' state (assumed pods are confirmed, or forgotten
and requeued, there).

With ``workers=0`` the binding cycle runs in the caller's thread and its answer is handed back at once: the same
path, synchronously (the unit tests drive the controller step by step that way).
"""

from __future__ import annotations

import logging
import queue as queue_mod
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from packsched.framework.status import Status
from packsched.scheduler import BindingCycle, QueuedPod

LOG = logging.getLogger("packsched.live")

DEFAULT_WORKERS = 16


@dataclass
class BindingDone:
    """One binding cycle's answer, on its way back to the scheduling thread."""

    qp: QueuedPod
    job: BindingCycle
    start: float  # perf_counter when the pod's scheduling cycle began
    status: Status = field(default_factory=Status)


class BindingPool:
    def __init__(
        self,
        workers: int,
        run: Callable[[BindingCycle], Status],
        done: Callable[[BindingDone], None],
        paused: Callable[[], bool] = lambda: False,
    ) -> None:
        """``paused``: while it answers True (the API server is gone) workers hold the bindings they have not
        sent, rather than send them to fail."""
        self.workers = workers
        self._paused = paused
        self._run = run
        self._done = done
        self._jobs: queue_mod.SimpleQueue[BindingDone | None] = queue_mod.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self.closing = False  # stopping: bindings not sent yet are given up (the pods are forgotten, not bound)
        self.in_flight = 0  # submitted, answer not handed back yet
        self.peak = 0  # the most in flight at once

    def start(self) -> None:
        for i in range(self.workers):
            t = threading.Thread(target=self._work, name=f"binder-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def submit(self, item: BindingDone) -> BindingDone | None:
        """Hand a binding cycle to a worker; without workers run it now and answer it (not handed back)."""
        if not self._threads:
            item.status = self._call(item)
            return item
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        self._jobs.put(item)
        return None

    def _work(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            self._finish(item)

    def _call(self, item: BindingDone) -> Status:
        try:
            return self._run(item.job)
        except Exception as exc:  # a plugin's bug: the pod is forgotten and retried, the worker lives on
            LOG.exception("binding cycle failed", extra={"pod": item.job.pod.key})
            return Status.error(f"binding cycle failed: {exc}")

    def _finish(self, item: BindingDone) -> None:
        while self._paused() and not self.closing:
            time.sleep(0.05)
        if self.closing:
            item.status = Status.error("scheduler stopping: binding not sent")
        else:
            item.status = self._call(item)
        self._done(item)
        with self._lock:
            self.in_flight -= 1
            self._idle.notify_all()

    def close(self, timeout_s: float) -> bool:
        """Stop: bindings on the wire are waited for (at most ``timeout_s``), the ones not sent are given up;
        every answer is handed back. Answers whether all came back."""
        self.closing = True
        idle = self.wait_idle(timeout_s)
        self.stop()
        return idle

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait (bounded) until every submitted binding has answered."""
        with self._idle:
            return self._idle.wait_for(lambda: self.in_flight == 0, timeout_s)

    def stop(self) -> None:
        for _ in self._threads:
            self._jobs.put(None)
        for t in self._threads:
            t.join(1.0)
        self._threads.clear()
