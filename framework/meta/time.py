"""``metav1.Time`` and ``metav1.MicroTime``: parsing and formatting, with one rule for empty values.

Times are aware :class:`~datetime.datetime` objects in UTC. As in Go, the zero value is *unset*:
:func:`format_time` / :func:`format_micro_time` give ``None`` (JSON ``null``) for ``None``, and
:func:`parse_time` / :func:`parse_micro_time` give ``None`` for ``None``, ``""`` and ``"null"``
(``Time.UnmarshalJSON`` / ``UnmarshalQueryParameter``). Anything else must be a string in the layout
(``time.RFC3339``; ``RFC3339Micro`` = exactly six fraction digits) or :class:`TimeParseError` is raised
with the text of Go's ``time.ParseError``.

Formatting is ``t.UTC().Format(layout)``: ``Time`` truncates to whole seconds, ``MicroTime`` keeps
six fraction digits; a naive datetime is taken as UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any, overload

from framework.meta.strconv import time_quote

__all__ = [
    "RFC3339",
    "RFC3339_MICRO",
    "TimeParseError",
    "format_micro_time",
    "format_rfc3339_nano",
    "format_time",
    "go_time_string",
    "now",
    "parse_layout",
    "parse_micro_time",
    "parse_time",
    "parse_time_or_none",
    "rfc3339_copy",
]

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"

# The two layouts as Go's nextStdChunk splits them: (literal prefix, std element) pairs.
_RFC3339_CHUNKS = [
    ("", "2006"),
    ("-", "01"),
    ("-", "02"),
    ("T", "15"),
    (":", "04"),
    (":", "05"),
    ("", "Z07:00"),
]
_MICRO_CHUNKS = [*_RFC3339_CHUNKS[:-1], ("", ".000000"), ("", "Z07:00")]
_DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
# The canonical UTC forms parse_layout reads without walking the chunks: ASCII digits, ``Z``.
_DATE_TIME = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
_FAST_RFC3339 = re.compile(_DATE_TIME + r"(?:\.[0-9]{1,9})?Z")
_FAST_MICRO = re.compile(_DATE_TIME + r"\.[0-9]{6}Z")
# encoding/json's names for the JSON types it refuses to put into a Go string.
_JSON_TYPES = {bool: "bool", list: "array", dict: "object"}


class TimeParseError(ValueError):
    """Go's ``time.ParseError`` (or ``json: cannot unmarshal ...`` for a non-string), as its text."""


def _err(layout: str, value: str, value_elem: str, layout_elem: str) -> TimeParseError:
    return TimeParseError(
        f"parsing time {time_quote(value)} as {time_quote(layout)}: "
        f"cannot parse {time_quote(value_elem)} as {time_quote(layout_elem)}"
    )


def _msg_err(value: str, message: str) -> TimeParseError:
    return TimeParseError(f"parsing time {time_quote(value)}{message}")


def _getnum(s: str, fixed: bool) -> tuple[int, str] | None:
    """Go ``getnum``: one or two leading digits (exactly two when ``fixed``)."""
    if not _is_digit(s, 0):
        return None
    if not _is_digit(s, 1):
        return None if fixed else (int(s[0]), s[1:])
    return int(s[:2]), s[2:]


def _is_digit(s: str, i: int) -> bool:
    return i < len(s) and "0" <= s[i] <= "9"


def _parse_nanos(frac: str) -> int:
    """Go ``parseNanoseconds`` for ``.ddd`` (digits beyond nine are ignored)."""
    digits = frac[1:10]
    return int(digits) * 10 ** (9 - len(digits))


def _parse_canonical(layout: str, value: str) -> datetime | None:
    """``YYYY-MM-DDTHH:MM:SS[.frac]Z`` in range as a UTC datetime; None for anything else."""
    if (_FAST_MICRO if layout == RFC3339_MICRO else _FAST_RFC3339).fullmatch(value) is None:
        return None
    # The pattern admits only the canonical form, which fromisoformat (C) reads as Go does, dropping
    # digits beyond microseconds; a tenth of the cost of converting the groups one by one.
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None  # out of range: Go's path words the error


def parse_layout(layout: str, value: str) -> datetime:
    """Go's ``time.Parse(layout, value)`` for :data:`RFC3339` or :data:`RFC3339_MICRO`, in UTC.

    Strict, as Go: ``""`` is an error here. Sub-microsecond digits are dropped (Python's resolution).
    """
    if layout not in (RFC3339, RFC3339_MICRO):
        raise ValueError(f"unsupported layout {layout!r}")
    # The canonical UTC forms (what API servers write) without the chunk walk: a controller parses
    # one per object it looks at. Anything else, or out of range, takes Go's path (and its errors).
    canonical = _parse_canonical(layout, value)
    if canonical is not None:
        return canonical
    chunks = _MICRO_CHUNKS if layout == RFC3339_MICRO else _RFC3339_CHUNKS
    rest = value
    year = month = day = hour = minute = second = nanos = 0
    offset = 0
    for prefix, std in chunks:
        if prefix:
            if not rest.startswith(prefix):
                raise _err(layout, value, rest, prefix)
            rest = rest[len(prefix) :]
        before = rest
        range_err = ""
        if std == "2006":
            if len(rest) < 4 or not all(_is_digit(rest, i) for i in range(4)):
                raise _err(layout, value, before, std)
            year, rest = int(rest[:4]), rest[4:]
        elif std in ("01", "02", "04", "05", "15"):
            got = _getnum(rest, fixed=std != "15")
            if got is None:
                raise _err(layout, value, before, std)
            num, rest = got
            if std == "01":
                month = num
                range_err = "month" if not 1 <= month <= 12 else ""
            elif std == "02":
                day = num  # checked against the month once everything is parsed, like Go
            elif std == "15":
                hour = num
                range_err = "hour" if hour >= 24 else ""
            elif std == "04":
                minute = num
                range_err = "minute" if minute >= 60 else ""
            else:
                second = num
                range_err = "second" if second >= 60 else ""
                # Go accepts a fraction the layout does not mention (RFC3339 only).
                if (
                    not range_err
                    and layout == RFC3339
                    and len(rest) >= 2
                    and rest[0] in ".,"
                    and _is_digit(rest, 1)
                ):
                    n = 2
                    while _is_digit(rest, n):
                        n += 1
                    nanos, rest = _parse_nanos(rest[:n]), rest[n:]
        elif std == ".000000":
            # stdFracSecond0 wants exactly the layout's digit count; Go slices the value even
            # when the digits are bad, so the error shows what follows them.
            if len(rest) < 7:
                raise _err(layout, value, before, std)
            frac, rest = rest[:7], rest[7:]
            if frac[0] not in ".," or not all(_is_digit(frac, i) for i in range(1, 7)):
                raise _err(layout, value, rest, std)
            nanos = _parse_nanos(frac)
        else:  # Z07:00
            if rest.startswith("Z"):
                rest = rest[1:]
                offset = 0
            else:
                if len(rest) < 6 or rest[3] != ":":
                    raise _err(layout, value, before, std)
                sign, hh, mm, rest = rest[0], rest[1:3], rest[4:6], rest[6:]
                h, m = _getnum(hh, True), _getnum(mm, True)
                if h is None or m is None or sign not in "+-":
                    raise _err(layout, value, before, std)
                # Go compares with > (not >=): offsets of 24h or 60min are accepted.
                if h[0] > 24:
                    range_err = "time zone offset hour"
                elif m[0] > 60:
                    range_err = "time zone offset minute"
                offset = (h[0] * 60 + m[0]) * 60 * (1 if sign == "+" else -1)
        if range_err:
            raise _msg_err(value, f": {range_err} out of range")
    if rest:
        raise _msg_err(value, f": extra text: {time_quote(rest)}")
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day < 1 or day > _DAYS_IN_MONTH[month - 1] + (1 if leap else 0):
        raise _msg_err(value, ": day out of range")
    try:
        naive = datetime(year, month, day, hour, minute, second, nanos // 1000) - timedelta(seconds=offset)
    except (OverflowError, ValueError) as exc:
        # Python's datetime stops at year 1; Go would carry on into year 0.
        raise _msg_err(value, ": year out of range") from exc
    return naive.replace(tzinfo=UTC)


def _parse(value: Any, layout: str) -> datetime | None:
    if value is None or value == "" or value == "null":
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str):
        json_type = _JSON_TYPES.get(type(value), "number")
        raise TimeParseError(f"json: cannot unmarshal {json_type} into Go value of type string")
    return parse_layout(layout, value)


def parse_time(value: Any) -> datetime | None:
    """A ``metav1.Time`` value (RFC 3339, any fraction, ``Z`` or an offset) in UTC.

    ``None``, ``""`` and ``"null"`` are the zero time and give ``None``; a datetime is returned in UTC;
    anything else unparsable raises :class:`TimeParseError` (a ``ValueError``).
    """
    return _parse(value, RFC3339)


def parse_time_or_none(value: Any) -> datetime | None:
    """As :func:`parse_time`, but an unparsable value reads as unset (``None``) instead of raising: for
    a timestamp a person may have written by hand that must not stop a controller."""
    try:
        return parse_time(value)
    except ValueError:
        return None


def parse_micro_time(value: Any) -> datetime | None:
    """A ``metav1.MicroTime`` value (exactly six fraction digits); empty rules as :func:`parse_time`."""
    return _parse(value, RFC3339_MICRO)


def _utc(dt: datetime) -> datetime:
    return dt.astimezone(UTC) if dt.tzinfo else dt.replace(tzinfo=UTC)


def rfc3339_copy(dt: datetime) -> datetime:
    """``metav1.Time.Rfc3339Copy()``: ``dt`` in UTC at whole seconds, the value a ``metav1.Time``
    field holds once written (a naive datetime is taken as UTC)."""
    return _utc(dt).replace(microsecond=0)


@overload
def format_time(dt: datetime) -> str: ...
@overload
def format_time(dt: None) -> None: ...
def format_time(dt: datetime | None) -> str | None:
    """``metav1.Time`` JSON: ``YYYY-MM-DDTHH:MM:SSZ`` in UTC (sub-seconds truncated); ``None`` stays
    ``None`` (the zero time marshals as ``null``)."""
    if dt is None:
        return None
    u = _utc(dt)
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}Z"


@overload
def format_micro_time(dt: datetime) -> str: ...
@overload
def format_micro_time(dt: None) -> None: ...
def format_micro_time(dt: datetime | None) -> str | None:
    """``metav1.MicroTime`` JSON: ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC; ``None`` stays ``None``."""
    if dt is None:
        return None
    u = _utc(dt)
    return f"{format_time(u)[:-1]}.{u.microsecond:06d}Z"


def format_rfc3339_nano(dt: datetime) -> str:
    """Go's ``time.RFC3339Nano`` in UTC: the fraction without trailing zeros (none when whole)."""
    u = _utc(dt)
    frac = f".{u.microsecond:06d}".rstrip("0") if u.microsecond else ""
    return f"{format_time(u)[:-1]}{frac}Z"


def go_time_string(dt: datetime | None) -> str:
    """Go's ``time.Time.String()`` of a UTC time (``2006-01-02 15:04:05.999999999 +0000 UTC``), as
    ``%v`` prints a time in error messages; ``None`` is Go's zero time."""
    if dt is None:
        return "0001-01-01 00:00:00 +0000 UTC"
    u = _utc(dt)
    frac = f".{u.microsecond:06d}".rstrip("0") if u.microsecond else ""
    return f"{format_time(u)[:-1].replace('T', ' ')}{frac} +0000 UTC"


def now() -> datetime:
    """The current time, aware, in UTC (``metav1.Now()``)."""
    return datetime.now(UTC)
