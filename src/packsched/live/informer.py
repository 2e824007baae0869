"""List-and-watch of one resource, as client-go's reflector does it.

List, hand every object to the sink, then watch from the list's resourceVersion. Each event (bookmarks too)
moves the resume point; a watch that ends (server timeout, dropped connection, 5xx) resumes from there, after a
bounded backoff for errors; 410 Gone means the point is too old: list again, and report objects that vanished
meanwhile as deleted.

Any kind (a custom resource such as ElasticQuota too) is watched by giving its :class:`Resource`. A kind the
cluster may serve at older versions only (DRA's resource.k8s.io) is given with those (``fallbacks``): a first list
answered 404 tries the next. A kind the cluster need not serve (``optional``: DRA's) counts as synced, with
nothing, when no version is served, and is not watched (:attr:`Informer.unserved`); any other kind (a CRD not
installed yet) is listed again until it is served.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from packsched.live.health_port import ThrottledLog
from packsched.live.port import ADDED, BOOKMARK, DELETED, ApiError, ApiPort, Obj, Resource, key_of

Sink = Callable[[Resource, str, Obj], None]
LOG = logging.getLogger("packsched.live.informer")
DEFAULT_WATCH_TIMEOUT_S = 300  # a watch request's timeoutSeconds (the server ends it then; it is resumed)


class Informer:
    def __init__(
        self,
        port: ApiPort,
        res: Resource,
        sink: Sink,
        stop: threading.Event,
        watch_timeout_s: int = DEFAULT_WATCH_TIMEOUT_S,
        min_backoff_s: float = 0.05,
        max_backoff_s: float = 10.0,
        on_relist: Callable[[Resource], None] | None = None,
        log: ThrottledLog | None = None,
        fallbacks: tuple[Resource, ...] = (),
        optional: bool = False,
    ) -> None:
        self.port = port
        self.res = res
        self.fallbacks = list(fallbacks)
        self.optional = optional
        self.unserved = False  # no version of the kind is served: synced with nothing, stopped
        self.sink = sink
        self.stop = stop
        self.watch_timeout_s = watch_timeout_s
        self.min_backoff_s = min_backoff_s
        self.max_backoff_s = max_backoff_s
        self.on_relist = on_relist
        self.log = log or ThrottledLog(LOG)
        self.synced = threading.Event()
        self.resource_version = ""
        self.relists = 0
        self.errors = 0
        self._known: dict[str, Obj] = {}  # last state of every object that exists, for relist diffs
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name=f"informer-{self.res.plural}", daemon=True)
        self._thread.start()

    def join(self, timeout_s: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout_s)

    def run(self) -> None:
        backoff = self.min_backoff_s
        while not self.stop.is_set():
            try:
                if not self.resource_version:
                    self._relist()
                for ev in self.port.watch(self.res, self.resource_version, self.watch_timeout_s):
                    if self.stop.is_set():
                        return
                    rv = ev.resource_version
                    if ev.type != BOOKMARK:
                        self._deliver(ev.type, ev.obj)
                    if rv:
                        self.resource_version = rv
                backoff = self.min_backoff_s  # a clean end (the server's timeoutSeconds): resume at once
            except ApiError as exc:
                if self.stop.is_set():
                    return  # shutting down: the watch was cut on purpose
                first_list = exc.not_found and not self.resource_version and not self.synced.is_set()
                if first_list and self.fallbacks:  # not served at this version: try the next
                    self.res = self.fallbacks.pop(0)
                    continue
                if first_list and self.optional:
                    LOG.info("not served by the cluster; not watched", extra={"resource": self.res.plural})
                    self.unserved = True
                    self.synced.set()
                    return
                if exc.gone:
                    LOG.info(
                        "watch expired, relisting",
                        extra={"resource": self.res.plural, "resourceVersion": self.resource_version},
                    )
                    self.resource_version = ""
                    if self.on_relist is not None:
                        self.on_relist(self.res)
                    continue
                self.errors += 1
                self.log.failed(
                    f"watch-{self.res.plural}",
                    "list/watch failed, retrying",
                    exc,
                    {"resource": self.res.plural, "backoffSeconds": backoff},
                )
                self.stop.wait(backoff)
                backoff = min(backoff * 2, self.max_backoff_s)
            except Exception:  # a bug must not silently kill the informer: log and go on after a pause
                self.errors += 1
                LOG.exception("informer error", extra={"resource": self.res.plural})
                self.stop.wait(backoff)
                backoff = min(backoff * 2, self.max_backoff_s)

    def _relist(self) -> None:
        items, rv = self.port.list(self.res)
        self.relists += 1
        seen: set[str] = set()
        for obj in items:
            seen.add(key_of(obj))
            self._deliver(ADDED, obj)
        for key in [k for k in self._known if k not in seen]:
            self._deliver(DELETED, self._known[key])
        self.resource_version = rv
        self.synced.set()

    def _deliver(self, etype: str, obj: Obj) -> None:
        key = key_of(obj)
        if etype == DELETED:
            self._known.pop(key, None)
        else:
            self._known[key] = obj
        self.sink(self.res, etype, obj)
