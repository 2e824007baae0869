"""The ElasticQuota status controller: per-quota gauges (min / used / max), and, when asked, ``status.used`` written
as scheduler-plugins' ElasticQuota controller writes it (Running pods, no overhead; merge-patched only when it
changed). It decides nothing: the scheduling thread calls :meth:`QuotaStatusController.sync` now and then."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from packsched.api.objects import ElasticQuota, Pod
from packsched.api.quantity import MAX_INT64, format_quantity
from packsched.api.quota import (
    FIRST_CLASS,
    Res,
    first_per_namespace,
    max_from_spec,
    min_from_spec,
    quota_used,
    status_used,
)
from packsched.live.metrics import Metrics
from packsched.live.port import ELASTIC_QUOTAS, ApiError, ApiPort

LOG = logging.getLogger("packsched.live")


class QuotaStatusController:
    def __init__(self, port: ApiPort, metrics: Metrics, write_status: bool) -> None:
        self.port = port
        self.metrics = metrics
        self.write_status = write_status
        self._written: dict[str, Res] = {}  # status.used last written, by quota key

    def sync(self, quotas: Iterable[ElasticQuota], placed: Iterable[Pod], pods: Iterable[Pod]) -> None:
        """``placed``: the pods holding room on nodes (assumed ones included), what the gauges count;
        ``pods``: every pod known, what ``status.used`` is computed from."""
        placed = list(placed)
        pods = list(pods)
        for q in first_per_namespace(quotas):  # upstream's controller takes the first quota of a namespace
            used = quota_used(q.namespace, placed)
            lo, hi = min_from_spec(q.min), max_from_spec(q.max)
            for name in set(lo) | set(hi) | set(used):
                labels = (q.namespace, q.name, name)
                self.metrics.quota_min.labels(*labels).set(lo.get(name, 0))
                self.metrics.quota_used.labels(*labels).set(used.get(name, 0))
                bound = hi.get(name, 0 if name in FIRST_CLASS else MAX_INT64)
                if bound < MAX_INT64:
                    self.metrics.quota_max.labels(*labels).set(bound)
            if self.write_status:
                self._write(q, status_used(q, pods))

    def _write(self, q: ElasticQuota, want: Res) -> None:
        have = self._written.get(q.key, q.used)
        if have is not None and have == want:
            return
        patch = {"status": {"used": {name: format_quantity(name, amount) for name, amount in want.items()}}}
        try:
            self.port.patch_status(ELASTIC_QUOTAS, q.namespace, q.name, patch)
        except ApiError as exc:
            LOG.warning("cannot write ElasticQuota status", extra={"quota": q.key, "error": str(exc)})
            return
        self._written[q.key] = want
