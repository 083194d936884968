"""Field descriptors of the protobuf messages we decode: field and wire types, JSON emission modes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
# Media types accepted for bodies of kinds this module cannot decode (the 415 list, 5-3).
JSON_MEDIA = ["application/json", "application/yaml"]

# Scalar field types (proto2, as go-to-protobuf writes them). Anything else names a message.
STRING, BYTES, BOOL, INT32, INT64, DOUBLE = "string", "bytes", "bool", "int32", "int64", "double"
UINT32, UINT64, FLOAT = "uint32", "uint64", "float"

# Messages whose Go type has its own JSON form (a MarshalJSON method), by proto name.
_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
_APIEXT = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1."
TIME = _META + "Time"  # {1 seconds, 2 nanos} → RFC 3339, seconds precision
MICRO_TIME = _META + "MicroTime"  # the same, microseconds precision
FIELDS_V1 = _META + "FieldsV1"  # {1 Raw}: its JSON form is Raw itself
RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"  # {1 raw}: the embedded JSON
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"  # {1 string}: the string
INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"  # {1 type, 2 intVal, 3 strVal}
JSON_VALUE = _APIEXT + "JSON"  # {1 raw}: the embedded JSON
PROPS_OR_BOOL = _APIEXT + "JSONSchemaPropsOrBool"  # {1 allows, 2 schema}: the schema or the bool
PROPS_OR_ARRAY = _APIEXT + "JSONSchemaPropsOrArray"  # {1 schema, 2 jSONSchemas}: the list or the schema
PROPS_OR_STRINGS = _APIEXT + "JSONSchemaPropsOrStringArray"  # {1 schema, 2 property}: likewise
RAW_JSON = frozenset({FIELDS_V1, RAW_EXTENSION, JSON_VALUE})

# JSON emission modes (see the package docstring), as hack/gen-protobuf-catalog.py derives them.
OMITEMPTY, ALWAYS, POINTER, INLINE = "omitempty", "always", "pointer", "inline"

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
SCALAR_WIRE = {
    STRING: LEN,
    BYTES: LEN,
    BOOL: VARINT,
    INT32: VARINT,
    INT64: VARINT,
    UINT32: VARINT,
    UINT64: VARINT,
    DOUBLE: FIXED64,
    FLOAT: FIXED32,
}
ZERO: dict[str, Any] = {STRING: "", BYTES: "", BOOL: False, INT32: 0, INT64: 0, UINT32: 0, UINT64: 0}
ZERO |= {DOUBLE: 0.0, FLOAT: 0.0}
GO_ZERO_TIME = -62135596800  # time.Time{}.Unix(): 0001-01-01T00:00:00Z
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Field:
    """One field of a message: its JSON name, type, repetition and JSON emission mode."""

    name: str
    type: str = STRING
    repeated: bool = False
    map: bool = False  # map<string, type>
    mode: str = OMITEMPTY

    @property
    def wire(self) -> int:
        return SCALAR_WIRE.get(self.type, LEN)

    @property
    def scalar(self) -> bool:
        return self.type in SCALAR_WIRE

    @property
    def go_name(self) -> str:
        """The Go field name the real server's decode errors use (``Name`` for ``name``)."""
        return self.name[:1].upper() + self.name[1:]


def short_name(message: str) -> str:
    """``k8s.io.api.core.v1.Pod`` → ``Pod``, as the generated Go code names a message in errors."""
    return message.rsplit(".", 1)[-1]
