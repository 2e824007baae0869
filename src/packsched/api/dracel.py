"""DRA's CEL environment: the selectors of DeviceClasses and ResourceClaim requests.

As upstream (``k8s.io/dynamic-resource-allocation/cel``) an expression sees one variable, ``device``, with
``device.driver`` (a string), ``device.attributes["<domain>"].<name>`` (int, bool, string or semantic version)
and ``device.capacity["<domain>"].<name>`` (a quantity), and ``device.allowMultipleAllocations``. An attribute or
capacity written without a domain belongs to the device's driver. Looking up a domain the device does not have
gives an empty map (so ``has()`` and ``in`` work); a missing name is the runtime error "no such key". Quantities
and versions have upstream's helpers: ``quantity("1Gi")``, ``isQuantity``, ``compareTo``, ``isGreaterThan``,
``isLessThan``, ``asInteger``, ``asApproximateFloat``, ``sign``, ``isInteger``, ``add``, ``sub``;
``semver("1.2.3")``, ``isSemver``, ``major``, ``minor``, ``patch``.

Expressions are compiled once each (:func:`compile_selector` keeps them by text). A compile error (syntax, a
name other than ``device`` or a bound variable, an unknown function) is reported where the expression is written;
an error while evaluating is returned to the caller (the allocator), worded as upstream's.

The evaluator is the ``common-expression-language`` package (cel-rust). It does not type-check: an expression
that upstream rejects at compile time only for its result type (``device.driver``) fails here when evaluated
("could not be converted to bool"), and upstream's cost limits are not applied.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from packsched.api.quantity import QuantityError, parse_quantity

_QUANTITY = "__quantity__"
_SEMVER = "__semver__"
_SEMVER_RE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
_STRING_LITERAL = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'")
_BOUND = re.compile(r"\.\s*(?:all|exists|exists_one|existsOne|map|filter)\s*\(\s*([A-Za-z_]\w*)\s*,")
_BIND = re.compile(r"cel\.bind\s*\(\s*([A-Za-z_]\w*)\s*,")

# Functions and macros of CEL's standard library and of upstream's environment (Kubernetes' quantity, semver
# and strings libraries, cel.bind).
KNOWN_FUNCTIONS = frozenset(
    {
        "size",
        "has",
        "all",
        "exists",
        "exists_one",
        "existsOne",
        "map",
        "filter",
        "int",
        "uint",
        "double",
        "string",
        "bool",
        "bytes",
        "type",
        "dyn",
        "matches",
        "contains",
        "startsWith",
        "endsWith",
        "lowerAscii",
        "upperAscii",
        "trim",
        "split",
        "join",
        "replace",
        "indexOf",
        "lastIndexOf",
        "substring",
        "charAt",
        "quantity",
        "isQuantity",
        "compareTo",
        "isGreaterThan",
        "isLessThan",
        "asInteger",
        "asApproximateFloat",
        "sign",
        "isInteger",
        "add",
        "sub",
        "semver",
        "isSemver",
        "major",
        "minor",
        "patch",
        "orValue",
        "hasValue",
        "value",
        "optional.of",
        "optional.none",
    }
)


class CelRuntimeError(Exception):
    """An expression failed while evaluating on a device (upstream's words in the message)."""


# -- the value types ----------------------------------------------------------------------------------------


def quantity_value(q: Fraction) -> dict[str, str]:
    return {_QUANTITY: str(q)}


def semver_value(text: str) -> dict[str, str]:
    return {_SEMVER: text}


def _as_quantity(v: Any) -> Fraction:
    if isinstance(v, dict) and _QUANTITY in v:
        return Fraction(v[_QUANTITY])
    raise CelRuntimeError("no such overload")


def _semver_tuple(v: Any) -> tuple[int, int, int, tuple[tuple[int, int | str], ...] | None]:
    if not (isinstance(v, dict) and _SEMVER in v):
        raise CelRuntimeError("no such overload")
    text = str(v[_SEMVER]).split("+", 1)[0]
    core, _, pre = text.partition("-")
    major, minor, patch = (int(x) for x in core.split("."))
    if not pre:
        return major, minor, patch, None
    parts = tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split("."))
    return major, minor, patch, parts


def _semver_cmp(a: Any, b: Any) -> int:
    ta, tb = _semver_tuple(a), _semver_tuple(b)
    if ta[:3] != tb[:3]:
        return -1 if ta[:3] < tb[:3] else 1
    pa, pb = ta[3], tb[3]
    if pa == pb:
        return 0
    if pa is None:
        return 1  # a release is newer than its pre-releases
    if pb is None:
        return -1
    return -1 if pa < pb else 1


def _is_semver(v: Any) -> bool:
    return isinstance(v, dict) and _SEMVER in v


def _cmp(a: Any, b: Any) -> int:
    if _is_semver(a):
        return _semver_cmp(a, b)
    qa, qb = _as_quantity(a), _as_quantity(b)
    return (qa > qb) - (qa < qb)


def _quantity(text: Any) -> dict[str, str]:
    try:
        return quantity_value(parse_quantity(str(text)))
    except QuantityError as exc:
        raise CelRuntimeError(f"quantities must match the regular expression: {exc}") from None


def is_semver(text: str) -> bool:
    """Whether ``text`` is a semantic version (semver.org 2.0.0)."""
    return bool(_SEMVER_RE.match(text))


def _semver(text: Any) -> dict[str, str]:
    if not isinstance(text, str) or not _SEMVER_RE.match(text):
        raise CelRuntimeError("Invalid semver version")
    return semver_value(text)


def _is_quantity(text: Any) -> bool:
    try:
        parse_quantity(str(text))
    except QuantityError:
        return False
    return True


def _as_integer(v: Any) -> int:
    q = _as_quantity(v)
    if q.denominator != 1 or not -(2**63) <= q.numerator < 2**63:
        raise CelRuntimeError("cannot convert value to integer")
    return q.numerator


def _sign(v: Any) -> int:
    q = _as_quantity(v)
    return (q > 0) - (q < 0)


def _add(a: Any, b: Any) -> dict[str, str]:
    other = Fraction(b) if isinstance(b, int) else _as_quantity(b)
    return quantity_value(_as_quantity(a) + other)


def _sub(a: Any, b: Any) -> dict[str, str]:
    other = Fraction(b) if isinstance(b, int) else _as_quantity(b)
    return quantity_value(_as_quantity(a) - other)


def _part(index: int) -> Any:
    def get(v: Any) -> int:
        return _semver_tuple(v)[index]  # type: ignore[return-value]

    return get


FUNCTIONS: dict[str, Any] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": lambda text: isinstance(text, str) and bool(_SEMVER_RE.match(text)),
    "compareTo": _cmp,
    "isGreaterThan": lambda a, b: _cmp(a, b) > 0,
    "isLessThan": lambda a, b: _cmp(a, b) < 0,
    "asInteger": _as_integer,
    "asApproximateFloat": lambda v: float(_as_quantity(v)),
    "isInteger": lambda v: _as_quantity(v).denominator == 1,
    "sign": _sign,
    "add": _add,
    "sub": _sub,
    "major": _part(0),
    "minor": _part(1),
    "patch": _part(2),
}


# -- devices as CEL sees them ------------------------------------------------------------------------------

AttributeValue = int | bool | str  # a version attribute is kept as its text, tagged by kind


@dataclass(frozen=True)
class CelDevice:
    """What a selector sees of one device: its driver, attributes (qualified name -> (kind, value); kind is
    int, bool, string or version) and capacity (qualified name -> quantity)."""

    driver: str
    attributes: tuple[tuple[str, str, AttributeValue], ...] = ()
    capacity: tuple[tuple[str, Fraction], ...] = ()
    allow_multiple_allocations: bool = False

    def __hash__(self) -> int:
        """Hashed once (selectors' results are kept per device, and devices are many)."""
        known: int | None = self.__dict__.get("_hash")
        if known is None:
            known = hash((self.driver, self.attributes, self.capacity, self.allow_multiple_allocations))
            object.__setattr__(self, "_hash", known)
        return known


_INTERNED: weakref.WeakValueDictionary[CelDevice, CelDevice] = weakref.WeakValueDictionary()


def interned(dev: CelDevice) -> CelDevice:
    """One object for equal devices (the nodes of a cluster list the same devices, each selector is evaluated
    once for them all and its result found by identity)."""
    known = _INTERNED.get(dev)
    if known is None:
        _INTERNED[dev] = known = dev
    return known


def split_qualified(name: str, driver: str) -> tuple[str, str]:
    """``domain/id`` -> (domain, id); a name without a domain belongs to the driver."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _device_variable(dev: CelDevice, domains: tuple[str, ...]) -> dict[str, Any]:
    attributes: dict[str, dict[str, Any]] = {d: {} for d in domains}
    for name, kind, value in dev.attributes:
        domain, ident = split_qualified(name, dev.driver)
        attributes.setdefault(domain, {})[ident] = semver_value(str(value)) if kind == "version" else value
    capacity: dict[str, dict[str, Any]] = {d: {} for d in domains}
    for name, q in dev.capacity:
        domain, ident = split_qualified(name, dev.driver)
        capacity.setdefault(domain, {})[ident] = quantity_value(q)
    return {
        "driver": dev.driver,
        "attributes": attributes,
        "capacity": capacity,
        "allowMultipleAllocations": dev.allow_multiple_allocations,
    }


# -- compiling and evaluating -------------------------------------------------------------------------------


@dataclass
class CompiledSelector:
    expression: str
    program: Any = None
    error: str = ""  # the compile error, upstream's words ("compilation failed: ...")
    # string literals of the expression: domains a lookup may ask for (they get an empty map when absent)
    domains: tuple[str, ...] = ()
    _results: dict[CelDevice, bool | str] = field(default_factory=dict, repr=False)

    def matches(self, dev: CelDevice) -> bool:
        """Whether the device matches; raises CelRuntimeError (upstream's words) when the expression fails."""
        known = self._results.get(dev)
        if known is None:
            known = self._evaluate(dev)
            self._results[dev] = known
        if isinstance(known, str):
            raise CelRuntimeError(known)
        return known

    def _evaluate(self, dev: CelDevice) -> bool | str:
        import cel  # imported on first use: the package also loads a CLI toolkit (0.1 s) runs without DRA skip

        try:
            ctx = cel.Context(variables={"device": _device_variable(dev, self.domains)}, functions=FUNCTIONS)
            result = self.program.execute(ctx)
        except KeyError as exc:
            return f"no such key: {exc.args[0] if exc.args else ''}"
        except CelRuntimeError as exc:
            return str(exc)
        except Exception as exc:  # the evaluator's own errors (no such overload, division by zero, ...)
            return _runtime_message(str(exc))
        if not isinstance(result, bool):
            return f"CEL result of type {_cel_type(result)} could not be converted to bool"
        return result


def _cel_type(value: object) -> str:
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        if _QUANTITY in value:
            return "kubernetes.Quantity"
        if _SEMVER in value:
            return "kubernetes.Semver"
        return "map"
    if isinstance(value, list):
        return "list"
    return type(value).__name__


def _runtime_message(text: str) -> str:
    # a CelRuntimeError raised by one of FUNCTIONS reaches here wrapped by the evaluator ("Function 'f' error:
    # Python function call failed: CelRuntimeError: <message>. Check function arguments and their types.")
    m = re.search(r"CelRuntimeError: (.*?)\. Check function arguments", text, re.DOTALL)
    if m:
        return m.group(1)
    m = re.search(r"No such key: (\S+)", text, re.IGNORECASE)
    if m:
        return f"no such key: {m.group(1).strip(chr(39))}"
    return text.split("\n", 1)[0]


def _column(expression: str, name: str) -> tuple[int, int]:
    m = re.search(rf"(?<![\w.\"']){re.escape(name)}\b", expression)
    pos = m.start() if m else 0
    line = expression.count("\n", 0, pos) + 1
    col = pos - (expression.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _compile(expression: str) -> CompiledSelector:
    import cel  # see CompiledSelector._evaluate

    out = CompiledSelector(expression)
    try:
        program = cel.compile(expression)
    except Exception as exc:  # syntax errors: the evaluator says where
        detail = str(exc)
        detail = detail.split(": ", 1)[1] if detail.startswith("Failed to parse expression") else detail
        out.error = f"compilation failed: {detail}"
        return out
    if _BIND.search(expression):
        out.error = "compilation failed: cel.bind is not supported by packsched's CEL evaluator (yet)"
        return out
    bound = set(_BOUND.findall(expression))
    for name in program.variables():
        if name != "device" and name not in bound and name not in ("cel", "optional"):
            line, col = _column(expression, name)
            out.error = (
                f"compilation failed: ERROR: <input>:{line}:{col}: undeclared reference to '{name}' (in container '')"
            )
            return out
    for fn in program.functions():
        if fn.startswith(("_", "@", "!")) or fn in KNOWN_FUNCTIONS:
            continue
        line, col = _column(expression, fn.rsplit(".", 1)[-1])
        out.error = f"compilation failed: ERROR: <input>:{line}:{col}: undeclared reference to '{fn}' (in container '')"
        return out
    out.program = program
    out.domains = tuple(dict.fromkeys(a or b for a, b in _STRING_LITERAL.findall(expression)))
    return out


_CACHE: dict[str, CompiledSelector] = {}
_CACHE_MAX = 4096


def compile_selector(expression: str) -> CompiledSelector:
    """The compiled expression, compiled once per text (``error`` set when it does not compile)."""
    found = _CACHE.get(expression)
    if found is None:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        found = _CACHE[expression] = _compile(expression)
    return found
