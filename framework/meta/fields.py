"""Field selectors: ``k8s.io/apimachinery/pkg/fields``.

:func:`parse` is ``fields.ParseSelector`` (terms split on unescaped commas and sorted, ``=``, ``==`` or
``!=`` each, values unescaped with Go's errors); :func:`selector_from_set` is ``SelectorFromSet``;
``str(selector)`` gives the query string back with values escaped (:func:`escape_value`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

__all__ = [
    "Requirement",
    "Selector",
    "as_selector",
    "escape_value",
    "parse",
    "selector_from_set",
    "unescape_value",
]

_OPERATORS = ("!=", "==", "=")  # the order splitTerm tries them at each position


class Requirement(NamedTuple):
    """One term: ``operator`` is ``=`` (``==`` is read as ``=``) or ``!=``."""

    field: str
    operator: str
    value: str

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_value(self.value)}"


class Selector:
    """``fields.Selector``: the AND of its requirements; a missing field compares as ``""``."""

    __slots__ = ("requirements",)

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        self.requirements = tuple(requirements)

    @property
    def empty(self) -> bool:
        """True when the selector matches everything."""
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all((fields.get(f, "") == v) == (op == "=") for f, op, v in self.requirements)

    def requires_exact_match(self, field: str) -> str | None:
        """``RequiresExactMatch``: the value an ``=`` term pins ``field`` to, if any."""
        return next((v for f, op, v in self.requirements if f == field and op == "="), None)

    def __str__(self) -> str:
        return ",".join(map(str, self.requirements))

    def __repr__(self) -> str:
        return f"Selector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Selector) and other.requirements == self.requirements

    def __hash__(self) -> int:
        return hash(self.requirements)


def escape_value(value: str) -> str:
    """``fields.EscapeValue``: backslash, comma and equals sign escaped."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_value(value: str) -> str:
    """``fields.UnescapeValue``; ``ValueError`` with Go's texts for a bad escape or a bare ``,``/``=``."""
    out, escaped = [], False
    for c in value:
        if escaped:
            if c not in "\\,=":
                raise ValueError(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in ",=":
            # Go prints the rune with %v, i.e. as its code point.
            raise ValueError(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if escaped:
        raise ValueError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not backslash-escaped, keeping the escapes."""
    terms, start, escaped = [], 0, False
    for i, c in enumerate(text):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """``splitTerm``: at the first position where an operator starts (the field cannot be escaped)."""
    for i in range(len(term)):
        for op in _OPERATORS:
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def parse(text: str | None) -> Selector:
    """``fields.ParseSelector``; ``""``/``None`` selects everything. Raises ``ValueError``."""
    requirements = []
    for term in sorted(_split_terms(text or "")):
        if not term:
            continue
        split = _split_term(term)
        if split is None:
            raise ValueError(f"invalid selector: '{text}'; can't understand '{term}'")
        field, op, value = split
        requirements.append(Requirement(field, "!=" if op == "!=" else "=", unescape_value(value)))
    return Selector(requirements)


def selector_from_set(fields: Mapping[str, str] | None) -> Selector:
    """``fields.SelectorFromSet``: every field equal to its value (sorted by field)."""
    return Selector(Requirement(f, "=", v) for f, v in sorted((fields or {}).items()))


def as_selector(value: str | Mapping[str, str] | Selector | None) -> Selector:
    """A selector from a string, a ``{field: value}`` map of exact matches, a Selector or ``None``."""
    if value is None:
        return Selector()
    if isinstance(value, Selector):
        return value
    if isinstance(value, str):
        return parse(value)
    if isinstance(value, Mapping):
        return selector_from_set(value)
    raise TypeError(f"a field selector must be a string or a mapping, not {type(value).__name__}")
