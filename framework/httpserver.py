"""A small threaded HTTP/1.1 server shared by the metrics, health-probe and webhook servers.

One accept loop runs in a named thread and hands every connection to a named daemon thread (TLS, when
a subclass sets it up, is negotiated in that connection thread, so a slow client never stalls
accepting). Routes map a path (or a path prefix) to ``handler(Request) -> Response``; anything else is
answered ``404 page not found`` like Go's ``http.NotFound``. A handler that raises gets a logged 500.

Lifecycle: ``start()`` binds synchronously (an address in use raises :class:`BindError` right there,
naming the server and the address) and starts the accept thread; ``port`` is the bound port (useful
with port 0); ``stop(timeout)`` stops accepting at once, lets in-flight requests finish within the
bound, closes idle keep-alive connections and joins every thread it started, returning False when
something outlived the bound. A server is single-use.

Bind addresses follow controller-runtime: ``parse_bind_address(":8080")`` is all interfaces (IPv4 and,
where available, IPv6), ``"127.0.0.1:0"`` a free loopback port, ``"[::1]:9090"`` IPv6, and ``"0"`` (or
``""``) means the server is disabled (``None``).
"""

from __future__ import annotations

import _socket
import contextlib
import itertools
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import structlog

__all__ = [
    "BindError",
    "BodyTooLarge",
    "HTTPServer",
    "Request",
    "Response",
    "RouteHandler",
    "parse_bind_address",
]

log = structlog.get_logger("framework.httpserver")

# How much of a body a handler left unread is read and thrown away to keep the connection usable (Go's
# net/http drains 256 KiB too); a bigger leftover closes the connection instead.
_DRAIN_LIMIT = 256 * 1024
_READ_CHUNK = 64 * 1024
_WILDCARD_HOSTS = ("", "0.0.0.0", "::")


def parse_bind_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` for a controller-runtime style bind address, or None when it disables the server.

    ``":8080"`` → ``("", 8080)`` (all interfaces), ``"127.0.0.1:0"`` → ``("127.0.0.1", 0)``,
    ``"[::1]:8080"`` → ``("::1", 8080)``, ``"0"`` or ``""`` → None. Anything else raises ValueError.
    """
    address = address.strip()
    if address in ("", "0"):
        return None
    host, sep, port_text = address.rpartition(":")
    if not sep:
        raise ValueError(f"bind address {address!r}: missing port (use ':PORT' or 'HOST:PORT'; '0' disables)")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"bind address {address!r}: an IPv6 host must be in brackets, e.g. '[::1]:8080'")
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(f"bind address {address!r}: port must be a number from 0 to 65535")
    return host, int(port_text)


class BindError(OSError):
    """A server could not listen on its address (in use, not local, no permission).

    ``server`` is the server's name, ``host``/``port`` the address it was asked for; ``str()`` names
    all three, so an application can tell the operator which setting to change.
    """

    def __init__(self, server: str, host: str, port: int, cause: OSError) -> None:
        reason = cause.strerror or str(cause)
        shown = f"[{host}]" if ":" in host else (host or "0.0.0.0")
        super().__init__(cause.errno, f"{server}: cannot listen on {shown}:{port}: {reason}")
        self.server = server
        self.host = host
        self.port = port
        self.reason = reason

    def __str__(self) -> str:
        return str(self.strerror)


class BodyTooLarge(Exception):
    """The request body is longer than the limit given to ``Request.read_body``."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body is larger than {limit} bytes")
        self.limit = limit


class Request:
    """One HTTP request as a route handler sees it. The body is read on demand with ``read_body``."""

    __slots__ = (
        "_body_done",
        "_chunked",
        "_handler",
        "_remaining",
        "client_address",
        "headers",
        "method",
        "path",
        "query",
    )

    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        url = urlsplit(handler.path)
        self._handler = handler
        self.method: str = handler.command
        self.path: str = url.path or "/"
        self.query: dict[str, list[str]] = parse_qs(url.query, keep_blank_values=True)
        self.headers: Message = handler.headers
        self.client_address: Any = handler.client_address
        self._chunked = "chunked" in (self.headers.get("Transfer-Encoding") or "").lower()
        length = self.headers.get("Content-Length")
        if self._chunked:
            self._remaining = -1
        elif length is None:
            self._remaining = 0
        elif length.strip().isdigit():
            self._remaining = int(length)
        else:
            raise ValueError(f"invalid Content-Length {length!r}")
        self._body_done = not self._chunked and self._remaining == 0

    @property
    def content_type(self) -> str:
        """The ``Content-Type`` header as sent ("" when absent)."""
        return self.headers.get("Content-Type") or ""

    def read_body(self, limit: int | None = None) -> bytes:
        """The whole body (once); raises BodyTooLarge if it has more than ``limit`` bytes.

        With a limit, at most ``limit + 1`` bytes are read before giving up, as Go's LimitReader does.
        """
        if self._body_done:
            return b""
        cap = None if limit is None else limit + 1
        data = self._read_chunked(cap) if self._chunked else self._read_length(cap)
        if limit is not None and len(data) > limit:
            raise BodyTooLarge(limit)
        return data

    def _read_length(self, cap: int | None) -> bytes:
        want = self._remaining if cap is None else min(self._remaining, cap)
        data = self._handler.rfile.read(want)
        self._remaining -= len(data)
        if len(data) < want:
            raise ConnectionError("connection closed before the whole request body arrived")
        self._body_done = self._remaining == 0
        return data

    def _read_chunked(self, cap: int | None) -> bytes:
        rfile = self._handler.rfile
        parts: list[bytes] = []
        total = 0
        while cap is None or total < cap:
            line = rfile.readline(1024)
            if not line:
                raise ConnectionError("connection closed inside a chunked request body")
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise ValueError(f"invalid chunk size {size_text!r}") from None
            if size == 0:
                while rfile.readline(1024) not in (b"\r\n", b"\n", b""):  # trailers
                    pass
                self._body_done = True
                break
            chunk = rfile.read(size)
            if len(chunk) < size:
                raise ConnectionError("connection closed inside a chunked request body")
            rfile.readline(1024)  # the CRLF after the chunk
            parts.append(chunk)
            total += size
        return b"".join(parts)

    def _drain(self) -> bool:
        """Discard what the handler left unread; False when the connection cannot be reused."""
        if self._body_done:
            return True
        try:
            if self._chunked:
                leftover = self._read_chunked(_DRAIN_LIMIT + 1)
                return self._body_done and len(leftover) <= _DRAIN_LIMIT
            if self._remaining > _DRAIN_LIMIT:
                return False
            while self._remaining:
                self._read_length(min(self._remaining, _READ_CHUNK))
            return True
        except (OSError, ValueError):
            return False


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


class _RequestHandler(BaseHTTPRequestHandler):
    """Parses requests (keep-alive, ``Expect: 100-continue``) and hands them to the owning server."""

    protocol_version = "HTTP/1.1"
    default_request_version = "HTTP/1.1"  # errors on malformed request lines get a status line
    server_version = "framework"
    sys_version = ""
    wbufsize = _READ_CHUNK  # headers and body leave in one write; flushed after each request
    disable_nagle_algorithm = True
    error_message_format = "%(code)d %(message)s\n"
    error_content_type = "text/plain; charset=utf-8"
    # The owning HTTPServer, passed as BaseRequestHandler's "server" (typed there as BaseServer).
    server: HTTPServer  # type: ignore[assignment]

    def handle_one_request(self) -> None:
        # BaseHTTPRequestHandler's loop body, except that any method is served (as Go does) and the
        # request counts as in flight from its first line until its response is flushed, so stop()
        # waits for it instead of cutting the connection.
        try:
            self.raw_requestline = self.rfile.readline(65537)
        except TimeoutError:
            self.close_connection = True  # idle keep-alive connection timed out
            return
        if not self.raw_requestline:
            self.close_connection = True
            return
        with self.server._in_flight():
            try:
                if len(self.raw_requestline) > 65536:
                    self.requestline = self.request_version = self.command = ""
                    self.send_error(414)
                elif self.parse_request():  # False: it answered the malformed request itself
                    self.server._respond(self)
            finally:
                self.wfile.flush()

    def handle_expect_100(self) -> bool:
        self.send_response_only(100)
        self.end_headers()
        self.wfile.flush()  # the client waits for this before sending the body
        return True

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # no access log, as Go's net/http

    def log_error(self, format: str, *args: Any) -> None:
        log.debug("http connection error", server=self.server.name, error=format % args)


class HTTPServer:
    """Threaded HTTP server with routes; see the module docstring. Subclasses add TLS and routes."""

    scheme = "http"

    def __init__(
        self,
        host: str = "",
        port: int = 0,
        *,
        name: str = "http-server",
        shutdown_timeout: float = 30.0,
        idle_timeout: float = 120.0,
    ) -> None:
        self.name = name
        self.shutdown_timeout = shutdown_timeout
        self._host = host
        self._requested_port = port
        self._routes: dict[str, RouteHandler] = {}
        self._prefix_routes: dict[str, RouteHandler] = {}
        self._lock = threading.Condition()
        self._active_requests = 0
        self._connections: dict[threading.Thread, socket.socket] = {}
        self._conn_ids = itertools.count(1)
        self._sock: socket.socket | None = None
        self._bound_port = 0
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._stopping = threading.Event()
        self._handler_cls = type("RequestHandler", (_RequestHandler,), {"timeout": idle_timeout})

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

    def start(self) -> None:
        """Bind, listen and serve in a named thread. Raises if binding fails."""
        with self._lock:
            if self._thread is not None or self._stopping.is_set():
                raise RuntimeError(f"{self.name} was already started (servers are single-use)")
            self._prepare()
            try:
                self._sock = self._bind()
            except OSError as error:
                raise BindError(self.name, self._host, self._requested_port, error) from error
            self._bound_port = self._sock.getsockname()[1]
            self._wake_r, self._wake_w = socket.socketpair()
            self._thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
            self._thread.start()
        log.info("server listening", server=self.name, url=self.url)
        self._started.set()

    def _bind(self) -> socket.socket:
        host, port = self._host, self._requested_port
        if host in ("", "::") and socket.has_dualstack_ipv6():
            try:
                sock = socket.create_server(
                    ("::", port), family=socket.AF_INET6, dualstack_ipv6=True, backlog=128
                )
            except OSError:
                if host == "::":
                    raise
            else:
                sock.setblocking(False)
                return sock
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.create_server((host or "0.0.0.0", port), family=family, backlog=128)
        sock.setblocking(False)
        return sock

    def stop(self, timeout: float | None = None) -> bool:
        """Stop serving; wait up to ``timeout`` (default ``shutdown_timeout``) for requests and threads.

        Returns True when everything finished in time. Safe to call more than once or before start.
        """
        deadline = time.monotonic() + (self.shutdown_timeout if timeout is None else timeout)
        with self._lock:
            first = not self._stopping.is_set()
            self._stopping.set()
            thread = self._thread
        if thread is None:
            return True
        if first and self._wake_w is not None:
            with contextlib.suppress(OSError):
                self._wake_w.send(b"x")
        thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            while self._active_requests and self._lock.wait(max(0.0, deadline - time.monotonic())):
                pass
            drained = self._active_requests == 0
            connections = list(self._connections.items())
        for _, conn in connections:  # idle keep-alive connections (and stragglers at the deadline)
            with contextlib.suppress(OSError):
                _socket.socket.shutdown(conn, socket.SHUT_RDWR)  # the fd, even under an SSLSocket
        for conn_thread, _ in connections:
            conn_thread.join(max(0.0, deadline - time.monotonic()))
        leftover = [t.name for t, _ in connections if t.is_alive()]
        if thread.is_alive():
            leftover.append(thread.name)
        if leftover or not drained:
            log.warning("server did not stop in time", server=self.name, threads=leftover)
            return False
        if first:
            log.info("server stopped", server=self.name)
        return True

    def __enter__(self) -> HTTPServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- serving ------------------------------------------------------------------------------------

    def _serve(self) -> None:
        assert self._sock is not None and self._wake_r is not None and self._wake_w is not None
        backoff = 0.0
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self._sock, selectors.EVENT_READ)
                selector.register(self._wake_r, selectors.EVENT_READ)
                while not self._stopping.is_set():
                    for key, _ in selector.select():
                        if key.fileobj is self._wake_r or self._stopping.is_set():
                            return
                        try:
                            conn, address = self._sock.accept()
                        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                            continue
                        except OSError as error:  # e.g. out of file descriptors: back off like Go
                            backoff = min(1.0, backoff * 2 or 0.005)
                            log.warning("accept failed", server=self.name, error=str(error), retry_in=backoff)
                            self._stopping.wait(backoff)
                            continue
                        backoff = 0.0
                        self._spawn(conn, address)
        except Exception:
            log.exception("accept loop crashed", server=self.name)
        finally:
            for sock in (self._sock, self._wake_r, self._wake_w):
                sock.close()

    def _spawn(self, conn: socket.socket, address: Any) -> None:
        conn.setblocking(True)
        thread = threading.Thread(
            target=self._serve_connection,
            args=(conn, address),
            name=f"{self.name}-conn-{next(self._conn_ids)}",
            daemon=True,
        )
        with self._lock:
            self._connections[thread] = conn
        thread.start()

    def _wrap_connection(self, conn: socket.socket) -> socket.socket:
        """Hook: return the socket to speak HTTP on (the TLS server wraps and handshakes here)."""
        return conn

    def _track(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections[threading.current_thread()] = conn

    def _serve_connection(self, conn: socket.socket, address: Any) -> None:
        try:
            if self._stopping.is_set():
                return
            conn = self._wrap_connection(conn)
            self._handler_cls(conn, address, self)  # BaseRequestHandler serves the connection in __init__
        except Exception as error:  # client went away, TLS handshake failed, ...
            log.debug("connection ended with an error", server=self.name, peer=address, error=repr(error))
        finally:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_WR)
            conn.close()
            with self._lock:
                self._connections.pop(threading.current_thread(), None)

    @contextlib.contextmanager
    def _in_flight(self) -> Iterator[None]:
        with self._lock:
            self._active_requests += 1
        try:
            yield
        finally:
            with self._lock:
                self._active_requests -= 1
                self._lock.notify_all()

    def _respond(self, raw: _RequestHandler) -> None:
        try:
            request = Request(raw)
        except ValueError as error:
            raw.close_connection = True
            self._write(raw, Response(400, f"400 Bad Request: {error}\n".encode()), head=False)
            return
        handler = self._find_route(request.path)
        if handler is None:
            response = _NOT_FOUND
        else:
            try:
                response = handler(request)
            except (ConnectionError, TimeoutError) as error:
                log.debug("client connection failed", server=self.name, path=request.path, error=repr(error))
                raw.close_connection = True
                return
            except Exception:
                log.exception("http handler failed", server=self.name, path=request.path)
                response = _INTERNAL_ERROR
        if not request._drain() or self._stopping.is_set():
            raw.close_connection = True
        self._write(raw, response, head=request.method == "HEAD")

    @staticmethod
    def _write(raw: _RequestHandler, response: Response, *, head: bool) -> None:
        raw.send_response(response.status)
        raw.send_header("Content-Type", response.content_type)
        raw.send_header("Content-Length", str(len(response.body)))
        raw.send_header("X-Content-Type-Options", "nosniff")
        for name, value in response.headers.items():
            raw.send_header(name, value)
        if raw.close_connection:
            raw.send_header("Connection", "close")
        raw.end_headers()
        if not head:
            raw.wfile.write(response.body)
