"""Small strict readers for decoded YAML/JSON: each reports problems with the field path and never raises."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from typing import Any

from packsched.api.errors import ErrorList


class Reader:
    """Reads fields of one decoded document, recording every problem in ``errors``."""

    def __init__(self, errors: ErrorList) -> None:
        self.errors = errors

    def map(self, raw: object, path: builtins.str) -> builtins.dict[builtins.str, Any]:
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            self.errors.add(path, f"must be a map (object), got {_kind(raw)}")
            return {}
        return dict(raw)

    def fields(
        self, raw: object, path: builtins.str, known: Iterable[builtins.str]
    ) -> builtins.dict[builtins.str, Any]:
        """A map whose keys must all be in ``known``: a key Kubernetes does not define is an error."""
        data = self.map(raw, path)
        allowed = set(known)
        for key in data:
            if key not in allowed:
                self.errors.add(_join(path, str(key)), "unknown field")
        return data

    def list(self, raw: object, path: builtins.str) -> builtins.list[Any]:
        if raw is None:
            return []
        if not isinstance(raw, builtins.list):
            self.errors.add(path, f"must be a list, got {_kind(raw)}")
            return []
        return raw

    def str(self, raw: object, path: builtins.str, default: builtins.str = "") -> builtins.str:
        if raw is None:
            return default
        if not isinstance(raw, builtins.str):
            self.errors.add(path, f"must be a string, got {_kind(raw)}")
            return default
        return raw

    def int(self, raw: object, path: builtins.str, default: builtins.int | None = None) -> builtins.int | None:
        if raw is None:
            return default
        if isinstance(raw, builtins.bool) or not isinstance(raw, builtins.int):
            self.errors.add(path, f"must be an integer, got {_kind(raw)} {raw!r}")
            return default
        return raw

    def bool(self, raw: object, path: builtins.str, default: builtins.bool = False) -> builtins.bool:
        if raw is None:
            return default
        if not isinstance(raw, builtins.bool):
            self.errors.add(path, f"must be true or false, got {_kind(raw)} {raw!r}")
            return default
        return raw

    def str_map(self, raw: object, path: builtins.str) -> builtins.dict[builtins.str, builtins.str]:
        out: builtins.dict[builtins.str, builtins.str] = {}
        for key, item in self.map(raw, path).items():
            if not isinstance(item, builtins.str):
                self.errors.add(_join(path, str(key)), f"must be a string, got {_kind(item)}")
                continue
            out[str(key)] = item
        return out

    def str_list(self, raw: object, path: builtins.str) -> builtins.list[builtins.str]:
        out: builtins.list[builtins.str] = []
        for i, item in enumerate(self.list(raw, path)):
            if not isinstance(item, builtins.str):
                self.errors.add(f"{path}[{i}]", f"must be a string, got {_kind(item)}")
                continue
            out.append(item)
        return out

    def one_of(
        self, raw: object, path: builtins.str, allowed: Iterable[builtins.str], default: builtins.str = ""
    ) -> builtins.str:
        value = self.str(raw, path, default)
        choices = list(allowed)
        if raw is not None and value not in choices:
            supported = ", ".join(f'"{c}"' for c in choices)
            self.errors.add(path, f'Unsupported value: "{value}": supported values: {supported}')
        return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(raw: object) -> str:
    if raw is None:
        return "null"
    if isinstance(raw, bool):
        return "boolean"
    if isinstance(raw, int | float):
        return "number"
    if isinstance(raw, str):
        return "string"
    if isinstance(raw, list):
        return "list"
    if isinstance(raw, Mapping):
        return "map"
    return type(raw).__name__
