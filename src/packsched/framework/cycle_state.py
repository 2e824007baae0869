"""CycleState: data plugins share during one scheduling cycle of one pod."""

from __future__ import annotations

import copy
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Cloneable(Protocol):
    """A value of the cycle state that copies itself for a dry run (only what a dry run may change)."""

    def clone(self) -> Any: ...


class CycleState:
    """A key/value store per scheduling cycle. Values that support ``clone()`` are cloned on :meth:`clone`,
    so that preemption's dry runs can change them without touching the real cycle."""

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        # the pod's class in its profile's equivalence cache when this cycle's filters ran through it (its Score
        # reads kept scores then); never copied by clone(): a dry run computes in full
        self.pod_class: Any = None

    def read(self, key: str) -> Any:
        return self._data.get(key)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def clone(self) -> CycleState:
        out = CycleState()
        for key, value in self._data.items():
            out._data[key] = value.clone() if _cloneable(type(value)) else copy.copy(value)
        out.skip_filter = set(self.skip_filter)
        out.skip_score = set(self.skip_score)
        return out


_CLONEABLE: dict[type, bool] = {}


def _cloneable(kind: type) -> bool:
    """Whether values of this type are Cloneable (asked once per type: preemption's dry run clones the state of
    every node it judges)."""
    known = _CLONEABLE.get(kind)
    if known is None:
        known = _CLONEABLE[kind] = issubclass(kind, Cloneable)
    return known
