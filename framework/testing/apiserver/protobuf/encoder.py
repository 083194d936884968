"""Encoding an object of one of the decoded kinds as a protobuf body: the inverse of the decoder, used
by tests to build the bodies kubectl sends."""

from __future__ import annotations

import base64
from typing import Any

import orjson

from framework.meta.time import parse_time

from .fields import (
    EPOCH,
    FIELDS_V1,
    INT_OR_STRING,
    LEN,
    MAGIC,
    MAP_BYTES,
    MAP_QUANTITY,
    MAP_STRING,
    MAPS,
    POINTER,
    STRING,
    TIME,
    VARINT,
    ZERO,
    Field,
)
from .messages import KINDS, MESSAGES


def _put_varint(out: bytearray, value: int) -> None:
    value &= 0xFFFFFFFFFFFFFFFF
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _put_len(out: bytearray, num: int, payload: bytes) -> None:
    _put_varint(out, num << 3 | LEN)
    _put_varint(out, len(payload))
    out += payload


def _encode_time(value: str | None) -> bytes:
    dt = parse_time(value)
    if dt is None:
        return b""
    delta = dt - EPOCH
    return _encode_fields(
        {"seconds": delta.days * 86400 + delta.seconds, "nanos": delta.microseconds * 1000}, TIME, False
    )


def _encode_value(f: Field, value: Any, go_zeros: bool) -> bytes | int:
    if f.type == TIME:
        return _encode_time(value)
    if f.type == INT_OR_STRING:
        out = bytearray()
        if isinstance(value, str):
            _put_varint(out, 1 << 3 | VARINT)
            _put_varint(out, 1)
            _put_len(out, 3, value.encode())
        else:
            _put_varint(out, 2 << 3 | VARINT)
            _put_varint(out, int(value))
        return bytes(out)
    if f.type == FIELDS_V1:
        raw = bytearray()
        _put_len(raw, 1, orjson.dumps(value))
        return bytes(raw)
    if f.type in MESSAGES:
        return _encode_fields(value or {}, f.type, go_zeros)
    if f.type == STRING:
        return value.encode()
    return int(value)


def _encode_fields(obj: dict[str, Any], message: str, go_zeros: bool) -> bytes:
    out = bytearray()
    for num, f in sorted(MESSAGES[message].items()):
        value = obj.get(f.name)
        if f.type in MAPS:
            for k, v in sorted((value or {}).items()):
                entry = bytearray()
                _put_len(entry, 1, k.encode())
                if f.type == MAP_STRING:
                    payload = v.encode()
                elif f.type == MAP_QUANTITY:
                    quantity = bytearray()
                    _put_len(quantity, 1, v.encode())
                    payload = bytes(quantity)
                elif f.type == MAP_BYTES:
                    payload = base64.b64decode(v)
                else:
                    items = bytearray()
                    for item in v:
                        _put_len(items, 1, item.encode())
                    payload = bytes(items)
                _put_len(entry, 2, payload)
                _put_len(out, num, bytes(entry))
            continue
        if f.repeated:
            for item in value or []:
                _put_len(out, num, _encode_value(f, item, go_zeros))  # type: ignore[arg-type]
            continue
        if value is None:
            # go-to-protobuf writes every non-pointer field, zero or not (what kubectl sends).
            if not go_zeros or f.mode == POINTER:
                continue
            if f.type == FIELDS_V1:
                continue  # a pointer in every kind here; never written when nil
            value = "" if f.type == TIME else {} if f.type in MESSAGES else ZERO.get(f.type, 0)
        encoded = _encode_value(f, value, go_zeros)
        if f.wire == LEN:
            _put_len(out, num, encoded)  # type: ignore[arg-type]
        else:
            _put_varint(out, num << 3 | VARINT)
            _put_varint(out, encoded)  # type: ignore[arg-type]
    return bytes(out)


def encode(obj: dict[str, Any], go_zeros: bool = False) -> bytes:
    """The protobuf body for ``obj`` (a dict in JSON form of one of :data:`KINDS`), magic included.

    ``go_zeros`` also writes the zero values of non-pointer fields that ``obj`` leaves out, as Go's
    generated marshallers do.
    """
    api_version, kind = obj["apiVersion"], obj["kind"]
    if (api_version, kind) not in KINDS:
        raise ValueError(f"no protobuf schema for {api_version} {kind}")
    type_meta = bytearray()
    _put_len(type_meta, 1, api_version.encode())
    _put_len(type_meta, 2, kind.encode())
    envelope = bytearray()
    _put_len(envelope, 1, bytes(type_meta))
    _put_len(envelope, 2, _encode_fields(obj, kind, go_zeros))
    if go_zeros:
        _put_len(envelope, 3, b"")
        _put_len(envelope, 4, b"")
    return MAGIC + bytes(envelope)
