"""The HTTP server under the metrics, health-probe and webhook servers: aiohttp on one event-loop thread.

aiohttp does the protocol (keep-alive, pipelining, chunked bodies, ``Expect: 100-continue``, TLS,
draining on shutdown); this module adds what the manager's servers share, in the manner of
controller-runtime's servers:

- Routes map a path (or a path prefix) to a synchronous ``handler(Request) -> Response``. Handlers run on
  a bounded pool of named daemon threads (``pool.WorkerPool``), never on the event loop, so a slow
  health check or admission handler cannot stall other connections. Unknown paths answer ``404 page
  not found`` (Go's ``http.NotFound``); a handler that raises gets a logged 500.
- ``start()`` binds synchronously: an address in use raises :class:`BindError` right there, naming the
  server and the address. ``port`` is the bound port (useful with port 0).
- ``stop(timeout)`` closes the listener at once, closes idle keep-alive connections, lets in-flight
  requests finish within the bound, then cuts what is left and joins every thread it started; it
  returns False when something outlived the bound. A server is single-use.
- TLS (``ssl_context()`` in a subclass) picks the context per handshake (``select_context()``), so a
  rotated certificate reaches new connections without dropping existing ones.
- Connections have controller-runtime's deadlines (idle 90 s, request head 32 s), a 1 MiB head and a
  bound on how many are open (``limits``; see :mod:`framework.server.connections`): a slow or idle
  client is closed, a head too large is answered 431 and a connection over the bound 503, all in
  Go's plain-text words.

Each server has its own loop thread (named after the server): servers start and stop independently,
and a stop that waits for one server's handlers never delays another's requests.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import structlog
from aiohttp import HttpVersion11, web
from multidict import CIMultiDictProxy

from framework.server.address import BindError, bind_socket
from framework.server.connections import ConnectionLimits, GuardedServer, GuardedSockSite
from framework.server.pool import WorkerPool

__all__ = ["BodyTooLarge", "HTTPServer", "Request", "Response", "RouteHandler"]

log = structlog.get_logger("framework.server")

_READ_CHUNK = 64 * 1024
_WILDCARD_HOSTS = ("", "0.0.0.0", "::")

# controller-runtime's deadlines and head size (pkg/internal/httpserver); the connection bound is ours:
# metrics scrapes, probes and the API server's webhook calls need a few connections each.
DEFAULT_LIMITS = ConnectionLimits(max_connections=256)


class BodyTooLarge(Exception):
    """The request body is longer than the limit given to ``Request.read_body``."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body is larger than {limit} bytes")
        self.limit = limit


class Request:
    """One HTTP request as a route handler sees it. The body is read on demand with ``read_body``."""

    __slots__ = ("_body_done", "_loop", "_raw", "client_address", "headers", "method", "path", "query")

    def __init__(self, raw: web.BaseRequest, loop: asyncio.AbstractEventLoop) -> None:
        self._raw = raw
        self._loop = loop
        self._body_done = not raw.body_exists
        self.method: str = raw.method
        self.path: str = raw.path or "/"
        self.query: dict[str, list[str]] = parse_qs(raw.query_string, keep_blank_values=True)
        self.headers: CIMultiDictProxy[str] = raw.headers
        self.client_address: Any = raw.transport.get_extra_info("peername") if raw.transport else None

    @property
    def content_type(self) -> str:
        """The ``Content-Type`` header as sent ("" when absent)."""
        return self.headers.get("Content-Type") or ""

    def read_body(self, limit: int | None = None) -> bytes:
        """The whole body (once); raises BodyTooLarge if it has more than ``limit`` bytes.

        With a limit, at most ``limit + 1`` bytes are read before giving up, as Go's LimitReader does.
        A body that breaks off or is badly framed raises ValueError. Call from the handler's thread.
        """
        if self._body_done:
            return b""
        self._body_done = True
        cap = None if limit is None else limit + 1
        try:
            data = asyncio.run_coroutine_threadsafe(self._read(cap), self._loop).result()
        except (ConnectionError, concurrent.futures.CancelledError):  # the client or the server went away
            raise
        except Exception as error:  # aiohttp's payload errors: truncated or badly chunked bodies
            raise ValueError(f"cannot read the request body: {error}") from error
        if limit is not None and len(data) > limit:
            raise BodyTooLarge(limit)
        return data

    async def _read(self, cap: int | None) -> bytes:
        raw = self._raw
        if raw.version == HttpVersion11 and raw.headers.get("Expect", "").lower() == "100-continue":
            # As Go's net/http: the client is told to send its body when the handler first reads it,
            # so a request refused without reading never uploads the body.
            await raw.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            raw.writer.output_size = 0
        parts: list[bytes] = []
        total = 0
        while cap is None or total < cap:
            chunk = await self._raw.content.read(
                _READ_CHUNK if cap is None else min(_READ_CHUNK, cap - total)
            )
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
        return b"".join(parts)


@dataclass
class Response:
    """What a route handler returns. ``Content-Length`` is always set from ``body``."""

    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def text(cls, text: str, status: int = 200) -> Response:
        return cls(status, text.encode())


RouteHandler = Callable[[Request], Response]

_NOT_FOUND = Response(404, b"404 page not found\n")
_INTERNAL_ERROR = Response(500, b"Internal Server Error\n")


class HTTPServer:
    """HTTP server with routes; see the module docstring. Subclasses add TLS and routes.

    ``max_workers`` bounds the handler threads (requests beyond it wait for a free thread);
    ``limits`` sets the idle and header deadlines, the head size and the bound on open connections
    (:class:`~framework.server.connections.ConnectionLimits`; default: controller-runtime's deadlines
    and at most 256 connections); ``handshake_timeout`` bounds a TLS handshake.
    """

    scheme = "http"

    def __init__(
        self,
        host: str = "",
        port: int = 0,
        *,
        name: str = "http-server",
        shutdown_timeout: float = 30.0,
        limits: ConnectionLimits | None = None,
        handshake_timeout: float = 10.0,
        max_workers: int = 16,
    ) -> None:
        self.name = name
        self.shutdown_timeout = shutdown_timeout
        self._host = host
        self._requested_port = port
        self.limits = DEFAULT_LIMITS if limits is None else limits
        self._handshake_timeout = handshake_timeout
        self._max_workers = max_workers
        self._routes: dict[str, RouteHandler] = {}
        self._prefix_routes: dict[str, RouteHandler] = {}
        self._lock = threading.Lock()
        self._bound_port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pool: WorkerPool | None = None
        self._runner: web.ServerRunner | None = None
        self._started = threading.Event()
        self._stopping = threading.Event()
        self._stopped: bool | None = None  # the outcome of the first stop()

    # -- routes -------------------------------------------------------------------------------------

    def route(self, path: str, handler: RouteHandler, *, prefix: bool = False) -> None:
        """Serve ``path`` (and, with ``prefix``, everything below ``path + "/"``) with ``handler``."""
        if not path.startswith("/"):
            raise ValueError(f"route path {path!r} must start with '/'")
        table = self._prefix_routes if prefix else self._routes
        with self._lock:
            if path in table:
                raise ValueError(f"{self.name}: a handler for {path!r} is already registered")
            table[path] = handler

    def _find_route(self, path: str) -> RouteHandler | None:
        handler = self._routes.get(path)
        if handler is not None:
            return handler
        best = ""
        for prefix in tuple(self._prefix_routes):  # a copy: routes may be added while serving
            if (path == prefix or path.startswith(prefix.rstrip("/") + "/")) and len(prefix) > len(best):
                best = prefix
        return self._prefix_routes.get(best) if best else None

    # -- lifecycle ----------------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return self._host

    @property
    def port(self) -> int:
        """The bound port (after ``start()``), else the configured one."""
        return self._bound_port or self._requested_port

    @property
    def url(self) -> str:
        """``scheme://host:port`` to reach the server; wildcard hosts become 127.0.0.1."""
        host = "127.0.0.1" if self._host in _WILDCARD_HOSTS else self._host
        if ":" in host:
            host = f"[{host}]"
        return f"{self.scheme}://{host}:{self.port}"

    def is_running(self) -> bool:
        return self._started.is_set() and not self._stopping.is_set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """True once the server accepts connections (False if ``timeout`` elapsed first)."""
        return self._started.wait(timeout)

    def started_checker(self) -> Callable[[], str | None]:
        """A health check (for ``add_readyz_check``) that passes once the server accepts connections."""

        def check() -> str | None:
            if not self.is_running():
                return f"{self.name} is not running"
            host = "127.0.0.1" if self._host in _WILDCARD_HOSTS else self._host
            with socket.create_connection((host, self.port), timeout=1.0):
                return None

        return check

    def _prepare(self) -> None:
        """Hook run by ``start()`` before binding (e.g. loading certificates); may raise."""

    def ssl_context(self) -> ssl.SSLContext | None:
        """Hook: the TLS context to listen with (None: plain HTTP). Called once by ``start()``."""
        return None

    def start(self) -> None:
        """Bind, listen and serve on a named event-loop thread. Raises if binding fails."""
        with self._lock:
            if self._thread is not None or self._stopping.is_set():
                raise RuntimeError(f"{self.name} was already started (servers are single-use)")
            self._prepare()
            try:
                sock = bind_socket(self._host, self._requested_port)
            except OSError as error:
                raise BindError(self.name, self._host, self._requested_port, error) from error
            self._bound_port = sock.getsockname()[1]
            self._pool = WorkerPool(f"{self.name}-handler", self._max_workers)
            loop = self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._run_loop, args=(loop,), name=self.name, daemon=True)
            self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self._start_site(sock), loop).result()
        except BaseException:
            sock.close()
            self._stopping.set()
            self._close_loop()
            raise
        log.info("server listening", server=self.name, url=self.url)
        self._started.set()

    @staticmethod
    def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _start_site(self, sock: Any) -> None:
        server = GuardedServer(self._handle, name=self.name, limits=self.limits, access_log=None)
        self._runner = web.ServerRunner(server, shutdown_timeout=self.shutdown_timeout)
        await self._runner.setup()
        site = GuardedSockSite(
            self._runner, sock, ssl_context=self.ssl_context(), handshake_timeout=self._handshake_timeout
        )
        await site.start()

    def stop(self, timeout: float | None = None) -> bool:
        """Stop serving; wait up to ``timeout`` (default ``shutdown_timeout``) for requests and threads.

        Returns True when everything finished in time. Safe to call more than once or before start.
        """
        bound = self.shutdown_timeout if timeout is None else timeout
        deadline = time.monotonic() + bound
        with self._lock:
            first = not self._stopping.is_set()
            self._stopping.set()
            loop, thread = self._loop, self._thread
        if thread is None or loop is None:
            return True
        if not first:
            thread.join(max(0.0, deadline - time.monotonic()))
            return bool(self._stopped) and not thread.is_alive()
        drained = True
        if self._runner is not None:
            future = asyncio.run_coroutine_threadsafe(self._shutdown(self._runner, bound), loop)
            try:
                future.result(max(0.0, deadline - time.monotonic()) + 1.0)
            except (TimeoutError, concurrent.futures.TimeoutError):
                drained = False
            except Exception:
                log.exception("server shutdown failed", server=self.name)
                drained = False
        leftover = self._close_loop(deadline)
        ok = drained and not leftover
        self._stopped = ok
        if ok:
            log.info("server stopped", server=self.name)
        else:
            log.warning("server did not stop in time", server=self.name, threads=leftover)
        return ok

    @staticmethod
    async def _shutdown(runner: web.ServerRunner, bound: float) -> None:
        # aiohttp's runner cleanup, with this stop's bound instead of the one fixed at start: close the
        # listener, close idle keep-alive connections, give in-flight handlers ``bound`` seconds, then
        # cancel them (their connections are cut).
        for site in list(runner.sites):
            await site.stop()
        server = runner.server
        if server is not None:
            await asyncio.sleep(0)  # requests accepted just before the listener closed start first
            server.pre_shutdown()
            await server.shutdown(bound)
        await runner.cleanup()

    def _close_loop(self, deadline: float | None = None) -> list[str]:
        """Stop the loop thread and the handler pool; the names of threads still alive at ``deadline``."""
        loop, thread, pool = self._loop, self._thread, self._pool
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(loop.stop)

        def left() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        if thread is not None:
            thread.join(left())
        leftover = [thread.name] if thread is not None and thread.is_alive() else []
        if pool is not None:
            leftover.extend(pool.shutdown(left()))
        return leftover

    def __enter__(self) -> HTTPServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- serving ------------------------------------------------------------------------------------

    async def _handle(self, raw: web.BaseRequest) -> web.StreamResponse:
        handler = self._find_route(raw.path or "/")
        expect = raw.headers.get("Expect")
        if expect is not None and expect.lower() != "100-continue":
            return _to_aiohttp(Response(417, f"417 Expectation Failed: {expect}\n".encode()))
        if handler is None:
            return _to_aiohttp(_NOT_FOUND)
        assert self._loop is not None and self._pool is not None
        request = Request(raw, self._loop)
        try:
            response = await self._pool.call(lambda: handler(request))
        except (ConnectionError, TimeoutError) as error:  # the client went away mid-body
            log.debug("client connection failed", server=self.name, path=raw.path, error=repr(error))
            raise
        except RuntimeError as error:
            if self._stopping.is_set():  # the pool is closed: the server is going away
                raise web.HTTPServiceUnavailable() from error
            log.exception("http handler failed", server=self.name, path=raw.path)
            response = _INTERNAL_ERROR
        except Exception:
            log.exception("http handler failed", server=self.name, path=raw.path)
            response = _INTERNAL_ERROR
        if not isinstance(response, Response):
            log.error("http handler returned a non-Response", server=self.name, path=raw.path)
            response = _INTERNAL_ERROR
        return _to_aiohttp(response)


def _to_aiohttp(response: Response) -> web.Response:
    # nosniff as Go's http.Error: the text bodies are never to be sniffed into HTML by a browser.
    headers = {"Content-Type": response.content_type, "X-Content-Type-Options": "nosniff", **response.headers}
    return web.Response(status=response.status, body=response.body, headers=headers)
