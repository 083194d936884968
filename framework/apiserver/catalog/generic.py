"""The generic strategy: every built-in resource of the catalog served with storage semantics.

A kind nobody wrote a module for still behaves as kube-apiserver's generic registry store does for it:
CRUD, list/watch with label and field selectors, ``/status`` (the main resource ignores status, the
subresource everything else), ``metadata.generation`` bumped by changes outside metadata and status,
status reset on create, strategic merge with the keys of the kind's Go structs (``strategic_merge.py``).
Versions of one resource share one storage table, as in etcd; the stored object carries the preferred
(storage) version and each served version rewrites ``apiVersion`` only (no field conversion, see
docs/apiserver.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from framework.apiserver.catalog import CatalogEntry, builtin_resources
from framework.apiserver.encoding import timefmt
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.schema import version_priority

# The subresources the generic REST code serves (scale.py is /scale); the rest (log, exec, proxy,
# binding, eviction, ...) need a kubelet or a controller and are documented exceptions.
SERVED_SUBRESOURCES = ("status", "scale")


def catalog_entry(group: str, version: str, resource: str) -> CatalogEntry:
    for e in builtin_resources():
        if (e.group, e.version, e.resource) == (group, version, resource):
            return e
    raise KeyError(f"{resource}.{group}/{version} is not a built-in resource of the client's release")


def reset_status(obj: dict, old: dict | None) -> None:
    """PrepareForCreate of a kind with a status subresource: what the client sent as status is dropped."""
    if old is None:
        obj["status"] = {}


def _echo_review(body: dict) -> dict:
    """A create-only kind nothing evaluates: the object back with ``creationTimestamp`` and a status
    saying it is incomplete where the kind has that field (docs/apiserver.md lists them)."""
    out = {**body, "metadata": {**(body.get("metadata") or {}), "creationTimestamp": timefmt.now_time()}}
    if body.get("kind") == "SelfSubjectRulesReview":
        out["status"] = {
            "resourceRules": [],
            "nonResourceRules": [],
            "incomplete": True,
            "evaluationError": "rules are not enumerated by this server; ask a SelfSubjectAccessReview",
        }
    return out


def strategy(group: str, version: str, resource: str, **overrides: Any) -> ResourceType:
    """The generic strategy of a catalog resource, with a kind module's ``overrides`` (ResourceType
    fields) on top."""
    e = catalog_entry(group, version, resource)
    subresources = tuple(s.name for s in e.subresources if s.name in SERVED_SUBRESOURCES)
    has_status = "status" in subresources
    persisted = e.verbs != ("create",)
    fields: dict[str, Any] = {
        "short_names": e.short_names,
        "categories": e.categories,
        "subresources": subresources,
        "verbs": e.verbs,
        "tracks_generation": has_status,
        "normalize": reset_status if has_status else None,
        "persisted": persisted,
        "supports_gc": persisted,
        "time_fields": ("status.conditions[].lastTransitionTime",) if has_status else (),
        "returns_deleted_object": e.delete_returns_object,
    }
    if not persisted:
        fields["review"] = lambda server, body, user, namespace: _echo_review(body)
    fields.update(overrides)
    return ResourceType(group, version, resource, e.kind, e.namespaced, e.kind.lower(), **fields)


def served_types(explicit: Iterable[ResourceType]) -> list[ResourceType]:
    """``explicit`` (the kinds with their own module) and, for every other catalog resource, its generic
    strategy. All versions of one group/resource share the storage table of the explicit type or else of
    the preferred version."""
    out = list(explicit)
    have = {(rt.group, rt.version, rt.resource) for rt in out}
    by_gvr = {(e.group, e.version, e.resource): e for e in builtin_resources()}
    for rt in out:
        e = by_gvr.get((rt.group, rt.version, rt.resource))
        if e is not None:  # a real cluster's short names and categories, unless the module says otherwise
            rt.short_names = rt.short_names or e.short_names
            rt.categories = rt.categories or e.categories
            if e.subresource("scale") and "scale" not in rt.subresources:
                rt.subresources += ("scale",)
    storage_version: dict[tuple[str, str], str] = {}
    for rt in out:
        storage_version.setdefault((rt.group, rt.resource), rt.version)
    entries = [e for e in builtin_resources() if (e.group, e.version, e.resource) not in have]
    for e in sorted(entries, key=lambda e: version_priority(e.version)):
        storage_version.setdefault((e.group, e.resource), e.version)
    for e in entries:
        stored = storage_version[(e.group, e.resource)]
        overrides: dict[str, Any] = {}
        if stored != e.version:
            overrides.update(
                to_storage=_set_api_version(f"{e.group}/{stored}" if e.group else stored),
                from_storage=_set_api_version(e.api_version),
            )
        out.append(strategy(e.group, e.version, e.resource, **overrides))
    return out


def _set_api_version(api_version: str) -> Any:
    def convert(obj: dict) -> dict:
        return obj if obj.get("apiVersion") == api_version else {**obj, "apiVersion": api_version}

    return convert
