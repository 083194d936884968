"""Thread-safe object store with secondary indices: client-go's ``ThreadSafeStore`` and ``Indexer``.

The :class:`Indexer` is the informer cache controllers read from. It maps keys (``"ns/name"``) to the
cached object dicts and keeps secondary indices: an *index function* maps an object to a list of string
values, and ``index[value]`` is the set of keys whose object produced that value. The ``"namespace"``
index is built in, and built on first use: a cache never read by namespace (the Event TTL
controller's, a million objects) does not pay its ~40 bytes per object. Add your own indices at
construction or later with :meth:`Indexer.add_indexers`::

    def by_owner(obj):
        return [ref["uid"] for ref in obj["metadata"].get("ownerReferences", [])]

    indexer.add_indexers({"owner": by_owner})
    children = indexer.by_index("owner", parent["metadata"]["uid"])

Reads hand out the cached dicts themselves, without copying, so lookups are O(1). **Never mutate an
object obtained from the cache**: other readers share it and its index entries would go stale. Take a
``copy.deepcopy`` before changing anything (as Go controllers call ``DeepCopy()``).
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .keys import NAMESPACE_INDEX, meta_namespace_index_func, meta_namespace_key_func

IndexFunc = Callable[[Any], list[str]]
"""Maps an object to the values it is indexed under (may be empty)."""
KeyFunc = Callable[[Any], str]
"""Maps an object to its store key."""

_NO_VALUES: tuple[str, ...] = ()

LABEL_INDEX_PREFIX = "label:"
"""Prefix of the label indices :meth:`Indexer.by_label` registers (``"label:<key>"``)."""


def _label_index_func(key: str) -> IndexFunc:
    def label_values(obj: Any) -> list[str]:
        labels = (obj.get("metadata") or {}).get("labels") if isinstance(obj, dict) else None
        value = labels.get(key) if labels else None
        return [value] if isinstance(value, str) else []

    return label_values


class IndexNotFoundError(KeyError):
    """Raised when a query names an index that was never registered."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "index not found"


class ThreadSafeStore:
    """A dict of key → object plus the indices of its index functions, guarded by one ``RLock``.

    Every write recomputes the index values of the old and the new object and moves the key between
    value sets; a value set that becomes empty is removed, so indices do not grow with churn
    (kubernetes/kubernetes#84959). Index values are computed before anything changes, so an index
    function that raises (a programming error) leaves the store as it was and the error propagates.
    """

    def __init__(
        self,
        indexers: Mapping[str, IndexFunc] | None = None,
        lazy_indexers: Mapping[str, IndexFunc] | None = None,
    ) -> None:
        """``lazy_indexers`` are built (back-filled) by the first read of their index, maintained after."""
        self._lock = threading.RLock()
        self._items: dict[str, Any] = {}
        self._indexers: dict[str, IndexFunc] = dict(indexers or {})
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        self._lazy: dict[str, IndexFunc] = {
            k: v for k, v in (lazy_indexers or {}).items() if k not in self._indexers
        }

    # -- writes -------------------------------------------------------------------------------------

    def add(self, key: str, obj: Any) -> None:
        """Insert or replace the object under ``key``."""
        self.update(key, obj)

    def update(self, key: str, obj: Any) -> None:
        """Insert or replace the object under ``key``."""
        if obj is None:
            raise ValueError("cannot store None")
        with self._lock:
            old = self._items.get(key)
            changes = self._index_changes(old, obj)
            self._items[key] = obj
            self._apply(changes, key)

    def delete(self, key: str) -> None:
        """Remove ``key``; a missing key is ignored."""
        with self._lock:
            old = self._items.get(key)
            if old is None:
                return
            changes = self._index_changes(old, None)
            del self._items[key]
            self._apply(changes, key)

    def replace(self, items: Mapping[str, Any]) -> None:
        """Swap the whole content for ``items`` (key → object) and rebuild every index."""
        new_items = dict(items)
        with self._lock:
            indexers = self._indexers.items()
            indices = {name: self._build_index(name, func, new_items) for name, func in indexers}
            self._items = new_items
            self._indices = indices

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Register more index functions and back-fill them from the current content.

        Allowed while the store is in use (e.g. on a running informer).

        Raises:
            ValueError: a name is already registered; nothing is added then.
        """
        with self._lock:
            clash = sorted(set(indexers) & (set(self._indexers) | set(self._lazy)))
            if clash:
                raise ValueError(f"indexer conflict: {', '.join(map(repr, clash))} already registered")
            built = {name: self._build_index(name, func, self._items) for name, func in indexers.items()}
            self._indexers.update(indexers)
            self._indices.update(built)

    def resync(self) -> None:
        """No-op, kept for parity with client-go's Store interface."""

    # -- reads --------------------------------------------------------------------------------------

    def get(self, key: str) -> Any | None:
        """Return the object under ``key`` or ``None``. The object is shared: do not mutate it."""
        # No lock: a single dict lookup is atomic, and writers only ever swap whole values.
        return self._items.get(key)

    def list(self) -> list[Any]:
        """Return all objects (a new list of the shared cached objects)."""
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        """Return all keys."""
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def get_indexers(self) -> dict[str, IndexFunc]:
        """Return a copy of the registered index functions."""
        with self._lock:
            return {**self._lazy, **self._indexers}

    def by_index(self, index_name: str, value: str) -> builtins.list[Any]:
        """Return the objects whose index function ``index_name`` produced ``value``."""
        with self._lock:
            keys = self._index(index_name).get(value, ())
            items = self._items
            return [items[k] for k in keys]

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        """Return the keys whose object's index function ``index_name`` produced ``value``."""
        with self._lock:
            return list(self._index(index_name).get(value, ()))

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        """Return the objects sharing any value of index ``index_name`` with ``obj``."""
        with self._lock:
            index = self._index(index_name)
            values = _values(index_name, self._indexers[index_name], obj)
            if len(values) == 1:
                keys: Iterable[str] = index.get(values[0], ())
            else:
                keys = set().union(*(index.get(v, ()) for v in values))
            items = self._items
            return [items[k] for k in keys]

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Return every value currently present in index ``index_name``."""
        with self._lock:
            return list(self._index(index_name))

    def by_lazy_index(self, index_name: str, func: IndexFunc, value: str) -> builtins.list[Any]:
        """:meth:`by_index`, registering ``func`` as the lazy index ``index_name`` if it has none yet
        (built now, maintained from then on)."""
        with self._lock:
            if index_name not in self._indices and index_name not in self._lazy:
                self._lazy[index_name] = func
            return self.by_index(index_name, value)

    # -- internals ----------------------------------------------------------------------------------

    def _index(self, index_name: str) -> dict[str, set[str]]:
        """The index ``index_name``, built now if it is lazy and not read before. Lock held."""
        index = self._indices.get(index_name)
        if index is not None:
            return index
        func = self._lazy.get(index_name)
        if func is not None:
            index = self._build_index(index_name, func, self._items)  # may raise: register after
            self._indices[index_name] = index
            self._indexers[index_name] = func
            del self._lazy[index_name]
            return index
        known = ", ".join(repr(n) for n in [*self._indices, *self._lazy]) or "none"
        raise IndexNotFoundError(f"index {index_name!r} does not exist (known: {known})")

    def _index_changes(self, old: Any, new: Any) -> builtins.list[tuple[str, Any, Any]]:
        changes = []
        name = ""
        try:
            for name, func in self._indexers.items():
                old_values = func(old) if old is not None else _NO_VALUES
                new_values = func(new) if new is not None else _NO_VALUES
                # The common update keeps its values (same namespace, same owner): nothing to move.
                if old_values != new_values:
                    changes.append((name, _materialise(old_values), _materialise(new_values)))
        except Exception as exc:
            exc.add_note(f"raised by index function {name!r}")
            raise
        return changes

    def _apply(self, changes: builtins.list[tuple[str, Any, Any]], key: str) -> None:
        for name, old_values, new_values in changes:
            index = self._indices[name]
            for value in old_values:
                if value in new_values:
                    continue
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]  # prune, or every value ever seen would stay forever
            for value in new_values:
                keys = index.get(value)
                if keys is None:
                    index[value] = {key}
                else:
                    keys.add(key)

    @staticmethod
    def _build_index(name: str, func: IndexFunc, items: Mapping[str, Any]) -> dict[str, set[str]]:
        index: dict[str, set[str]] = {}
        for key, obj in items.items():
            for value in _values(name, func, obj):
                keys = index.get(value)
                if keys is None:
                    index[value] = {key}
                else:
                    keys.add(key)
        return index


def _values(name: str, func: IndexFunc, obj: Any) -> list[str] | tuple[str, ...]:
    try:
        values = func(obj)
    except Exception as exc:
        exc.add_note(f"raised by index function {name!r}")
        raise
    return _materialise(values)


def _materialise(values: Any) -> list[str] | tuple[str, ...]:
    if type(values) is list or type(values) is tuple:
        return values
    return list(values)  # any other iterable (e.g. a generator): iterated more than once


class Indexer:
    """The informer cache: a :class:`ThreadSafeStore` keyed by ``key_func`` with the namespace index.

    Args:
        key_func: maps an object to its key; the default also accepts
            :class:`~framework.cache.tombstone.DeletedFinalStateUnknown` tombstones.
        indexers: extra index functions by name. ``"namespace"`` is always present (built when first
            read); passing it again is allowed only with
            :func:`~framework.cache.keys.meta_namespace_index_func`.

    Objects returned by ``get``/``list``/``by_index`` are the cached dicts: **do not mutate them**;
    deep-copy first. The Indexer also serves as the DeltaFIFO's ``known_objects``.
    """

    def __init__(
        self,
        key_func: KeyFunc = meta_namespace_key_func,
        indexers: Mapping[str, IndexFunc] | None = None,
    ) -> None:
        merged: dict[str, IndexFunc] = {}
        for name, func in (indexers or {}).items():
            if name == NAMESPACE_INDEX and func is not meta_namespace_index_func:
                raise ValueError(f"indexer conflict: {name!r} is built in")
            merged[name] = func
        lazy = {} if NAMESPACE_INDEX in merged else {NAMESPACE_INDEX: meta_namespace_index_func}
        self.key_func = key_func
        self._store = ThreadSafeStore(merged, lazy_indexers=lazy)

    def add(self, obj: Any) -> None:
        """Insert or replace ``obj`` under its key."""
        self._store.update(self.key_func(obj), obj)

    def update(self, obj: Any) -> None:
        """Insert or replace ``obj`` under its key."""
        self._store.update(self.key_func(obj), obj)

    def delete(self, obj: Any) -> None:
        """Remove the object with ``obj``'s key (a tombstone works too); missing keys are ignored."""
        self._store.delete(self.key_func(obj))

    def get(self, obj: Any) -> Any | None:
        """Return the cached object with ``obj``'s key, or ``None``."""
        return self._store.get(self.key_func(obj))

    def get_by_key(self, key: str) -> Any | None:
        """Return the cached object under ``key`` (``"ns/name"`` or ``"name"``), or ``None``."""
        return self._store.get(key)

    def list(self) -> list[Any]:
        """Return all cached objects."""
        return self._store.list()

    def list_keys(self) -> builtins.list[str]:
        """Return all keys."""
        return self._store.list_keys()

    def replace(self, objs: Iterable[Any], resource_version: str = "") -> None:
        """Replace the whole content with ``objs``; ``resource_version`` is accepted for parity."""
        key_func = self.key_func
        self._store.replace({key_func(obj): obj for obj in objs})

    def resync(self) -> None:
        """No-op, kept for parity with client-go's Store interface."""

    def by_index(self, index_name: str, value: str) -> builtins.list[Any]:
        """Return the objects indexed under ``value`` in index ``index_name``.

        Raises:
            IndexNotFoundError: (a ``KeyError``) the index does not exist.
        """
        return self._store.by_index(index_name, value)

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        """Return the keys indexed under ``value`` in index ``index_name``."""
        return self._store.index_keys(index_name, value)

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        """Return the objects sharing any index value with ``obj`` in index ``index_name``."""
        return self._store.index(index_name, obj)

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Return the values present in index ``index_name``."""
        return self._store.list_index_func_values(index_name)

    def by_label(self, key: str, value: str) -> builtins.list[Any]:
        """Return the objects whose label ``key`` is ``value``.

        The index of label ``key`` (named ``"label:<key>"``) is built by the first call and maintained
        after, so a label-selected read of a cluster-wide cache is not a scan of every object
        (the project controller lists its ClusterRoles by label once per reconcile); a cache never
        read so pays nothing.
        """
        return self._store.by_lazy_index(LABEL_INDEX_PREFIX + key, _label_index_func(key), value)

    def get_indexers(self) -> dict[str, IndexFunc]:
        """Return a copy of the registered index functions (the built-in ones included)."""
        return self._store.get_indexers()

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Register and back-fill more index functions; safe on a running informer.

        Raises:
            ValueError: a name is already registered.
        """
        self._store.add_indexers(indexers)

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, key: object) -> bool:
        return key in self._store
