"""cel-go's ext.Strings at version 2, as Kubernetes 1.29+ has it: charAt, indexOf, lastIndexOf,
lowerAscii, upperAscii, replace, split, substring, trim, join, strings.quote and format.

Written here rather than taken from cel-cpp's strings extension because that one also declares
``indexOf``/``lastIndexOf``, which the Kubernetes lists library overloads on lists. Indexes count
code points, as cel-go's do."""

from __future__ import annotations

import datetime
import math
from typing import Any

from cel_expr_python import cel

from framework.apiserver.cel.library.common import function, overload
from framework.apiserver.cel.types import value_type_name

_S = cel.Type.STRING
_I = cel.Type.INT
_LS = cel.Type.List(cel.Type.STRING)


def _index_error(i: int) -> ValueError:
    return ValueError(f"index out of range: {i}")


def char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise _index_error(i)
    return s[i : i + 1]


def index_of(s: str, sub: str, offset: int = 0) -> int:
    if offset < 0 or offset > len(s):
        raise _index_error(offset)
    return s.find(sub, offset)


def last_index_of(s: str, sub: str, offset: int | None = None) -> int:
    if offset is None:
        return s.rfind(sub)
    if offset < 0 or offset > len(s):
        raise _index_error(offset)
    return s.rfind(sub, 0, offset + len(sub))


def lower_ascii(s: str) -> str:
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in s)


def upper_ascii(s: str) -> str:
    return "".join(c.upper() if "a" <= c <= "z" else c for c in s)


def replace(s: str, old: str, new: str, n: int = -1) -> str:
    if n < 0:
        return s.replace(old, new)
    if old == "":
        # Go: an empty old string matches at the start and after each code point.
        parts = [new + c for c in s[:n]]
        rest = s[n:] if n <= len(s) else ""
        out = "".join(parts) + rest
        return out + new if n > len(s) else out
    return s.replace(old, new, n)


def split(s: str, sep: str, n: int = -1) -> list[str]:
    """Go's strings.SplitN."""
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if 0 < n < len(chars):
            return [*chars[: n - 1], "".join(chars[n - 1 :])]
        return chars
    return s.split(sep, n - 1 if n > 0 else -1)


def substring(s: str, start: int, end: int | None = None) -> str:
    if end is None:
        if start < 0 or start > len(s):
            raise _index_error(start)
        return s[start:]
    if start < 0 or start > len(s):
        raise _index_error(start)
    if end < 0 or end > len(s):
        raise _index_error(end)
    if start > end:
        raise ValueError(f"invalid substring range. start: {start}, end: {end}")
    return s[start:end]


# Go's unicode.IsSpace.
_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def trim(s: str) -> str:
    return s.strip(_SPACE)


def join(items: list[str], sep: str = "") -> str:
    return sep.join(items)


_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def quote(s: str) -> str:
    out = ['"']
    for c in s:
        if c == "\\":
            out.append("\\\\")
        elif c == '"':
            out.append('\\"')
        elif c in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[c])
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _format_double(v: float, precision: int, spec: str) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return f"{v:.{precision}{spec}}"


def _to_string(v: Any, nested: bool = False) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, str):
        return quote(v) if nested else v
    if isinstance(v, (bytes, bytearray)):
        text = bytes(v).decode("utf-8", errors="replace")
        return quote(text) if nested else text
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_to_string(x, True) for x in v) + "]"
    if isinstance(v, dict):
        items = sorted(v.items(), key=lambda kv: _to_string(kv[0], True))
        return "{" + ", ".join(f"{_to_string(k, True)}: {_to_string(x, True)}" for k, x in items) + "}"
    if isinstance(v, datetime.datetime):
        return (
            v.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S")
            + (f".{v.microsecond:06d}".rstrip("0") if v.microsecond else "")
            + "Z"
        )
    if isinstance(v, datetime.timedelta):
        secs = v.total_seconds()
        return (str(int(secs)) if secs == int(secs) else repr(secs)) + "s"
    if hasattr(v, "value") and hasattr(v, "DESCRIPTOR"):
        return str(v.value)
    return str(v)


def _format_error(msg: str) -> ValueError:
    return ValueError(f"error during formatting: {msg}")


def format_(fmt: str, args: list[Any]) -> str:
    out: list[str] = []
    i = 0
    argi = 0
    n = len(fmt)
    while i < n:
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= n:
            raise _format_error("unexpected end of format string")
        if fmt[i] == "%":
            out.append("%")
            i += 1
            continue
        precision = None
        if fmt[i] == ".":
            j = i + 1
            while j < n and fmt[j].isdigit():
                j += 1
            precision = int(fmt[i + 1 : j] or "0")
            i = j
            if i >= n:
                raise _format_error("unexpected end of format string")
        verb = fmt[i]
        i += 1
        if argi >= len(args):
            raise _format_error(f"index {argi} out of range")
        arg = args[argi]
        argi += 1
        out.append(_format_one(verb, arg, precision))
    return "".join(out)


def _format_one(verb: str, arg: Any, precision: int | None) -> str:
    if verb == "s":
        return _to_string(arg)
    if verb == "d":
        if isinstance(arg, bool) or not isinstance(arg, int):
            given = value_type_name(arg)
            raise _format_error("decimal clause can only be used on integers, was given " + given)
        return str(arg)
    if verb in "fe":
        if isinstance(arg, bool) or not isinstance(arg, (int, float)):
            raise _format_error(
                ("fixed-point" if verb == "f" else "scientific")
                + " clause can only be used on doubles, was given "
                + value_type_name(arg)
            )
        return _format_double(float(arg), 6 if precision is None else precision, verb)
    if verb in "xX":
        if isinstance(arg, bool):
            raise _format_error(
                "only integers, byte buffers, and strings can be formatted as hex, was given bool"
            )
        if isinstance(arg, int):
            text = format(arg, "x") if arg >= 0 else "-" + format(-arg, "x")
        elif isinstance(arg, str):
            text = arg.encode().hex()
        elif isinstance(arg, (bytes, bytearray)):
            text = bytes(arg).hex()
        else:
            raise _format_error(
                "only integers, byte buffers, and strings can be formatted as hex, was given "
                + value_type_name(arg)
            )
        return text.upper() if verb == "X" else text
    if verb == "o":
        if isinstance(arg, bool) or not isinstance(arg, int):
            given = value_type_name(arg)
            raise _format_error("octal clause can only be used on integers, was given " + given)
        return format(arg, "o") if arg >= 0 else "-" + format(-arg, "o")
    if verb == "b":
        if isinstance(arg, bool):
            return "1" if arg else "0"
        if not isinstance(arg, int):
            raise _format_error(
                "only integers and bools can be formatted as binary, was given " + value_type_name(arg)
            )
        return format(arg, "b") if arg >= 0 else "-" + format(-arg, "b")
    raise _format_error(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')


def declarations() -> list[tuple[str, list[Any]]]:
    m = True
    return [
        function("charAt", overload("string_char_at_int", _S, [_S, _I], char_at, member=m)),
        function(
            "indexOf",
            overload("string_index_of_string", _I, [_S, _S], index_of, member=m),
            overload("string_index_of_string_int", _I, [_S, _S, _I], index_of, member=m),
        ),
        function(
            "lastIndexOf",
            overload("string_last_index_of_string", _I, [_S, _S], last_index_of, member=m),
            overload("string_last_index_of_string_int", _I, [_S, _S, _I], last_index_of, member=m),
        ),
        function("lowerAscii", overload("string_lower_ascii", _S, [_S], lower_ascii, member=m)),
        function("upperAscii", overload("string_upper_ascii", _S, [_S], upper_ascii, member=m)),
        function(
            "replace",
            overload("string_replace_string_string", _S, [_S, _S, _S], replace, member=m),
            overload("string_replace_string_string_int", _S, [_S, _S, _S, _I], replace, member=m),
        ),
        function(
            "split",
            overload("string_split_string", _LS, [_S, _S], split, member=m),
            overload("string_split_string_int", _LS, [_S, _S, _I], split, member=m),
        ),
        function(
            "substring",
            overload("string_substring_int", _S, [_S, _I], substring, member=m),
            overload("string_substring_int_int", _S, [_S, _I, _I], substring, member=m),
        ),
        function("trim", overload("string_trim", _S, [_S], trim, member=m)),
        function(
            "join",
            overload("list_join", _S, [_LS], join, member=m),
            overload("list_join_string", _S, [_LS, _S], join, member=m),
        ),
        function("strings.quote", overload("strings_quote", _S, [_S], quote)),
        function(
            "format", overload("string_format", _S, [_S, cel.Type.List(cel.Type.DYN)], format_, member=m)
        ),
    ]
