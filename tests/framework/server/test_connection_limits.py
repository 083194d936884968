"""The shared HTTP server's connection hygiene (webhook, metrics and health-probe servers) over raw
sockets: idle and request-head deadlines, the head size bound, the connection bound, and the defaults.

Deadlines are short (0.5 s); waiting for the server to close uses a generous client timeout.
"""

from __future__ import annotations

import select
from collections.abc import Iterator

import pytest
import urllib3

from framework.healthz import HealthProbeServer
from framework.metrics import MetricsServer
from framework.server import ConnectionLimits, HTTPServer, Response
from framework.testing import eventually
from framework.testing.rawconn import open_connection, read_until_closed
from framework.webhook import WebhookServer

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

SHORT = ConnectionLimits(idle_timeout=0.5, read_header_timeout=0.5, max_connections=32)
GET = b"GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n"


@pytest.fixture
def server() -> Iterator[HTTPServer]:
    with HTTPServer("127.0.0.1", 0, name="limits", limits=SHORT) as s:
        s.route("/ping", lambda r: Response.text("pong\n"))
        yield s


def _served(server: HTTPServer) -> bool:
    """Another client, on its own connection, is answered meanwhile."""
    pool = urllib3.PoolManager(retries=False)
    try:
        r = pool.request("GET", server.url + "/ping", timeout=10)
        return (r.status, r.data) == (200, b"pong\n")
    finally:
        pool.clear()


def test_defaults_are_controller_runtimes() -> None:
    """pkg/internal/httpserver: IdleTimeout 90 s, ReadHeaderTimeout 32 s, MaxHeaderBytes 1 MiB."""
    expected = ConnectionLimits(90.0, 32.0, 1 << 20, 256)
    servers = [
        HTTPServer(),
        MetricsServer("127.0.0.1:0"),
        HealthProbeServer("127.0.0.1:0"),
        WebhookServer("127.0.0.1", 0),
    ]
    assert [s.limits for s in servers] == [expected] * 4
    assert HealthProbeServer("127.0.0.1:0", limits=SHORT).limits is SHORT
    assert MetricsServer("127.0.0.1:0", limits=SHORT).limits is SHORT
    assert WebhookServer("127.0.0.1", 0, limits=SHORT).limits is SHORT


@pytest.mark.parametrize(
    "field, value",
    [
        ("idle_timeout", 0),
        ("read_header_timeout", -1),
        ("read_header_timeout", float("inf")),
        ("max_header_bytes", 0),
        ("max_connections", 0),
    ],
)
def test_limits_are_validated(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        ConnectionLimits(**{field: value})


def test_connection_without_a_request_is_closed(server: HTTPServer) -> None:
    with open_connection(server.port) as silent:
        assert _served(server)
        closed = read_until_closed(silent)
    assert closed.data == b""


def test_slowloris_is_cut_while_others_are_served(server: HTTPServer) -> None:
    head = GET + b"X-Slow: " + b"s" * 200  # never finished
    with open_connection(server.port) as slow:
        for i in range(len(head)):
            try:
                slow.sendall(head[i : i + 1])
            except OSError:
                break
            if i == 3:
                assert _served(server)
            if select.select([slow], [], [], 0.05)[0]:
                break
        closed = read_until_closed(slow)
    assert b"HTTP/" not in closed.data
    assert _served(server)


def test_unfinished_head_after_a_request_is_cut(server: HTTPServer) -> None:
    with open_connection(server.port) as conn:
        conn.sendall(GET + b"\r\n")
        assert conn.recv(65536).startswith(b"HTTP/1.1 200 ")
        conn.sendall(GET)
        closed = read_until_closed(conn)
    assert b"HTTP/" not in closed.data


def test_idle_connection_is_closed_after_its_request(server: HTTPServer) -> None:
    with open_connection(server.port) as idle:
        idle.sendall(GET + b"\r\n")
        assert _served(server)
        closed = read_until_closed(idle)
    assert closed.status == 200 and closed.body == b"pong\n"


def test_a_head_over_the_bound_gets_431(server: HTTPServer) -> None:
    with open_connection(server.port) as conn:
        conn.sendall(b"GET /ping?q=" + b"x" * (1 << 21) + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        closed = read_until_closed(conn)
    assert closed.status == 431
    head = closed.data.partition(b"\r\n\r\n")[0]
    assert b"Content-Type: text/plain; charset=utf-8" in head and b"Connection: close" in head
    assert closed.body.startswith(b"431 Request Header Fields Too Large")
    assert _served(server)


def test_a_long_query_string_is_served(server: HTTPServer) -> None:
    with open_connection(server.port) as conn:
        query = b"x" * 70_000
        conn.sendall(b"GET /ping?q=" + query + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        closed = read_until_closed(conn)
    assert closed.status == 200 and closed.body == b"pong\n"


def test_a_body_over_the_head_bound_is_not_a_head(server: HTTPServer) -> None:
    """The head bound is for the head: a 2 MiB body after a small head is read whole, even if it
    arrives after the header deadline."""
    server.route("/size", lambda r: Response.text(str(len(r.read_body()))))
    body = b"b" * (1 << 21)
    with open_connection(server.port) as conn:
        conn.sendall(
            b"POST /size HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
            % len(body)
        )
        # Past the head deadline, observed: a head begun after ours is cut by the server first.
        with open_connection(server.port) as witness:
            witness.sendall(b"POST /size HTTP/1.1\r\n")
            assert read_until_closed(witness).data == b""
        conn.sendall(body)
        closed = read_until_closed(conn)
    assert closed.status == 200 and closed.body == str(len(body)).encode()


def test_a_malformed_head_gets_a_plain_400(server: HTTPServer) -> None:
    with open_connection(server.port) as conn:
        conn.sendall(b"GET /ping NOTHTTP/1.1\r\n\r\n")
        closed = read_until_closed(conn)
    assert closed.status == 400
    assert closed.body.startswith(b"400 Bad Request: ")


def test_connections_over_the_bound_are_refused_with_503() -> None:
    limits = ConnectionLimits(idle_timeout=30.0, read_header_timeout=30.0, max_connections=2)
    with HTTPServer("127.0.0.1", 0, name="bounded", limits=limits) as server:
        server.route("/ping", lambda r: Response.text("pong\n"))
        held = [open_connection(server.port) for _ in range(2)]
        try:
            for conn in held:
                conn.sendall(GET + b"\r\n")
                assert conn.recv(65536).startswith(b"HTTP/1.1 200 ")
            with open_connection(server.port) as extra:
                extra.sendall(GET + b"\r\n")
                closed = read_until_closed(extra)
            assert closed.status == 503
            head = closed.data.partition(b"\r\n\r\n")[0]
            assert b"Retry-After: 1" in head and b"Connection: close" in head
            assert closed.body.startswith(b"503 Service Unavailable: too many open connections (limit 2)")
        finally:
            for conn in held:
                conn.close()
        # The slots are free again once the server has seen the connections close.
        eventually(lambda: _served(server), message="served again after the held connections closed")
