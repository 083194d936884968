"""Accessors for objects as plain JSON dicts (``meta.Accessor`` / ``metav1.Object`` in Go).

Every getter takes any object (or ``None``) and never raises on a missing or ``null`` ``metadata``:
strings default to ``""``, maps to ``{}``, lists to ``[]`` (fresh empties, safe to mutate without
touching the object). The setters create ``metadata`` and the map they write to when absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from framework.meta.schema import GroupVersionKind, from_api_version_and_kind

__all__ = [
    "ensure_metadata",
    "get_annotations",
    "get_controller_of",
    "get_creation_timestamp",
    "get_deletion_timestamp",
    "get_finalizers",
    "get_generation",
    "get_gvk",
    "get_labels",
    "get_metadata",
    "get_name",
    "get_namespace",
    "get_owner_references",
    "get_resource_version",
    "get_uid",
    "is_being_deleted",
    "object_key",
    "set_annotation",
    "set_label",
]

_EMPTY: Mapping[str, Any] = MappingProxyType({})  # read-only: a caller cannot fill it by mistake


def get_metadata(obj: Any) -> Mapping[str, Any]:
    """``obj["metadata"]`` when it is a mapping, else an empty (read-only) one."""
    # Plain dicts first: an isinstance check against the Mapping ABC costs several times a type
    # check, and this runs for every object an informer or a reconciler touches.
    if type(obj) is dict:
        meta = obj.get("metadata")
        if type(meta) is dict:
            return meta
    else:
        meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    return meta if isinstance(meta, Mapping) else _EMPTY


def _str(obj: Any, field: str) -> str:
    value = get_metadata(obj).get(field)
    return value if isinstance(value, str) else ""


def get_name(obj: Any) -> str:
    return _str(obj, "name")


def get_namespace(obj: Any) -> str:
    return _str(obj, "namespace")


def get_uid(obj: Any) -> str:
    return _str(obj, "uid")


def get_resource_version(obj: Any) -> str:
    return _str(obj, "resourceVersion")


def get_creation_timestamp(obj: Any) -> str:
    """The raw ``creationTimestamp`` string (``""`` when unset); parse with ``framework.meta.time``."""
    return _str(obj, "creationTimestamp")


def get_deletion_timestamp(obj: Any) -> str:
    """The raw ``deletionTimestamp`` string (``""`` when unset)."""
    return _str(obj, "deletionTimestamp")


def is_being_deleted(obj: Any) -> bool:
    """Whether ``deletionTimestamp`` is set."""
    return bool(get_metadata(obj).get("deletionTimestamp"))


def get_generation(obj: Any) -> int:
    value = get_metadata(obj).get("generation")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _map(obj: Any, field: str) -> dict[str, str]:
    value = get_metadata(obj).get(field)
    return dict(value) if isinstance(value, Mapping) else {}


def get_labels(obj: Any) -> dict[str, str]:
    """A copy of the labels (``{}`` when none)."""
    return _map(obj, "labels")


def get_annotations(obj: Any) -> dict[str, str]:
    """A copy of the annotations (``{}`` when none)."""
    return _map(obj, "annotations")


def _list(obj: Any, field: str) -> list[Any]:
    value = get_metadata(obj).get(field)
    return list(value) if isinstance(value, list) else []


def get_finalizers(obj: Any) -> list[str]:
    return _list(obj, "finalizers")


def get_owner_references(obj: Any) -> list[dict[str, Any]]:
    return [ref for ref in _list(obj, "ownerReferences") if isinstance(ref, dict)]


def get_controller_of(obj: Any) -> dict[str, Any] | None:
    """``metav1.GetControllerOf``: the owner reference with ``controller: true``, if any."""
    return next((ref for ref in get_owner_references(obj) if ref.get("controller") is True), None)


def object_key(obj: Any) -> str:
    """The cache key ``namespace/name`` (``name`` for cluster-scoped objects)."""
    ns, n = get_namespace(obj), get_name(obj)
    return f"{ns}/{n}" if ns else n


def get_gvk(obj: Any) -> GroupVersionKind:
    """The object's ``apiVersion`` and ``kind`` as a GroupVersionKind."""
    if not isinstance(obj, Mapping):
        return GroupVersionKind("", "", "")
    return from_api_version_and_kind(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))


def ensure_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj["metadata"]``, created (or replacing ``null``) when absent."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def _set(obj: dict[str, Any], field: str, k: str, v: str) -> bool:
    meta = ensure_metadata(obj)
    values = meta.get(field)
    if not isinstance(values, dict):
        values = meta[field] = {}
    if values.get(k) == v:
        return False
    values[k] = v
    return True


def set_label(obj: dict[str, Any], k: str, v: str) -> bool:
    """Set one label; returns whether the object changed."""
    return _set(obj, "labels", k, v)


def set_annotation(obj: dict[str, Any], k: str, v: str) -> bool:
    """Set one annotation (``metav1.SetMetaDataAnnotation``); returns whether the object changed."""
    return _set(obj, "annotations", k, v)
