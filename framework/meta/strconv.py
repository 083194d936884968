"""Go's ``strconv.ParseBool`` and ``strconv.Atoi``, as Kubernetes code reads annotation values, and Go's
two ways of quoting a string in a message.

Both parsers raise :class:`ValueError` with Go's ``*strconv.NumError`` text; :func:`is_true` is the
common "set to a true value" check (anything unparsable is false). :func:`quote` is ``strconv.Quote``
(``%q``), the quoting of field errors and most Kubernetes messages; :func:`time_quote` is the ``time``
package's own quoting in its parse errors (``time: invalid duration "1x"``, ``parsing time "..."``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["atoi", "is_true", "parse_bool", "quote", "time_quote"]

_TRUE = frozenset(("1", "t", "T", "TRUE", "true", "True"))
_FALSE = frozenset(("0", "f", "F", "FALSE", "false", "False"))
_INT = re.compile(r"[+-]?[0-9]+")
_CONTROL_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def quote(s: str) -> str:
    """Go's ``strconv.Quote`` (``%q`` of a string): double quotes; ``\\"`` and ``\\\\``; ``\\n``-style escapes
    for the C control characters, ``\\xNN`` for the other ASCII controls and DEL, ``\\uNNNN``/``\\UNNNNNNNN``
    for non-printable non-ASCII characters; printable characters (Go's ``unicode.IsPrint``, which is
    Python's :meth:`str.isprintable`) as they are."""
    out = ['"']
    for ch in s:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch in _CONTROL_ESCAPES:
            out.append(_CONTROL_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) >= 0x80 and not ch.isprintable():
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def time_quote(s: str | bytes) -> str:
    """Go's ``time.quote`` (``time/format.go``), how ``time`` quotes what it could not parse: double
    quotes, ``\\"`` and ``\\\\``, and ``\\xNN`` for every byte of a control or non-ASCII character (UTF-8;
    ``bytes`` are quoted byte by byte)."""
    data = s if isinstance(s, bytes) else s.encode("utf-8", "surrogatepass")
    out = ['"']
    for b in data:
        if b >= 0x80 or b < 0x20:
            out.append(f"\\x{b:02x}")
        elif b in (0x22, 0x5C):  # '"' and '\\'
            out.append("\\" + chr(b))
        else:
            out.append(chr(b))
    out.append('"')
    return "".join(out)


def parse_bool(value: str) -> bool:
    """``strconv.ParseBool``: ``1 t T TRUE true True`` / ``0 f F FALSE false False``, else ValueError."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"strconv.ParseBool: parsing {quote(value)}: invalid syntax")


def is_true(value: Any) -> bool:
    """Whether ``value`` is a string ``strconv.ParseBool`` reads as true (unset or invalid: false)."""
    return isinstance(value, str) and value in _TRUE


def atoi(value: str) -> int:
    """``strconv.Atoi``: an optional sign and decimal digits within int64, else ValueError."""
    if not isinstance(value, str) or not _INT.fullmatch(value):
        raise ValueError(f"strconv.Atoi: parsing {quote(str(value))}: invalid syntax")
    number = int(value)
    if not -(2**63) <= number < 2**63:
        raise ValueError(f"strconv.Atoi: parsing {quote(value)}: value out of range")
    return number
