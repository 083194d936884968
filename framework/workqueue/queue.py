"""``Queue``: client-go's work queue, a FIFO of keys with ``dirty`` and ``processing`` sets.

Contracts (kubernetes/client-go util/workqueue/queue.go):

- ``add`` is a no-op for an item already waiting (``dirty``); an item added while it is being processed
  is remembered and queued again only when its worker calls ``done``, so **one item is never handed to
  two workers at once** and any number of adds during processing collapse into one rerun.
- ``get`` blocks until an item is available and returns ``(item, False)``; it returns ``(None, True)``
  only once the queue is shutting down **and** empty, so queued items still drain after ``shut_down``.
- ``shut_down_with_drain`` additionally waits until every item handed out has been ``done``.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Generic, TypeVar

from prometheus_client import CollectorRegistry

from framework.clock import Clock, RealClock
from framework.compact import oversized
from framework.workqueue.metrics import QueueMetrics

__all__ = ["Queue"]

T = TypeVar("T")


class Queue(Generic[T]):
    """A thread-safe work queue of hashable items; see the module docstring for its contracts.

    ``name`` enables the Prometheus metrics (label ``name``) on ``registry`` (default: the global
    ``prometheus_client.REGISTRY``); ``clock`` times them and bounds ``shut_down_with_drain``.
    """

    def __init__(
        self,
        name: str | None = None,
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._name = name
        self._clock: Clock = clock if clock is not None else RealClock()
        self._lock = threading.Lock()
        self._not_empty = threading.Condition(self._lock)
        # A separate condition for drain waiters: a notify meant for a getter must never be consumed
        # by a drainer that goes straight back to sleep.
        self._drained = threading.Condition(self._lock)
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._getters = 0  # threads blocked in get(); lets add/done skip notify() when nobody waits
        self._shutting_down = False
        self._drain = False
        self._metrics: QueueMetrics | None = (
            QueueMetrics(name, self._clock, self._lock, registry) if name else None
        )

    @property
    def name(self) -> str | None:
        """The queue's metrics name, if any."""
        return self._name

    @property
    def clock(self) -> Clock:
        """The clock this queue reads."""
        return self._clock

    def __len__(self) -> int:
        """Items waiting to be handed out (not counting dirty items whose processing is running)."""
        with self._lock:
            return len(self._queue)

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing; ignored once the queue is shutting down."""
        with self._lock:
            if self._shutting_down or item in self._dirty:
                return
            if self._metrics is not None:
                self._metrics.add(item)
            self._dirty.add(item)
            if item in self._processing:
                return
            self._queue.append(item)
            if self._getters:
                self._not_empty.notify()

    def get(self) -> tuple[T | None, bool]:
        """Block until an item is available; return ``(item, False)``, or ``(None, True)`` once the queue
        is shutting down and empty. The caller must call ``done(item)`` when finished with it."""
        with self._lock:
            if not self._queue and not self._shutting_down:
                self._getters += 1
                try:
                    while not self._queue and not self._shutting_down:
                        self._not_empty.wait()
                finally:
                    self._getters -= 1
            if not self._queue:
                return None, True
            item = self._queue.popleft()
            if self._metrics is not None:
                self._metrics.get(item)
            self._processing.add(item)
            self._dirty.discard(item)
            if oversized(self._dirty):
                self._dirty = set()  # drained after a burst: drop the burst-sized table
            return item, False

    def done(self, item: T) -> None:
        """Mark ``item`` as processed; if it was added again meanwhile, queue it once more."""
        with self._lock:
            if self._metrics is not None:
                self._metrics.done(item)
            self._processing.discard(item)
            if item in self._dirty:
                self._queue.append(item)
                if self._getters:
                    self._not_empty.notify()
            elif self._drain and not self._processing:
                self._drained.notify_all()

    def shut_down(self) -> None:
        """Stop accepting adds and wake every ``get``; queued items are still handed out. Does not wait
        for items being processed (and cancels a ``shut_down_with_drain`` that is waiting)."""
        with self._lock:
            self._drain = False
            self._shutting_down = True
            self._not_empty.notify_all()
            self._drained.notify_all()
        self._stop_background()

    def shut_down_with_drain(self, timeout: float | None = None) -> bool:
        """Shut down like ``shut_down``, then wait until every handed-out item is ``done``.

        ``timeout`` (seconds on the queue's clock; None waits indefinitely) bounds the wait. Returns
        True when nothing is being processed any more. Workers must keep running until ``get`` reports
        the shutdown, or the items they would take are never done.
        """
        with self._lock:
            self._drain = True
            self._shutting_down = True
            self._not_empty.notify_all()
            deadline = None if timeout is None else self._clock.monotonic() + timeout
            while self._drain and self._processing:
                if not self._clock.wait_until(self._drained, deadline):
                    break
            self._drain = False
            drained = not self._processing
        self._stop_background()
        return drained

    def shutting_down(self) -> bool:
        """True once ``shut_down`` or ``shut_down_with_drain`` was called."""
        with self._lock:
            return self._shutting_down

    def _stop_background(self) -> None:
        """Hook for subclasses that own threads; called after shutdown, without the lock held."""
