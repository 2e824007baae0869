"""Whether the API server is there: every request's outcome, seen through a wrapper of the port, and a log that
says so once a second rather than once a failed request.

:class:`ApiHealth` is down from the first request that got no answer (connection refused, reset or timed out) or a
5xx, until any request is answered again; while down, the scheduler stops sending binds (they would only fail and
be retried), probes the server with a growing interval, and ``/readyz`` answers 503. Only a request sent after the
outage began can end it (answers to requests sent before say nothing about now); a single 5xx is not an outage,
three in a row without an answer between are. :class:`ThrottledLog` writes
at most one line a second for a kind of trouble, with how many like it it held back.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from packsched.live.port import ApiError, ApiPort, Obj, Resource, WatchEvent

LOG = logging.getLogger("packsched.live")

PROBE_MIN_S = 0.25
PROBE_MAX_S = 1.0
# Requests failing because the server is gone are logged under one key, at most once per OUTAGE_LOG_S: the outage
# has a line of its own when it starts and when it ends.
OUTAGE_KEY = "api-unreachable"
OUTAGE_LOG_S = 5.0
SERVER_ERRORS_FOR_OUTAGE = 3


def is_outage(exc: ApiError) -> bool:
    """No answer, or the server (or a proxy before it) failing as a whole."""
    return exc.status == 0 or exc.status in (500, 502, 503, 504)


class ThrottledLog:
    """At most one line per ``interval_s`` for each key; what was held back is counted on the next line."""

    def __init__(
        self, logger: logging.Logger, interval_s: float = 1.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.logger = logger
        self.interval_s = interval_s
        self.clock = clock
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}
        self.lines = 0

    def log(self, level: int, key: str, msg: str, extra: dict[str, Any] | None = None) -> bool:
        """Log unless a line of ``key`` went out less than ``interval_s`` ago (OUTAGE_LOG_S for OUTAGE_KEY).
        Answers whether it logged."""
        now = self.clock()
        interval = OUTAGE_LOG_S if key == OUTAGE_KEY else self.interval_s
        with self._lock:
            if now - self._last.get(key, -1e18) < interval:
                self._held[key] = self._held.get(key, 0) + 1
                return False
            self._last[key] = now
            held = self._held.pop(key, 0)
            self.lines += 1
        fields = dict(extra or {})
        if held:
            fields["suppressed"] = held  # lines like this one held back since the last
        self.logger.log(level, msg, extra=fields)
        return True

    def warning(self, key: str, msg: str, extra: dict[str, Any] | None = None) -> bool:
        return self.log(logging.WARNING, key, msg, extra)

    def failed(self, key: str, msg: str, exc: ApiError, extra: dict[str, Any] | None = None) -> bool:
        """A request failed: under OUTAGE_KEY when the server is gone, else under ``key``."""
        return self.warning(OUTAGE_KEY if is_outage(exc) else key, msg, {**(extra or {}), "error": str(exc)})


class ApiHealth:
    def __init__(self, clock: Callable[[], float] = time.monotonic, log: ThrottledLog | None = None) -> None:
        self.clock = clock
        self.log = log or ThrottledLog(LOG)
        self._lock = threading.Lock()
        self.down_since: float | None = None
        self._in_a_row = 0  # outage-class failures since the last answer
        self.outages = 0
        self.failures = 0  # requests that found the server gone

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def failure(self, exc: ApiError) -> None:
        if not is_outage(exc):
            return
        with self._lock:
            self.failures += 1
            self._in_a_row += 1
            started = self.down_since is None and (exc.status == 0 or self._in_a_row >= SERVER_ERRORS_FOR_OUTAGE)
            if started:
                self.down_since = self.clock()
                self.outages += 1
                self.failures = 1
        if started:
            LOG.warning("API server unreachable; binding paused until it answers", extra={"error": str(exc)})

    def success(self, sent: float | None = None) -> None:
        """A request sent at ``sent`` (monotonic) was answered."""
        with self._lock:
            since = self.down_since
            if since is not None and sent is not None and sent < since:
                return  # sent before the outage began
            self._in_a_row = 0
            self.down_since = None
        if since is not None:
            LOG.warning(
                "API server answers again; binding resumed",
                extra={"outageSeconds": round(self.clock() - since, 1), "failedRequests": self.failures},
            )


class MonitoredPort:
    """An :class:`ApiPort` that reports each request's outcome to an :class:`ApiHealth`."""

    def __init__(self, port: ApiPort, health: ApiHealth) -> None:
        self.port = port
        self.health = health

    def _call(self, fn: Callable[[], Any]) -> Any:
        sent = self.health.clock()
        try:
            out = fn()
        except ApiError as exc:
            if is_outage(exc):
                self.health.failure(exc)
            else:
                self.health.success(sent)  # refused, but answered
            raise
        self.health.success(sent)
        return out

    def list(self, res: Resource, namespace: str = "") -> tuple[list[Obj], str]:
        out: tuple[list[Obj], str] = self._call(lambda: self.port.list(res, namespace))
        return out

    def watch(self, res: Resource, resource_version: str, timeout_s: int) -> Iterator[WatchEvent]:
        sent = self.health.clock()
        try:
            for ev in self.port.watch(res, resource_version, timeout_s):
                self.health.success(sent)
                yield ev
        except ApiError as exc:
            if is_outage(exc) and exc.message.startswith("watch stream broke"):
                pass  # a watch cut mid-stream says nothing about the server (it resumes at once)
            elif is_outage(exc):
                self.health.failure(exc)
            else:
                self.health.success(sent)
            raise

    def get(self, res: Resource, namespace: str, name: str) -> Obj:
        out: Obj = self._call(lambda: self.port.get(res, namespace, name))
        return out

    def group_versions(self, group: str) -> tuple[str, ...]:
        out: tuple[str, ...] = self._call(lambda: self.port.group_versions(group))
        return out

    def create(self, res: Resource, namespace: str, body: Obj) -> Obj:
        out: Obj = self._call(lambda: self.port.create(res, namespace, body))
        return out

    def update(self, res: Resource, namespace: str, name: str, body: Obj) -> Obj:
        out: Obj = self._call(lambda: self.port.update(res, namespace, name, body))
        return out

    def update_status(self, res: Resource, namespace: str, name: str, body: Obj) -> Obj:
        out: Obj = self._call(lambda: self.port.update_status(res, namespace, name, body))
        return out

    def patch_status(self, res: Resource, namespace: str, name: str, patch: Obj) -> Obj:
        out: Obj = self._call(lambda: self.port.patch_status(res, namespace, name, patch))
        return out

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        self._call(lambda: self.port.bind(namespace, name, uid, node))

    def evict(self, namespace: str, name: str, uid: str) -> None:
        self._call(lambda: self.port.evict(namespace, name, uid))

    def delete(self, res: Resource, namespace: str, name: str, uid: str = "", grace_s: int | None = None) -> None:
        self._call(lambda: self.port.delete(res, namespace, name, uid, grace_s))

    def close(self) -> None:
        self.port.close()


class Prober:
    """While the server is down, one cheap request every ``PROBE_MIN_S`` .. ``PROBE_MAX_S`` (doubling): any answer
    ends the outage."""

    def __init__(self, port: MonitoredPort, probe: Callable[[], None], stop: threading.Event) -> None:
        self.port = port
        self.probe = probe
        self.stop = stop
        self._thread: threading.Thread | None = None

    def kick(self) -> None:
        """Start probing when the server is down and no prober runs."""
        if not self.port.health.down or (self._thread is not None and self._thread.is_alive()):
            return
        self._thread = threading.Thread(target=self._run, name="api-probe", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        wait = PROBE_MIN_S
        while self.port.health.down and not self.stop.wait(wait):
            with contextlib.suppress(ApiError):
                self.probe()  # through the monitored port: an answer ends the outage
            wait = min(wait * 2, PROBE_MAX_S)
