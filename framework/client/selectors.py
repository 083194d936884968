"""Selector arguments of :class:`~framework.client.interfaces.Reader` (strings, label maps,
``LabelSelector`` dicts, field maps): the query strings the API server reads, and the exact field
matches the cache answers from an index. Label selectors are :mod:`framework.meta.labels`'."""

from __future__ import annotations

from collections.abc import Mapping

from framework.meta import fields, labels

from .interfaces import FieldSelectorArg, LabelSelectorArg

__all__ = [
    "escape_field_value",
    "exact_field_matches",
    "field_selector_string",
    "label_selector_string",
]


def label_selector_string(arg: LabelSelectorArg) -> str | None:
    """The ``labelSelector`` query parameter for ``arg`` (``None``/empty: everything). A string is
    sent as is, so the server judges its syntax (``BadRequest``); a map is formatted here."""
    if arg is None or isinstance(arg, str):
        return arg or None
    return str(labels.as_selector(arg)) or None


def escape_field_value(value: str) -> str:
    """``fields.EscapeValue``: backslash, comma and equals sign escaped for a field selector."""
    return fields.escape_value(value)


def field_selector_string(arg: FieldSelectorArg) -> str | None:
    """The ``fieldSelector`` query parameter for ``arg`` (a map means exact matches, values escaped)."""
    if arg is None or isinstance(arg, str):
        return arg or None
    if not isinstance(arg, Mapping):
        raise TypeError(f"field_selector must be a string or a mapping, not {type(arg).__name__}")
    return str(fields.selector_from_set(arg)) or None


def exact_field_matches(arg: FieldSelectorArg) -> dict[str, str]:
    """``field -> value`` of a selector made only of exact matches (``fields.RequiresExactMatch``,
    what a cache can answer from an index); ``!=`` or malformed terms raise ``ValueError``."""
    if arg is None or isinstance(arg, Mapping):
        return dict(arg or {})
    out: dict[str, str] = {}
    for field, op, value in fields.parse(arg).requirements:
        if op == "!=":
            raise ValueError(f"field selector {arg!r}: the cache answers only exact matches (= or ==)")
        if out.get(field, value) != value:
            raise ValueError(f"field selector {arg!r} asks for two values of {field}")
        out[field] = value
    return out
