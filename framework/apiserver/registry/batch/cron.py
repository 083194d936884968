"""Cron schedules as Kubernetes' CronJob controller reads them: robfig/cron's standard parser (five
fields, names for months and weekdays, ``@hourly``-style descriptors, ``@every <duration>``) and the next
activation after a time. Error texts are robfig/cron's (CronJob validation shows them verbatim).

    schedule = parse_standard("*/15 9-17 * * MON-FRI")
    schedule.next_after(datetime.now(UTC))
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from framework.meta.duration import SECOND, DurationError, parse_duration_ns

__all__ = ["CronError", "Schedule", "parse_standard"]

_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_DAYS = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
# (minimum, maximum, names) of minute, hour, day of month, month, day of week.
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


class CronError(ValueError):
    """A schedule robfig/cron refuses; ``str()`` is its error text."""


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: the allowed values of each field, or a fixed interval (``@every``)."""

    minutes: frozenset[int] = frozenset()
    hours: frozenset[int] = frozenset()
    days: frozenset[int] = frozenset()
    months: frozenset[int] = frozenset()
    weekdays: frozenset[int] = frozenset()
    # Go's rule: when both day fields are restricted, a day matches if either does.
    days_star: bool = True
    weekdays_star: bool = True
    every: timedelta | None = None

    def next_after(self, t: datetime) -> datetime:
        """The first activation strictly after ``t`` (whole minutes; ``@every`` adds its interval)."""
        if self.every is not None:
            return t + self.every
        cur = t.replace(second=0, microsecond=0) + timedelta(minutes=1)
        for _ in range(60 * 24 * 366 * 5):  # robfig gives up after five years as well
            if (
                cur.month in self.months
                and self._day_matches(cur)
                and cur.hour in self.hours
                and cur.minute in self.minutes
            ):
                return cur
            cur += timedelta(minutes=1)
        raise CronError("no activation within five years")

    def _day_matches(self, t: datetime) -> bool:
        dom, dow = t.day in self.days, (t.isoweekday() % 7) in self.weekdays
        if self.days_star or self.weekdays_star:
            return dom and dow
        return dom or dow


def parse_standard(spec: str) -> Schedule:
    """``cron.ParseStandard``."""
    spec = spec.strip()
    if not spec:
        raise CronError("empty spec string")
    if spec.startswith("@every "):
        return Schedule(every=_parse_duration(spec[len("@every ") :].strip(), spec))
    if spec.startswith("@"):
        if spec not in _DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    parts = spec.split()
    if len(parts) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(parts)}: [{' '.join(parts)}]")
    sets = [_parse_field(p, lo, hi, names) for p, (lo, hi, names) in zip(parts, _FIELDS, strict=True)]
    return Schedule(
        minutes=sets[0],
        hours=sets[1],
        days=sets[2],
        months=sets[3],
        weekdays=sets[4],
        days_star=parts[2] in ("*", "?"),
        weekdays_star=parts[4] in ("*", "?"),
    )


def _parse_duration(text: str, spec: str) -> timedelta:
    """``@every``'s interval: ``time.ParseDuration``, then robfig's ``Every``: at least a second, and
    whole seconds (the fraction is dropped)."""
    try:
        ns = parse_duration_ns(text)
    except DurationError as e:
        raise CronError(f"failed to parse duration {spec}: {e}") from None
    ns = max(ns, SECOND)
    return timedelta(seconds=(ns - ns % SECOND) // SECOND)


def _parse_field(text: str, lo: int, hi: int, names: dict[str, int]) -> frozenset[int]:
    out: set[int] = set()
    for expr in text.split(","):
        out |= _parse_range(expr, lo, hi, names)
    return frozenset(out)


def _parse_range(expr: str, lo: int, hi: int, names: dict[str, int]) -> set[int]:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    if low_and_high[0] in ("*", "?"):
        start, end = lo, hi
    else:
        start = _value(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _value(low_and_high[1], names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if single and low_and_high[0] not in ("*", "?"):
            end = hi  # "N/step" means N-max/step
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < lo:
        raise CronError(f"beginning of range ({start}) below minimum ({lo}): {expr}")
    if end > hi:
        raise CronError(f"end of range ({end}) above maximum ({hi}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return set(range(start, end + 1, step))


def _value(text: str, names: dict[str, int]) -> int:
    return names[text.lower()] if text.lower() in names else _int(text)


def _int(text: str) -> int:
    if not re.fullmatch(r"-?\d+", text):
        raise CronError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    value = int(text)
    if value < 0:
        raise CronError(f"negative number ({value}) not allowed: {text}")
    return value
