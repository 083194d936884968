"""Watch streams: filtering, ADDED/DELETED on selector transitions, bookmarks, overflow (as the
watchers of k8s.io/apiserver ``pkg/storage/cacher/cache_watcher.go``)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from framework.apiserver.registry.strategy import ResourceType
from framework.apiserver.storage.store import WatchEvent
from framework.meta import jsoncodec

INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class Watcher:
    """One open watch: a bounded buffer of encoded lines filled synchronously by storage writes.

    A reader that falls more than ``max_buffer`` events behind is closed rather than allowed to hold up
    writers or grow without bound (15-10); clients re-watch from their last resourceVersion.
    """

    def __init__(
        self,
        rt: ResourceType,
        match: Callable[[dict], bool],
        external: Callable[[ResourceType, dict], dict],
        max_buffer: int = 10_000,
        codec: str | None = "full",
    ) -> None:
        self.rt = rt
        self.codec = codec
        self.match = match
        self.external = external
        self.max_buffer = max_buffer
        self.buffer: deque[bytes] = deque()
        self.closed = False
        self.overflowed = False
        # The stream's wait: a bare future, resolved by the next push (cheaper than asyncio.wait_for
        # on an Event, which wraps each wait in a task; one wait per event on a busy watch).
        self._waiter: asyncio.Future[None] | None = None

    def encode(self, etype: str, obj: dict, ev: WatchEvent | None = None) -> bytes:
        # Watchers of one codec share each event's encoding; codec None encodes per watcher.
        if ev is not None and obj is ev.obj and self.codec is not None:
            key = (self.rt.api_version, self.codec, etype)
            line = ev.encoded.get(key)
            if line is None:
                line = ev.encoded[key] = _line(etype, self.external(self.rt, obj))
            return line
        return _line(etype, self.external(self.rt, obj))

    def push(self, ev: WatchEvent) -> None:
        if self.closed:
            return
        line = self.filter(ev)
        if line is None:
            return
        self.buffer.append(line)
        if len(self.buffer) > self.max_buffer:
            self.overflowed = True
            self.close()
        self._wake()

    def filter(self, ev: WatchEvent) -> bytes | None:
        """The line this watcher sees for an event, or None (15-4)."""
        if ev.type == "ADDED":
            return self.encode("ADDED", ev.obj, ev) if self.match(ev.obj) else None
        if ev.type == "DELETED":
            assert ev.prev is not None
            return self.encode("DELETED", ev.obj, ev) if self.match(ev.prev) else None
        assert ev.prev is not None
        now, before = self.match(ev.obj), self.match(ev.prev)
        if now and before:
            return self.encode("MODIFIED", ev.obj, ev)
        if now:
            return self.encode("ADDED", ev.obj, ev)
        if before:
            # Leaving the selection: the last matching state, stamped with the new resourceVersion.
            gone = {**ev.prev, "metadata": {**ev.prev["metadata"], "resourceVersion": str(ev.rv)}}
            return self.encode("DELETED", gone)
        return None

    def send_line(self, line: bytes) -> None:
        self.buffer.append(line)
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None:
            _resolve(self._waiter)

    async def wait(self, timeout: float) -> None:
        """Return once there is something to send, the watcher is closed, or ``timeout`` passed."""
        if self.buffer or self.closed:
            return
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = loop.call_later(timeout, _resolve, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None

    def drain(self) -> bytes:
        data = b"".join(self.buffer)
        self.buffer.clear()
        return data


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _line(etype: str, obj: dict) -> bytes:
    return jsoncodec.dumps({"type": etype, "object": obj}, newline=True)


def bookmark(rt: ResourceType, rv: int, initial_end: bool = False) -> bytes:
    meta: dict = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return _line("BOOKMARK", {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta})


def error_line(status: dict) -> bytes:
    return _line("ERROR", status)
