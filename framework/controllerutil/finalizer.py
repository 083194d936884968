"""Finalizers on plain dicts: controller-runtime's ``AddFinalizer``, ``RemoveFinalizer`` and
``ContainsFinalizer``.

They change the dict only; write it back yourself (``client.update(obj)`` or a merge patch of
``metadata.finalizers``), usually at the start of a reconcile (add) and once cleanup is done (remove).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from framework.meta.object import ensure_metadata, get_finalizers

__all__ = ["add_finalizer", "contains_finalizer", "remove_finalizer"]


def add_finalizer(obj: dict[str, Any], finalizer: str) -> bool:
    """Append ``finalizer`` unless present; returns whether ``obj`` changed."""
    finalizers = get_finalizers(obj)
    if finalizer in finalizers:
        return False
    ensure_metadata(obj)["finalizers"] = [*finalizers, finalizer]
    return True


def remove_finalizer(obj: dict[str, Any], finalizer: str) -> bool:
    """Remove every occurrence of ``finalizer``; returns whether ``obj`` changed."""
    finalizers = get_finalizers(obj)
    kept = [f for f in finalizers if f != finalizer]
    if len(kept) == len(finalizers):
        return False
    meta = ensure_metadata(obj)
    if kept:
        meta["finalizers"] = kept
    else:
        meta.pop("finalizers", None)
    return True


def contains_finalizer(obj: Mapping[str, Any], finalizer: str) -> bool:
    """Whether ``obj`` carries ``finalizer``."""
    return finalizer in get_finalizers(obj)
