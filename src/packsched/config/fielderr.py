"""Field paths and error details written the way Kubernetes' ``field.Error`` writes them.

``Invalid value: 0: resource weight of cpu not in valid range (0, 100]``, ``Required value: ...``,
``Unsupported value: "X": supported values: "A", "B"``, ``Duplicate value: "x"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from packsched.api.errors import FieldError

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def go_value(value: object) -> str:
    """A bad value as Go prints it in a field error: numbers and booleans plain, strings quoted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    return str(value)


def invalid(value: object, detail: str = "") -> str:
    body = f"Invalid value: {go_value(value)}"
    return f"{body}: {detail}" if detail else body


def required(detail: str = "") -> str:
    return f"Required value: {detail}" if detail else "Required value"


def unsupported(value: object, supported: Iterable[str]) -> str:
    choices = ", ".join(go_value(s) for s in supported)
    return f"Unsupported value: {go_value(value)}: supported values: {choices}"


def duplicate(value: object) -> str:
    return f"Duplicate value: {go_value(value)}"


def with_file(errors: Iterable[FieldError], file: str) -> list[FieldError]:
    return [FieldError(e.path, e.message, file) for e in errors]
