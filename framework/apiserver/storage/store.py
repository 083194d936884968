"""Versioned object storage: one global resourceVersion counter, per-resource tables and histories.

This plays the part of etcd plus the watch cache. All access happens on the API server's event loop
thread, so there are no locks. Stored objects are treated as immutable: every write stores a new dict,
which lets histories, snapshots and watch events share objects without copying. With a
:class:`~.persistence.SQLiteStore` every write is committed there before it is applied in memory.
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from framework.apiserver.storage.persistence import SQLiteStore

ObjKey = tuple[str, str]  # (namespace or "", name)


@dataclass(slots=True)
class WatchEvent:
    """One change of one object; ``obj`` is the new state (for DELETED, the last state at ``rv``)."""

    rv: int
    type: str
    obj: dict
    prev: dict | None
    # Serialized forms per output codec, so N watchers cost one encoding (watch fan-out).
    encoded: dict[Any, bytes] = field(default_factory=dict)


class Table:
    """The objects of one stored resource and the bounded history of their changes (spec 15-7)."""

    def __init__(self, key: str, capacity: int, window_start: int = 0) -> None:
        self.key = key
        self.objects: dict[ObjKey, dict] = {}
        self.history: deque[WatchEvent] = deque()
        self.capacity = capacity
        # Every event with rv > window_start is in ``history``; older starts are "too old" (410).
        self.window_start = window_start
        self.watchers: set[Any] = set()
        # ``objects``' keys in list order, kept until a key is added or removed (pagination, 14-3).
        self._sorted_keys: list[ObjKey] | None = None

    def sorted_keys(self) -> list[ObjKey]:
        """The keys of ``objects`` sorted (namespace, name); shared, so callers must not modify it."""
        if self._sorted_keys is None:
            self._sorted_keys = sorted(self.objects)
        return self._sorted_keys

    def record(self, event: WatchEvent) -> None:
        self.history.append(event)
        while len(self.history) > self.capacity:
            self.window_start = self.history.popleft().rv

    def events_after(self, rv: int) -> Iterator[WatchEvent]:
        for ev in self.history:
            if ev.rv > rv:
                yield ev


class Storage:
    """All tables plus the global resourceVersion counter (spec 6-3)."""

    def __init__(self, watch_cache_size: int = 1000, store: SQLiteStore | None = None) -> None:
        self.rv = 0
        self.watch_cache_size = watch_cache_size
        self.tables: dict[str, Table] = {}
        # Internal observers (the in-process controllers): called synchronously after each write.
        self.listeners: list[Callable[[str, WatchEvent], None]] = []
        self.store = store
        # History starts here: what happened before a restart is too old for every table (410).
        self.history_start = 0
        if store is not None:
            self.rv, loaded = store.load()
            self.history_start = self.rv
            for key, objects in loaded.items():
                self.table(key).objects = objects

    def table(self, key: str) -> Table:
        t = self.tables.get(key)
        if t is None:
            t = self.tables[key] = Table(key, self.watch_cache_size, self.history_start)
        return t

    def replay(self) -> None:
        """Tell the listeners about every stored object as if just added (after loading a store)."""
        # The listeners' indexes grow by one entry per object: no cyclic collection until they are built.
        collecting = gc.isenabled()
        gc.disable()
        try:
            for t in list(self.tables.values()):
                for obj in list(t.objects.values()):
                    ev = WatchEvent(int(obj["metadata"]["resourceVersion"]), "ADDED", obj, None)
                    for listener in self.listeners:
                        listener(t.key, ev)
        finally:
            if collecting:
                gc.enable()

    def get(self, key: str, k: ObjKey) -> dict | None:
        t = self.tables.get(key)
        return t.objects.get(k) if t else None

    # -- writes ----------------------------------------------------------------------------------

    def _emit(self, t: Table, ev: WatchEvent) -> None:
        t.record(ev)
        for w in list(t.watchers):
            w.push(ev)
        for listener in self.listeners:
            listener(t.key, ev)

    def _stamp(self, key: str, k: ObjKey, obj: dict) -> int:
        """Give ``obj`` the next resourceVersion and make it durable (raises if the store fails)."""
        rv = self.rv + 1
        obj["metadata"]["resourceVersion"] = str(rv)
        if self.store is not None:
            self.store.put(key, k, rv, obj)
        self.rv = rv
        return rv

    def create(self, key: str, k: ObjKey, obj: dict) -> dict:
        """Store a new object (which becomes owned by storage) and emit ADDED."""
        t = self.table(key)
        rv = self._stamp(key, k, obj)
        t.objects[k] = obj
        t._sorted_keys = None
        self._emit(t, WatchEvent(rv, "ADDED", obj, None))
        return obj

    def update(self, key: str, k: ObjKey, obj: dict) -> dict:
        t = self.table(key)
        prev = t.objects[k]
        rv = self._stamp(key, k, obj)
        t.objects[k] = obj
        self._emit(t, WatchEvent(rv, "MODIFIED", obj, prev))
        return obj

    def delete(self, key: str, k: ObjKey) -> dict:
        """Remove an object; the DELETED event carries its last state at the deletion RV (15-5)."""
        t = self.table(key)
        prev = t.objects[k]
        last = {**prev, "metadata": {**prev["metadata"]}}
        rv = self.rv + 1
        last["metadata"]["resourceVersion"] = str(rv)
        if self.store is not None:
            self.store.delete(key, k, rv)
        self.rv = rv
        del t.objects[k]
        t._sorted_keys = None
        self._emit(t, WatchEvent(rv, "DELETED", last, prev))
        return last

    def drop_table(self, key: str) -> None:
        if self.store is not None:
            self.store.drop(key)
        t = self.tables.pop(key, None)
        if t:
            for w in list(t.watchers):
                w.close()

    # -- reads -----------------------------------------------------------------------------------

    def snapshot(self, key: str, rv: int) -> dict[ObjKey, dict]:
        """The table's objects as they were at ``rv`` (spec 14-4 "exact", 14-3 continue).

        Raises ``ValueError`` when ``rv`` is older than the retained history.
        """
        t = self.table(key)
        if rv < t.window_start:
            raise ValueError("too old")
        newer = [ev for ev in t.history if ev.rv > rv]
        if not newer:
            return t.objects
        objs = dict(t.objects)
        for ev in reversed(newer):
            meta = ev.obj["metadata"]
            k = (meta.get("namespace", ""), meta["name"])
            if ev.type == "ADDED":
                objs.pop(k, None)
            else:
                assert ev.prev is not None
                objs[k] = ev.prev
        return objs

    def compact(self) -> None:
        """Forget all history: every resourceVersion older than now becomes too old (410)."""
        self.history_start = self.rv
        for t in self.tables.values():
            t.history.clear()
            t.window_start = self.rv
