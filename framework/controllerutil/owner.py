"""Owner references: controller-runtime's ``SetControllerReference`` and friends, on plain dicts.

The owner's ``apiVersion`` and ``kind`` come from the owner object itself (there is no scheme), so pass
an object as read from the API server or a cache, not a bare name. Two references denote the same
owner when group, kind and name agree; the version is ignored, as in
``sigs.k8s.io/controller-runtime/pkg/controller/controllerutil``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from framework.meta.object import (
    ensure_metadata,
    get_controller_of,
    get_metadata,
    get_name,
    get_namespace,
    get_owner_references,
)
from framework.meta.schema import parse_group_version

__all__ = [
    "AlreadyOwnedError",
    "get_controller_of",
    "has_controller_reference",
    "has_owner_reference",
    "merge_owner_references",
    "new_controller_ref",
    "remove_controller_reference",
    "remove_owner_reference",
    "set_controller_reference",
    "set_owner_reference",
]


class AlreadyOwnedError(Exception):
    """The object already has a controller reference to another owner.

    ``object`` is the object that was to be controlled, ``owner`` its existing controller reference.
    """

    def __init__(self, obj: Mapping[str, Any], owner: Mapping[str, Any]) -> None:
        self.object = obj
        self.owner = dict(owner)
        super().__init__(
            f"Object {get_namespace(obj)}/{get_name(obj)} is already owned by another "
            f"{owner.get('kind', '')} controller {owner.get('name', '')}"
        )


def set_controller_reference(
    owner: Mapping[str, Any], obj: dict[str, Any], *, block_owner_deletion: bool = True
) -> bool:
    """Make ``owner`` the controller of ``obj`` (``controller: true``, ``blockOwnerDeletion``).

    Garbage collection deletes ``obj`` with its owner, and ``Builder.owns`` maps events on ``obj`` to
    the owner. Returns whether ``obj`` changed. Raises :class:`AlreadyOwnedError` if another owner is
    already the controller, and ``ValueError`` for an owner the API server would refuse (see
    :func:`set_owner_reference`).
    """
    ref = _reference(owner, obj)
    ref["blockOwnerDeletion"] = block_owner_deletion
    ref["controller"] = True
    existing = get_controller_of(obj)
    if existing is not None and not _same_object(existing, ref):
        raise AlreadyOwnedError(obj, existing)
    return _upsert(obj, ref)


def set_owner_reference(
    owner: Mapping[str, Any], obj: dict[str, Any], *, block_owner_deletion: bool | None = None
) -> bool:
    """Add (or refresh) a non-controller reference to ``owner`` on ``obj``; returns whether it changed.

    Raises ``ValueError`` when the owner is namespaced and ``obj`` is cluster-scoped or in another
    namespace (owner references never cross namespaces), or when the owner lacks ``apiVersion``,
    ``kind``, ``metadata.name`` or ``metadata.uid`` (an owner must exist before it can own).
    """
    ref = _reference(owner, obj)
    if block_owner_deletion is not None:
        ref["blockOwnerDeletion"] = block_owner_deletion
    return _upsert(obj, ref)


def remove_owner_reference(owner: Mapping[str, Any], obj: dict[str, Any]) -> bool:
    """Remove the reference to ``owner`` from ``obj``; returns whether there was one."""
    refs = _refs(obj)
    target = _identity(owner)
    kept = [r for r in refs if not _same_object(r, target)]
    if len(kept) == len(refs):
        return False
    _set_refs(obj, kept)
    return True


def remove_controller_reference(owner: Mapping[str, Any], obj: dict[str, Any]) -> bool:
    """Remove ``owner``'s controller reference from ``obj``; returns whether there was one.

    Raises ``ValueError`` if ``owner`` is referenced but not as the controller.
    """
    target = _identity(owner)
    for ref in _refs(obj):
        if _same_object(ref, target) and not ref.get("controller"):
            raise ValueError(f"{target['kind']} {target['name']} is an owner but not the controller")
    return remove_owner_reference(owner, obj)


def has_controller_reference(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` has a controller reference (to anyone)."""
    return get_controller_of(obj) is not None


def has_owner_reference(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """Whether ``obj`` references ``owner`` (group, kind and name; version ignored)."""
    target = _identity(owner)
    return any(_same_object(r, target) for r in _refs(obj))


def new_controller_ref(
    owner: Mapping[str, Any], gvk: tuple[str, str] | None = None, *, block_owner_deletion: bool = True
) -> dict[str, Any]:
    """A controller reference to ``owner`` (client-go's ``metav1.NewControllerRef``): ``apiVersion``,
    ``kind``, ``name``, ``uid``, ``controller: true`` and ``blockOwnerDeletion``.

    ``gvk`` is ``(apiVersion, kind)``; without it the owner's own are used (as read from the API
    server). Raises ``ValueError`` when the owner lacks any of them, a name or a uid.
    """
    api_version, kind = gvk if gvk is not None else (owner.get("apiVersion"), owner.get("kind"))
    ref = _reference({**owner, "apiVersion": api_version, "kind": kind}, None)
    ref["controller"] = True
    ref["blockOwnerDeletion"] = block_owner_deletion
    return ref


def merge_owner_references(obj: dict[str, Any], refs: list[Mapping[str, Any]]) -> bool:
    """Append each of ``refs`` whose ``uid`` ``obj`` does not reference yet; the references already
    there are kept as they are (as Gardener's ``kubernetes.MergeOwnerReferences`` does). Returns whether
    ``obj`` changed."""
    existing = _refs(obj)
    uids = {r.get("uid") for r in existing}
    added = []
    for ref in refs:
        if ref.get("uid") not in uids:
            uids.add(ref.get("uid"))
            added.append(dict(ref))
    if not added:
        return False
    _set_refs(obj, [*existing, *added])
    return True


# --- internals -------------------------------------------------------------------------------------


def _refs(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    return get_owner_references(obj)


def _set_refs(obj: dict[str, Any], refs: list[dict[str, Any]]) -> None:
    meta = ensure_metadata(obj)
    if refs:
        meta["ownerReferences"] = refs
    else:
        meta.pop("ownerReferences", None)


def _identity(owner: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": owner.get("apiVersion") or "",
        "kind": owner.get("kind") or "",
        "name": get_metadata(owner).get("name"),
    }


def _reference(owner: Mapping[str, Any], obj: Mapping[str, Any] | None) -> dict[str, Any]:
    """A reference to ``owner``; ``obj`` (``None``: not checked) must be allowed to name it."""
    meta = get_metadata(owner)
    missing = [
        field
        for field, value in (
            ("apiVersion", owner.get("apiVersion")),
            ("kind", owner.get("kind")),
            ("metadata.name", meta.get("name")),
            ("metadata.uid", meta.get("uid")),
        )
        if not value
    ]
    if missing:
        raise ValueError(f"owner has no {', '.join(missing)}: pass the owner as read from the API server")
    owner_ns = get_namespace(owner)
    if owner_ns and obj is not None:
        obj_ns = get_namespace(obj)
        if not obj_ns:
            raise ValueError(
                "cluster-scoped resource must not have a namespace-scoped owner, "
                f"owner's namespace {owner_ns}"
            )
        if obj_ns != owner_ns:
            raise ValueError(
                "cross-namespace owner references are disallowed, "
                f"owner's namespace {owner_ns}, obj's namespace {obj_ns}"
            )
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
    }


def _group(api_version: str) -> str | None:
    """The group of an apiVersion; ``None`` if it is no GroupVersion (then nothing is the same)."""
    try:
        return parse_group_version(api_version).group
    except ValueError:
        return None


def _same_object(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    group_a, group_b = _group(a.get("apiVersion") or ""), _group(b.get("apiVersion") or "")
    if group_a is None or group_b is None:
        return False
    return group_a == group_b and a.get("kind") == b.get("kind") and a.get("name") == b.get("name")


def _upsert(obj: dict[str, Any], ref: dict[str, Any]) -> bool:
    refs = _refs(obj)
    for i, existing in enumerate(refs):
        if _same_object(existing, ref):
            if existing == ref:
                return False
            refs[i] = ref
            break
    else:
        refs.append(ref)
    _set_refs(obj, refs)
    return True
