"""JSON in and out for values a client may have nested deeply: orjson where it can, Go's limit beyond.

Go's ``encoding/json`` (and ``sigs.k8s.io/json``, which kube-apiserver and client-go decode with)
accepts nesting up to ``maxNestingDepth`` = 10,000 levels (``encoding/json/scanner.go``) and refuses a
deeper document with ``invalid character '[' exceeded max depth``; its encoder has no depth limit. So a
custom resource with 10,000 levels of ``x-kubernetes-preserve-unknown-fields`` data is stored, listed
and watched by kube-apiserver. orjson refuses to decode beyond 1,024 levels and to encode beyond 254,
so every decode and encode of such data goes through :func:`loads` / :func:`dumps` here: orjson first
(the fast path every ordinary object takes), and only when orjson refuses for depth the standard
library's C codec, after an iterative scan has bounded the depth (:func:`too_deep`), so nothing deeper
than the limit ever reaches a recursive C routine.

The standard library's codec recurses in C, guarded by the interpreter's recursion limit (1,000 by
default): :func:`allow_deep_values` raises it. See its docstring for why that is safe.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import orjson

__all__ = [
    "DEEP_RECURSION_LIMIT",
    "MAX_DEPTH",
    "WRAPPED_MAX_DEPTH",
    "DepthError",
    "allow_deep_values",
    "copy",
    "dumps",
    "is_depth_error",
    "loads",
    "too_deep",
]

MAX_DEPTH = 10_000
"""Go's ``maxNestingDepth``: the deepest JSON document ``encoding/json`` decodes."""

WRAPPED_MAX_DEPTH = MAX_DEPTH + 8
"""The depth a client (or webhook) accepts: objects of :data:`MAX_DEPTH` levels inside the few levels a
List, watch event, Table or AdmissionReview adds around them."""

DEEP_RECURSION_LIMIT = 40_000
"""The recursion limit :func:`allow_deep_values` sets (see there)."""

_I64_MIN, _U64_MAX = -(1 << 63), (1 << 64) - 1
# A JSON string (the unrolled form: fast in ``re``); what remains of a document without its strings
# holds every bracket that nests.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_OPEN = frozenset(b"[{")
_CHUNK = 4096
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class DepthError(orjson.JSONDecodeError):
    """A document nested deeper than the limit, in Go's words (``invalid character '[' exceeded max
    depth``). An ``orjson.JSONDecodeError``, so callers that handle syntax errors handle it too."""


def allow_deep_values() -> None:
    """Raise the interpreter's recursion limit to :data:`DEEP_RECURSION_LIMIT` (never lower it).

    Values nested up to :data:`MAX_DEPTH` levels (plus the few levels of a List, watch event or Table
    around them) are decoded, encoded, compared and copied by recursive code: ``json``'s C codec,
    ``==``, ``copy.deepcopy`` and this project's own walkers (pruning, defaulting, managed fields),
    which take one to three Python frames per level. The default limit of 1,000 fails them all.

    Why 40,000 is safe (measured on CPython 3.11 with the default 8 MiB thread stack): Python-to-Python
    calls use no C stack in 3.11, so deep pure-Python recursion costs heap only; the C routines above
    take about 100-200 bytes of stack per level and run 40,000 levels in a thread (they crash near
    80,000), so the limit stops them with a ``RecursionError`` well before the stack ends. Recursion
    through C-called Python code (a generator inside ``sum``/``any``) takes about 450 bytes per level
    and would crash near 18,000 levels: no data reaches that depth, because every decode caps it at
    :data:`MAX_DEPTH`, and the walkers on deep data avoid that pattern.
    """
    if sys.getrecursionlimit() < DEEP_RECURSION_LIMIT:
        sys.setrecursionlimit(DEEP_RECURSION_LIMIT)


def too_deep(data: bytes, limit: int = MAX_DEPTH) -> str | None:
    """The bracket (``[`` or ``{``) that opens nesting level ``limit + 1`` of the JSON text ``data``,
    or None if it nests no deeper than ``limit``. Iterative and mostly C-speed: strings are cut out by
    a regular expression, the brackets kept, and only the 4 KiB chunks that could cross the limit are
    walked byte by byte. Brackets of an unterminated string count (the text is invalid anyway)."""
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    depth = 0
    for start in range(0, len(brackets), _CHUNK):
        chunk = brackets[start : start + _CHUNK]
        opens = chunk.count(b"[") + chunk.count(b"{")
        if depth + opens <= limit:
            depth += 2 * opens - len(chunk)
            continue
        for c in chunk:
            if c in _OPEN:
                depth += 1
                if depth > limit:
                    return chr(c)
            else:
                depth -= 1
    return None


def is_depth_error(e: Exception) -> bool:
    """Whether orjson refused to decode or encode for nesting depth (its limits are below Go's)."""
    text = str(e)
    return "depth limit" in text or "Recursion limit" in text


def loads(data: bytes | bytearray | memoryview | str, max_depth: int = MAX_DEPTH) -> Any:
    """Decode JSON as ``orjson.loads`` does, but up to ``max_depth`` levels (Go's limit by default)
    rather than orjson's 1,024. Raises ``orjson.JSONDecodeError`` for invalid JSON and
    :class:`DepthError` (one of those) beyond ``max_depth``."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        if not is_depth_error(e):
            raise
    raw = data.encode() if isinstance(data, str) else bytes(data)
    bracket = too_deep(raw, max_depth)
    if bracket is not None:
        raise DepthError(f"invalid character '{bracket}' exceeded max depth", raw.decode(errors="replace"), 0)
    return _loads_deep(raw)


def _big_int(text: str) -> int | float:
    value = int(text)
    # orjson's (and Go's float64 fallback's) answer for integers no 64-bit type holds.
    return value if _I64_MIN <= value <= _U64_MAX else float(text)


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError("number is infinity when parsed as double")
    return value


def _constant(name: str) -> Any:
    raise ValueError(f"unexpected character, expected a JSON value: {name}")


def _loads_deep(raw: bytes) -> Any:
    """``json.loads`` with orjson's rules (strict UTF-8, no NaN/Infinity, no lone surrogates, 64-bit
    integers) for a document already known to nest no deeper than the limit."""
    allow_deep_values()
    try:
        text = raw.decode()  # strict: invalid UTF-8 and encoded surrogates are refused, as orjson does
        value = json.loads(text, parse_int=_big_int, parse_float=_finite, parse_constant=_constant)
        if _SURROGATE_ESCAPE.search(raw):
            # A ``\\ud800`` escape without its pair decodes to a lone surrogate, which orjson refuses
            # (and could never encode back): check the decoded value as a whole, at C speed.
            json.dumps(value, ensure_ascii=False).encode()
    except json.JSONDecodeError as e:
        raise orjson.JSONDecodeError(e.msg, e.doc, e.pos) from None
    except (ValueError, RecursionError) as e:  # UnicodeError is a ValueError
        raise orjson.JSONDecodeError(str(e), raw.decode(errors="replace"), 0) from None
    return value


def dumps(value: Any, *, sort_keys: bool = False, newline: bool = False) -> bytes:
    """``orjson.dumps`` (``OPT_SORT_KEYS``, ``OPT_APPEND_NEWLINE`` by the flags), and for values
    nested deeper than orjson encodes (254 levels) the same compact text from the ``json`` module."""
    option = (orjson.OPT_SORT_KEYS if sort_keys else 0) | (orjson.OPT_APPEND_NEWLINE if newline else 0)
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError as e:
        if not is_depth_error(e):
            raise
    allow_deep_values()
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    return text.encode() + (b"\n" if newline else b"")


def copy(value: Any) -> Any:
    """A deep copy of a JSON value (an orjson round trip: faster than ``copy.deepcopy``); deep values
    take the ``json`` module's round trip, unbounded: the value was bounded when it was decoded."""
    try:
        return orjson.loads(orjson.dumps(value))
    except orjson.JSONEncodeError as e:
        if not is_depth_error(e):
            raise
    allow_deep_values()
    return json.loads(json.dumps(value, ensure_ascii=False))
