"""A bounded pool of named daemon threads running a server's synchronous handlers for its event loop.

``concurrent.futures.ThreadPoolExecutor`` would do the same, but its workers are joined at interpreter
exit: a handler that hangs past a server's stop deadline would keep the process from ever exiting (gcm
would outlive SIGTERM until the kubelet kills it). These workers are daemon threads; ``shutdown`` asks
them to stop and joins them within a bound.
"""

from __future__ import annotations

import asyncio
import itertools
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import structlog

__all__ = ["WorkerPool"]

log = structlog.get_logger("framework.server")

T = TypeVar("T")

_STOP = object()


class WorkerPool:
    """At most ``max_workers`` named daemon threads running synchronous calls for coroutines on a loop.

    Threads are started as work arrives (``<name>_0``, ``_1``... as ThreadPoolExecutor names them);
    calls beyond ``max_workers`` wait in a queue. After ``shutdown`` no call is accepted.
    """

    def __init__(self, name: str, max_workers: int) -> None:
        if max_workers < 1:
            raise ValueError(f"{name}: max_workers must be at least 1, got {max_workers}")
        self.name = name
        self.max_workers = max_workers
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._ids = itertools.count()
        self._closed = False

    def call(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        """Run ``fn`` in a worker; the returned future (of the running loop) gets its result or error."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self.name} is shut down")
            if self._idle == 0 and len(self._threads) < self.max_workers:
                thread = threading.Thread(
                    target=self._work, name=f"{self.name}_{next(self._ids)}", daemon=True
                )
                self._threads.append(thread)
                self._idle += 1
                thread.start()
            self._idle -= 1
        self._queue.put((fn, loop, future))
        return future

    def _work(self) -> None:
        while (item := self._queue.get()) is not _STOP:
            fn, loop, future = item
            if future.cancelled():  # its request was cut at a stop deadline while it queued
                with self._lock:
                    self._idle += 1
                continue
            try:
                outcome: tuple[bool, Any] = (True, fn())
            except BaseException as error:  # handed to the awaiting coroutine, which logs it
                outcome = (False, error)
            with self._lock:
                self._idle += 1
            try:
                loop.call_soon_threadsafe(_settle, future, outcome)
            except RuntimeError:  # the loop has stopped: the server is gone and nobody waits for this
                log.debug("handler finished after its server stopped", pool=self.name)
            del item, fn, future, outcome

    def shutdown(self, timeout: float | None = None) -> list[str]:
        """Accept no more calls; let the workers finish what they run and stop within ``timeout``
        (None: wait for them). Returns the names of workers still running then."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        for _ in threads:
            self._queue.put(_STOP)
        for thread in threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return [thread.name for thread in threads if thread.is_alive()]


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():  # cancelled: the connection was cut at the stop deadline
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
