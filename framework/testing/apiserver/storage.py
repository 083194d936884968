"""Versioned object storage: one global resourceVersion counter, per-resource tables and histories.

This plays the part of etcd plus the watch cache. All access happens on the API server's event loop
thread, so there are no locks. Stored objects are treated as immutable: every write stores a new dict,
which lets histories, snapshots and watch events share objects without copying.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

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

    def __init__(self, key: str, capacity: int) -> None:
        self.key = key
        self.objects: dict[ObjKey, dict] = {}
        self.history: deque[WatchEvent] = deque()
        self.capacity = capacity
        # Every event with rv > window_start is in ``history``; older starts are "too old" (410).
        self.window_start = 0
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

    def __init__(self, watch_cache_size: int = 1000) -> None:
        self.rv = 0
        self.watch_cache_size = watch_cache_size
        self.tables: dict[str, Table] = {}
        # Internal observers (the in-process controllers): called synchronously after each write.
        self.listeners: list[Callable[[str, WatchEvent], None]] = []

    def table(self, key: str) -> Table:
        t = self.tables.get(key)
        if t is None:
            t = self.tables[key] = Table(key, self.watch_cache_size)
        return t

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

    def _stamp(self, obj: dict) -> int:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        return self.rv

    def create(self, key: str, k: ObjKey, obj: dict) -> dict:
        """Store a new object (which becomes owned by storage) and emit ADDED."""
        t = self.table(key)
        rv = self._stamp(obj)
        t.objects[k] = obj
        t._sorted_keys = None
        self._emit(t, WatchEvent(rv, "ADDED", obj, None))
        return obj

    def update(self, key: str, k: ObjKey, obj: dict) -> dict:
        t = self.table(key)
        prev = t.objects[k]
        rv = self._stamp(obj)
        t.objects[k] = obj
        self._emit(t, WatchEvent(rv, "MODIFIED", obj, prev))
        return obj

    def delete(self, key: str, k: ObjKey) -> dict:
        """Remove an object; the DELETED event carries its last state at the deletion RV (15-5)."""
        t = self.table(key)
        prev = t.objects.pop(k)
        t._sorted_keys = None
        last = {**prev, "metadata": {**prev["metadata"]}}
        rv = self._stamp(last)
        self._emit(t, WatchEvent(rv, "DELETED", last, prev))
        return last

    def drop_table(self, key: str) -> None:
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
        for t in self.tables.values():
            t.history.clear()
            t.window_start = self.rv
