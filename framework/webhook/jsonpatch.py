"""JSON Patch (RFC 6902) operations that turn one JSON document into another.

``create_patch(original, modified)`` is what a defaulting webhook answers with (controller-runtime
computes it with gomodules.xyz/jsonpatch from the object before and after ``Default``): objects are
diffed key by key, so a defaulter that sets one field produces one ``add`` or ``replace``, never a
rewrite of the whole object. Lists are diffed by position after dropping the common head and tail, so
appending or inserting one element is one ``add`` and removing one is one ``remove``. Paths are JSON
Pointers (RFC 6901): ``~`` is written ``~0`` and ``/`` is written ``~1``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["create_patch", "escape"]


def escape(token: str) -> str:
    """One JSON Pointer reference token (RFC 6901, section 3)."""
    return token.replace("~", "~0").replace("/", "~1")


def _same(a: Any, b: Any) -> bool:
    # 1 and 1.0 and True are equal in Python but not the same JSON value.
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def create_patch(original: Any, modified: Any) -> list[dict[str, Any]]:
    """The operations that turn ``original`` into ``modified`` (an empty list when they are equal)."""
    ops: list[dict[str, Any]] = []
    _diff(original, modified, "", ops)
    return ops


def _diff(old: Any, new: Any, path: str, ops: list[dict[str, Any]]) -> None:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": f"{path}/{escape(key)}"})
        for key, value in new.items():
            child = f"{path}/{escape(key)}"
            if key not in old:
                ops.append({"op": "add", "path": child, "value": value})
            else:
                _diff(old[key], value, child, ops)
    elif isinstance(old, list) and isinstance(new, list):
        _diff_list(old, new, path, ops)
    elif not _same(old, new):
        ops.append({"op": "replace", "path": path, "value": new})


def _diff_list(old: Sequence[Any], new: Sequence[Any], path: str, ops: list[dict[str, Any]]) -> None:
    head = 0
    while head < len(old) and head < len(new) and _same(old[head], new[head]):
        head += 1
    tail = 0
    while tail < len(old) - head and tail < len(new) - head and _same(old[-1 - tail], new[-1 - tail]):
        tail += 1
    old_mid, new_mid = old[head : len(old) - tail], new[head : len(new) - tail]
    paired = min(len(old_mid), len(new_mid))
    for i in range(paired):
        _diff(old_mid[i], new_mid[i], f"{path}/{head + i}", ops)
    # Surplus old elements go from the last one backwards, so earlier indexes stay valid.
    for i in reversed(range(paired, len(old_mid))):
        ops.append({"op": "remove", "path": f"{path}/{head + i}"})
    for i in range(paired, len(new_mid)):
        ops.append({"op": "add", "path": f"{path}/{head + i}", "value": new_mid[i]})
