"""Decoding a protobuf body (``k8s\\x00`` + ``runtime.Unknown``) into the JSON form Go's encoder would
have produced from the decoded struct (the mapping rules are in the package docstring)."""

from __future__ import annotations

import base64
import struct
from datetime import timedelta
from typing import Any

import orjson

from framework.apiserver.encoding.protobuf.fields import (
    ALWAYS,
    BOOL,
    BYTES,
    DOUBLE,
    EPOCH,
    FIXED32,
    FIXED64,
    FLOAT,
    GO_ZERO_TIME,
    INLINE,
    INT32,
    INT_OR_STRING,
    JSON_MEDIA,
    LEN,
    MAGIC,
    MICRO_TIME,
    OMITEMPTY,
    POINTER,
    PROPS_OR_ARRAY,
    PROPS_OR_BOOL,
    PROPS_OR_STRINGS,
    QUANTITY,
    RAW_JSON,
    STRING,
    TIME,
    UINT32,
    UINT64,
    VARINT,
    ZERO,
    Field,
    short_name,
)
from framework.apiserver.encoding.protobuf.messages import TYPE_META, UNKNOWN, fields, is_slice, message_of
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError
from framework.meta import jsoncodec
from framework.meta.schema import parse_group_version
from framework.meta.time import format_time


class Malformed(Exception):
    """A wire-format error; turned into a 400 whose text follows the real server's decode errors."""


# -- wire format --------------------------------------------------------------------------------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise Malformed("unexpected EOF")
        if shift >= 64:
            raise Malformed("proto: integer overflow")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7


def _fields(buf: bytes, message: str) -> list[tuple[int, int, Any]]:
    """``(number, wire type, value)`` for each field: an int for varint/fixed, bytes for length-delimited."""
    out = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        num, wire = key >> 3, key & 7
        if num <= 0 or num > 0x1FFFFFFF:
            raise Malformed(f"proto: {message}: illegal tag {num} (wire type {wire})")
        value: int | bytes
        if wire == VARINT:
            value, pos = _varint(buf, pos)
        elif wire in (FIXED64, FIXED32):
            size = 8 if wire == FIXED64 else 4
            if pos + size > len(buf):
                raise Malformed("unexpected EOF")
            value = int.from_bytes(buf[pos : pos + size], "little")
            pos += size
        elif wire == LEN:
            length, pos = _varint(buf, pos)
            if length > 0x7FFFFFFFFFFFFFFF:
                raise Malformed("proto: negative length found during unmarshaling")
            if pos + length > len(buf):
                raise Malformed("unexpected EOF")
            value = buf[pos : pos + length]
            pos += length
        else:  # 3/4 are proto2 groups, never used by Kubernetes types; 6/7 do not exist
            raise Malformed(f"proto: {message}: illegal wireType {wire} for field number {num}")
        out.append((num, wire, value))
    return out


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _text(raw: bytes) -> str:
    # Go strings may hold any bytes; its JSON encoder writes invalid UTF-8 as U+FFFD.
    return raw.decode("utf-8", errors="replace")


# -- decoding -----------------------------------------------------------------------------------------


def _scalar(f: Field, wire: int, value: Any) -> Any:
    if wire != f.wire:
        raise Malformed(f"proto: wrong wireType = {wire} for field {f.go_name}")
    if f.type == STRING:
        return _text(value)
    if f.type == BYTES:
        return base64.b64encode(value).decode()
    if f.type == BOOL:
        return value != 0
    if f.type == INT32:
        return _signed(value, 32)
    if f.type in (UINT32, UINT64):
        return value
    if f.type == DOUBLE:
        return struct.unpack("<d", value.to_bytes(8, "little"))[0]
    if f.type == FLOAT:
        return struct.unpack("<f", value.to_bytes(4, "little"))[0]
    return _signed(value, 64)


def _packed(f: Field, raw: bytes) -> list[Any]:
    """A packed repeated numeric field: the values back to back, without keys."""
    out, pos = [], 0
    while pos < len(raw):
        if f.wire == VARINT:
            value, pos = _varint(raw, pos)
        else:
            size = 8 if f.wire == FIXED64 else 4
            if pos + size > len(raw):
                raise Malformed("unexpected EOF")
            value, pos = int.from_bytes(raw[pos : pos + size], "little"), pos + size
        out.append(_scalar(f, f.wire, value))
    return out


def _map_entry(f: Field, raw: bytes) -> tuple[str, Any]:
    key, wire, value = "", None, None
    for num, w, v in _fields(raw, f"{f.name} map entry"):
        if num == 1:
            if w != LEN:
                raise Malformed(f"proto: wrong wireType = {w} for field {f.name} key")
            key = _text(v)
        elif num == 2:
            wire, value = w, v
    if f.scalar:
        if wire is None:
            return key, ZERO[f.type]
        return key, _scalar(f, wire, value)
    if wire not in (None, LEN):
        raise Malformed(f"proto: wrong wireType = {wire} for field {f.name} value")
    return key, _value(f.type, value or b"")


def _time(raw: bytes, message: str) -> str | None:
    """metav1.Time / MicroTime → RFC 3339 (UTC), None for Go's zero time (JSON ``null``)."""
    if not raw:
        return None  # what Go writes for a zero Time
    t = _decode_fields(raw, message)
    seconds, nanos = t.get("seconds", 0), t.get("nanos", 0)
    if seconds == GO_ZERO_TIME and nanos == 0:
        return None
    try:
        if message == MICRO_TIME:
            dt = EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
            return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        dt = EPOCH + timedelta(seconds=seconds + nanos // 1_000_000_000)  # time.Unix normalises nanos
    except OverflowError:
        raise Malformed(f"Time.MarshalJSON: year outside of range [0,9999] (seconds={seconds})") from None
    return format_time(dt)


def _raw_json(raw: bytes, message: str) -> Any:
    """FieldsV1 / RawExtension / apiextensions JSON {1 raw}: the embedded JSON document itself."""
    data = b""
    for num, wire, value in _fields(raw, short_name(message)):
        if num == 1:
            if wire != LEN:
                raise Malformed(f"proto: wrong wireType = {wire} for field Raw")
            data = value
    if not data:
        return None
    try:
        return jsoncodec.loads(data)
    except orjson.JSONDecodeError as e:
        raise Malformed(f"{short_name(message)} is not JSON: {e}") from None


def _int_or_string(raw: bytes) -> int | str:
    out = _decode_fields(raw, INT_OR_STRING)
    return out["strVal"] if out["type"] == 1 else out["intVal"]


def _schema_or(raw: bytes, message: str) -> Any:
    """apiextensions' JSONSchemaPropsOr{Bool,Array,StringArray}: whichever alternative is set, as
    their MarshalJSON methods choose (the schema if set, else the bool; the list if non-empty, else the
    schema)."""
    schema_num = 2 if message == PROPS_OR_BOOL else 1
    schema_raw: bytes | None = None
    allows, items = False, []
    for num, wire, value in _fields(raw, short_name(message)):
        f = fields(message).get(num)
        if f is None:
            continue
        if num == schema_num or (f.repeated and not f.scalar):
            if wire != LEN:
                raise Malformed(f"proto: wrong wireType = {wire} for field {f.go_name}")
            if num == schema_num:
                schema_raw = (schema_raw or b"") + value
            else:
                items.append(_value(f.type, value))
        elif f.repeated:
            items.append(_scalar(f, wire, value))
        else:
            allows = _scalar(f, wire, value)
    schema = None if schema_raw is None else _value(fields(message)[schema_num].type, schema_raw)
    if message == PROPS_OR_BOOL:
        return allows if schema is None else schema
    return items or schema


def _value(message: str, raw: bytes) -> Any:
    """The JSON form of one embedded message."""
    if message in (TIME, MICRO_TIME):
        return _time(raw, message)
    if message == QUANTITY:
        return _decode_fields(raw, QUANTITY).get("string") or "0"
    if message == INT_OR_STRING:
        return _int_or_string(raw)
    if message in RAW_JSON:
        return _raw_json(raw, message)
    if message in (PROPS_OR_BOOL, PROPS_OR_ARRAY, PROPS_OR_STRINGS):
        return _schema_or(raw, message)
    if is_slice(message):
        return _decode_fields(raw, message).get(fields(message)[1].name, [])
    return _decode_fields(raw, message)


def _decode_fields(buf: bytes, message: str) -> dict[str, Any]:
    """Decode one message into its JSON form."""
    schema = fields(message)
    scalars: dict[int, Any] = {}
    lists: dict[int, list] = {}
    maps: dict[int, dict] = {}
    nested: dict[int, bytes] = {}  # non-repeated messages: repeated occurrences merge (concatenate)
    for num, wire, value in _fields(buf, short_name(message)):
        f = schema.get(num)
        if f is None:
            continue  # unknown fields are skipped, as the generated Go code does
        if f.map:
            if wire != LEN:
                raise Malformed(f"proto: wrong wireType = {wire} for field {f.go_name}")
            k, v = _map_entry(f, value)
            maps.setdefault(num, {})[k] = v
        elif f.repeated:
            items = lists.setdefault(num, [])
            if not f.scalar:
                if wire != LEN:
                    raise Malformed(f"proto: wrong wireType = {wire} for field {f.go_name}")
                items.append(_value(f.type, value))
            elif wire == LEN and f.wire != LEN:
                items.extend(_packed(f, value))
            else:
                items.append(_scalar(f, wire, value))
        elif not f.scalar:
            if wire != LEN:
                raise Malformed(f"proto: wrong wireType = {wire} for field {f.go_name}")
            nested[num] = nested.get(num, b"") + value
        else:
            scalars[num] = _scalar(f, wire, value)

    out: dict[str, Any] = {}
    for num, f in schema.items():
        if f.map:
            if maps.get(num):
                out[f.name] = maps[num]
        elif f.repeated:
            if lists.get(num):
                out[f.name] = lists[num]
        elif f.mode == INLINE:
            out.update(_decode_fields(nested.get(num, b""), f.type))
        elif f.type == INT_OR_STRING:
            if num in nested:
                v = _int_or_string(nested[num])
                # A zero IntOrString (non-pointer, omitempty) is dropped: defaulting fills it.
                if f.mode == POINTER or v not in (0, ""):
                    out[f.name] = v
        elif not f.scalar:
            if num in nested:
                if (v := _value(f.type, nested[num])) is not None:
                    out[f.name] = v
            elif f.mode == ALWAYS and f.type not in (TIME, MICRO_TIME) and f.type not in RAW_JSON:
                out[f.name] = _value(f.type, b"")
        elif num in scalars:
            v = scalars[num]
            if f.mode != OMITEMPTY or v != ZERO[f.type]:
                out[f.name] = v
        elif f.mode == ALWAYS:
            out[f.name] = ZERO[f.type]
    return out


def _summary(data: bytes, limit: int = 30) -> str:
    # apiserver's summarizeData: the first bytes of the body, hex-encoded for non-JSON bodies.
    if not data:
        return "<empty>"
    return data[:limit].hex() + (" ..." if len(data) > limit else "")


def decode(data: bytes, api_version: str = "", kind: str = "") -> dict[str, Any]:
    """Decode a protobuf request body into the object's JSON form (with ``apiVersion`` and ``kind``).

    ``api_version`` / ``kind`` are the endpoint's: they default an envelope that leaves them empty (as
    the Go serializer does) and name the expected type in error messages like the real server's.
    Raises ``StatusError`` 400 for malformed bodies and 415 for kinds without a protobuf schema.
    """
    target = kind or "the requested kind"

    def unrecognized(err: str) -> StatusError:
        return errors.bad_request(
            f"the object provided is unrecognized (must be of type {target}): {err} ({_summary(data)})"
        )

    if not data:
        raise unrecognized("empty data")
    if not data.startswith(MAGIC):
        raise unrecognized(
            f"provided data does not appear to be a protobuf message, expected prefix {list(MAGIC)}"
        )
    try:
        body_version, body_kind, raw = _envelope(data[len(MAGIC) :])
    except Malformed as e:
        raise unrecognized(str(e)) from None
    body_kind = body_kind or kind
    body_version = body_version or api_version
    if not body_kind:
        raise unrecognized("Object 'Kind' is missing in the protobuf envelope")
    message = message_of(body_version, body_kind)
    if message is None:
        raise errors.unsupported_media_type(JSON_MEDIA)
    try:
        obj = _decode_fields(raw, message)
    except Malformed as e:
        version = parse_group_version(body_version).version
        raise errors.bad_request(
            f'{body_kind} in version "{version}" cannot be handled as a {target}: {e}'
        ) from None
    return {"apiVersion": body_version, "kind": body_kind, **obj}


def _envelope(buf: bytes) -> tuple[str, str, bytes]:
    api_version = kind = ""
    type_meta = raw = b""
    for num, wire, value in _fields(buf, "Unknown"):
        if num not in UNKNOWN:
            continue
        if wire != LEN:
            raise Malformed(f"proto: wrong wireType = {wire} for field {UNKNOWN[num]}")
        if num == 1:
            type_meta += value
        elif num == 2:
            raw = value
    for num, wire, value in _fields(type_meta, "TypeMeta"):
        if num not in TYPE_META:
            continue
        if wire != LEN:
            raise Malformed(f"proto: wrong wireType = {wire} for field {TYPE_META[num]}")
        if num == 1:
            api_version = _text(value)
        else:
            kind = _text(value)
    return api_version, kind, raw
