"""Decoding a protobuf body (``k8s\\x00`` + ``runtime.Unknown``) into the JSON form Go's encoder would
have produced from the decoded struct (the mapping rules are in the package docstring)."""

from __future__ import annotations

import base64
from datetime import timedelta
from typing import Any

import orjson

from framework.meta.schema import parse_group_version
from framework.meta.time import format_time

from .. import errors
from ..errors import StatusError
from .fields import (
    ALWAYS,
    BOOL,
    EPOCH,
    FIELDS_V1,
    FIXED32,
    FIXED64,
    GO_ZERO_TIME,
    INT32,
    INT_OR_STRING,
    JSON_MEDIA,
    LEN,
    MAGIC,
    MAP_BYTES,
    MAP_QUANTITY,
    MAP_STRING,
    MAPS,
    OMITEMPTY,
    POINTER,
    STRING,
    TIME,
    VARINT,
    ZERO,
    Field,
)
from .messages import INT_OR_STRING_FIELDS, KINDS, MESSAGES, STRICT, TYPE_META, UNKNOWN


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


def _scalar(f: Field, value: Any) -> Any:
    if f.type == STRING:
        return _text(value)
    if f.type == BOOL:
        return value != 0
    if f.type == INT32:
        return _signed(value, 32)
    return _signed(value, 64)


def _map_entry(f: Field, raw: bytes) -> tuple[str, Any]:
    key, value = "", None
    for num, wire, v in _fields(raw, f"{f.name} map entry"):
        if num == 1:
            if wire != LEN:
                raise Malformed(f"proto: wrong wireType = {wire} for field {f.name} key")
            key = _text(v)
        elif num == 2:
            if wire != LEN:
                raise Malformed(f"proto: wrong wireType = {wire} for field {f.name} value")
            value = v
    if f.type == MAP_STRING:
        return key, _text(value or b"")
    if f.type == MAP_BYTES:
        return key, base64.b64encode(value or b"").decode()
    if f.type == MAP_QUANTITY:
        text = ""
        for num, wire, v in _fields(value or b"", "Quantity"):
            if num == 1:
                if wire != LEN:
                    raise Malformed(f"proto: wrong wireType = {wire} for field String_")
                text = _text(v)
        return key, text or "0"
    # ExtraValue {repeated string items = 1}: its JSON form is the bare list.
    items = []
    for num, wire, v in _fields(value or b"", "ExtraValue"):
        if num == 1:
            if wire != LEN:
                raise Malformed(f"proto: wrong wireType = {wire} for field Items")
            items.append(_text(v))
    return key, items


def _time(raw: bytes) -> str | None:
    """metav1.Time → RFC 3339 (seconds precision, UTC), None for Go's zero time (JSON ``null``)."""
    if not raw:
        return None  # what Go writes for a zero Time
    t = _decode_fields(raw, TIME)
    seconds, nanos = t.get("seconds", 0), t.get("nanos", 0)
    if seconds == GO_ZERO_TIME and nanos == 0:
        return None
    try:
        dt = EPOCH + timedelta(seconds=seconds + nanos // 1_000_000_000)  # time.Unix normalises nanos
    except OverflowError:
        raise Malformed(f"Time.MarshalJSON: year outside of range [0,9999] (seconds={seconds})") from None
    return format_time(dt)


def _fields_v1(raw: bytes) -> Any:
    """metav1.FieldsV1 {1 Raw}: its JSON form is the raw JSON document itself."""
    data = b""
    for num, wire, value in _fields(raw, FIELDS_V1):
        if num == 1:
            if wire != LEN:
                raise Malformed(f"proto: wrong wireType = {wire} for field Raw")
            data = value
    if not data:
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise Malformed(f"FieldsV1 is not JSON: {e}") from None


def _int_or_string(raw: bytes) -> int | str:
    out: dict[str, Any] = {"type": 0, "intVal": 0, "strVal": ""}
    for num, wire, value in _fields(raw, INT_OR_STRING):
        f = INT_OR_STRING_FIELDS.get(num)
        if f is None:
            continue
        if wire != f.wire:
            raise Malformed(f"proto: wrong wireType = {wire} for field {f.name[:1].upper()}{f.name[1:]}")
        out[f.name] = _scalar(f, value)
    return out["strVal"] if out["type"] == 1 else out["intVal"]


def _unmodelled(message: str, num: int, wire: int, value: Any) -> None:
    """A field this module has no schema for: fine when it holds Go's zero value, 400 otherwise."""
    if message in STRICT and value not in (0, b""):
        raise Malformed(
            f"{message} field {num} (wire type {wire}) is not supported in protobuf by this test API "
            "server; send the object as JSON"
        )


def _decode_fields(buf: bytes, message: str) -> dict[str, Any]:
    """Decode one message into its JSON form."""
    schema = MESSAGES[message]
    scalars: dict[int, Any] = {}
    lists: dict[int, list] = {}
    maps: dict[int, dict] = {}
    nested: dict[int, bytes] = {}  # non-repeated messages: repeated occurrences merge (concatenate)
    for num, wire, value in _fields(buf, message):
        f = schema.get(num)
        if f is None:
            _unmodelled(message, num, wire, value)
            continue  # unknown fields are skipped, as the generated Go code does
        if wire != f.wire:
            raise Malformed(f"proto: wrong wireType = {wire} for field {f.name[:1].upper()}{f.name[1:]}")
        if f.type in MAPS:
            k, v = _map_entry(f, value)
            maps.setdefault(num, {})[k] = v
        elif f.repeated:
            item = _decode_fields(value, f.type) if f.type in MESSAGES else _scalar(f, value)
            lists.setdefault(num, []).append(item)
        elif f.type in MESSAGES or f.type == INT_OR_STRING:
            nested[num] = nested.get(num, b"") + value
        else:
            scalars[num] = _scalar(f, value)

    out: dict[str, Any] = {}
    for num, f in schema.items():
        if f.type in MAPS:
            if maps.get(num):
                out[f.name] = maps[num]
        elif f.type == INT_OR_STRING:
            if num in nested:
                v = _int_or_string(nested[num])
                # A zero IntOrString (non-pointer, omitempty) is dropped: defaulting fills it.
                if f.mode == POINTER or v not in (0, ""):
                    out[f.name] = v
        elif f.repeated:
            if lists.get(num):
                out[f.name] = lists[num]
        elif f.type == TIME:
            if num in nested and (t := _time(nested[num])) is not None:
                out[f.name] = t
        elif f.type == FIELDS_V1:
            if num in nested:
                out[f.name] = _fields_v1(nested[num])
        elif f.type in MESSAGES:
            if num in nested or f.mode == ALWAYS:
                out[f.name] = _decode_fields(nested.get(num, b""), f.type)
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
    Raises ``StatusError`` 400 for malformed bodies and 415 for kinds outside :data:`KINDS`.
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
    if (body_version, body_kind) not in KINDS:
        raise errors.unsupported_media_type(JSON_MEDIA)
    try:
        obj = _decode_fields(raw, body_kind)
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
