"""Events and status writes that decide nothing: sent by a thread of their own, so that a slow or failing API
server delays no scheduling decision. The queue is bounded; when it is full the newest write is dropped and
counted, as client-go's event broadcaster drops events."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import queue as queue_mod
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from packsched.api.objects import Pod
from packsched.live.port import EVENTS, PODS, ApiError, ApiPort, Obj

LOG = logging.getLogger("packsched.live.recorder")
NOTE_MAX = 1024  # events.k8s.io/v1 limits note to 1kB


def micro_time(now: dt.datetime | None = None) -> str:
    """metav1.MicroTime as the API server writes it."""
    t = now or dt.datetime.now(dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339(now: dt.datetime | None = None) -> str:
    t = now or dt.datetime.now(dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class RecorderStats:
    sent: int = 0
    failed: int = 0
    dropped: int = 0


class Recorder:
    def __init__(self, port: ApiPort, identity: str, controller: str = "packsched", capacity: int = 10000) -> None:
        self.port = port
        self.identity = identity
        self.controller = controller
        self.stats = RecorderStats()
        self._queue: queue_mod.Queue[Callable[[], None] | None] = queue_mod.Queue(capacity)
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="recorder", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Send what is queued (for at most ``timeout_s``), then stop."""
        if self._thread is None:
            return
        with contextlib.suppress(queue_mod.Full):
            self._queue.put(None, timeout=timeout_s)
        self._thread.join(timeout_s)
        self._thread = None

    def now(self) -> str:
        return rfc3339()

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            self._do(job)

    def _do(self, job: Callable[[], None]) -> None:
        try:
            job()
            self.stats.sent += 1
        except ApiError as exc:
            self.stats.failed += 1
            LOG.debug("write failed", extra={"error": str(exc)})

    def _submit(self, job: Callable[[], None], wait: bool = False) -> None:
        if wait or self._thread is None:
            self._do(job)
            return
        try:
            self._queue.put_nowait(job)
        except queue_mod.Full:
            self.stats.dropped += 1

    def event(self, pod: Pod, etype: str, reason: str, action: str, note: str) -> None:
        """An events.k8s.io/v1 Event about ``pod``."""
        now = dt.datetime.now(dt.UTC)
        body: Obj = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                "name": f"{pod.name}.{uuid.uuid4().hex[:16]}",
                "namespace": pod.namespace,
            },
            "eventTime": micro_time(now),
            "reportingController": self.controller,
            "reportingInstance": self.identity,
            "action": action,
            "reason": reason,
            "type": etype,
            "note": note[:NOTE_MAX],
            "regarding": {
                "apiVersion": "v1",
                "kind": "Pod",
                "namespace": pod.namespace,
                "name": pod.name,
                "uid": pod.uid,
            },
        }
        self._submit(lambda: self._create_event(pod.namespace, body))

    def _create_event(self, namespace: str, body: Obj) -> None:
        self.port.create(EVENTS, namespace, body)

    def patch_pod_status(self, namespace: str, name: str, patch: Obj, wait: bool = False) -> None:
        self._submit(lambda: self._patch(namespace, name, patch), wait)

    def _patch(self, namespace: str, name: str, patch: Obj) -> None:
        try:
            self.port.patch_status(PODS, namespace, name, patch)
        except ApiError as exc:
            if not exc.not_found:  # a pod deleted meanwhile needs no status
                raise
