"""Connection hygiene for every aiohttp server we run: how long a connection may idle or dribble its
request head, how large a head may be, and how many connections a server keeps open at once.

kube-apiserver (``staging/src/k8s.io/apiserver/pkg/server/secure_serving.go``) and controller-runtime's
webhook and metrics servers (``pkg/internal/httpserver/server.go``) configure Go's ``http.Server`` with
``IdleTimeout`` 90 s, ``ReadHeaderTimeout`` 32 s and ``MaxHeaderBytes`` 1 MiB; :class:`ConnectionLimits`
has the same defaults. What aiohttp gives and what is built here:

- Idle: aiohttp's ``keepalive_timeout`` closes a keep-alive connection that has not begun its next
  request in time; it is the idle timeout.
- Slow heads: aiohttp has no deadline for reading a request head. :class:`GuardedServer`'s protocol
  arms one when a connection is accepted (Go counts the first request's header time from the accept)
  and when the first byte of a later request arrives; a head not complete by then has its connection
  closed without an answer, as Go does on a header read timeout. The idle deadline is pushed past it,
  so a request begun late in the idle period still gets the whole header time, as in Go.
- Head size: aiohttp bounds single lines (8190 bytes by default) and the number of headers, and answers
  a plain-text 400 beyond them. Here a head (request line and headers) may have ``max_header_bytes``
  plus the 4096 bytes of slack Go's server reads beyond ``MaxHeaderBytes``; a larger one is answered
  431 (Go's code for it) and its connection closed. Lines and header counts have no limit of their own,
  as in Go, so a 70 KB query string is served. A request line whose method is a token aiohttp's
  parser does not know (``FOO``; Go hands any token method to the handler) gets 405, other malformed
  heads get 400; the server's ``answer`` words them (plain text like Go's, or a ``Status`` for the API
  server).
- Open connections: Go's server has no bound (kube-apiserver limits requests in flight instead). Here
  a server keeps at most ``max_connections``; a connection accepted beyond that is answered once, on
  its first request, with the server's ``refusal_status`` (with ``Retry-After: 1``) and closed, so it
  holds its descriptor at most for one header time. A TLS connection counts from the end of its
  handshake; the handshake has its own deadline (:class:`GuardedSockSite`).

The protocol reads a few of aiohttp's private attributes (the parsed-request count and queue, the
keep-alive close time); ``tests/framework/server/test_connection_limits.py`` and the API server's
``test_connections.py`` fail if an aiohttp upgrade changes them.
"""

from __future__ import annotations

import ast
import asyncio
import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import structlog
from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, HttpProcessingError, LineTooLong
from aiohttp.streams import StreamReader
from aiohttp.web_protocol import RequestHandler

__all__ = [
    "HEADER_SLACK",
    "Answer",
    "ConnectionLimits",
    "GuardedAppRunner",
    "GuardedServer",
    "GuardedSockSite",
    "plain_text_answer",
]

log = structlog.get_logger("framework.server")

# Go's http.Server reads up to MaxHeaderBytes + 4096 bytes of a head before answering 431
# (net/http's initialReadLimitSize).
HEADER_SLACK = 4096

# After answering a head that was too large: read and drop what the client still sends this long
# before closing, so the close is not a reset that destroys the answer on its way (Go's
# rstAvoidanceDelay is 500 ms too).
_LINGER = 0.5

# What a server answers for a request whose method is a valid token no route serves (``FOO /x``):
# kube-apiserver's router (go-restful through ``NewGenericServerResponse``) says this with a 405.
METHOD_NOT_ALLOWED = "the server does not allow this method on the requested resource"

# An HTTP token (RFC 9110 section 5.6.2): what Go's server takes as a method.
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def _unknown_method(exc: HttpProcessingError) -> bool:
    """Whether aiohttp's C parser refused a request line only for its method: llhttp knows a fixed list
    of methods and refuses any other before a handler could see it, where Go's server hands every
    token method to its handler. The refused line is in the error's text (``b'FOO /path HTTP/1.1'``)."""
    if not isinstance(exc, BadHttpMethod):
        return False
    match = re.search(r"b(['\"]).*?\1", exc.message or "")
    if match is None:
        return False
    try:
        line = ast.literal_eval(match.group(0))
    except (ValueError, SyntaxError):
        return False
    method, _, rest = line.partition(b" ")
    return bool(_TOKEN.fullmatch(method)) and rest.startswith(b"/")


Answer = Callable[[int, str, int | None], tuple[str, bytes]]
"""How a server words an answer its protocol gives on its own: ``(status, message, retry_after)`` to
``(content_type, body)``."""


def plain_text_answer(status: int, message: str, retry_after: int | None = None) -> tuple[str, bytes]:
    """The plain-text form Go's server uses for the errors it answers itself ("431 Request Header
    Fields Too Large", "400 Bad Request: ...")."""
    line = f"{status} {HTTPStatus(status).phrase}"
    return "text/plain; charset=utf-8", (f"{line}: {message}" if message else line).encode()


@dataclass(frozen=True)
class ConnectionLimits:
    """Deadlines and bounds for a server's connections (defaults: kube-apiserver's and controller-runtime's).

    ``idle_timeout``: seconds a keep-alive connection may wait for its next request (Go's
    ``IdleTimeout``). ``read_header_timeout``: seconds from a connection's accept, or from the first byte
    of a later request, to the end of its head (Go's ``ReadHeaderTimeout``). ``max_header_bytes``: the
    size of a request line plus headers (Go's ``MaxHeaderBytes``, with Go's 4096 bytes of slack).
    ``max_connections``: connections served at once; more are refused (see the module docstring).
    """

    idle_timeout: float = 90.0
    read_header_timeout: float = 32.0
    max_header_bytes: int = 1 << 20
    max_connections: int = 1024

    def __post_init__(self) -> None:
        for name in ("idle_timeout", "read_header_timeout"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        for name in ("max_header_bytes", "max_connections"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)!r}")

    @property
    def head_limit(self) -> int:
        """Bytes a request head may have before it is answered 431."""
        return self.max_header_bytes + HEADER_SLACK


def _raw_answer(status: int, content_type: str, body: bytes) -> bytes:
    """A whole closing HTTP/1.1 response, for answers written before any request object exists."""
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body


class GuardedServer(web.Server):
    """aiohttp's low-level server with :class:`ConnectionLimits` applied to every connection.

    ``answer`` words the 400/431 answers to bad heads and the refusal beyond ``max_connections``;
    ``refusal_status`` is the refusal's code (503 by default). ``open_connections`` counts the
    connections open now.
    """

    def __init__(
        self,
        handler: Callable[[web.BaseRequest], Awaitable[web.StreamResponse]],
        *,
        name: str,
        limits: ConnectionLimits,
        answer: Answer = plain_text_answer,
        refusal_status: int = 503,
        **kwargs: Any,
    ) -> None:
        self.name = name
        self.limits = limits
        self.answer = answer
        self.refusal_status = refusal_status
        self.open_connections = 0
        self._serve = handler
        # The head size is bounded as a whole (the protocol counts it); aiohttp's per-line and
        # per-count limits are set past it so that they never answer first.
        beyond = 2 * limits.head_limit
        super().__init__(
            self._refuse_or_serve,
            keepalive_timeout=limits.idle_timeout,
            max_line_size=beyond,
            max_field_size=beyond,
            max_headers=beyond,
            **kwargs,
        )

    def __call__(self) -> RequestHandler:
        return _GuardedProtocol(self, loop=self._loop, **self._kwargs)

    async def _refuse_or_serve(self, request: web.BaseRequest) -> web.StreamResponse:
        protocol = request.protocol
        if isinstance(protocol, _GuardedProtocol) and protocol.over_bound:
            limit = self.limits.max_connections
            content_type, body = self.answer(
                self.refusal_status, f"too many open connections (limit {limit}), please try again later", 1
            )
            response = web.Response(
                status=self.refusal_status,
                body=body,
                headers={"Content-Type": content_type, "Retry-After": "1"},
            )
            response.force_close()
            return response
        return await self._serve(request)


class _GuardedProtocol(RequestHandler):
    """aiohttp's connection protocol with a head deadline, a head size bound and the connection count."""

    def __init__(self, manager: GuardedServer, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._guard = manager
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_bytes = 0  # bytes of the head being read so far
        self._head_tail = b""  # its last three bytes, where a CRLF CRLF may have begun
        # The body of the last request whose head was parsed: while it is unread, bytes are body bytes.
        self._body: StreamReader | None = None
        self._discarding = False
        self._counted = False
        self.over_bound = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        guard = self._guard
        guard.open_connections += 1
        self._counted = True
        if guard.open_connections > guard.limits.max_connections:
            self.over_bound = True
            log.info(
                "refusing a connection over the server's bound",
                server=guard.name,
                peer=transport.get_extra_info("peername"),
                max_connections=guard.limits.max_connections,
            )
        self._arm_head_deadline()

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._counted:
            self._counted = False
            self._guard.open_connections -= 1
        self._disarm_head_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._discarding:
            return
        awaiting_head = self._body is None or self._body.is_eof()
        if awaiting_head and self._head_bytes + len(data) > self._guard.limits.head_limit:
            # Decided before parsing, so that a head over the bound never reaches a handler: it is
            # over unless it ends (CRLF CRLF, possibly begun in the last chunk) within the bound.
            seen = self._head_tail + data
            end = seen.find(b"\r\n\r\n")
            if end < 0 or self._head_bytes - len(self._head_tail) + end + 4 > self._guard.limits.head_limit:
                self._refuse_head()
                return
        parsed = self._request_count
        super().data_received(data)
        if self._request_count != parsed:  # a head is complete (possibly with more behind it)
            self._head_bytes = 0
            self._head_tail = b""
            self._disarm_head_deadline()
            self._body = self._messages[-1][1] if self._messages else None
        elif awaiting_head and data:
            # A head has begun and is not complete: its deadline runs from now (the same moment as its
            # first byte's; a head that comes whole needs no timer).
            self._head_bytes += len(data)
            self._head_tail = data[-3:]
            self._arm_head_deadline()

    def _arm_head_deadline(self) -> None:
        if self._head_timer is not None:
            return
        loop = self._loop
        deadline = loop.time() + self._guard.limits.read_header_timeout
        self._head_timer = loop.call_at(deadline, self._head_expired)
        # aiohttp's keep-alive timer (the idle timeout) would cut a head begun late in the idle period;
        # in Go the idle timeout ends with the first byte of the next request.
        self._next_keepalive_close_time = max(self._next_keepalive_close_time, deadline)

    def _disarm_head_deadline(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_expired(self) -> None:
        self._head_timer = None
        if self.transport is None or self._discarding:
            return
        log.debug(
            "closing a connection whose request head did not arrive in time",
            server=self._guard.name,
            peer=self.transport.get_extra_info("peername"),
            read_header_timeout=self._guard.limits.read_header_timeout,
        )
        self.force_close()

    def _refuse_head(self) -> None:
        """Answer 431 to a head over the size bound, then drop the rest and close after a linger."""
        transport = self.transport
        if transport is None:
            return
        self._discarding = True
        self._disarm_head_deadline()
        limits = self._guard.limits
        log.info(
            "refusing a request head over the size bound",
            server=self._guard.name,
            peer=transport.get_extra_info("peername"),
            max_header_bytes=limits.max_header_bytes,
        )
        content_type, body = self._guard.answer(
            431, f"the request line and headers exceed {limits.max_header_bytes} bytes", None
        )
        transport.write(_raw_answer(431, content_type, body))
        if transport.can_write_eof():
            transport.write_eof()
        self._loop.call_later(_LINGER, self.force_close)

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if status != 400 or not isinstance(exc, HttpProcessingError):
            return super().handle_error(request, status, exc, message)
        # The parser refused the head: answer in the server's words, without aiohttp's traceback log.
        if request.writer.output_size > 0:
            raise ConnectionError("a response was sent already; cannot answer the bad request")
        if isinstance(exc, LineTooLong):  # not reached with the limits GuardedServer sets; kept exact
            code, text = (
                431,
                f"the request line and headers exceed {self._guard.limits.max_header_bytes} bytes",
            )
        elif _unknown_method(exc):
            code, text = 405, METHOD_NOT_ALLOWED
        else:
            code, text = 400, " ".join((exc.message or "malformed HTTP request").split())
        log.debug("answering a malformed request", server=self._guard.name, code=code, error=text)
        content_type, body = self._guard.answer(code, text, None)
        response = web.Response(status=code, body=body, headers={"Content-Type": content_type})
        response.force_close()
        return response


class GuardedAppRunner(web.AppRunner):
    """aiohttp's application runner serving through a :class:`GuardedServer`."""

    def __init__(
        self,
        app: web.Application,
        *,
        name: str,
        limits: ConnectionLimits,
        answer: Answer = plain_text_answer,
        refusal_status: int = 503,
        **kwargs: Any,
    ) -> None:
        super().__init__(app, **kwargs)
        self._guard_args: dict[str, Any] = {
            "name": name,
            "limits": limits,
            "answer": answer,
            "refusal_status": refusal_status,
        }

    async def _make_server(self) -> web.Server:
        # What AppRunner._make_server does, with the application's handler behind a GuardedServer.
        app = self._app
        loop = asyncio.get_running_loop()
        app._set_loop(loop)
        app.on_startup.freeze()
        await app.startup()
        app.freeze()
        return GuardedServer(
            app._handle,  # type: ignore[arg-type]  # it is given the web.Request the factory makes
            request_factory=app._make_request,
            loop=loop,
            **self._guard_args,
            **self._kwargs,
        )


class GuardedSockSite(web.SockSite):
    """aiohttp's site on a bound socket, with a deadline for the TLS handshake (a client that never
    finishes its handshake holds a connection only that long)."""

    def __init__(self, runner: web.BaseRunner, sock: Any, *, handshake_timeout: float, **kwargs: Any) -> None:
        super().__init__(runner, sock, **kwargs)
        self._handshake_timeout = handshake_timeout

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        loop = asyncio.get_running_loop()
        tls = self._ssl_context
        self._server = await loop.create_server(
            server,
            sock=self._sock,
            ssl=tls,
            backlog=self._backlog,
            ssl_handshake_timeout=self._handshake_timeout if tls else None,
        )
