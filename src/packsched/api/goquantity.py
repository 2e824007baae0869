"""apimachinery's ``resource.Quantity`` as Go holds it in memory, for the messages that print it raw.

Some upstream messages format a ``v1.ResourceList`` with ``%v``. ``Quantity.String`` has a pointer receiver, and a
map's values are not addressable, so fmt never calls it there: it prints the struct's fields in order, the int64
amount ``{value scale}``, the arbitrary-precision amount ``{<nil>}`` (a pointer), the cached canonical string (often
empty) and the format::

    map[cpu:{{2500 -3} {<nil>}  DecimalSI} pods:{{3 0} {<nil>}  DecimalSI}]

To print the same, packsched follows what ``ParseQuantity``, ``NewQuantity`` and ``Quantity.Sub`` leave in those
fields (apimachinery ``pkg/api/resource``: quantity.go, amount.go). The amount is an int64 scaled by a power of ten
where it fits; where it does not (a fractional binary amount like ``1.5Gi``, more than 18 digits, finer than
``1n``, an overflow while subtracting), Go keeps an ``inf.Dec`` and prints its address, which no other process can
reproduce: packsched prints ``<inf.Dec VALUE>`` in that slot instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction

from packsched.api.quantity import QuantityError

__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "GoQuantity",
    "go_quantity_text",
    "new_quantity",
    "parse_go_quantity",
    "resource_list_v",
]

DECIMAL_EXPONENT = "DecimalExponent"
BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"

_MIN_INT64 = -(2**63)
_MAX_INT64 = 2**63 - 1
_NANO = -9
_MAX_INT64_FACTORS = 18  # apimachinery's maxInt64Factors: digits an int64 amount is trusted to hold

_DECIMAL_SUFFIXES = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


@dataclass(frozen=True)
class GoQuantity:
    """The fields of a Go ``resource.Quantity``: ``value`` x 10^``scale`` (the int64 amount), or ``dec`` when Go
    holds an ``inf.Dec`` (then the int64 amount is zero), the cached string ``cached`` and the ``format``."""

    value: int = 0
    scale: int = 0
    dec: Fraction | None = None
    cached: str = ""
    format: str = ""

    @property
    def amount(self) -> Fraction:
        return self.dec if self.dec is not None else Fraction(self.value) * Fraction(10) ** self.scale

    def is_zero(self) -> bool:
        return self.amount == 0 if self.dec is not None else self.value == 0

    def sign(self) -> int:
        a = self.amount
        return (a > 0) - (a < 0)

    def go_v(self) -> str:
        """What ``fmt`` prints for this Quantity as a map value with ``%v``."""
        dec = "<nil>" if self.dec is None else f"<inf.Dec {_plain(self.dec)}>"
        return f"{{{{{self.value} {self.scale}}} {{{dec}}} {self.cached} {self.format}}}"


def new_quantity(value: int, fmt: str, scale: int = 0) -> GoQuantity:
    """``resource.NewQuantity(value, fmt)`` (scale 0) or ``NewMilliQuantity`` (scale -3): nothing cached."""
    return GoQuantity(value, scale, None, "", fmt)


def go_quantity_text(raw: object) -> str:
    """The text ``Quantity.UnmarshalJSON`` parses for a value read from YAML or JSON: a string as is, a number as
    Go's ``encoding/json`` writes it (kubectl turns YAML into JSON before the API server sees it)."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise QuantityError(f"quantity must be a string or a number, got {type(raw).__name__}")
    if isinstance(raw, str):
        return raw.strip()
    if isinstance(raw, int):
        return str(raw)
    if not math.isfinite(raw):
        raise QuantityError(f"quantity must be a finite number, got {raw!r}")
    if raw == 0:
        return "0"
    if 1e-6 <= abs(raw) < 1e21:  # encoding/json: plain digits in this range, the shortest that reads back
        text = format(Decimal(repr(raw)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa, _, exponent = repr(raw).partition("e")
    exp = int(exponent)
    return f"{mantissa.removesuffix('.0')}e{'-' if exp < 0 else '+'}{abs(exp):02d}".replace("e-0", "e-")


def parse_go_quantity(raw: object) -> GoQuantity:
    """``resource.ParseQuantity`` of a valid quantity (packsched's own parser has checked the grammar)."""
    text = go_quantity_text(raw)
    if text == "0":
        return GoQuantity(0, 0, None, "0", DECIMAL_SI)
    positive, number, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(text, suffix)
    precision = 0
    scale = 0
    mantissa = 1
    if fmt == BINARY_SI:
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - (exponent * 3) // 10 - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            shifted = num + denom
            result = int(shifted) * mantissa
            if result <= _MAX_INT64:
                if not positive:
                    result = -result
                cached = ""
                if fmt == BINARY_SI:
                    if exponent % 10 == 0 and int(shifted) & 7 != 0:
                        cached = text
                elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                    cached = text
                return GoQuantity(result, scale, None, cached, fmt)
    amount = _fraction(number) * Fraction(base) ** exponent
    negative = amount < 0
    amount = abs(amount)
    if amount != 0:  # rounded up (away from zero) to whole nanos
        amount = Fraction(math.ceil(amount * 10**9), 10**9)
    if fmt == BINARY_SI and amount > _MAX_INT64:
        amount = Fraction(_MAX_INT64)
    if fmt == BINARY_SI and 0 < amount < 1:
        fmt = DECIMAL_SI
    return GoQuantity(0, 0, -amount if negative else amount, "", fmt)


def sub(q: GoQuantity, y: GoQuantity) -> GoQuantity:
    """``q.Sub(y)``: the cache is dropped; a zero ``q`` takes ``y``'s format; an int64 amount stays one unless
    rescaling or the difference overflows int64."""
    fmt = y.format if q.is_zero() else q.format
    if q.dec is None and y.dec is None:
        added = _int64_add(q.value, q.scale, -y.value, y.scale)
        if added is not None:
            return GoQuantity(added[0], added[1], None, "", fmt)
    return GoQuantity(0, 0, q.amount - y.amount, "", fmt)


def sub_total(q: GoQuantity, y: GoQuantity, total: int, nonzero: bool, first: int) -> GoQuantity:
    """``q.Sub`` of a run of amounts that share ``y``'s scale and format (one node's free room after another),
    ``total`` their sum, ``first`` the first nonzero one (``nonzero``: whether there is one): the same as
    subtracting them one by one, for a ``q`` that stays positive after each (what CheckClusterResource leaves in
    its map) or starts at zero and turns positive at the first."""
    if not nonzero:
        return replace(q, cached="")
    out = sub(q, replace(y, value=first))
    rest = total - first
    if rest == 0:
        return out
    return replace(sub(out, replace(y, value=rest)), format=out.format)


def resource_list_v(amounts: dict[str, GoQuantity]) -> str:
    """``fmt.Sprintf("%v", list)`` of a ``v1.ResourceList``: keys sorted, each value's fields."""
    return "map[" + " ".join(f"{k}:{amounts[k].go_v()}" for k in sorted(amounts)) + "]"


def _int64_add(av: int, ascale: int, bv: int, bscale: int) -> tuple[int, int] | None:
    """``int64Amount.Add``: None where Go reports an overflow."""
    if bv == 0:
        return av, ascale
    if av == 0:
        return bv, bscale
    if ascale == bscale:
        value, scale = av + bv, ascale
    elif ascale > bscale:
        scaled = av * 10 ** (ascale - bscale)
        if not _MIN_INT64 < scaled <= _MAX_INT64:
            return None
        value, scale = scaled + bv, bscale
    else:
        scaled = bv * 10 ** (bscale - ascale)
        if not _MIN_INT64 < scaled <= _MAX_INT64:
            return None
        value, scale = av + scaled, ascale
    if not _MIN_INT64 <= value <= _MAX_INT64:
        return None
    return value, scale


def _split(text: str) -> tuple[bool, str, str, str, str]:
    """``parseQuantityString``: sign, the number's text, integer digits (leading zeros dropped, "0" when none),
    fraction digits, suffix."""
    pos = 0
    positive = True
    if text[:1] in ("-", "+"):
        positive = text[0] == "+"
        pos = 1
    while pos < len(text) and text[pos] == "0":
        pos += 1
    if pos == len(text):
        return positive, "0", "0", "", ""
    start = pos
    while pos < len(text) and text[pos].isdigit():
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < len(text) and text[pos] == ".":
        pos += 1
        start = pos
        while pos < len(text) and text[pos].isdigit():
            pos += 1
        denom = text[start:pos]
    return positive, text[:pos], num, denom, text[pos:]


def _interpret(text: str, suffix: str) -> tuple[int, int, str]:
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        try:
            return 10, int(suffix[1:]), DECIMAL_EXPONENT
        except ValueError:
            pass
    raise QuantityError(f"quantity {text!r} has an unknown suffix {suffix!r}")


def _fraction(number: str) -> Fraction:
    body = number.lstrip("+-")
    whole, _, frac = body.partition(".")
    value = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    return -value if number.startswith("-") else value


def _plain(amount: Fraction) -> str:
    if amount.denominator == 1:
        return str(amount.numerator)
    return format(Decimal(amount.numerator) / Decimal(amount.denominator), "f")
