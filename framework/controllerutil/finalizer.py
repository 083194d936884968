"""Finalizers on plain dicts: controller-runtime's ``AddFinalizer``, ``RemoveFinalizer`` and
``ContainsFinalizer``.

They change the dict only; write it back yourself (``client.update(obj)`` or a merge patch of
``metadata.finalizers``), usually at the start of a reconcile (add) and once cleanup is done (remove).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = ["add_finalizer", "contains_finalizer", "remove_finalizer"]


def add_finalizer(obj: MutableMapping[str, Any], finalizer: str) -> bool:
    """Append ``finalizer`` unless present; returns whether ``obj`` changed."""
    finalizers = list((obj.get("metadata") or {}).get("finalizers") or [])
    if finalizer in finalizers:
        return False
    obj.setdefault("metadata", {})["finalizers"] = [*finalizers, finalizer]
    return True


def remove_finalizer(obj: MutableMapping[str, Any], finalizer: str) -> bool:
    """Remove every occurrence of ``finalizer``; returns whether ``obj`` changed."""
    meta = obj.get("metadata") or {}
    finalizers = list(meta.get("finalizers") or [])
    kept = [f for f in finalizers if f != finalizer]
    if len(kept) == len(finalizers):
        return False
    if kept:
        meta["finalizers"] = kept
    else:
        meta.pop("finalizers", None)
    return True


def contains_finalizer(obj: Mapping[str, Any], finalizer: str) -> bool:
    """Whether ``obj`` carries ``finalizer``."""
    return finalizer in ((obj.get("metadata") or {}).get("finalizers") or ())
