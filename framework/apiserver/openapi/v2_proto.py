"""``/openapi/v2`` as gnostic's protobuf ``openapi.v2.Document``, the form kubectl's discovery client asks
for (``Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf``) and reads with kube-openapi
``pkg/util/proto`` for ``kubectl explain --output=plaintext-openapiv2`` and v2 client-side validation.

The message layout is google/gnostic-models ``openapiv2/OpenAPIv2.proto``: JSON objects of names
(``definitions``, ``properties``, ``paths``, responses) become repeated ``Named*`` pairs, the
polymorphic JSON fields become wrapper messages (``type`` → ``TypeItem``, ``items`` → ``ItemsItem``,
``additionalProperties`` → ``AdditionalPropertiesItem``, a parameter → ``ParametersItem`` → body or
non-body parameter), ``x-`` keys become ``vendor_extension`` entries and free-form values
(``default``, ``example``, ``enum``, extensions) become ``Any`` with their YAML text (JSON is YAML).

kube-openapi refuses the whole document over one schema it cannot walk (a dangling ``$ref``, a ``$ref``
beside a ``type``, a list of types); the JSON document has none, and only its non-null type is kept
where v3's nullable types would otherwise become a list.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import orjson

from framework.apiserver.encoding.protobuf.wire import FIXED64, VARINT, put_len, put_varint


def _string(out: bytearray, num: int, value: Any) -> None:
    if isinstance(value, str):
        put_len(out, num, value.encode())


def _strings(out: bytearray, num: int, value: Any) -> None:
    for v in value if isinstance(value, list) else [value]:
        _string(out, num, v)


def _bool(out: bytearray, num: int, value: Any) -> None:
    if value is True:
        put_varint(out, num << 3 | VARINT)
        out.append(1)


def _int(out: bytearray, num: int, value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool):
        put_varint(out, num << 3 | VARINT)
        put_varint(out, value)


def _double(out: bytearray, num: int, value: Any) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        put_varint(out, num << 3 | FIXED64)
        out += struct.pack("<d", float(value))


def _any(value: Any) -> bytes:
    out = bytearray()
    put_len(out, 2, orjson.dumps(value))  # Any.yaml
    return bytes(out)


def _vendor(out: bytearray, num: int, obj: dict[str, Any]) -> None:
    for key, value in obj.items():
        if key.startswith("x-"):
            put_len(out, num, _named(key, _any(value)))


def _named(name: str, value: bytes) -> bytes:
    out = bytearray()
    put_len(out, 1, name.encode())
    put_len(out, 2, value)
    return bytes(out)


_Writer = Callable[[bytearray, int, Any], None]


def _message(fields: dict[str, tuple[int, _Writer]], vendor: int | None = None) -> Callable[[Any], bytes]:
    def encode(obj: Any) -> bytes:
        out = bytearray()
        if not isinstance(obj, dict):
            return bytes(out)
        for key, (num, write) in fields.items():
            if key in obj:
                write(out, num, obj[key])
        if vendor is not None:
            _vendor(out, vendor, obj)
        return bytes(out)

    return encode


def _sub(encode: Callable[[Any], bytes]) -> _Writer:
    return lambda out, num, value: put_len(out, num, encode(value))


def _repeated(encode: Callable[[Any], bytes]) -> _Writer:
    def write(out: bytearray, num: int, value: Any) -> None:
        for item in value if isinstance(value, list) else [value]:
            put_len(out, num, encode(item))

    return write


def _named_map(encode: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """A JSON object of names → ``{repeated Named* additional_properties = 1}``."""

    def encode_map(obj: Any) -> bytes:
        out = bytearray()
        for name, value in (obj or {}).items() if isinstance(obj, dict) else ():
            put_len(out, 1, _named(name, encode(value)))
        return bytes(out)

    return encode_map


def _type_item(value: Any) -> bytes:
    out = bytearray()
    types = [t for t in (value if isinstance(value, list) else [value]) if t != "null"]
    _strings(out, 1, types[:1])
    return bytes(out)


def _schema(s: Any) -> bytes:
    return _SCHEMA(s)  # late-bound: schemas nest


def _additional(value: Any) -> bytes:
    out = bytearray()
    if isinstance(value, dict):
        put_len(out, 1, _schema(value))
    elif isinstance(value, bool):
        put_varint(out, 2 << 3 | VARINT)
        out.append(int(value))
    return bytes(out)


def _items(value: Any) -> bytes:
    out = bytearray()
    _repeated(_schema)(out, 1, value)
    return bytes(out)


_ANY = _sub(_any)
_EXTERNAL_DOCS = _message({"description": (1, _string), "url": (2, _string)}, vendor=3)
_SCHEMA = _message(
    {
        "$ref": (1, _string),
        "format": (2, _string),
        "title": (3, _string),
        "description": (4, _string),
        "default": (5, _ANY),
        "multipleOf": (6, _double),
        "maximum": (7, _double),
        "exclusiveMaximum": (8, _bool),
        "minimum": (9, _double),
        "exclusiveMinimum": (10, _bool),
        "maxLength": (11, _int),
        "minLength": (12, _int),
        "pattern": (13, _string),
        "maxItems": (14, _int),
        "minItems": (15, _int),
        "uniqueItems": (16, _bool),
        "maxProperties": (17, _int),
        "minProperties": (18, _int),
        "required": (19, _strings),
        "enum": (20, _repeated(_any)),
        "additionalProperties": (21, _sub(_additional)),
        "type": (22, _sub(_type_item)),
        "items": (23, _sub(_items)),
        "allOf": (24, _repeated(_schema)),
        "properties": (25, _sub(_named_map(_schema))),
        "discriminator": (26, _string),
        "readOnly": (27, _bool),
        "externalDocs": (29, _sub(_EXTERNAL_DOCS)),
        "example": (30, _ANY),
    },
    vendor=31,
)
# Query, path and header parameters share their first fields (required, in, description, name); the
# rest is the primitive part, numbered per message.
_PRIMITIVE = ("type", "format", "items", "collectionFormat", "default", "maximum", "exclusiveMaximum",
              "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
              "uniqueItems", "enum", "multipleOf")  # fmt: skip
_PRIMITIVE_WRITERS: dict[str, _Writer] = {
    "type": _string, "format": _string, "collectionFormat": _string, "default": _ANY,
    "maximum": _double, "exclusiveMaximum": _bool, "minimum": _double, "exclusiveMinimum": _bool,
    "maxLength": _int, "minLength": _int, "pattern": _string, "maxItems": _int, "minItems": _int,
    "uniqueItems": _bool, "enum": _repeated(_any), "multipleOf": _double,
}  # fmt: skip


def _primitives_items(value: Any) -> bytes:
    return _PRIMITIVES_ITEMS(value)


def _sub_schema(first: int, allow_empty: bool, vendor: int) -> Callable[[Any], bytes]:
    """A non-body parameter: required, in, description, name[, allowEmptyValue], then the primitive."""
    fields: dict[str, tuple[int, _Writer]] = {
        "required": (1, _bool),
        "in": (2, _string),
        "description": (3, _string),
        "name": (4, _string),
    }
    if allow_empty:
        fields["allowEmptyValue"] = (5, _bool)
    for n, key in enumerate(_PRIMITIVE, first):
        fields[key] = (n, _sub(_primitives_items) if key == "items" else _PRIMITIVE_WRITERS[key])
    return _message(fields, vendor=vendor)


_PRIMITIVES_ITEMS = _message(
    {
        k: (n, _sub(_primitives_items) if k == "items" else _PRIMITIVE_WRITERS[k])
        for n, k in enumerate(_PRIMITIVE, 1)
    },
    vendor=18,
)
_NON_BODY = {"header": (1, _sub_schema(5, False, 22)), "formData": (2, _sub_schema(6, True, 23)),
             "query": (3, _sub_schema(6, True, 23)), "path": (4, _sub_schema(5, False, 22))}  # fmt: skip
_BODY = _message(
    {"description": (1, _string), "name": (2, _string), "in": (3, _string), "required": (4, _bool),
     "schema": (5, _sub(_schema))},
    vendor=6,
)  # fmt: skip
_JSON_REFERENCE = _message({"$ref": (1, _string), "description": (2, _string)})


def _parameters_item(p: Any) -> bytes:
    out = bytearray()
    if not isinstance(p, dict):
        return b""
    if "$ref" in p:
        put_len(out, 2, _JSON_REFERENCE(p))
        return bytes(out)
    parameter = bytearray()
    if p.get("in") == "body":
        put_len(parameter, 1, _BODY(p))
    elif p.get("in") in _NON_BODY:
        num, encode = _NON_BODY[p["in"]]
        non_body = bytearray()
        put_len(non_body, num, encode(p))
        put_len(parameter, 2, non_body)
    put_len(out, 1, parameter)
    return bytes(out)


def _schema_item(s: Any) -> bytes:
    out = bytearray()
    put_len(out, 1, _schema(s))  # SchemaItem.schema (a file schema is never served)
    return bytes(out)


_RESPONSE = _message({"description": (1, _string), "schema": (2, _sub(_schema_item))}, vendor=5)


def _responses(obj: Any) -> bytes:
    out = bytearray()
    for code, value in obj.items() if isinstance(obj, dict) else ():
        if code.startswith("x-"):
            continue
        rv = bytearray()
        if isinstance(value, dict) and "$ref" in value:
            put_len(rv, 2, _JSON_REFERENCE(value))
        else:
            put_len(rv, 1, _RESPONSE(value))
        put_len(out, 1, _named(code, bytes(rv)))
    if isinstance(obj, dict):
        _vendor(out, 2, obj)
    return bytes(out)


_OPERATION = _message(
    {
        "tags": (1, _strings),
        "summary": (2, _string),
        "description": (3, _string),
        "externalDocs": (4, _sub(_EXTERNAL_DOCS)),
        "operationId": (5, _string),
        "produces": (6, _strings),
        "consumes": (7, _strings),
        "parameters": (8, _repeated(_parameters_item)),
        "responses": (9, _sub(_responses)),
        "schemes": (10, _strings),
        "deprecated": (11, _bool),
    },
    vendor=13,
)
_PATH_ITEM = _message(
    {
        "$ref": (1, _string),
        **{
            m: (n, _sub(_OPERATION))
            for n, m in enumerate(("get", "put", "post", "delete", "options", "head", "patch"), 2)
        },
        "parameters": (9, _repeated(_parameters_item)),
    },
    vendor=10,
)


def _paths(obj: Any) -> bytes:
    out = bytearray()
    if isinstance(obj, dict):
        _vendor(out, 1, obj)
        for path, item in obj.items():
            if not path.startswith("x-"):
                put_len(out, 2, _named(path, _PATH_ITEM(item)))
    return bytes(out)


_INFO = _message(
    {"title": (1, _string), "version": (2, _string), "description": (3, _string),
     "termsOfService": (4, _string)},
    vendor=7,
)  # fmt: skip
_DOCUMENT = _message(
    {
        "swagger": (1, _string),
        "info": (2, _sub(_INFO)),
        "host": (3, _string),
        "basePath": (4, _string),
        "schemes": (5, _strings),
        "consumes": (6, _strings),
        "produces": (7, _strings),
        "paths": (8, _sub(_paths)),
        "definitions": (9, _sub(_named_map(_schema))),
    },
    vendor=16,
)


def encode_document(doc: dict[str, Any]) -> bytes:
    """``doc`` (a Swagger 2.0 document as JSON) as a gnostic ``openapi.v2.Document`` message."""
    return _DOCUMENT(doc)
