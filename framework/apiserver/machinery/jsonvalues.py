"""Type checks on decoded JSON values, shared by the kind strategies and the CRD code (a bool is not an
int, as in Go; a value of the wrong type reads as empty, its decoding having reported it)."""

from __future__ import annotations

from typing import Any, TypeGuard


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def as_dict(value: Any) -> dict:
    """``value`` if it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list:
    """``value`` if it is an array, else an empty one."""
    return value if isinstance(value, list) else []
