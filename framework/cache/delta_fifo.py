"""DeltaFIFO: the queue between a Reflector (producer) and an informer (consumer), as in client-go.

Each key maps to the list of changes (*deltas*, oldest first) seen since it was last popped, and the
keys are popped in FIFO order, so a consumer sees every change of an object at most once and always
sees all changes since its last visit::

    fifo = DeltaFIFO(known_objects=indexer, transform=drop_managed_fields)
    fifo.replace(listed_objects, list_rv)  # from the reflector
    fifo.update(watched_object)

    def process(deltas: list[Delta], is_in_initial_list: bool) -> None:
        for delta in deltas:
            if delta.type is DeltaType.Deleted:
                indexer.delete(delta.object)  # may be a DeletedFinalStateUnknown
            else:
                indexer.update(delta.object)

    fifo.pop(process)

Contracts (client-go tools/cache/delta_fifo.go):

- Only two consecutive ``Deleted`` deltas collapse, keeping the one that is not a
  :class:`DeletedFinalStateUnknown` tombstone; nothing else is coalesced.
- ``delete`` is dropped when the key is neither queued nor in ``known_objects`` (already reported).
- ``replace`` queues ``Replaced`` (``Sync`` unless ``emit_delta_type_replaced``) per listed object, then
  ``Deleted(DeletedFinalStateUnknown)`` for every queued or known key missing from the list: deletions
  that happened while the watch was down.
- ``resync`` queues ``Sync`` with the known object, only for keys with no pending deltas.
- ``has_synced`` turns true once every item of the first ``replace`` is popped, or right away if an
  ``add``/``update``/``delete`` came before any ``replace``.
- ``transform`` runs once per object at enqueue, never for tombstones or ``Sync`` deltas.

Note: client-go informers default to RealFIFO (every event, no per-key grouping) since 1.33; this
package keeps the DeltaFIFO contract, which the issue specifies.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

import structlog

from framework.compact import oversized

from .keys import meta_namespace_key_func
from .tombstone import DeletedFinalStateUnknown

log = structlog.get_logger("framework.cache")

TransformFunc = Callable[[Any], Any]
"""Called with each object before it is queued; returns the object to queue (and later cache)."""
PopProcessFunc = Callable[[list["Delta"], bool], Any]
"""``process(deltas, is_in_initial_list)`` as called by :meth:`DeltaFIFO.pop`."""

_SLOW_PROCESS_SECONDS = 0.1
_SLOW_PROCESS_MIN_DEPTH = 10


class DeltaType(StrEnum):
    """Kind of change carried by a :class:`Delta` (client-go spelling; upper-case aliases exist)."""

    Added = "Added"
    Updated = "Updated"
    Deleted = "Deleted"
    # From a relist (Replace) when emit_delta_type_replaced is set; informers set it.
    Replaced = "Replaced"
    # From a periodic resync, or a relist when Replaced is not emitted.
    Sync = "Sync"

    ADDED = "Added"
    UPDATED = "Updated"
    DELETED = "Deleted"
    REPLACED = "Replaced"
    SYNC = "Sync"


@dataclass(slots=True)  # not frozen: frozen init costs ~2.5x, and one Delta is made per event
class Delta:
    """One change: its type and the object after it (for ``Deleted``, the last known state).

    Treat as immutable.
    """

    type: DeltaType
    object: Any


class FIFOClosedError(Exception):
    """Raised by :meth:`DeltaFIFO.pop` once the queue is closed and empty."""


class KeyListerGetter(Protocol):
    """What ``known_objects`` must provide; the :class:`~framework.cache.store.Indexer` does."""

    def list_keys(self) -> list[str]: ...

    def get_by_key(self, key: str) -> Any | None: ...


class DeltaFIFO:
    """Producer/consumer queue of per-object deltas; thread-safe (see the module docstring).

    Args:
        key_func: maps an object to its key; tombstones are keyed by their ``key``.
        known_objects: the consumer's store (the informer's Indexer), used to detect deletions on
            ``replace``, to filter ``delete`` and to produce ``resync``. ``None`` disables all three
            uses (deletions are then detected only against queued keys, and resync does nothing).
        emit_delta_type_replaced: queue ``Replaced`` rather than ``Sync`` on ``replace``.
        transform: applied once to each object as it is queued, e.g. to drop ``managedFields``.
            Must not mutate objects the consumer already holds.
        transform_replaced: also transform the objects of ``replace`` (False when the producer already
            transformed the listed objects, as the informer's reflector does page by page).
    """

    def __init__(
        self,
        key_func: Callable[[Any], str] = meta_namespace_key_func,
        known_objects: KeyListerGetter | None = None,
        emit_delta_type_replaced: bool = True,
        transform: TransformFunc | None = None,
        transform_replaced: bool = True,
    ) -> None:
        self._key_func = key_func
        self._transform_replaced = transform_replaced
        self._known = known_objects
        self._emit_replaced = emit_delta_type_replaced
        self._transform = transform
        # RLock so a process callback (run under the lock) may call back into the queue.
        self._cond = threading.Condition(threading.RLock())
        self._items: dict[str, list[Delta]] = {}
        self._queue: deque[str] = deque()  # every key of _items exactly once, in FIFO order
        self._populated = False
        self._initial_population_count = 0
        self._closed = False

    # -- producers ----------------------------------------------------------------------------------

    def add(self, obj: Any) -> None:
        """Queue an ``Added`` delta."""
        with self._cond:
            self._populated = True
            self._queue_action(DeltaType.Added, DeltaType.Added, obj, self.key_of(obj))

    def update(self, obj: Any) -> None:
        """Queue an ``Updated`` delta."""
        with self._cond:
            self._populated = True
            self._queue_action(DeltaType.Updated, DeltaType.Updated, obj, self.key_of(obj))

    def delete(self, obj: Any) -> None:
        """Queue a ``Deleted`` delta, unless the key is neither queued nor known.

        That case means the deletion was already reported (e.g. as a tombstone by a relist).
        """
        key = self.key_of(obj)
        with self._cond:
            self._populated = True
            if key not in self._items and (self._known is None or self._known.get_by_key(key) is None):
                return
            self._queue_action(DeltaType.Deleted, DeltaType.Deleted, obj, key)

    def replace(self, objs: Iterable[Any], resource_version: str = "") -> None:
        """Queue the result of a full list, plus tombstones for keys that vanished.

        Each object gets ``Replaced`` (or ``Sync``). Then every queued key absent from ``objs`` gets
        ``Deleted(DeletedFinalStateUnknown(key, newest queued object))`` and every known key absent
        from ``objs`` and not queued gets ``Deleted(DeletedFinalStateUnknown(key, known object))``.
        ``resource_version`` is accepted for parity with client-go and not used.
        """
        action = DeltaType.Replaced if self._emit_replaced else DeltaType.Sync
        with self._cond:
            keys: set[str] = set()
            for obj in objs:
                key = self.key_of(obj)
                keys.add(key)
                # Internal type Replaced even when emitting Sync: listed objects are new, so transform.
                self._queue_action(action, DeltaType.Replaced, obj, key)

            queued_deletions = 0
            for key, deltas in list(self._items.items()):
                if key in keys:
                    continue
                last = deltas[-1].object
                if isinstance(last, DeletedFinalStateUnknown):
                    last = last.obj
                queued_deletions += 1
                self._queue_action(
                    DeltaType.Deleted, DeltaType.Deleted, DeletedFinalStateUnknown(key, last), key
                )

            if self._known is not None:
                for key in self._known.list_keys():
                    if key in keys or key in self._items:
                        continue
                    last = self._known.get_by_key(key)
                    if last is None:
                        log.info("tombstone without object: key vanished from known objects", key=key)
                    queued_deletions += 1
                    self._queue_action(
                        DeltaType.Deleted, DeltaType.Deleted, DeletedFinalStateUnknown(key, last), key
                    )

            if not self._populated:
                self._populated = True
                self._initial_population_count = len(keys) + queued_deletions

    def resync(self) -> None:
        """Queue ``Sync(known object)`` for every known key without pending deltas.

        Keys with pending deltas are skipped: the known object is older than what is queued, and
        a Sync behind it would replay stale state.
        """
        with self._cond:
            known = self._known
            if known is None:
                return
            items = self._items
            for key in known.list_keys():
                if key in items:
                    continue
                obj = known.get_by_key(key)
                if obj is None:
                    continue  # deleted from the store since list_keys()
                self._queue_action(DeltaType.Sync, DeltaType.Sync, obj, key)

    # -- consumer -----------------------------------------------------------------------------------

    def pop(self, process: PopProcessFunc, timeout: float | None = None) -> list[Delta] | None:
        """Wait for a key, dequeue it and call ``process(deltas, is_in_initial_list)`` under the lock.

        The key is removed before ``process`` runs and is not re-queued if it raises (the exception
        propagates); producers block while ``process`` runs, so keep it short.

        Args:
            timeout: seconds to wait for an item; ``None`` waits until an item arrives or the queue
                is closed.

        Returns:
            The popped deltas, or ``None`` if ``timeout`` expired first.

        Raises:
            FIFOClosedError: the queue is closed and empty. Items queued before ``close`` still drain.
        """
        with self._cond:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                while not self._queue:
                    if self._closed:
                        raise FIFOClosedError("DeltaFIFO is closed")
                    if deadline is None:
                        self._cond.wait()
                    else:
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            return None
                        self._cond.wait(remaining)
                is_in_initial_list = not self._has_synced_locked()
                key = self._queue.popleft()
                depth = len(self._queue)
                if self._initial_population_count > 0:
                    self._initial_population_count -= 1
                deltas = self._items.pop(key, None)
                if not depth and oversized(self._items):
                    self._items = {}  # drained after a burst: drop the burst-sized table
                if deltas is None:
                    log.error("key queued without deltas; skipped", key=key)
                    continue
                if depth <= _SLOW_PROCESS_MIN_DEPTH:
                    process(deltas, is_in_initial_list)
                    return deltas
                # A slow process blocks every producer; say so when a backlog builds (k/k#103917).
                start = time.monotonic()
                try:
                    process(deltas, is_in_initial_list)
                finally:
                    elapsed = time.monotonic() - start
                    if elapsed > _SLOW_PROCESS_SECONDS:
                        log.warning("slow DeltaFIFO process", key=key, depth=depth, seconds=round(elapsed, 3))
                return deltas

    def has_synced(self) -> bool:
        """True once the first ``replace``'s items are all popped, or after an earlier add/update/delete."""
        with self._cond:
            return self._has_synced_locked()

    def close(self) -> None:
        """Close the queue: waiting and future ``pop`` calls raise once it is empty."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def is_closed(self) -> bool:
        """Whether :meth:`close` was called."""
        with self._cond:
            return self._closed

    # -- inspection ---------------------------------------------------------------------------------

    def key_of(self, obj: Any) -> str:
        """Key of an object, a tombstone (its ``key``) or a non-empty deltas list (its newest object)."""
        if type(obj) is list:
            if not obj:
                raise ValueError("cannot key an empty deltas list")
            obj = obj[-1].object
        if isinstance(obj, DeletedFinalStateUnknown):
            return obj.key
        return self._key_func(obj)

    def list_keys(self) -> list[str]:
        """Keys with pending deltas, in queue order."""
        with self._cond:
            return list(self._queue)

    def get_by_key(self, key: str) -> list[Delta] | None:
        """A copy of the pending deltas of ``key``, or ``None``."""
        with self._cond:
            deltas = self._items.get(key)
            return None if deltas is None else list(deltas)

    def get(self, obj: Any) -> list[Delta] | None:
        """A copy of the pending deltas for ``obj``'s key, or ``None``."""
        return self.get_by_key(self.key_of(obj))

    def list(self) -> list[Any]:
        """The newest queued object of every pending key."""
        with self._cond:
            return [deltas[-1].object for deltas in self._items.values()]

    def __len__(self) -> int:
        """Number of keys with pending deltas."""
        with self._cond:
            return len(self._queue)

    # -- internals ----------------------------------------------------------------------------------

    def _has_synced_locked(self) -> bool:
        return self._populated and self._initial_population_count == 0

    def _queue_action(self, action: DeltaType, internal: DeltaType, obj: Any, key: str) -> None:
        # Tombstones and Sync carry objects that were already transformed when first queued.
        if (
            self._transform is not None
            and internal is not DeltaType.Sync
            and (internal is not DeltaType.Replaced or self._transform_replaced)
            and not isinstance(obj, DeletedFinalStateUnknown)
        ):
            obj = self._transform(obj)
        delta = Delta(action, obj)
        deltas = self._items.get(key)
        if deltas is None:
            self._items[key] = [delta]
            self._queue.append(key)
            self._cond.notify()
            return
        last = deltas[-1]
        if action is DeltaType.Deleted and last.type is DeltaType.Deleted:
            # Two deletions in a row report one: keep the real final state over a tombstone.
            if isinstance(last.object, DeletedFinalStateUnknown):
                deltas[-1] = delta
            return
        deltas.append(delta)
