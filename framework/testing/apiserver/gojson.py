"""JSON syntax errors in the words of Go's ``encoding/json`` scanner.

kube-apiserver decodes bodies with Go's JSON decoder (``sigs.k8s.io/json``, a fork of
``encoding/json``), so a malformed body is answered with, e.g., ``couldn't get version/kind; json parse
error: invalid character 'x' looking for beginning of value``. Clients and tests compare these
texts; orjson's own messages differ. :func:`syntax_error` walks the document the way Go's scanner does
(``encoding/json/scanner.go``) and reports the first error it would report.
"""

from __future__ import annotations

import json
import re

_SPACE = b" \t\r\n"
_TYPE_NAMES = {str: "string", int: "number", float: "number", bool: "bool", list: "array", dict: "object"}


def json_type(value: object) -> str:
    """How ``json: cannot unmarshal X into ...`` names the JSON type of ``value``."""
    return _TYPE_NAMES.get(type(value), "null" if value is None else "value")


_END = "unexpected end of JSON input"


def _quote_char(c: int) -> str:
    """``quoteChar``: the offending byte as Go prints it."""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    ch = chr(c)
    if ch.isprintable() and c < 0x80:
        return f"'{ch}'"
    return "'" + {0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}.get(c, f"\\x{c:02x}") + "'"


class _Error(Exception):
    pass


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _peek(self) -> int | None:
        return self.data[self.pos] if self.pos < len(self.data) else None

    def _skip_space(self) -> None:
        while self.pos < len(self.data) and self.data[self.pos] in _SPACE:
            self.pos += 1

    def _fail(self, context: str) -> _Error:
        c = self._peek()
        if c is None:
            return _Error(_END)
        return _Error(f"invalid character {_quote_char(c)} {context}")

    def value(self) -> None:
        self._skip_space()
        c = self._peek()
        if c is None:
            raise _Error(_END)
        if c == ord("{"):
            self._object()
        elif c == ord("["):
            self._array()
        elif c == ord('"'):
            self._string()
        elif c == ord("-") or ord("0") <= c <= ord("9"):
            self._number()
        elif c in b"tfn":
            self._literal()
        else:
            raise self._fail("looking for beginning of value")

    def _object(self) -> None:
        self.pos += 1
        self._skip_space()
        if self._peek() == ord("}"):
            self.pos += 1
            return
        while True:
            self._skip_space()
            if self._peek() != ord('"'):
                raise self._fail("looking for beginning of object key string")
            self._string()
            self._skip_space()
            if self._peek() != ord(":"):
                raise self._fail("after object key")
            self.pos += 1
            self.value()
            self._skip_space()
            c = self._peek()
            if c == ord(","):
                self.pos += 1
                continue
            if c == ord("}"):
                self.pos += 1
                return
            raise self._fail("after object key:value pair")

    def _array(self) -> None:
        self.pos += 1
        self._skip_space()
        if self._peek() == ord("]"):
            self.pos += 1
            return
        while True:
            self.value()
            self._skip_space()
            c = self._peek()
            if c == ord(","):
                self.pos += 1
                continue
            if c == ord("]"):
                self.pos += 1
                return
            raise self._fail("after array element")

    def _string(self) -> None:
        self.pos += 1
        while True:
            c = self._peek()
            if c is None:
                raise _Error(_END)
            self.pos += 1
            if c == ord('"'):
                return
            if c == ord("\\"):
                e = self._peek()
                if e is None:
                    raise _Error(_END)
                if e in b'"\\/bfnrt':
                    self.pos += 1
                elif e == ord("u"):
                    self.pos += 1
                    for _ in range(4):
                        h = self._peek()
                        if h is None:
                            raise _Error(_END)
                        if chr(h) not in "0123456789abcdefABCDEF":
                            raise self._fail("in \\u hexadecimal character escape")
                        self.pos += 1
                else:
                    raise self._fail("in string escape code")
            elif c < 0x20:
                self.pos -= 1
                raise self._fail("in string literal")

    def _digits(self) -> int:
        start = self.pos
        while (c := self._peek()) is not None and ord("0") <= c <= ord("9"):
            self.pos += 1
        return self.pos - start

    def _number(self) -> None:
        if self._peek() == ord("-"):
            self.pos += 1
            c = self._peek()
            if c is None:
                raise _Error(_END)
            if not ord("0") <= c <= ord("9"):
                raise self._fail("in numeric literal")
        if self._peek() == ord("0"):
            self.pos += 1
        else:
            self._digits()
        if self._peek() == ord("."):
            self.pos += 1
            if self._peek() is None:
                raise _Error(_END)
            if not self._digits():
                raise self._fail("after decimal point in numeric literal")
        if (c := self._peek()) is not None and c in b"eE":
            self.pos += 1
            if (c := self._peek()) is not None and c in b"+-":
                self.pos += 1
            if self._peek() is None:
                raise _Error(_END)
            if not self._digits():
                raise self._fail("in exponent of numeric literal")

    def _literal(self) -> None:
        word = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}[self.data[self.pos]]
        name = word.decode()
        self.pos += 1
        for expected in word[1:]:
            c = self._peek()
            if c is None:
                raise _Error(_END)
            if c != expected:
                raise self._fail(f"in literal {name} (expecting {_quote_char(expected)})")
            self.pos += 1


def syntax_error(data: bytes) -> str | None:
    """Go's error text for the first syntax error in ``data``; None if it is valid JSON syntax."""
    s = _Scanner(data)
    try:
        s.value()
        s._skip_space()
        if s._peek() is not None:
            raise s._fail("after top-level value")
    except _Error as e:
        return str(e)
    return None


def error_text(data: bytes, fallback: Exception) -> str:
    """Go's text for why ``data`` does not parse, or ``fallback``'s when Go would see no syntax error
    (e.g. invalid UTF-8 or a number orjson cannot hold)."""
    return syntax_error(data) or str(fallback)


class _Object(dict):
    """A JSON object that remembers the keys its text repeats (Go's decoder keeps the last value)."""

    duplicates: list[str]


def _pairs(pairs: list[tuple[str, object]]) -> _Object:
    obj = _Object(pairs)
    seen: set[str] = set()
    obj.duplicates = [k for k, _ in pairs if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
    return obj


def _duplicate_paths(value: object, path: str, out: list[str]) -> None:
    if isinstance(value, _Object):
        out.extend(f"{path}.{k}" if path else k for k in dict.fromkeys(value.duplicates))
        for k, v in value.items():
            _duplicate_paths(v, f"{path}.{k}" if path else k, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _duplicate_paths(v, f"{path}[{i}]", out)


# A string token followed by a colon: in valid JSON, exactly the object keys.
_KEY_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"\s*:')


def _key_count(value: object) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_key_count(v) for v in value.values() if isinstance(v, (dict, list)))
    if isinstance(value, list):
        return sum(_key_count(v) for v in value if isinstance(v, (dict, list)))
    return 0


def _may_repeat_keys(data: bytes, parsed: object) -> bool:
    """False when the text of ``parsed`` cannot hold more keys than ``parsed`` kept. Each key is
    followed by one colon outside strings, so a text with no more colons than kept keys repeats none;
    otherwise the key tokens are counted exactly. Cheap next to the pairs-keeping parse."""
    keys = _key_count(parsed)
    return data.count(b":") > keys and len(_KEY_TOKEN.findall(data)) > keys


def duplicate_fields(data: bytes, parsed: object = None) -> list[str]:
    """The paths of the object keys ``data`` (valid JSON) repeats, as sigs.k8s.io/json's strict mode
    names them (``duplicate field "metadata.name"``), in document order. ``parsed``, the value already
    decoded from ``data``, lets a body that repeats nothing skip the second, slow parse."""
    if parsed is not None and not _may_repeat_keys(data, parsed):
        return []
    out: list[str] = []
    _duplicate_paths(json.loads(data, object_pairs_hook=_pairs), "", out)
    return out
