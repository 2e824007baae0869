"""Hypothesis in CI (the CI environment variable is set): the same examples every run, so that a red run can be
reproduced; locally, fresh random examples each run (and the failures hypothesis found before, from its database).

In both, no test depends on the machine's speed: hypothesis' per-example deadline (200 ms by default) and its
"too slow" health check are off. On a loaded 2-core machine one example of a quantity test once took 585 ms (the
same example took 0.11 ms when hypothesis ran it again), which failed a whole `make test`."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_NO_CLOCK = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("packsched", **_NO_CLOCK)
settings.register_profile("ci", derandomize=True, database=None, **_NO_CLOCK)
settings.load_profile("ci" if os.environ.get("CI") else "packsched")
