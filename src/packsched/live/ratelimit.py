"""The client's rate limiter: client-go's token bucket (``flowcontrol.NewTokenBucketRateLimiter(qps, burst)``,
on golang.org/x/time/rate), shared by every request of one client.

The bucket holds at most ``burst`` tokens and gains ``qps`` a second; a request takes one, and waits while none
is left. A waiter reserves its token under the lock (the bucket may go negative) and sleeps outside it, so
concurrent callers are served in the order they asked, at ``qps`` on average. ``qps <= 0``: no limit (client-go
makes no limiter for a non-positive QPS).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class TokenBucket:
    def __init__(
        self,
        qps: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.qps = float(qps)
        self.burst = max(int(burst), 1)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = float(self.burst)  # a fresh bucket is full, as client-go's
        self._last = clock()

    @property
    def unlimited(self) -> bool:
        return self.qps <= 0

    def reserve(self) -> float:
        """Take a token; answers how long the caller must wait before using it (0: at once)."""
        if self.unlimited:
            return 0.0
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            wait = -self._tokens / self.qps if self._tokens < 0 else 0.0
            return wait

    def accept(self) -> None:
        """Block until a request may go (client-go's ``Accept``)."""
        wait = self.reserve()
        if wait > 0:
            self._sleep(wait)
