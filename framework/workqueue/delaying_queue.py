"""``DelayingQueue``: a ``Queue`` whose items can be added after a delay (client-go delaying_queue.go).

Delayed items wait in a min-heap ordered by ready time, served by one named timer thread that blocks
on the queue's clock until the earliest item is due. Adding an item that is already waiting keeps the
**earliest** ready time. The thread starts with the first delayed add and stops on shutdown.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from dataclasses import dataclass
from typing import Generic, TypeVar

import structlog
from prometheus_client import CollectorRegistry

from framework.clock import Clock
from framework.workqueue.queue import Queue

__all__ = ["DelayingQueue"]

log = structlog.get_logger(__name__)

T = TypeVar("T")

# Bounded join of the timer thread on shutdown; it only ever blocks on a condition we notify.
_JOIN_TIMEOUT_SECONDS = 5.0


@dataclass(eq=False, slots=True)  # one per delayed item: keep it small
class _Waiting(Generic[T]):
    ready_at: float
    item: T
    live: bool = True  # False once superseded by an earlier ready time (lazy heap deletion)


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
        self._heap: list[tuple[float, int, _Waiting[T]]] = []
        self._waiting: dict[T, _Waiting[T]] = {}
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
            if existing is not None:
                if existing.ready_at <= ready_at:
                    return
                existing.live = False
            entry = _Waiting(ready_at, item)
            self._waiting[item] = entry
            heapq.heappush(self._heap, (ready_at, next(self._seq), entry))
            if self._thread is None:
                label = self._name or f"{id(self):x}"
                self._thread = threading.Thread(
                    target=self._waiting_loop, name=f"workqueue-delay-{label}", daemon=True
                )
                self._thread.start()
            elif self._heap[0][2] is entry:
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
            while self._heap and self._heap[0][0] <= now:
                _, _, entry = heapq.heappop(self._heap)
                if entry.live:
                    del self._waiting[entry.item]
                    ready.append(entry.item)
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
