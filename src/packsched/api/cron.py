"""A CronJob's ``spec.schedule``: the standard five fields (minute, hour, day of month, month, day of week), as the
CronJob controller's parser (robfig/cron's ParseStandard) reads them, and the next time it fires.

Fields take ``*``, ``?``, numbers, names (``jan``-``dec``, ``sun``-``sat``), ranges ``a-b``, steps ``/n`` and
lists; ``@yearly``, ``@annually``, ``@monthly``, ``@weekly``, ``@daily``, ``@midnight``, ``@hourly`` and
``@every <duration>`` are accepted too. When both the day of month and the day of week are restricted, a day that
matches either fires (cron's rule); when one of them is ``*`` or ``?``, only the other counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from packsched.api.annotations import parse_duration

_MONTHS = {
    m: i + 1 for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])
}
_DAYS = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
# (low, high, names) of each field
_FIELDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, _MONTHS),
    (0, 6, _DAYS),
)
_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
# robfig/cron gives up looking five years ahead (a schedule such as "0 0 30 2 *" never fires)
_YEARS_AHEAD = 5


class ScheduleError(ValueError):
    pass


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int] = frozenset()
    hours: frozenset[int] = frozenset()
    days: frozenset[int] = frozenset()
    months: frozenset[int] = frozenset()
    weekdays: frozenset[int] = frozenset()
    day_star: bool = False  # the day-of-month field is * or ?
    weekday_star: bool = False
    every: float | None = None  # @every <duration>: a fixed period in seconds

    def day_matches(self, t: datetime) -> bool:
        dom = t.day in self.days
        dow = (t.weekday() + 1) % 7 in self.weekdays  # Python's Monday is 0, cron's Sunday is
        if self.day_star or self.weekday_star:
            return dom and dow
        return dom or dow

    def next_after(self, t: datetime) -> datetime | None:
        """The first time strictly after ``t`` (an aware datetime) the schedule fires, in ``t``'s zone; None when it
        does not fire within five years."""
        if self.every is not None:
            return t + timedelta(seconds=max(1.0, self.every))
        zone = t.tzinfo
        local = t.replace(second=0, microsecond=0, tzinfo=None) + timedelta(minutes=1)
        limit = local + timedelta(days=366 * _YEARS_AHEAD)
        while local < limit:
            if local.month not in self.months:
                year, month = (local.year + 1, 1) if local.month == 12 else (local.year, local.month + 1)
                local = datetime(year, month, 1)
                continue
            if not self.day_matches(local):
                local = datetime(local.year, local.month, local.day) + timedelta(days=1)
                continue
            if local.hour not in self.hours:
                local = local.replace(minute=0) + timedelta(hours=1)
                continue
            if local.minute not in self.minutes:
                local += timedelta(minutes=1)
                continue
            found = local.replace(tzinfo=zone)
            if found <= t:  # a wall-clock time repeated by a daylight-saving change
                local += timedelta(minutes=1)
                continue
            return found
        return None


def _number(text: str, low: int, high: int, names: dict[str, int]) -> int:
    value = names.get(text.lower())
    if value is None:
        if not text.isdigit():
            raise ScheduleError(f"failed to parse int from {text}")
        value = int(text)
    if not low <= value <= high:
        raise ScheduleError(f"{text} is out of range ({low}-{high})")
    return value


def _field(text: str, low: int, high: int, names: dict[str, int]) -> tuple[frozenset[int], bool]:
    """The values one field names, and whether it is ``*`` or ``?`` (with no step)."""
    values: set[int] = set()
    star = False
    for part in text.split(","):
        if not part:
            raise ScheduleError(f"empty list item in {text!r}")
        span, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ScheduleError(f"bad step {step_text!r} in {part!r}")
            step = int(step_text)
        if span in ("*", "?"):
            start, end = low, high
            star = star or step == 1
        elif "-" in span:
            a, _, b = span.partition("-")
            start, end = _number(a, low, high, names), _number(b, low, high, names)
            if start > end:
                raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {part}")
        else:
            start = _number(span, low, high, names)
            end = high if step_text else start  # "N/step" means N-max/step
        values.update(range(start, end + 1, step))
    return frozenset(values), star


def parse_schedule(text: str) -> Schedule:
    """Raises ScheduleError with what is wrong."""
    spec = text.strip()
    if spec.startswith(("TZ=", "CRON_TZ=")):
        raise ScheduleError("cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
    if spec.startswith("@every "):
        try:
            period = parse_duration(spec[len("@every ") :].strip())
        except ValueError as exc:
            raise ScheduleError(f"failed to parse duration {spec}: {exc}") from None
        return Schedule(every=period)
    if spec.startswith("@"):
        if spec not in _DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    parts = spec.split()
    if len(parts) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(parts)}: {text}")
    (minutes, _), (hours, _), (days, day_star), (months, _), (weekdays, weekday_star) = (
        _field(p, low, high, names) for p, (low, high, names) in zip(parts, _FIELDS, strict=True)
    )
    return Schedule(minutes, hours, days, months, weekdays, day_star, weekday_star)


# Simulated time 0 is this instant (the Unix epoch, a Thursday, midnight UTC): "0 2 * * *" first fires at 7200 s.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def next_fire(schedule: Schedule, zone: tzinfo, after: float) -> float | None:
    """The first simulated time (seconds) after ``after`` that the schedule fires, read in ``zone``."""
    t = (EPOCH + timedelta(seconds=after)).astimezone(zone)
    found = schedule.next_after(t)
    if found is None:
        return None
    return (found - EPOCH).total_seconds()
