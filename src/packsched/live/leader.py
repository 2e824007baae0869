"""Leader election through a coordination.k8s.io Lease, with client-go's rules.

A candidate takes the lease when it does not exist, when it holds it already, or when the holder has not
renewed it for ``leaseDuration`` as *this* candidate observed it (local clock, so that clock skew between
machines does not matter). Every write carries the resourceVersion read, so of two candidates racing for
the same lease the API server lets one win (409 Conflict for the other). The leader renews every
``retryPeriod``; when it has not renewed for ``renewDeadline`` it has lost the lease and must stop. On a clean
shutdown it releases the lease (empty holder), so a standby takes over without waiting for the expiry.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from packsched.config.types import LeaderElection
from packsched.live.health_port import ThrottledLog
from packsched.live.port import LEASES, ApiError, ApiPort, Obj
from packsched.live.recorder import micro_time

LOG = logging.getLogger("packsched.live.leader")
JITTER = 1.2


@dataclass
class _Observed:
    record: tuple[str, int, str]  # holder, duration, renewTime: a change in any of these restarts the clock
    at: float


def parse_micro_time(text: str) -> float | None:
    """A Lease's MicroTime (or RFC 3339 time) as seconds since the epoch; None when unreadable."""
    for fmt in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return dt.datetime.strptime(text, fmt).replace(tzinfo=dt.UTC).timestamp()
        except ValueError:
            continue
    return None


def active_holder(port: ApiPort, config: LeaderElection, now: float | None = None) -> str:
    """Who holds the lease and renewed it within its duration (wall clocks compared, with ``retryPeriod`` of
    slack); "" when nobody does, the lease does not exist or cannot be read."""
    try:
        lease = port.get(LEASES, config.resource_namespace, config.resource_name)
    except ApiError as exc:
        if not exc.not_found:
            LOG.warning("cannot read the lease", extra={"error": str(exc)})
        return ""
    spec = lease.get("spec") or {}
    holder = str(spec.get("holderIdentity") or "")
    renewed = parse_micro_time(str(spec.get("renewTime") or ""))
    if not holder or renewed is None:
        return ""
    duration = float(spec.get("leaseDurationSeconds") or config.lease_duration_s)
    now = time.time() if now is None else now
    return holder if now - renewed <= duration + config.retry_period_s else ""


class LeaderElector:
    def __init__(
        self,
        port: ApiPort,
        config: LeaderElection,
        identity: str,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[bool], None] | None = None,
        log: ThrottledLog | None = None,
    ) -> None:
        self.port = port
        self.log = log or ThrottledLog(LOG)
        self.cfg = config
        self.identity = identity
        self.clock = clock
        self.on_change = on_change
        self._observed: _Observed | None = None
        self._last_renew = 0.0
        self.leading = False
        self.lost = threading.Event()

    @property
    def namespace(self) -> str:
        return self.cfg.resource_namespace

    @property
    def name(self) -> str:
        return self.cfg.resource_name

    def try_acquire_or_renew(self) -> bool:
        now = self.clock()
        try:
            lease = self.port.get(LEASES, self.namespace, self.name)
        except ApiError as exc:
            if not exc.not_found:
                self.log.failed("lease", "cannot read the lease", exc, {"lease": self._where()})
                return False
            try:
                self.port.create(LEASES, self.namespace, self._lease_body(None, 0, now_acquire=True))
            except ApiError as cexc:
                LOG.info("lost the race to create the lease", extra={"error": str(cexc)})
                return False
            self._observed = _Observed((self.identity, self._duration(), ""), now)
            return self._won(now)
        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        record = (holder, int(spec.get("leaseDurationSeconds") or 0), str(spec.get("renewTime") or ""))
        if self._observed is None or self._observed.record != record:
            self._observed = _Observed(record, now)
        if holder and holder != self.identity and self._observed.at + max(record[1], 1) > now:
            if self.leading:
                self._lose("another candidate holds the lease")
            return False
        transitions = int(spec.get("leaseTransitions") or 0)
        mine = holder == self.identity
        body = self._lease_body(lease, transitions if mine else transitions + 1, now_acquire=not mine)
        try:
            self.port.update(LEASES, self.namespace, self.name, body)
        except ApiError as exc:
            LOG.info("lease update refused", extra={"lease": self._where(), "error": str(exc)})
            return False
        new_spec = body["spec"]
        self._observed = _Observed((self.identity, self._duration(), str(new_spec["renewTime"])), now)
        return self._won(now)

    def _duration(self) -> int:
        return max(1, round(self.cfg.lease_duration_s))

    def _lease_body(self, current: Obj | None, transitions: int, now_acquire: bool) -> Obj:
        stamp = micro_time()
        spec: Obj = dict((current or {}).get("spec") or {})
        spec.update(
            {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": self._duration(),
                "renewTime": stamp,
                "leaseTransitions": transitions,
            }
        )
        if now_acquire or "acquireTime" not in spec:
            spec["acquireTime"] = stamp
        meta: Obj = {"name": self.name, "namespace": self.namespace}
        if current is not None:
            meta["resourceVersion"] = current.get("metadata", {}).get("resourceVersion", "")
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": spec}

    def _where(self) -> str:
        return f"{self.namespace}/{self.name}"

    def _won(self, now: float) -> bool:
        self._last_renew = now
        if not self.leading:
            self.leading = True
            LOG.info("became leader", extra={"lease": self._where(), "identity": self.identity})
            if self.on_change:
                self.on_change(True)
        return True

    def _lose(self, why: str) -> None:
        if self.leading:
            self.leading = False
            LOG.error("leader election lost", extra={"lease": self._where(), "reason": why})
            if self.on_change:
                self.on_change(False)
        self.lost.set()

    def acquire(self, stop: threading.Event, idle: Callable[[float], object] | None = None) -> bool:
        """Block until this candidate leads (True) or ``stop`` is set (False). Between tries (every
        ``retryPeriod``, jittered) ``idle(seconds)`` runs, or the candidate just waits: a standby uses it to keep
        its cache warm."""
        LOG.info("attempting to acquire leader lease", extra={"lease": self._where(), "identity": self.identity})
        next_try = self.clock()
        while not stop.is_set():
            now = self.clock()
            if now >= next_try:
                if self.try_acquire_or_renew():
                    return True
                next_try = now + self.cfg.retry_period_s * random.uniform(1.0, JITTER)
            left = max(next_try - self.clock(), 0.0)
            if idle is not None:
                idle(min(left, 0.2))
            else:
                stop.wait(left)
        return False

    def renew_loop(self, stop: threading.Event) -> None:
        """Keep the lease while ``stop`` is unset; set :attr:`lost` when it cannot be renewed in time."""
        while not stop.is_set() and self.leading:
            stop.wait(self.cfg.retry_period_s)
            if stop.is_set():
                return
            deadline = self._last_renew + self.cfg.renew_deadline_s
            while not stop.is_set() and self.leading:
                if self.try_acquire_or_renew():
                    break
                if self.clock() >= deadline:
                    self._lose("failed to renew the lease within renewDeadline")
                    return
                stop.wait(min(self.cfg.retry_period_s / 4, max(deadline - self.clock(), 0.01)))

    def start_renewing(self, stop: threading.Event) -> threading.Thread:
        t = threading.Thread(target=self.renew_loop, args=(stop,), name="leader-renew", daemon=True)
        t.start()
        return t

    def release(self) -> None:
        """Give the lease up (empty holder) if we hold it, so a standby need not wait for it to expire."""
        if not self.leading:
            return
        try:
            lease = self.port.get(LEASES, self.namespace, self.name)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return
            stamp = micro_time()
            lease["spec"] = {
                **spec,
                "holderIdentity": None,
                "leaseDurationSeconds": 1,
                "renewTime": stamp,
                "acquireTime": stamp,
            }
            self.port.update(LEASES, self.namespace, self.name, lease)
            LOG.info("released the lease", extra={"lease": self._where()})
        except ApiError as exc:
            LOG.warning("could not release the lease", extra={"error": str(exc)})
        finally:
            self.leading = False
            if self.on_change:
                self.on_change(False)
