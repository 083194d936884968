"""Cached reads as the :class:`~framework.client.interfaces.Reader` contract says, so cached and live
reads give the same results: ``CacheReader`` reads one kind's :class:`~framework.cache.Indexer`
(controller-runtime's ``pkg/cache/internal/cache_reader.go``); ``IndexedReader`` is the Reader over
one such kind reader per kind (as controller-runtime's ``informerCache`` finds the kind's informer,
then reads it), the one place the cache side spells ``get`` and ``list``."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from framework.client import NotFound, RESTMapping
from framework.client.interfaces import FieldSelectorArg, LabelSelectorArg
from framework.client.selectors import exact_field_matches
from framework.meta import jsoncodec, labels
from framework.meta.object import get_metadata

from .store import Indexer

__all__ = ["CacheReader", "IndexedReader", "deep_copy"]


def deep_copy(obj: Any) -> Any:
    """A private copy of a cached object (orjson round trip: faster than ``copy.deepcopy``)."""
    return jsoncodec.copy(obj)


def _exact_label(selector: labels.Selector) -> tuple[str, str] | None:
    """(key, value) of the selector's first ``key=value`` requirement: the objects it can match
    are a subset of that label's index entry."""
    for r in selector.requirements:
        if r.operator in ("=", "==") or (r.operator == "in" and len(r.values) == 1):
            return r.key, r.values[0]
    return None


class CacheReader:
    """Reads the objects of ``mapping``'s kind from ``indexer``.

    Namespaces must already fit the kind's scope (:meth:`RESTMapping.scoped_namespace`). Returned
    objects are deep copies unless ``copy=False`` (then they are the cached dicts: never mutate them).
    ``resource_version`` gives the List's ``metadata.resourceVersion`` (the informer's last synced).
    """

    def __init__(
        self,
        indexer: Indexer,
        mapping: RESTMapping,
        api_version: str,
        *,
        resource_version: Callable[[], str] = lambda: "",
        copy: bool = True,
    ) -> None:
        self.indexer = indexer
        self.mapping = mapping
        self.api_version = api_version
        self.resource_version = resource_version
        self.copy = copy

    def get(self, name: str, namespace: str | None) -> dict[str, Any]:
        """The object ``namespace/name`` (or ``name``); ``NotFound`` with the API server's message."""
        obj = self.indexer.get_by_key(f"{namespace}/{name}" if namespace else name)
        if obj is None:
            m = self.mapping
            raise NotFound(
                404,
                "NotFound",
                f'{m.qualified_resource} "{name}" not found',
                {"name": name, "group": m.group, "kind": m.resource},
            )
        return deep_copy(obj) if self.copy else obj

    def list(
        self,
        namespace: str | None,
        label_selector: LabelSelectorArg = None,
        field_selector: FieldSelectorArg = None,
    ) -> dict[str, Any]:
        """A List dict of the matching objects.

        ``field_selector`` may hold only exact matches; each is answered from the field index of that
        name (``metadata.name`` and ``metadata.namespace`` need none), any other field raises
        ``ValueError`` naming the index to register, as controller-runtime's cache does.
        """
        fields = exact_field_matches(field_selector)
        name = fields.pop("metadata.name", None)
        ns_field = fields.pop("metadata.namespace", None)
        if ns_field is not None:
            if namespace is not None and ns_field != namespace:
                return self._list_dict([])
            namespace = ns_field or None
        indexes = self.indexer.get_indexers()
        for field in fields:
            if field not in indexes:
                m = self.mapping
                raise ValueError(
                    f"field selector {field}: the cache of {m.kind} ({self.api_version}) has no index "
                    f"{field!r}; register one with add_field_index({self.api_version!r}, {m.kind!r}, "
                    f"{field!r}, func)"
                )
        selector = labels.as_selector(label_selector or None)
        matches = selector.matches
        exact = _exact_label(selector)
        if fields:
            objs = self.indexer.by_index(*next(iter(fields.items())))
        elif namespace:
            objs = self.indexer.by_index("namespace", namespace)
        elif exact is not None:
            objs = self.indexer.by_label(*exact)
        else:
            objs = self.indexer.list()
        items = []
        for obj in objs:
            meta = get_metadata(obj)
            if namespace and meta.get("namespace") != namespace:
                continue
            if name is not None and meta.get("name") != name:
                continue
            if any(value not in indexes[field](obj) for field, value in fields.items()):
                continue
            if matches(meta.get("labels") or {}):
                items.append(deep_copy(obj) if self.copy else obj)
        return self._list_dict(items)

    def _list_dict(self, items: builtins.list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": self.mapping.kind + "List",
            "metadata": {"resourceVersion": self.resource_version()},
            "items": items,
        }


class IndexedReader:
    """A :class:`~framework.client.interfaces.Reader` answering every kind from its
    :class:`CacheReader`, which :meth:`find_kind_reader` finds (the manager's cache: the kind's informer,
    started on demand; a one-off snapshot: the lists it took).

    Namespaces are checked against the kind's scope as the live client checks them (``ValueError``).
    """

    def __init__(self) -> None:
        # (apiVersion, kind, metadata_only) -> its reader once found: a later read is one dict lookup.
        self._kind_readers: dict[tuple[str, str, bool | None], CacheReader] = {}

    def kind_reader(self, api_version: str, kind: str, metadata_only: bool | None) -> CacheReader:
        """The kind's reader, found once (:meth:`find_kind_reader`) and kept."""
        key = (api_version, kind, metadata_only)
        reader = self._kind_readers.get(key)
        if reader is None:
            reader = self._kind_readers[key] = self.find_kind_reader(api_version, kind, metadata_only)
        return reader

    def find_kind_reader(self, api_version: str, kind: str, metadata_only: bool | None) -> CacheReader:
        """The kind's reader (``NoKindMatchError`` for a kind the API server does not serve)."""
        raise NotImplementedError

    def get(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        metadata_only: bool | None = None,
    ) -> dict[str, Any]:
        """The cached object (see :meth:`Reader.get <framework.client.interfaces.Reader.get>`)."""
        reader = self._kind_readers.get((api_version, kind, metadata_only)) or self.kind_reader(
            api_version, kind, metadata_only
        )
        return reader.get(name, reader.mapping.scoped_namespace(namespace, collection=False))

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorArg = None,
        field_selector: FieldSelectorArg = None,
        metadata_only: bool | None = None,
    ) -> dict[str, Any]:
        """The cached objects as a List dict (see :meth:`Reader.list
        <framework.client.interfaces.Reader.list>`; field selectors need a field index,
        :meth:`CacheReader.list`)."""
        reader = self._kind_readers.get((api_version, kind, metadata_only)) or self.kind_reader(
            api_version, kind, metadata_only
        )
        ns = reader.mapping.scoped_namespace(namespace, collection=True)
        return reader.list(ns, label_selector, field_selector)
