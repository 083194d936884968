"""Patches computed from two versions of an object (controller-runtime's ``client.MergeFrom``) and the
optimistic lock for them (``client.MergeFromWithOptimisticLock``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from framework.meta.object import get_resource_version

__all__ = ["create_merge_patch", "with_optimistic_lock"]


def create_merge_patch(original: Mapping[str, Any], modified: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) that turns ``original`` into ``modified``.

    Maps are diffed key by key (a removed key becomes ``null``), anything else that differs (lists,
    scalars) is replaced whole, as ``jsonpatch.CreateMergePatch`` does. An empty dict means "no change".
    No ``resourceVersion`` is added: the patch applies whatever the server holds now; see
    :func:`with_optimistic_lock` for controller-runtime's ``client.MergeFromWithOptimisticLock``.
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


def with_optimistic_lock(patch: Mapping[str, Any], obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the merge patch ``patch`` that carries ``obj``'s ``metadata.resourceVersion``.

    controller-runtime's ``client.MergeFromWithOptimisticLock``: the API server compares the patched
    object's resourceVersion with the stored one, so the patch fails with ``Conflict`` (409) when the
    object changed since ``obj`` was read, instead of applying a change decided on outdated data. Use it
    with the object the patch was computed from. Without a resourceVersion on ``obj`` the copy is
    unchanged (the patch applies to whatever the server holds). ``patch`` is not modified; only the
    maps on the way to the resourceVersion are copied.
    """
    locked = dict(patch)
    rv = get_resource_version(obj)
    if rv:
        locked["metadata"] = {**(locked.get("metadata") or {}), "resourceVersion": rv}
    return locked
