"""Protobuf wire-format writing shared by the encoders (built-in kinds' bodies in :mod:`..protobuf`,
gnostic's OpenAPI document in ``openapi/v2_proto.py``): varints and length-delimited fields."""

from __future__ import annotations

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5


def put_varint(out: bytearray, value: int) -> None:
    """Append ``value`` as a base-128 varint (negative numbers as their 64-bit two's complement)."""
    value &= 0xFFFFFFFFFFFFFFFF
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def put_len(out: bytearray, num: int, payload: bytes | bytearray) -> None:
    """Append field ``num`` as a length-delimited field holding ``payload``."""
    put_varint(out, num << 3 | LEN)
    put_varint(out, len(payload))
    out += payload
