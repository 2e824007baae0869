"""Errors about user input: every problem at once, each with the file and the field path it concerns."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FieldError:
    """One problem: where (file and field path) and what."""

    path: str
    message: str
    file: str = ""

    def __str__(self) -> str:
        where = ": ".join(p for p in (self.file, self.path) if p)
        return f"{where}: {self.message}" if where else self.message


@dataclass
class ErrorList:
    """Collects every problem found, so that the user sees them all at once."""

    file: str = ""
    items: list[FieldError] = field(default_factory=list)

    def add(self, path: str, message: str) -> None:
        self.items.append(FieldError(path, message, self.file))

    def extend(self, other: ErrorList) -> None:
        self.items.extend(other.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise InputError(list(self.items))


class InputError(Exception):
    """Bad input (a manifest, a config, a trace). The CLI prints every item and exits with code 2."""

    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))

    @classmethod
    def single(cls, message: str, *, file: str = "", path: str = "") -> InputError:
        return cls([FieldError(path, message, file)])
