"""``DelayingQueue``: a ``Queue`` whose items can be added after a delay (client-go delaying_queue.go).

Delayed items wait in a min-heap ordered by ready time, served by one named timer thread that blocks
on the queue's clock until the earliest item is due. Adding an item that is already waiting keeps the
**earliest** ready time. The thread starts with the first delayed add and stops on shutdown.

A waiting item costs one heap tuple ``(ready_at, seq, item)``, shared by the heap and the index of
waiting items; a superseded tuple stays in the heap until its time and is skipped then (lazy deletion).
No per-item object beyond that: controllers park one item per cached object here (the Event TTL
controller: every event for an hour), so the bytes per item count.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from typing import TypeVar

import structlog
from prometheus_client import CollectorRegistry

from framework.clock import Clock
from framework.compact import oversized
from framework.workqueue.queue import Queue

__all__ = ["DelayingQueue"]

log = structlog.get_logger(__name__)

T = TypeVar("T")

# Bounded join of the timer thread on shutdown; it only ever blocks on a condition we notify.
_JOIN_TIMEOUT_SECONDS = 5.0


class DelayingQueue(Queue[T]):
    """A ``Queue`` with ``add_after``. Call ``shut_down()`` to stop its timer thread."""

    def __init__(
        self,
        name: str | None = None,
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        super().__init__(name, clock, registry)
        self._waiting_cond = threading.Condition(threading.Lock())
        # (ready_at, seq, item); seq keeps insertion order on ties and spares comparing items.
        self._heap: list[tuple[float, int, T]] = []
        self._waiting: dict[T, tuple[float, int, T]] = {}  # item -> its live heap entry
        self._seq = itertools.count()  # ties on ready time keep insertion order
        self._stopped = False
        self._thread: threading.Thread | None = None

    def add_after(self, item: T, seconds: float) -> None:
        """Add ``item`` once ``seconds`` have passed on the queue's clock (now if ``seconds <= 0``).

        If ``item`` is already waiting, the earlier of the two ready times is kept. Ignored once the
        queue is shutting down. Counts as a retry in ``workqueue_retries_total``.
        """
        if self.shutting_down():
            return
        if self._metrics is not None:
            self._metrics.retry()
        if seconds <= 0:
            self.add(item)
            return
        ready_at = self._clock.monotonic() + seconds
        with self._waiting_cond:
            if self._stopped:
                return
            existing = self._waiting.get(item)
            if existing is not None and existing[0] <= ready_at:
                return
            entry = (ready_at, next(self._seq), item)
            self._waiting[item] = entry  # a superseded entry is no longer the live one: skipped later
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                label = self._name or f"{id(self):x}"
                self._thread = threading.Thread(
                    target=self._waiting_loop, name=f"workqueue-delay-{label}", daemon=True
                )
                self._thread.start()
            elif self._heap[0] is entry:
                self._waiting_cond.notify()

    def _waiting_loop(self) -> None:
        log.debug("delaying queue timer started", queue=self._name)
        while True:
            try:
                if not self._run_once():
                    break
            except Exception:
                # Supervision: a failure here must not silently end delayed adds for the queue's life.
                log.exception("delaying queue timer iteration failed; continuing", queue=self._name)
        log.debug("delaying queue timer stopped", queue=self._name)

    def _run_once(self) -> bool:
        """Move due items into the queue, or wait for the next one; False once stopped."""
        with self._waiting_cond:
            if self._stopped:
                return False
            now = self._clock.monotonic()
            ready: list[T] = []
            heap, waiting = self._heap, self._waiting
            while heap and heap[0][0] <= now:
                entry = heapq.heappop(heap)
                item = entry[2]
                if waiting.get(item) is entry:
                    del waiting[item]
                    ready.append(item)
            if oversized(waiting):
                self._waiting = {}
            if not ready:
                next_ready = self._heap[0][0] if self._heap else None
                self._clock.wait_until(self._waiting_cond, next_ready)
                return True
        for item in ready:
            self.add(item)
        return True

    def _stop_background(self) -> None:
        with self._waiting_cond:
            self._stopped = True
            self._heap.clear()
            self._waiting.clear()
            self._waiting_cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(_JOIN_TIMEOUT_SECONDS)
            if thread.is_alive():
                log.warning("delaying queue timer did not stop", queue=self._name, thread=thread.name)
