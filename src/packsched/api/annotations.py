"""packsched's own pod annotations: when a pod is created and how long it runs (virtual seconds).

``packsched.io/arrival-time``: the pod enters the cluster (and the scheduling queue) this long after the start.
``packsched.io/run-duration``: once bound, the pod runs this long, then completes (phase Succeeded).
Both take a Go duration (``90s``, ``5m``, ``1h2m3.5s``) or a plain number of seconds (``90``, ``2.5``).
"""

from __future__ import annotations

import re
from fractions import Fraction

from packsched.api.decode import Reader
from packsched.api.objects import Pod

ARRIVAL_TIME = "packsched.io/arrival-time"
RUN_DURATION = "packsched.io/run-duration"

# Go's time.ParseDuration units, in nanoseconds.
_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_TERM = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_PLAIN = re.compile(r"\d+\.?\d*|\.\d+")
# Go durations are int64 nanoseconds: about 290 years.
_MAX_NS = 2**63 - 1


def parse_duration(text: str) -> float:
    """Seconds for a Go duration (``1h2m3.5s``, ``300ms``, ``0``) or a plain number of seconds (``90``).

    Raises ValueError with the reason. Negative values are refused: time in the simulator only moves forward."""
    s = text.strip()
    if not s:
        raise ValueError("empty value")
    if s[0] in "+-":
        if s[0] == "-" and s[1:] not in ("0", ""):
            raise ValueError("must not be negative")
        s = s[1:]
    if _PLAIN.fullmatch(s):
        ns = Fraction(s) * 1_000_000_000
    else:
        ns = Fraction(0)
        pos = 0
        while pos < len(s):
            m = _TERM.match(s, pos)
            if m is None:
                raise ValueError('must be a duration such as "90s", "5m" or "1h2m3.5s", or a number of seconds')
            ns += Fraction(m.group(1)) * _UNITS[m.group(2)]
            pos = m.end()
    whole = int(ns)  # Go drops fractions of a nanosecond
    if whole > _MAX_NS:
        raise ValueError("too large (a Go duration is at most about 290 years)")
    return whole / 1_000_000_000


def read_timing(r: Reader, pod: Pod, path: str) -> None:
    """Set ``pod.arrival_time`` and ``pod.run_duration`` from its annotations (read from ``path``, the
    annotations map's field path); a bad value is an error at ``path["packsched.io/..."]``."""
    for key in (ARRIVAL_TIME, RUN_DURATION):
        raw = pod.annotations.get(key)
        if raw is None:
            continue
        try:
            seconds = parse_duration(raw)
        except ValueError as exc:
            r.errors.add(f'{path}["{key}"]', f"Invalid value: {raw!r}: {exc}")
            continue
        if key == ARRIVAL_TIME:
            pod.arrival_time = seconds
        else:
            pod.run_duration = seconds


def format_duration(seconds: float) -> str:
    """Seconds as Go prints a duration: ``0s``, ``1.5s``, ``1m30s``, ``1h0m0s``, ``250ms``."""
    ns = round(seconds * 1_000_000_000)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _trim(Fraction(ns, size)) + unit
    h, rest = divmod(ns, 3600 * 1_000_000_000)
    m, rest = divmod(rest, 60 * 1_000_000_000)
    secs = _trim(Fraction(rest, 1_000_000_000)) + "s"
    if h:
        return f"{sign}{h}h{m}m{secs}"
    if m:
        return f"{sign}{m}m{secs}"
    return sign + secs


def _trim(value: Fraction) -> str:
    """A decimal without trailing zeros (exact: denominators here are powers of ten)."""
    whole, frac = divmod(value.numerator, value.denominator)
    if frac == 0:
        return str(whole)
    digits = ""
    while frac:
        frac *= 10
        d, frac = divmod(frac, value.denominator)
        digits += str(d)
    return f"{whole}.{digits}"
