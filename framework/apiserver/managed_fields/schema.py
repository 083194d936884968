"""List and map semantics for server-side apply (structured-merge-diff's schema): for built-in kinds the
strategic-merge strategies of the kind (``merge`` with a key → associative list, without → set) plus the
SSA-only facts its strategy declares; for custom resources the CRD's structural schema
(``x-kubernetes-list-type`` / ``-list-map-keys`` / ``-map-type``); lists are atomic otherwise, maps
granular."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from framework.apiserver.managed_fields.fieldpath import MISSING

if TYPE_CHECKING:
    from framework.apiserver.registry.strategy import ResourceType


class Schema:
    """List/map semantics of one node of an object's type. The base class is the "deduced" schema used
    for parts nothing describes: maps are granular with undeclared keys, lists are atomic."""

    def child(self, key: str) -> Schema:
        return DEDUCED

    def item(self) -> Schema:
        return DEDUCED

    def declared(self, key: str) -> bool:
        """A struct field (True) rather than a key of a map (False)."""
        return False

    def atomic_map(self) -> bool:
        return False

    def list_type(self) -> tuple[str, tuple[str, ...]]:
        """``("atomic", ())``, ``("set", ())`` or ``("map", keys)``."""
        return ("atomic", ())

    def key_default(self, key: str) -> Any:
        """The schema default of an associative list item's key field (``MISSING`` if none)."""
        return MISSING


DEDUCED = Schema()


@dataclass(frozen=True)
class _Table:
    lists: Mapping[str, tuple[str, tuple[str, ...]]]
    atomic: frozenset[str]
    maps: frozenset[str]


class PathSchema(Schema):
    """Built-in kinds: semantics looked up by dotted path (list items written ``[]``)."""

    def __init__(self, table: _Table, path: str = "") -> None:
        self.table = table
        self.path = path

    def child(self, key: str) -> Schema:
        if self.path in self.table.maps:
            return PathSchema(self.table, f"{self.path}.*")
        return PathSchema(self.table, f"{self.path}.{key}" if self.path else key)

    def item(self) -> Schema:
        return PathSchema(self.table, self.path + "[]")

    def declared(self, key: str) -> bool:
        return self.path not in self.table.maps

    def atomic_map(self) -> bool:
        return self.path in self.table.atomic

    def list_type(self) -> tuple[str, tuple[str, ...]]:
        return self.table.lists.get(self.path, ("atomic", ()))


_META_LISTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "metadata.finalizers": ("set", ()),
    "metadata.ownerReferences": ("map", ("uid",)),
}
_META_ATOMIC = frozenset({"metadata.ownerReferences[]"})  # OwnerReference is +structType=atomic
_META_MAPS = frozenset({"metadata.labels", "metadata.annotations"})
_META_TABLE = _Table(_META_LISTS, _META_ATOMIC, _META_MAPS)


def builtin_schema(rt: ResourceType) -> Schema:
    """A built-in kind's schema: its strategic-merge strategies (``merge`` with a key: an associative
    list, without: a set) and the apply facts its strategy declares besides (``rt.apply_*``)."""
    lists: dict[str, tuple[str, tuple[str, ...]]] = dict(_META_LISTS)
    for path, (strategy, key) in (rt.smp or {}).items():
        if strategy == "merge":
            lists[path] = ("map", (key,)) if key else ("set", ())
    lists.update(rt.apply_lists)
    return PathSchema(_Table(lists, _META_ATOMIC | rt.apply_atomic, _META_MAPS | rt.apply_maps))


class OpenAPISchema(Schema):
    """Custom resources: a node of the CRD's structural schema (None: not described, deduced)."""

    def __init__(self, node: dict | None, root: bool = False) -> None:
        self.node = node if isinstance(node, dict) else None
        self.root = root

    def child(self, key: str) -> Schema:
        if self.root and key == "metadata":
            return PathSchema(_META_TABLE, "metadata")
        if self.node is None:
            return DEDUCED
        props = self.node.get("properties")
        if isinstance(props, dict) and key in props:
            return OpenAPISchema(props[key])
        addl = self.node.get("additionalProperties")
        if isinstance(addl, dict):
            return OpenAPISchema(addl)
        return DEDUCED

    def item(self) -> Schema:
        return OpenAPISchema(self.node.get("items")) if self.node is not None else DEDUCED

    def declared(self, key: str) -> bool:
        if self.root and key in ("apiVersion", "kind", "metadata"):
            return True
        props = (self.node or {}).get("properties")
        return isinstance(props, dict) and key in props

    def atomic_map(self) -> bool:
        return self.node is not None and self.node.get("x-kubernetes-map-type") == "atomic"

    def key_default(self, key: str) -> Any:
        prop = ((self.node or {}).get("properties") or {}).get(key)
        return prop["default"] if isinstance(prop, dict) and "default" in prop else MISSING

    def list_type(self) -> tuple[str, tuple[str, ...]]:
        if self.node is None:
            return ("atomic", ())
        kind = self.node.get("x-kubernetes-list-type") or "atomic"
        if kind == "map":
            return ("map", tuple(self.node.get("x-kubernetes-list-map-keys") or ()))
        return (kind, ()) if kind == "set" else ("atomic", ())


def custom_schema(openapi: dict | None) -> Schema:
    return OpenAPISchema(
        openapi or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}, root=True
    )
