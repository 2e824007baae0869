"""Status codes with kube-scheduler's meaning."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Code(enum.IntEnum):
    SUCCESS = 0
    ERROR = 1
    # The pod does not fit now; preemption (removing other pods) may help.
    UNSCHEDULABLE = 2
    # The pod does not fit, and removing pods would not change that (taints, affinity, node name).
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    # PreFilter/PreScore: this plugin has nothing to do for the pod; its Filter/Score is skipped.
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


@dataclass
class Status:
    code: Code = Code.SUCCESS
    reasons: list[str] = field(default_factory=list)
    plugin: str = ""
    # What the cluster answered when it refused to carry out a decision (the API server's error on a bind)
    cause: Exception | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    @classmethod
    def success(cls) -> Status:
        return cls()

    @classmethod
    def skip(cls) -> Status:
        """Skip: one shared instance (PreFilter and PreScore return it for most pods, and the framework only reads
        its code; never change it)."""
        return _SKIP

    @classmethod
    def error(cls, message: str, plugin: str = "") -> Status:
        return cls(Code.ERROR, [message], plugin)

    @classmethod
    def unschedulable(cls, *reasons: str, plugin: str = "", unresolvable: bool = False) -> Status:
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
        return cls(code, list(reasons), plugin)


SUCCESS = Status()
_SKIP = Status(Code.SKIP)


class PluginError(Exception):
    """A plugin could not do its job (upstream: a Status with code Error); the cycle fails with this message."""
