"""Go duration strings: ``time.ParseDuration`` and ``time.Duration.String()``, byte for byte; the one
parser of the component configuration (``gcm.config``), cron's ``@every``
(:mod:`framework.apiserver.registry.batch.cron`) and anything else that reads a Go duration.

A duration string is an optional sign and a sequence of decimal numbers, each with an optional
fraction and a unit suffix: ``300ms``, ``-1.5h``, ``2h45m``, ``.5s``. Units are ``ns``, ``us`` (or
``µs`` U+00B5, or ``μs`` U+03BC), ``ms``, ``s``, ``m``, ``h``; there is no ``d``. A unit is required
except for the bare ``0`` (also ``+0``/``-0``). Values are nanoseconds in a signed 64-bit integer;
larger values are errors. The error messages are Go's (``time: invalid duration "x"``, ``time: missing
unit in duration "1"``, ``time: unknown unit "d" in duration "1d"``).

``parse_duration`` returns a :class:`Duration`, a ``float`` of seconds that also keeps the exact
nanoseconds and the text it was parsed from; ``format_duration`` renders seconds (or a ``Duration``)
like Go's ``Duration.String()``: ``12h0m0s``, ``1m30s``, ``1.5s``, ``300ms``, ``0s``.
"""

from __future__ import annotations

from framework.meta.strconv import time_quote

__all__ = [
    "Duration",
    "DurationError",
    "format_duration",
    "format_duration_ns",
    "parse_duration",
    "parse_duration_ns",
]

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_MAX = 1 << 63  # |int64 min|; the largest magnitude a (negative) Duration can have

_UNITS: dict[bytes, int] = {
    b"ns": NANOSECOND,
    b"us": MICROSECOND,
    "µs".encode(): MICROSECOND,  # U+00B5 micro sign
    "μs".encode(): MICROSECOND,  # U+03BC Greek small letter mu
    b"ms": MILLISECOND,
    b"s": SECOND,
    b"m": MINUTE,
    b"h": HOUR,
}


class DurationError(ValueError):
    """A string that Go's ``time.ParseDuration`` rejects; the message is Go's."""


def _is_digit(b: int) -> bool:
    return 0x30 <= b <= 0x39


def parse_duration_ns(text: str) -> int:
    """``time.ParseDuration``: the duration in integer nanoseconds; raises :class:`DurationError`."""
    if not isinstance(text, str):
        raise DurationError(f"time: invalid duration {text!r} (not a string)")
    orig = text.encode("utf-8", "surrogatepass")
    s = orig
    invalid = DurationError("time: invalid duration " + time_quote(orig))
    neg = False
    if s and s[0] in b"-+":
        neg = s[0] == 0x2D
        s = s[1:]
    if s == b"0":
        return 0
    if not s:
        raise invalid
    d = 0
    while s:
        # The next character must be [0-9.]
        if not (s[0] == 0x2E or _is_digit(s[0])):
            raise invalid
        # Consume [0-9]* (leadingInt)
        i = 0
        v = 0
        while i < len(s) and _is_digit(s[i]):
            if v > _MAX // 10:
                raise invalid
            v = v * 10 + (s[i] - 0x30)
            if v > _MAX:
                raise invalid
            i += 1
        pre = i > 0
        s = s[i:]
        # Consume (\.[0-9]*)? (leadingFraction: digits past int64 precision are dropped)
        post = False
        f, scale = 0, 1.0
        if s and s[0] == 0x2E:
            s = s[1:]
            i = 0
            overflow = False
            while i < len(s) and _is_digit(s[i]):
                if not overflow:
                    if f > (_MAX - 1) // 10:
                        overflow = True
                    else:
                        y = f * 10 + (s[i] - 0x30)
                        if y > _MAX:
                            overflow = True
                        else:
                            f = y
                            scale *= 10
                i += 1
            post = i > 0
            s = s[i:]
        if not pre and not post:
            raise invalid  # no digits, e.g. ".s" or "-.s"
        # Consume the unit: everything up to the next [0-9.]
        i = 0
        while i < len(s) and not (s[i] == 0x2E or _is_digit(s[i])):
            i += 1
        if i == 0:
            raise DurationError("time: missing unit in duration " + time_quote(orig))
        u, s = s[:i], s[i:]
        unit = _UNITS.get(u)
        if unit is None:
            raise DurationError("time: unknown unit " + time_quote(u) + " in duration " + time_quote(orig))
        if v > _MAX // unit:
            raise invalid
        v *= unit
        if f > 0:
            # float64 keeps this nanosecond-accurate for fractions of hours, as in Go.
            v += int(float(f) * (float(unit) / scale))
            if v > _MAX:
                raise invalid
        d += v
        if d > _MAX:
            raise invalid
    if neg:
        return -d
    if d > _MAX - 1:
        raise invalid
    return d


def _fmt_frac(v: int, prec: int) -> tuple[str, int]:
    """Go's ``fmtFrac``: the fraction of ``v / 10**prec`` without trailing zeros, and ``v // 10**prec``."""
    digits: list[str] = []
    printed = False
    for _ in range(prec):
        digit = v % 10
        printed = printed or digit != 0
        if printed:
            digits.append(str(digit))
        v //= 10
    if printed:
        return "." + "".join(reversed(digits)), v
    return "", v


def format_duration_ns(ns: int) -> str:
    """``time.Duration.String()`` of ``ns`` nanoseconds: ``72h3m0.5s``, ``1.5µs``, ``0s``."""
    ns = int(ns)
    neg = ns < 0
    u = -ns if neg else ns
    if u < SECOND:
        if u == 0:
            return "0s"
        if u < MICROSECOND:
            frac, whole, unit = "", u, "ns"
        elif u < MILLISECOND:
            frac, whole = _fmt_frac(u, 3)
            unit = "µs"
        else:
            frac, whole = _fmt_frac(u, 6)
            unit = "ms"
        out = f"{whole}{frac}{unit}"
    else:
        frac, u = _fmt_frac(u, 9)
        out = f"{u % 60}{frac}s"
        u //= 60
        if u > 0:
            out = f"{u % 60}m{out}"
            u //= 60
            if u > 0:
                out = f"{u}h{out}"
    return "-" + out if neg else out


class Duration(float):
    """A duration in seconds (a ``float``) that keeps exact nanoseconds and the text it came from.

    ``str(d)`` is Go's ``Duration.String()`` (``12h0m0s``); ``d.original`` is the configured text
    (``12h``) or ``None`` when the value was not parsed from text; ``d.nanoseconds`` is exact.
    Arithmetic gives plain floats; comparisons work against numbers of seconds.
    """

    nanoseconds: int
    original: str | None

    def __new__(cls, seconds: float = 0.0, *, nanoseconds: int | None = None, original: str | None = None):
        if nanoseconds is None:
            nanoseconds = round(float(seconds) * SECOND)
        self = super().__new__(cls, nanoseconds / SECOND)
        self.nanoseconds = int(nanoseconds)
        self.original = original
        return self

    @classmethod
    def parse(cls, text: str) -> Duration:
        return cls(nanoseconds=parse_duration_ns(text), original=text)

    @property
    def seconds(self) -> float:
        return float(self)

    def __str__(self) -> str:
        return format_duration_ns(self.nanoseconds)

    def __format__(self, spec: str) -> str:
        return str(self) if not spec else float.__format__(self, spec)

    def __repr__(self) -> str:
        return f"Duration({str(self)!r})"

    def __reduce__(self):
        return (_rebuild, (self.nanoseconds, self.original))


def _rebuild(nanoseconds: int, original: str | None) -> Duration:
    return Duration(nanoseconds=nanoseconds, original=original)


def parse_duration(text: str) -> Duration:
    """``time.ParseDuration`` as a :class:`Duration` (float seconds); raises :class:`DurationError`."""
    return Duration.parse(text)


def format_duration(seconds: float) -> str:
    """Go's ``Duration.String()`` for a number of seconds (exact for a :class:`Duration`)."""
    if isinstance(seconds, Duration):
        return format_duration_ns(seconds.nanoseconds)
    return format_duration_ns(round(float(seconds) * SECOND))
