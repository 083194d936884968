"""Encoding an object of any built-in kind as a protobuf body: the inverse of the decoder, used by
tests to build the bodies kubectl sends."""

from __future__ import annotations

import base64
import struct
from typing import Any

from framework.apiserver.encoding.protobuf.fields import (
    BYTES,
    DOUBLE,
    EPOCH,
    FIXED32,
    FIXED64,
    FLOAT,
    INLINE,
    INT_OR_STRING,
    MAGIC,
    MICRO_TIME,
    POINTER,
    PROPS_OR_ARRAY,
    PROPS_OR_BOOL,
    PROPS_OR_STRINGS,
    QUANTITY,
    RAW_JSON,
    STRING,
    TIME,
    VARINT,
    ZERO,
    Field,
)
from framework.apiserver.encoding.protobuf.messages import fields, is_slice, message_of
from framework.apiserver.encoding.protobuf.wire import put_len as _put_len
from framework.apiserver.encoding.protobuf.wire import put_varint as _put_varint
from framework.meta import jsoncodec
from framework.meta.time import parse_time


def _put_scalar(out: bytearray, num: int, f: Field, value: Any) -> None:
    if f.type == STRING:
        _put_len(out, num, value.encode())
    elif f.type == BYTES:
        _put_len(out, num, base64.b64decode(value))
    elif f.wire == FIXED64:
        _put_varint(out, num << 3 | FIXED64)
        out += struct.pack("<d" if f.type == DOUBLE else "<Q", value)
    elif f.wire == FIXED32:
        _put_varint(out, num << 3 | FIXED32)
        out += struct.pack("<f" if f.type == FLOAT else "<I", value)
    else:
        _put_varint(out, num << 3 | VARINT)
        _put_varint(out, int(value))


def _encode_time(value: str | None, message: str) -> bytes:
    dt = parse_time(value)
    if dt is None:
        return b""
    delta = dt - EPOCH
    nanos = delta.microseconds * 1000 if message == MICRO_TIME or delta.microseconds else 0
    return _encode_fields({"seconds": delta.days * 86400 + delta.seconds, "nanos": nanos}, message, False)


def _encode_value(message: str, value: Any, go_zeros: bool) -> bytes:
    """The payload of one embedded message holding ``value`` (its JSON form)."""
    out = bytearray()
    if message in (TIME, MICRO_TIME):
        return _encode_time(value, message)
    if message == QUANTITY:
        _put_len(out, 1, str(value).encode())
    elif message == INT_OR_STRING:
        if isinstance(value, str):
            _put_varint(out, 1 << 3 | VARINT)
            _put_varint(out, 1)
            _put_len(out, 3, value.encode())
        else:
            _put_varint(out, 2 << 3 | VARINT)
            _put_varint(out, int(value))
    elif message in RAW_JSON:
        _put_len(out, 1, jsoncodec.dumps(value))
    elif message == PROPS_OR_BOOL:
        if isinstance(value, bool):
            _put_varint(out, 1 << 3 | VARINT)
            _put_varint(out, int(value))
        else:
            _put_varint(out, 1 << 3 | VARINT)
            _put_varint(out, 1)
            _put_len(out, 2, _encode_value(fields(message)[2].type, value, go_zeros))
    elif message in (PROPS_OR_ARRAY, PROPS_OR_STRINGS):
        f_schema, f_list = fields(message)[1], fields(message)[2]
        if isinstance(value, list):
            for item in value:
                if message == PROPS_OR_STRINGS:
                    _put_len(out, 2, item.encode())
                else:
                    _put_len(out, 2, _encode_value(f_list.type, item, go_zeros))
        else:
            _put_len(out, 1, _encode_value(f_schema.type, value, go_zeros))
    elif is_slice(message):
        return _encode_fields({fields(message)[1].name: value}, message, go_zeros)
    else:
        return _encode_fields(value or {}, message, go_zeros)
    return bytes(out)


def _zero(f: Field) -> Any:
    if f.type in (TIME, MICRO_TIME):
        return ""
    if f.scalar:
        return ZERO[f.type]
    return 0 if f.type == INT_OR_STRING else "0" if f.type == QUANTITY else {}


def _encode_fields(obj: dict[str, Any], message: str, go_zeros: bool) -> bytes:
    out = bytearray()
    for num, f in sorted(fields(message).items()):
        if f.mode == INLINE:
            payload = _encode_fields(obj, f.type, go_zeros)
            if payload or go_zeros:
                _put_len(out, num, payload)
            continue
        value = obj.get(f.name)
        if f.map:
            for k, v in sorted((value or {}).items()):
                entry = bytearray()
                _put_len(entry, 1, k.encode())
                if f.scalar:
                    _put_scalar(entry, 2, f, v)
                else:
                    _put_len(entry, 2, _encode_value(f.type, v, go_zeros))
                _put_len(out, num, bytes(entry))
            continue
        if f.repeated:
            for item in value or []:
                if f.scalar:
                    _put_scalar(out, num, f, item)
                else:
                    _put_len(out, num, _encode_value(f.type, item, go_zeros))
            continue
        if value is None:
            # go-to-protobuf writes every non-pointer field, zero or not (what kubectl sends).
            if not go_zeros or f.mode == POINTER or f.type in RAW_JSON:
                continue
            value = _zero(f)
        if f.scalar:
            _put_scalar(out, num, f, value)
        else:
            _put_len(out, num, _encode_value(f.type, value, go_zeros))
    return bytes(out)


def encode(obj: dict[str, Any], go_zeros: bool = False) -> bytes:
    """The protobuf body for ``obj`` (a dict in JSON form of a built-in kind), magic included.

    ``go_zeros`` also writes the zero values of non-pointer fields that ``obj`` leaves out, as Go's
    generated marshallers do.
    """
    api_version, kind = obj["apiVersion"], obj["kind"]
    message = message_of(api_version, kind)
    if message is None:
        raise ValueError(f"no protobuf schema for {api_version} {kind}")
    type_meta = bytearray()
    _put_len(type_meta, 1, api_version.encode())
    _put_len(type_meta, 2, kind.encode())
    envelope = bytearray()
    _put_len(envelope, 1, bytes(type_meta))
    _put_len(envelope, 2, _encode_fields(obj, message, go_zeros))
    if go_zeros:
        _put_len(envelope, 3, b"")
        _put_len(envelope, 4, b"")
    return MAGIC + bytes(envelope)
