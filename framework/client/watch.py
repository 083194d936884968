"""A watch stream: newline-delimited JSON events read from a chunked HTTP response.

:class:`Watch` is an iterator of ``(event_type, object)`` tuples and a context manager. It ends when the
server closes the stream (``timeoutSeconds`` elapsed, the server dropped watches, the connection
broke) or when :meth:`Watch.close` is called — from any thread; a blocked read is woken by shutting
down the socket. An ``ERROR`` event raises the matching :class:`~framework.client.errors.APIError`
(``Gone`` for 410); a read that sees no data for ``read_timeout`` seconds raises
:class:`~framework.client.errors.Timeout` — Python's HTTP/1.1 stack has no HTTP/2 ping to notice a dead
peer, so this inactivity timeout is what keeps a watcher from hanging forever.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import orjson
import structlog
import urllib3

from framework.meta import jsoncodec
from framework.meta.object import get_resource_version

from . import errors

__all__ = ["Watch"]

log = structlog.get_logger("framework.client")

_CHUNK = 256 * 1024


class Watch:
    """An open watch. Iterate it for ``(type, object)``; ``close()`` ends it from any thread.

    Attributes:
        resource_version: the ``metadata.resourceVersion`` of the last event received (including
            bookmarks), or the starting resourceVersion.
    """

    def __init__(
        self,
        response: urllib3.BaseHTTPResponse,
        *,
        path: str,
        resource_version: str | None = None,
        read_timeout: float | None = None,
    ) -> None:
        self._resp = response
        self._path = path
        self._read_timeout = read_timeout
        self.resource_version = resource_version
        self._lock = threading.Lock()
        self._closed = False
        self._reading = False
        self._released = False
        self._buf = b""
        self._lines: list[bytes] = []
        self._chunks: Iterator[bytes] | None = None

    # -- lifecycle ----------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the stream ended or :meth:`close` was called."""
        return self._closed

    def close(self) -> None:
        """Stop the watch. Safe from any thread and idempotent; a blocked iterator returns promptly."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            reading = self._reading
        if reading:
            # Wake the reader: it sees EOF/an error, notices ``closed`` and releases the connection.
            try:
                self._resp.shutdown()
            except Exception:  # already released or never had a socket
                pass
        else:
            self._release()

    def _release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        try:
            self._resp.close()  # closes the connection: unread stream data makes it unusable
        finally:
            self._resp.release_conn()

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if not getattr(self, "_released", True):
            try:
                self._release()
            except Exception:
                pass

    # -- iteration ----------------------------------------------------------------------------------

    def __iter__(self) -> Watch:
        return self

    def __next__(self) -> tuple[str, dict[str, Any]]:
        while True:
            if self._closed:
                self._release()
                raise StopIteration
            if self._lines:
                line = self._lines.pop()
                if not line.strip():
                    continue
                return self._event(line)
            chunk = self._read()
            if chunk is None:
                raise StopIteration
            data = self._buf + chunk
            *lines, self._buf = data.split(b"\n")
            lines.reverse()
            self._lines = lines

    def _read(self) -> bytes | None:
        """The next chunk of the body, or ``None`` once the stream ended (cleanly or by close())."""
        with self._lock:
            if self._closed:
                closed = True
            else:
                closed = False
                self._reading = True
        if closed:
            self._release()
            return None
        try:
            if self._chunks is None:
                self._chunks = self._resp.stream(_CHUNK)
            chunk = next(self._chunks, None)
        except urllib3.exceptions.ReadTimeoutError as e:
            closed_meanwhile = self._end_reading()
            self._finish()
            if closed_meanwhile:
                return None
            raise errors.Timeout(
                0,
                "Timeout",
                f"watch {self._path}: no data received for {self._read_timeout}s (client-side read timeout)",
            ) from e
        except (urllib3.exceptions.HTTPError, OSError) as e:
            # A broken stream (reset, server restart, our own shutdown()) ends the watch like an EOF,
            # as client-go treats probable EOFs: the caller re-watches from its last resourceVersion.
            if not self._end_reading():
                log.debug("watch stream broke", path=self._path, error=str(e))
            self._finish()
            return None
        if self._end_reading() or chunk is None:
            self._finish()
            return None
        return chunk

    def _finish(self) -> None:
        """The stream is over (EOF, error, timeout or close): mark it closed and free the connection.

        After a clean end of a chunked body urllib3 has already returned the connection to the pool
        for reuse; otherwise it is closed.
        """
        with self._lock:
            self._closed = True
        self._release()

    def _end_reading(self) -> bool:
        """Mark the read finished; True if close() was called meanwhile."""
        with self._lock:
            self._reading = False
            return self._closed

    def _event(self, line: bytes) -> tuple[str, dict[str, Any]]:
        try:
            ev = jsoncodec.loads(line, jsoncodec.WRAPPED_MAX_DEPTH)
            etype = ev["type"]
            obj = ev["object"]
        except (orjson.JSONDecodeError, KeyError, TypeError) as e:
            self.close()
            raise errors.APIError(0, "InternalError", f"watch {self._path}: undecodable event: {e}") from e
        if etype == "ERROR":
            self.close()
            raise errors.from_status(obj if isinstance(obj, dict) else {"message": str(obj)})
        rv = get_resource_version(obj) or None
        if rv:
            self.resource_version = rv
        return etype, obj
