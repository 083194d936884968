"""Declared types of CEL variables (k8s.io/apiserver/pkg/cel's ``DeclType``, reduced to what the
engine needs): the CEL type the checker sees and, for lists, maps and strings, the most elements a
value can have, which the cost estimate multiplies by (the reason ``maxItems``/``maxLength`` matter).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Type names as CEL prints them.
DYN = "dyn"
BOOL = "bool"
INT = "int"
UINT = "uint"
DOUBLE = "double"
STRING = "string"
BYTES = "bytes"
TIMESTAMP = "google.protobuf.Timestamp"
DURATION = "google.protobuf.Duration"
LIST = "list"
MAP = "map"
OBJECT = "object"


@dataclass(frozen=True, eq=False)
class DeclType:
    """The type of a variable or of a part of it.

    ``name`` is one of the constants above. ``elem`` is a list's element or a map's value type
    (maps have string keys). ``fields`` are an object's known properties; an object is a
    ``map(string, dyn)`` to the checker (fields are not checked at compile time), the field types
    serve the cost estimate. ``max_elements`` bounds a list's items, a map's entries or a string's
    or bytes' length (``None``: bounded only by the request size, see ``cost``).
    ``min_serialized_size`` is the fewest JSON bytes one value takes (the request-size bound of a
    list of them divides by it).
    """

    name: str
    elem: DeclType | None = None
    fields: Mapping[str, DeclType] = field(default_factory=dict)
    max_elements: int | None = None
    min_serialized_size: int = 1
    # property name -> the field name rules use, where they differ (``escape``)
    escapes: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def list_of(elem: DeclType, max_items: int | None = None) -> DeclType:
        return DeclType(LIST, elem=elem, max_elements=max_items, min_serialized_size=2)

    @staticmethod
    def map_of(value: DeclType, max_properties: int | None = None) -> DeclType:
        return DeclType(MAP, elem=value, max_elements=max_properties, min_serialized_size=2)

    @staticmethod
    def object_of(fields: Mapping[str, DeclType], max_properties: int | None = None) -> DeclType:
        """An object with these properties; rules name each by ``escape(name)`` (a property whose
        name cannot be escaped is left out of the type)."""
        escaped: dict[str, DeclType] = {}
        escapes: dict[str, str] = {}
        for name, t in fields.items():
            e = escape(name)
            if e is None:
                continue
            escaped[e] = t
            if e != name:
                escapes[name] = e
        return DeclType(
            OBJECT, fields=escaped, max_elements=max_properties, min_serialized_size=2, escapes=escapes
        )

    @staticmethod
    def string(max_length: int | None = None) -> DeclType:
        return DeclType(STRING, max_elements=max_length, min_serialized_size=2)

    def cel_signature(self) -> str:
        """The type as the CEL checker declares it."""
        if self.name == LIST:
            return f"list({(self.elem or DYN_TYPE).cel_signature()})"
        if self.name == MAP:
            return f"map(string, {(self.elem or DYN_TYPE).cel_signature()})"
        if self.name == OBJECT:
            return "map(string, dyn)"
        return self.name


# k8s.io/apiserver/pkg/cel/escaping.go: CEL keywords and the characters a property name may hold that
# an identifier may not.
_RESERVED = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)
_ESCAPABLE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_./-]*")
_ESCAPES = (("__", "__underscores__"), (".", "__dot__"), ("-", "__dash__"), ("/", "__slash__"))


def value_type_name(v: Any) -> str:
    """The CEL type name of a JSON-like value, as cel-go's messages print it (``int``, ``map``, ...)."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bytes | bytearray):
        return "bytes"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    if v is None:
        return "null_type"
    return type(v).__name__


def escape(name: str) -> str | None:
    """The field name a rule uses for property ``name`` (``foo-bar`` is ``foo__dash__bar``), or
    None when it has none (the property is not visible to rules)."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.fullmatch(name):
        return None
    for raw, text in _ESCAPES:
        name = name.replace(raw, text)
    return name


DYN_TYPE = DeclType(DYN)
BOOL_TYPE = DeclType(BOOL, min_serialized_size=4)
INT_TYPE = DeclType(INT)
UINT_TYPE = DeclType(UINT)
DOUBLE_TYPE = DeclType(DOUBLE)
STRING_TYPE = DeclType.string()
BYTES_TYPE = DeclType(BYTES, min_serialized_size=2)
# RFC 3339 date-times and Go durations are strings on the wire; their shortest texts.
TIMESTAMP_TYPE = DeclType(TIMESTAMP, min_serialized_size=len('"2006-01-02T15:04:05Z"'))
DURATION_TYPE = DeclType(DURATION, min_serialized_size=len('"0s"'))
