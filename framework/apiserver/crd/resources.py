"""The resource types of custom resources: one per served version of an established CRD (as
k8s.io/apiextensions-apiserver ``pkg/apiserver/customresource_handler.go`` serves them).

The built-in kinds' strategies are in ``registry/`` (one module per kind).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from framework.apiserver.crd.definition import (
    has_status_subresource,
    selectable_fields,
    served_versions,
    storage_version,
    version_entry,
)
from framework.apiserver.registry.strategy import ResourceType


def custom_resource_types(crd: dict) -> list[ResourceType]:
    """One :class:`ResourceType` per served version of an established CRD (16-4)."""
    spec = crd["spec"]
    names = spec["names"]
    group = spec["group"]
    out = []
    # The storage version's type first: the in-process controllers (garbage collector, CRD cleanup)
    # write stored objects through a custom resource's first type, which must not prune them by another
    # version's schema.
    stored = storage_version(crd)
    for version in sorted(served_versions(crd), key=lambda v: v != stored):
        subs: tuple[str, ...] = ("status",) if has_status_subresource(crd, version) else ()
        entry = version_entry(crd, version) or {}
        if (entry.get("subresources") or {}).get("scale") is not None:
            subs += ("scale",)
        selectable = tuple(selectable_fields(crd, version))
        out.append(
            ResourceType(
                group,
                version,
                names["plural"],
                names["kind"],
                spec["scope"] == "Namespaced",
                names.get("singular") or names["kind"].lower(),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                subresources=subs,
                tracks_generation=True,
                put_requires_rv=True,
                crd=crd,
                field_names=selectable,
                own_field_labels=True,
                fields=_selectable_getter(selectable) if selectable else None,
                storage=f"{names['plural']}.{group}",
            )
        )
    return out


def _selectable_getter(paths: tuple[str, ...]) -> Callable[[dict], dict[str, str]]:
    def get(obj: dict) -> dict[str, str]:
        out = {}
        for p in paths:
            cur: Any = obj
            for part in p.split("."):
                cur = cur.get(part) if isinstance(cur, dict) else None
            if cur is not None:
                out[p] = (
                    cur if isinstance(cur, str) else str(cur).lower() if isinstance(cur, bool) else str(cur)
                )
        return out

    return get
