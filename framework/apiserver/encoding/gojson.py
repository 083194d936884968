"""JSON syntax errors in the words of Go's ``encoding/json`` scanner.

kube-apiserver decodes bodies with Go's JSON decoder (``sigs.k8s.io/json``, a fork of
``encoding/json``), so a malformed body is answered with, e.g., ``couldn't get version/kind; json parse
error: invalid character 'x' looking for beginning of value``. Clients and tests compare these
texts; orjson's own messages differ. :func:`syntax_error` walks the document the way Go's scanner does
(``encoding/json/scanner.go``), with its nesting limit (``maxNestingDepth``), and reports the first
error it would report. The walk is iterative (a stack of open containers), so no document, however
deep, recurses here; strings and whitespace are skipped by regular expressions.
"""

from __future__ import annotations

import json
import re

from framework.meta.jsoncodec import MAX_DEPTH, allow_deep_values

_SPACE = b" \t\r\n"
_SPACES = re.compile(rb"[ \t\r\n]*")
# A well-formed string (the common case, skipped at once); anything else is walked byte by byte.
_GOOD_STRING = re.compile(rb'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"')
# A well-formed number not followed by what would continue it (a fraction or exponent gone wrong).
_GOOD_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?(?![.eE0-9])")
_LITERALS = (b"true", b"false", b"null")
_TYPE_NAMES = {str: "string", int: "number", float: "number", bool: "bool", list: "array", dict: "object"}
_OBJECT, _ARRAY = 0, 1


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
    def __init__(self, data: bytes, max_depth: int = MAX_DEPTH) -> None:
        self.data = data
        self.pos = 0
        self.max_depth = max_depth

    def _peek(self) -> int | None:
        return self.data[self.pos] if self.pos < len(self.data) else None

    def _skip_space(self) -> None:
        m = _SPACES.match(self.data, self.pos)
        assert m is not None  # ``*`` always matches
        self.pos = m.end()

    def _fail(self, context: str) -> _Error:
        c = self._peek()
        if c is None:
            return _Error(_END)
        return _Error(f"invalid character {_quote_char(c)} {context}")

    def value(self) -> None:
        """One JSON value and everything nested in it; ``stack`` holds the containers still open."""
        stack: list[int] = []
        while True:
            if self._begin_value(stack):
                continue  # a container opened: its first value (or key) comes next
            # A value ended: close the containers it ends, up to the next value (or the end).
            while stack:
                self._skip_space()
                c = self._peek()
                if c == ord(","):
                    self.pos += 1
                    if stack[-1] == _OBJECT:
                        self._key()
                    break
                if c == (ord("}") if stack[-1] == _OBJECT else ord("]")):
                    self.pos += 1
                    stack.pop()
                    continue
                raise self._fail(
                    "after object key:value pair" if stack[-1] == _OBJECT else "after array element"
                )
            else:
                return

    def _begin_value(self, stack: list[int]) -> bool:
        """Scan the start of a value: True if it opened a non-empty container, False if the value
        ended (a scalar or an empty container)."""
        self._skip_space()
        c = self._peek()
        if c is None:
            raise _Error(_END)
        if c in b"{[":
            self.pos += 1
            stack.append(_OBJECT if c == ord("{") else _ARRAY)
            if len(stack) > self.max_depth:
                raise _Error(f"invalid character {_quote_char(c)} exceeded max depth")
            self._skip_space()
            if self._peek() == (ord("}") if c == ord("{") else ord("]")):
                self.pos += 1
                stack.pop()
                return False
            if c == ord("{"):
                self._key()
            return True
        if c == ord('"'):
            self._string()
        elif c == ord("-") or ord("0") <= c <= ord("9"):
            self._number()
        elif c in b"tfn":
            self._literal()
        else:
            raise self._fail("looking for beginning of value")
        return False

    def _key(self) -> None:
        """An object key and its colon."""
        self._skip_space()
        if self._peek() != ord('"'):
            raise self._fail("looking for beginning of object key string")
        self._string()
        self._skip_space()
        if self._peek() != ord(":"):
            raise self._fail("after object key")
        self.pos += 1

    def _string(self) -> None:
        m = _GOOD_STRING.match(self.data, self.pos)
        if m is not None:
            self.pos = m.end()
            return
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
        m = _GOOD_NUMBER.match(self.data, self.pos)
        if m is not None:
            self.pos = m.end()
            return
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
        if self.data.startswith(_LITERALS, self.pos):
            self.pos += 4 if self.data[self.pos] != ord("f") else 5
            return
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


def _duplicate_paths(root: object) -> list[str]:
    """The repeated keys' paths, each object's before those of the values in it (document order);
    iterative, for documents nested up to Go's limit."""
    out: list[str] = []
    stack: list[tuple[object, str]] = [(root, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Object):
            out.extend(f"{path}.{k}" if path else k for k in dict.fromkeys(value.duplicates))
            children = [(v, f"{path}.{k}" if path else k) for k, v in value.items()]
        elif isinstance(value, list):
            children = [(v, f"{path}[{i}]") for i, v in enumerate(value)]
        else:
            continue
        stack.extend(reversed(children))
    return out


# A string token followed by a colon: in valid JSON, exactly the object keys.
_KEY_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"\s*:')


def _key_count(value: object) -> int:
    """How many keys the objects in ``value`` hold (iterative, as :func:`_duplicate_paths`)."""
    count = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            count += len(v)
            stack.extend(x for x in v.values() if isinstance(x, dict | list))
        elif isinstance(v, list):
            stack.extend(x for x in v if isinstance(x, dict | list))
    return count


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
    allow_deep_values()  # ``json`` recurses in C once per level (the value was bounded when decoded)
    return _duplicate_paths(json.loads(data, object_pairs_hook=_pairs))
