"""Label and field selectors of list and watch requests (spec 14-1, 14-2).

Label selectors are :mod:`framework.meta.labels`' (``pkg/labels/selector.go``); field selectors
follow ``pkg/fields/selector.go``. Parse errors are ``400 BadRequest``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping

from framework.meta import labels
from framework.meta.labels import Selector
from framework.testing.apiserver.errors import bad_request

# --- label selectors: framework.meta.labels, answered as 400 --------------------------------------


def parse_label_selector(text: str | None) -> Selector:
    """Parse a ``labelSelector`` query parameter; syntax or validation errors are 400 BadRequest."""
    try:
        return labels.parse(text)
    except ValueError as e:
        raise bad_request(str(e)) from None


# --- field selectors ------------------------------------------------------------------------------

# The first operator occurrence splits a term; the field itself cannot be escaped.
_FIELD_TERM = re.compile(r"(.*?)(!=|==|=)(.*)", re.DOTALL)


class FieldSelector:
    """A field selector: the AND of ``(field, op, value)`` requirements, ``op`` being ``=`` or ``!=``."""

    __slots__ = ("requirements",)

    def __init__(self, requirements: Iterable[tuple[str, str, str]] = ()) -> None:
        self.requirements = tuple(requirements)

    @property
    def empty(self) -> bool:
        """True when the selector matches everything."""
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether an object with these field values is selected; a missing field is ``""``."""
        return all((fields.get(f, "") == v) == (op == "=") for f, op, v in self.requirements)


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not backslash-escaped, keeping escapes for :func:`_unescape`."""
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


def _unescape(value: str) -> str:
    out, escaped = [], False
    for c in value:
        if escaped:
            if c not in "\\,=":
                raise bad_request(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in ",=":
            # Go prints the rune with %v, i.e. as its code point.
            raise bad_request(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if escaped:
        raise bad_request("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_field_selector(text: str | None, allowed: Collection[str], own_rules: bool = True) -> FieldSelector:
    """Parse a ``fieldSelector`` query parameter; terms are sorted, as upstream does.

    Syntax errors and fields not in ``allowed`` are 400 BadRequest. ``own_rules``: the kind has its
    own field-label conversion (``field label not supported: F``); kinds without one get apimachinery's
    ``DefaultMetaV1FieldSelectorConversion`` message.
    """
    requirements = []
    for term in sorted(_split_terms(text or "")):
        if not term:
            continue
        match = _FIELD_TERM.fullmatch(term)
        if match is None:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{term}'")
        field, op, value = match.groups()
        requirements.append((field, "!=" if op == "!=" else "=", _unescape(value)))
    for field, _, _ in requirements:
        if field not in allowed:
            if own_rules:
                raise bad_request(f"field label not supported: {field}")
            raise bad_request(
                f'"{field}" is not a known field selector: only "metadata.name", "metadata.namespace"'
            )
    return FieldSelector(requirements)


def single_name(selector: FieldSelector) -> str | None:
    """The name a selector pins with ``metadata.name=X`` (``RequiresExactMatch``), if any."""
    return next((v for f, op, v in selector.requirements if f == "metadata.name" and op == "="), None)
