"""Binding cycles off the scheduling thread, as kube-scheduler runs each in a goroutine of its own: a bounded pool
of worker threads runs PreBind and Bind (the ``pods/binding`` POST) and hands every answer back to the scheduling
thread, which alone touches the cache, the queue and the plugins' state (assumed pods are confirmed, or forgotten
and requeued, there).

With ``workers=0`` the binding cycle runs in the caller's thread and its answer is handed back at once: the same
path, synchronously (the unit tests drive the controller step by step that way).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
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
        self._jobs: deque[BindingDone | None] = deque()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        # Jobs wait in _jobs. A worker coming back from a job (or starting) takes the next one before it waits; a
        # submit wakes a waiting worker only when none is coming, and a worker that takes a job wakes the next when
        # more wait and none is coming. So the scheduling thread (which holds the interpreter lock) seldom wakes a
        # thread itself: on a busy machine the woken thread takes its CPU, and every thread then waits for the
        # lock until the scheduling thread runs again.
        self._ready = threading.Condition(threading.Lock())
        self._coming = 0  # workers that will look at _jobs without being woken (guarded by _ready)
        self._waiting = 0  # workers waiting on _ready for a job
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
        with self._ready:
            self._jobs.append(item)
            if self._coming == 0:
                self._wake()
        return None

    def _wake(self) -> None:
        """Wake one waiting worker, now counted as coming (called with _ready held)."""
        if self._waiting:
            self._waiting -= 1
            self._coming += 1
            self._ready.notify()

    def _work(self) -> None:
        with self._ready:
            self._coming += 1
        while True:
            with self._ready:
                while not self._jobs:
                    self._coming -= 1
                    self._waiting += 1
                    self._ready.wait()  # (whoever woke it counted it as coming again)
                item = self._jobs.popleft()
                self._coming -= 1
                if self._jobs and self._coming == 0:
                    self._wake()
            if item is None:
                return
            self._finish(item)
            with self._ready:
                self._coming += 1

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
        with self._ready:
            self._jobs.extend(None for _ in self._threads)
            self._coming += self._waiting
            self._waiting = 0
            self._ready.notify_all()
        for t in self._threads:
            t.join(1.0)
        self._threads.clear()
