"""Why nodes were rejected: per-node statuses kept as masks, and kube-scheduler's FitError message."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from packsched.framework.snapshot import BoolArray
from packsched.framework.status import Code, Status

NO_NODE_AVAILABLE = "0/{} nodes are available"


@dataclass
class RejectGroup:
    """Nodes (mask over all nodes) that ``plugin`` rejected for ``reason``; each node appears in the groups of
    one plugin only: the first filter plugin that rejected it, as in kube-scheduler."""

    plugin: str
    mask: BoolArray
    reason: str
    code: Code


@dataclass
class Diagnosis:
    n_all: int
    feasible: BoolArray
    groups: list[RejectGroup] = field(default_factory=list)
    pre_filter_status: Status | None = None  # set when a PreFilter plugin rejected the pod on every node
    post_filter_msg: str = ""
    unschedulable_plugins: set[str] = field(default_factory=set)

    @classmethod
    def all_rejected(cls, n: int, status: Status) -> Diagnosis:
        return cls(n, np.zeros(n, dtype=bool), [], status, "", {status.plugin} if status.plugin else set())

    def node_status(self, col: int) -> Status:
        if self.pre_filter_status is not None:
            return self.pre_filter_status
        if self.feasible[col]:
            return Status()
        reasons = [g.reason for g in self.groups if g.mask[col]]
        codes = [g.code for g in self.groups if g.mask[col]]
        plugins = [g.plugin for g in self.groups if g.mask[col]]
        code = max(codes) if codes else Code.UNSCHEDULABLE
        return Status(code, reasons, plugins[0] if plugins else "")

    def histogram(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for g in self.groups:
            c = int(np.count_nonzero(g.mask))
            if c:
                counts[g.reason] += c
        return counts

    def message(self) -> str:
        """kube-scheduler's FitError text: ``0/N nodes are available: <counts of reasons>. <post-filter>``."""
        msg = NO_NODE_AVAILABLE.format(self.n_all) + ":"
        if self.pre_filter_status is not None:
            msg += f" {self.pre_filter_status.message}."
        else:
            parts = sorted(f"{count} {reason}" for reason, count in self.histogram().items())
            if parts:
                msg += f" {', '.join(parts)}."
        if self.post_filter_msg:
            msg += f" {self.post_filter_msg}"
        return msg
