"""Patches computed from two versions of an object (controller-runtime's ``client.MergeFrom``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["create_merge_patch"]


def create_merge_patch(original: Mapping[str, Any], modified: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) that turns ``original`` into ``modified``.

    Maps are diffed key by key (a removed key becomes ``null``), anything else that differs (lists,
    scalars) is replaced whole, as ``jsonpatch.CreateMergePatch`` does. An empty dict means "no change".
    No ``resourceVersion`` is added: the patch applies whatever the server holds now; put
    ``metadata.resourceVersion`` in yourself for optimistic locking (``client.MergeFromWithOptimisticLock``).
    """
    patch: dict[str, Any] = {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, new in modified.items():
        if key not in original:
            patch[key] = new
            continue
        old = original[key]
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            sub = create_merge_patch(old, new)
            if sub:
                patch[key] = sub
        elif old != new or type(old) is not type(new):
            patch[key] = new
    return patch
