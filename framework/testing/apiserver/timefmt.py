"""Kubernetes ``Time`` / ``MicroTime`` wire formats (spec 6-12).

``metav1.Time`` is decoded with Go's ``time.Parse(time.RFC3339, s)`` and encoded as
``2006-01-02T15:04:05Z`` in UTC; ``metav1.MicroTime`` is decoded with the layout
``2006-01-02T15:04:05.000000Z07:00`` (exactly six fraction digits) and encoded the same way in
UTC. Decode failures are ``400 BadRequest`` whose text is Go's ``time.ParseError`` behind the
handler's ``KIND in version "V" cannot be handled as a KIND:`` prefix, so this module reimplements
Go's layout parser for exactly those two layouts, error texts included.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from framework.testing.apiserver.errors import StatusError, bad_request

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

# encoding/json's names for the JSON types it refuses to put into a Go string.
_JSON_TYPES = {bool: "bool", list: "array", dict: "object"}

_DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


class _ParseError(Exception):
    """Go's ``time.ParseError``, carrying its final ``Error()`` text."""


@dataclass(frozen=True)
class _Parsed:
    """A parsed instant, already shifted to UTC (naive datetime) plus its sub-second nanoseconds."""

    utc: datetime
    nanos: int


def _go_quote(s: str) -> str:
    """Go ``time.quote``: double quotes, backslash-escaped quotes, ``\\xNN`` for non-ASCII/control."""
    out = ['"']
    for ch in s:
        if ord(ch) >= 0x80 or ch < " ":
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8"))
        else:
            if ch in '"\\':
                out.append("\\")
            out.append(ch)
    out.append('"')
    return "".join(out)


def _err(layout: str, value: str, value_elem: str, layout_elem: str) -> _ParseError:
    return _ParseError(
        f"parsing time {_go_quote(value)} as {_go_quote(layout)}: "
        f"cannot parse {_go_quote(value_elem)} as {_go_quote(layout_elem)}"
    )


def _msg_err(value: str, message: str) -> _ParseError:
    return _ParseError(f"parsing time {_go_quote(value)}{message}")


def _getnum(s: str, fixed: bool) -> tuple[int, str] | None:
    """Go ``getnum``: one or two leading digits (exactly two when ``fixed``)."""
    if not s or not s[0].isascii() or not s[0].isdigit():
        return None
    if len(s) < 2 or not s[1].isascii() or not s[1].isdigit():
        return None if fixed else (int(s[0]), s[1:])
    return int(s[:2]), s[2:]


def _is_digit(s: str, i: int) -> bool:
    return i < len(s) and "0" <= s[i] <= "9"


def _parse_nanos(frac: str) -> int:
    """Go ``parseNanoseconds`` for ``.ddd`` (digits beyond nine are ignored)."""
    digits = frac[1:10]
    return int(digits) * 10 ** (9 - len(digits))


def _go_parse(layout: str, value: str) -> _Parsed:
    """Go's ``time.Parse`` restricted to the RFC 3339 and RFC 3339 micro layouts."""
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
        raise _msg_err(value, f": extra text: {_go_quote(rest)}")
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day < 1 or day > _DAYS_IN_MONTH[month - 1] + (1 if leap else 0):
        raise _msg_err(value, ": day out of range")
    try:
        utc = datetime(year, month, day, hour, minute, second) - timedelta(seconds=offset)
    except (OverflowError, ValueError) as exc:
        # Python's datetime stops at year 1; Go would carry on into year 0.
        raise _msg_err(value, ": year out of range") from exc
    return _Parsed(utc, nanos)


def _decode_error(field: str, kind: str, version: str, err: str) -> StatusError:
    """The handler's decode-failure text (``transformDecodeError``), or ``FIELD: ERR`` without a kind."""
    if kind:
        return bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {err}')
    return bad_request(f"{field}: {err}")


def _parse_input(value: Any, field: str, layout: str, kind: str, version: str) -> _Parsed:
    if not isinstance(value, str):
        json_type = _JSON_TYPES.get(type(value), "number")
        raise _decode_error(
            field, kind, version, f"json: cannot unmarshal {json_type} into Go value of type string"
        )
    try:
        return _go_parse(layout, value)
    except _ParseError as exc:
        raise _decode_error(field, kind, version, str(exc)) from None


def format_time(dt: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` in UTC (sub-seconds truncated); naive datetimes are taken as UTC."""
    utc = dt.astimezone(UTC) if dt.tzinfo else dt
    return f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}Z"


def format_microtime(dt: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC; naive datetimes are taken as UTC."""
    utc = dt.astimezone(UTC) if dt.tzinfo else dt
    return format_time(utc)[:-1] + f".{utc.microsecond:06d}Z"


def now_time() -> str:
    """The current time as a ``Time`` string."""
    return format_time(datetime.now(UTC))


def now_microtime() -> str:
    """The current time as a ``MicroTime`` string."""
    return format_microtime(datetime.now(UTC))


def normalize_time(value: Any, field: str, *, kind: str = "", version: str = "") -> str:
    """Decode a ``Time`` JSON value like the real server and return its canonical output form.

    Any RFC 3339 form is accepted (fraction optional, ``Z`` or an offset); the result is UTC,
    truncated to seconds. Failures raise ``400 BadRequest``; with ``kind`` the message carries the
    handler's ``KIND in version "VERSION" cannot be handled as a KIND:`` prefix, otherwise
    ``FIELD:`` (for callers outside a request body decode).
    """
    return format_time(_parse_input(value, field, RFC3339, kind, version).utc)


def normalize_microtime(value: Any, field: str, *, kind: str = "", version: str = "") -> str:
    """Decode a ``MicroTime`` JSON value (exactly six fraction digits) and return it in UTC.

    Errors as :func:`normalize_time`; e.g. ``2024-05-01T10:00:00Z`` fails with
    ``cannot parse "Z" as ".000000"``.
    """
    parsed = _parse_input(value, field, RFC3339_MICRO, kind, version)
    return format_time(parsed.utc)[:-1] + f".{parsed.nanos // 1000:06d}Z"


def _walk(node: Any, parts: list[str], fn: Any) -> None:
    """Apply ``fn(container, key)`` at the end of a dotted path; ``name[]`` fans out over a list."""
    if not parts or not isinstance(node, dict):
        return
    head, rest = parts[0], parts[1:]
    if head.endswith("[]"):
        items = node.get(head[:-2])
        if isinstance(items, list):
            for item in items:
                _walk(item, rest, fn)
        return
    if not rest:
        if node.get(head) is not None:
            fn(node, head)
        return
    _walk(node.get(head), rest, fn)


def normalize_object_times(
    obj: dict,
    time_fields: list[str] | tuple[str, ...] = (),
    microtime_fields: list[str] | tuple[str, ...] = (),
    *,
    kind: str = "",
    version: str = "",
) -> None:
    """Normalize the ``Time``/``MicroTime`` fields of ``obj`` in place.

    Paths are dotted (``spec.renewTime``) and may fan out over lists with ``[]``
    (``status.conditions[].lastTransitionTime``); absent and ``null`` values are left alone.
    """

    def fix_time(container: dict, key: str) -> None:
        container[key] = normalize_time(container[key], key, kind=kind, version=version)

    def fix_micro(container: dict, key: str) -> None:
        container[key] = normalize_microtime(container[key], key, kind=kind, version=version)

    for path in time_fields:
        _walk(obj, path.split("."), fix_time)
    for path in microtime_fields:
        _walk(obj, path.split("."), fix_micro)
