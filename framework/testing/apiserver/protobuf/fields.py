"""Field descriptors of the protobuf messages we decode: field and wire types, JSON emission modes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
# Media types accepted for bodies of kinds this module cannot decode (the 415 list, 5-3).
JSON_MEDIA = ["application/json", "application/yaml"]

# Field types. Anything else in ``Field.type`` names a message in ``MESSAGES``.
STRING, BOOL, INT32, INT64 = "string", "bool", "int32", "int64"
TIME = "Time"  # metav1.Time: a message {1 seconds, 2 nanos} with its own JSON form
FIELDS_V1 = "FieldsV1"  # metav1.FieldsV1: a message {1 Raw bytes} whose JSON form is Raw itself
MAP_STRING, MAP_BYTES, MAP_EXTRA = "map<string>", "map<bytes>", "map<ExtraValue>"
MAP_QUANTITY = "map<Quantity>"  # resource.Quantity {1 string}: its JSON form is the string
INT_OR_STRING = "IntOrString"  # intstr.IntOrString {1 type, 2 intVal, 3 strVal}: a JSON int or string
MAPS = (MAP_STRING, MAP_BYTES, MAP_EXTRA, MAP_QUANTITY)

# JSON emission modes (see the package docstring).
OMITEMPTY, ALWAYS, POINTER = "omitempty", "always", "pointer"

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
SCALAR_WIRE = {STRING: LEN, BOOL: VARINT, INT32: VARINT, INT64: VARINT}
ZERO: dict[str, Any] = {STRING: "", BOOL: False, INT32: 0, INT64: 0}
GO_ZERO_TIME = -62135596800  # time.Time{}.Unix(): 0001-01-01T00:00:00Z
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Field:
    """One field of a message: its JSON name, type, repetition and JSON emission mode."""

    name: str
    type: str = STRING
    repeated: bool = False
    mode: str = OMITEMPTY

    @property
    def wire(self) -> int:
        return SCALAR_WIRE.get(self.type, LEN)
