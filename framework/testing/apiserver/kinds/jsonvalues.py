"""Type checks on decoded JSON values the kind strategies share (a bool is not an int, as in Go)."""

from __future__ import annotations

from typing import Any, TypeGuard


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def as_dict(value: Any) -> dict:
    """``value`` if it is an object, else an empty one (a wrong type is decoding's to report)."""
    return value if isinstance(value, dict) else {}
