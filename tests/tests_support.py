"""Small fakes shared by tests."""

from __future__ import annotations

from typing import Any

from packsched.framework.status import Status


class Actions:
    """Binds everything, never preempts."""

    def bind(self, pod: Any, node: str) -> Status:
        return Status()

    def preempt(self, victim: Any, preemptor: Any) -> None:
        raise AssertionError("no preemption expected")
