"""Events and status writes that decide nothing: sent by threads of their own, so that a slow or failing API
server delays no scheduling decision. Writes about one pod go through one sender (by the pod's name), so they
reach the server in the order they were made; the senders' queues are bounded, and when one is full the newest write
is dropped and counted, as client-go's event broadcaster drops events.

Events are aggregated as client-go's events recorder (``tools/events``) does: an event like one recorded in the
last six minutes (same pod, reason, action and reporting controller; the note may differ) is not created again.
The second one turns the first into a series (an update with ``series.count: 2``); later ones only count, and
series that grew are written back every 30 minutes."""

from __future__ import annotations

import datetime as dt
import logging
import queue as queue_mod
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from packsched.api.objects import Pod
from packsched.live.port import EVENTS, PODS, ApiError, ApiPort, Obj, Resource

LOG = logging.getLogger("packsched.live.recorder")
NOTE_MAX = 1024  # events.k8s.io/v1 limits note to 1kB
SENDERS = 4
SERIES_WINDOW_S = 6 * 60.0  # client-go: an isomorphic event within 6 minutes joins the series
SERIES_REFRESH_S = 30 * 60.0  # client-go: series are written back every 30 minutes


def micro_time(now: dt.datetime | None = None) -> str:
    """metav1.MicroTime as the API server writes it."""
    t = now or dt.datetime.now(dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def micro_time_ns(unix_ns: int) -> str:
    """:func:`micro_time` of a time given in nanoseconds since the epoch (``time.time_ns()``), without datetime
    arithmetic (the same text)."""
    seconds, micros = divmod(unix_ns // 1000, 1_000_000)
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(seconds))}.{micros:06d}Z"


def rfc3339(now: dt.datetime | None = None) -> str:
    t = now or dt.datetime.now(dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class RecorderStats:
    sent: int = 0
    aggregated: int = 0  # events counted into a series instead of created
    stale: int = 0  # status writes dropped because a later outcome of their pod came first


@dataclass
class _Series:
    make: Callable[[], Obj]  # the first event's body (made when first needed: by the sender, off the caller's thread)
    count: int = 1
    last: float = 0.0  # monotonic time of the last occurrence
    written: int = 1  # the count the server has
    _body: Obj | None = None

    @property
    def body(self) -> Obj:
        if self._body is None:
            self._body = self.make()
        return self._body


class Recorder:
    def __init__(
        self,
        port: ApiPort,
        identity: str,
        controller: str = "packsched",
        capacity: int = 10000,
        senders: int = SENDERS,
        clock: Callable[[], float] = time.monotonic,
        paused: Callable[[], bool] = lambda: False,
    ) -> None:
        """``paused``: while it answers True (the API server is gone) the senders hold their writes."""
        self.port = port
        self.paused = paused
        self.identity = identity
        self.controller = controller
        self.clock = clock
        self.stats = RecorderStats()
        # Each sender's writes wait in a SimpleQueue (``_per`` at most): a put is one call in C that never waits for
        # a lock a sender holds, and wakes the sender only when it waits for work.
        self._per = max(capacity // max(senders, 1), 1)
        self._queues: list[queue_mod.SimpleQueue[Callable[[], bool | None] | None]] = [
            queue_mod.SimpleQueue() for _ in range(max(senders, 1))
        ]
        self._threads: list[threading.Thread] = []
        self._lock = threading.RLock()  # the series (the scheduling thread's events and the senders' bodies)
        self._count_lock = threading.Lock()  # the senders' counts: apart, so that counting never holds up an event
        self._series: dict[tuple[str, ...], _Series] = {}
        self._last_refresh = clock()
        self._seq = 0

    def start(self) -> None:
        for i, q in enumerate(self._queues):
            t = threading.Thread(target=self._run, args=(q,), name=f"recorder-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Send what is queued (for at most ``timeout_s`` in all), then stop."""
        if not self._threads:
            return
        deadline = time.monotonic() + timeout_s
        for q in self._queues:
            q.put(None)  # after what is queued
        for t in self._threads:
            t.join(max(deadline - time.monotonic(), 0.01))
        self._threads = []

    def now(self) -> str:
        return rfc3339()

    def _run(self, q: queue_mod.SimpleQueue[Callable[[], bool | None] | None]) -> None:
        while True:
            job = q.get()
            if job is None:
                return
            while self.paused() and self._threads:
                time.sleep(0.1)
            self._do(job)

    def _do(self, job: Callable[[], bool | None]) -> None:
        try:
            if job() is False:  # dropped, not sent
                return
            with self._count_lock:
                self.stats.sent += 1
        except ApiError as exc:
            LOG.debug("write failed", extra={"error": str(exc)})

    def _submit(self, job: Callable[[], bool | None], shard: str, wait: bool = False) -> None:
        if wait or not self._threads:
            self._do(job)
            return
        q = self._queues[hash(shard) % len(self._queues)]
        if q.qsize() < self._per:  # a full queue: the write is dropped (it decides nothing)
            q.put(job)

    def event(self, pod: Pod, etype: str, reason: str, action: str, note: str) -> None:
        """An events.k8s.io/v1 Event about ``pod`` (or one more occurrence of a series)."""
        shard = f"{pod.namespace}/{pod.name}"
        key = (pod.namespace, pod.name, pod.uid, reason, action, self.controller)
        now = self.clock()
        self._refresh(now)
        namespace, name, uid = pod.namespace, pod.name, pod.uid
        seq = 0  # (set below, before the body can be made)

        def make() -> Obj:
            return {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": f"{name}.{stamp + seq:x}", "namespace": namespace},
                "eventTime": micro_time_ns(stamp),
                "reportingController": self.controller,
                "reportingInstance": self.identity,
                "action": action,
                "reason": reason,
                "type": etype,
                "note": note[:NOTE_MAX],
                "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": namespace, "name": name, "uid": uid},
            }

        with self._lock:
            series = self._series.get(key)
            if series is not None and now - series.last <= SERIES_WINDOW_S:
                series.count += 1
                series.last = now
                self.stats.aggregated += 1
                if series.count > 2:
                    return  # counted; written back with the periodic refresh
                self._send_update(pod.namespace, self._with_series(series), shard)
                return
            stamp = time.time_ns()
            # client-go names an event ``<regarding>.<unix nanoseconds in hex>``; a counter keeps two events made
            # in the same nanosecond apart
            self._seq += 1
            seq = self._seq
            series = self._series[key] = _Series(make, last=now)
        self._submit(lambda: self._create_event(namespace, series), shard)

    def _with_series(self, series: _Series) -> Obj:
        """The event with its series as it stands (called with the lock held)."""
        series.written = series.count
        last = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=max(self.clock() - series.last, 0.0))
        return {**series.body, "series": {"count": series.count, "lastObservedTime": micro_time(last)}}

    def _refresh(self, now: float) -> None:
        """Every SERIES_REFRESH_S: series that grew are written back; finished ones are forgotten."""
        if now - self._last_refresh < SERIES_REFRESH_S:
            return
        self._last_refresh = now
        with self._lock:
            for key, series in list(self._series.items()):
                if series.count > series.written:
                    self._send_update(key[0], self._with_series(series), f"{key[0]}/{key[1]}")
                if now - series.last > SERIES_WINDOW_S:
                    del self._series[key]

    def _send_update(self, namespace: str, body: Obj, shard: str) -> None:
        self._submit(lambda: self._update_event(namespace, body), shard)

    def _update_event(self, namespace: str, body: Obj) -> None:
        self.port.update(EVENTS, namespace, str(body["metadata"]["name"]), body)

    def _create_event(self, namespace: str, series: _Series) -> None:
        body = series._body
        if body is None:  # made here, off the lock (a series update made meanwhile keeps its own, the same)
            made = series.make()
            with self._lock:
                if series._body is None:
                    series._body = made
                body = series._body
        self.port.create(EVENTS, namespace, body)

    def patch_pod_status(
        self, namespace: str, name: str, patch: Obj, wait: bool = False, current: Callable[[], bool] | None = None
    ) -> None:
        """``current``: asked when the write's turn comes; a write that answers False is dropped (stale: a later
        outcome of the pod made it wrong) and counted."""
        self._submit(lambda: self._patch(namespace, name, patch, current), f"{namespace}/{name}", wait)

    def patch_status(self, res: Resource, namespace: str, name: str, patch: Obj) -> None:
        """A status patch of another kind's object (a PodGroup's condition), sent as the pods' are (one sender per
        object); one of an object deleted meanwhile is dropped."""
        self._submit(lambda: self._patch_other(res, namespace, name, patch), f"{res.plural}:{namespace}/{name}")

    def _patch_other(self, res: Resource, namespace: str, name: str, patch: Obj) -> None:
        try:
            self.port.patch_status(res, namespace, name, patch)
        except ApiError as exc:
            if not exc.not_found:
                raise

    def _patch(self, namespace: str, name: str, patch: Obj, current: Callable[[], bool] | None = None) -> bool:
        if current is not None and not current():
            with self._count_lock:
                self.stats.stale += 1
            return False
        try:
            self.port.patch_status(PODS, namespace, name, patch)
        except ApiError as exc:
            if not exc.not_found:  # a pod deleted meanwhile needs no status
                raise
        return True
