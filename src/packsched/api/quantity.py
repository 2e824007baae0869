"""The Kubernetes quantity grammar, parsed strictly into exact values.

Grammar (as the API server accepts it)::

    quantity  ::= sign? number suffix
    sign      ::= "+" | "-"
    number    ::= digits | digits "." digits? | "." digits
    suffix    ::= "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E"      (decimal SI)
                | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"                         (binary SI)
                | ("e" | "E") sign? digits                                        (decimal exponent)

Values are kept as :class:`fractions.Fraction`, so nothing is lost to floating point. Integer views round up,
as the API server does: ``milli_value("0.1m") == 1`` and ``value("1.5") == 2``.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = [
    "MAX_INT64",
    "QuantityError",
    "format_quantity",
    "milli_value",
    "parse_quantity",
    "value",
]

MAX_INT64 = 2**63 - 1

_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

# sign, integer digits, optional fraction, then the rest (the suffix) checked separately.
_NUMBER = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)\Z", re.DOTALL)
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)\Z")
# Exponents far outside anything a resource can hold are refused rather than expanded into huge integers.
# The bound still covers every finite float (5e-324 .. 1.8e308), so any YAML number parses (upstream takes
# any int32).
_MAX_EXPONENT = 400
# Far more digits than any quantity needs, and below the limit of Python's int() on strings (4300).
_MAX_DIGITS = 1000


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity; the message says why."""


def parse_quantity(raw: object) -> Fraction:
    """Parse a quantity written as a string (``"500m"``, ``"1.5Gi"``, ``"1e3"``) or a YAML/JSON number."""
    if isinstance(raw, bool):
        raise QuantityError(f"quantity must be a string or a number, not a boolean ({raw!r})")
    if isinstance(raw, int):
        return Fraction(raw)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise QuantityError(f"quantity must be a finite number, got {raw!r}")
        # repr() gives the shortest text that reads back as the same float, i.e. what the user wrote.
        return parse_quantity(repr(raw))
    if not isinstance(raw, str):
        raise QuantityError(f"quantity must be a string or a number, got {type(raw).__name__}")
    text = raw
    if text == "":
        raise QuantityError("quantity is empty")
    if text != text.strip():
        raise QuantityError(f"quantity {text!r} has leading or trailing blanks")
    match = _NUMBER.match(text)
    if match is None:  # pragma: no cover - the pattern matches every string
        raise QuantityError(f"quantity {text!r} is not a number")
    sign, whole, frac, suffix = match.groups()
    frac = frac or ""
    if whole == "" and frac == "":
        raise QuantityError(f"quantity {text!r} must start with a number (digits, optionally with one '.')")
    whole, frac = whole.lstrip("0"), frac.rstrip("0")  # the same value, in fewer digits
    if len(whole) + len(frac) > _MAX_DIGITS:  # int() refuses longer strings with a plain ValueError
        raise QuantityError(f"quantity {text[:20]!r}... has more than {_MAX_DIGITS} digits")
    mantissa = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    if sign == "-":
        mantissa = -mantissa
    return mantissa * _suffix_multiplier(text, suffix)


def _suffix_multiplier(text: str, suffix: str) -> Fraction:
    if suffix in _DECIMAL_SUFFIXES:
        return Fraction(10) ** _DECIMAL_SUFFIXES[suffix]
    if suffix in _BINARY_SUFFIXES:
        return Fraction(2 ** _BINARY_SUFFIXES[suffix])
    exp = _EXPONENT.match(suffix)
    if exp is not None:
        sign = "-" if exp.group(1).startswith("-") else ""
        digits = exp.group(1).lstrip("+-").lstrip("0") or "0"
        power = int(sign + digits) if len(digits) <= 6 else _MAX_EXPONENT + 1
        if abs(power) > _MAX_EXPONENT:
            raise QuantityError(f"quantity {text!r} has an exponent out of range (|e| <= {_MAX_EXPONENT})")
        return Fraction(10) ** power
    raise QuantityError(
        f"quantity {text!r} has an unknown suffix {suffix!r} "
        "(expected one of n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or an exponent like e3)"
    )


def _ceil(q: Fraction) -> int:
    return -((-q.numerator) // q.denominator)


def milli_value(q: Fraction) -> int:
    """The quantity in thousandths, rounded up (cpu in millicores)."""
    return _ceil(q * 1000)


def value(q: Fraction) -> int:
    """The quantity as an integer, rounded up (bytes, device counts)."""
    return _ceil(q)


_BINARY_FORMAT = [("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)]
_DECIMAL_FORMAT = [("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3)]


def format_quantity(resource: str, amount: int) -> str:
    """Render an exact integer amount (millicores for cpu) in the most readable exact Kubernetes form."""
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if amount == 0:
        return "0"
    if resource in ("memory", "ephemeral-storage", "storage") or resource.startswith("hugepages-"):
        for suffix, shift in _BINARY_FORMAT:
            if amount % (1 << shift) == 0:
                return f"{amount >> shift}{suffix}"
    for suffix, power in _DECIMAL_FORMAT:
        if amount % (10**power) == 0 and abs(amount) >= 10**power:
            return f"{amount // 10**power}{suffix}"
    return str(amount)
