"""Connection hygiene of the API server over raw TLS sockets: the idle and request-head deadlines, the
head size bound (431 Status), malformed heads (400 Status) and the bound on open connections (429).

The servers here have short deadlines (0.5 s); waiting for the server to close uses a generous client
timeout, so nothing depends on how fast the machine is.
"""

from __future__ import annotations

import json
import select
from collections.abc import Iterator

import pytest
import urllib3

from framework.apiserver import APIServer
from framework.apiserver.endpoints.connections import DEFAULT_LIMITS
from framework.server import ConnectionLimits
from framework.testing import eventually
from framework.testing.rawconn import Closed, open_connection, read_until_closed

SHORT = ConnectionLimits(idle_timeout=0.5, read_header_timeout=0.5, max_connections=64)


@pytest.fixture(scope="module")
def server() -> Iterator[APIServer]:
    with APIServer(connection_limits=SHORT) as s:
        yield s


def _connect(server: APIServer):
    return open_connection(server.port, str(server.ca_path))


def _get(server: APIServer, path: str, extra: bytes = b"") -> bytes:
    return (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {server.token}\r\n".encode()
        + extra
        + b"\r\n"
    )


def _served(server: APIServer) -> bool:
    """Another client, on its own connection, is answered (the loop is not blocked)."""
    pool = urllib3.PoolManager(ca_certs=str(server.ca_path), retries=False)
    try:
        r = pool.request(
            "GET", server.url + "/version", headers={"Authorization": f"Bearer {server.token}"}, timeout=10
        )
        return r.status == 200 and "gitVersion" in r.json()
    finally:
        pool.clear()


def _status(closed: Closed) -> dict:
    status = json.loads(closed.body)
    assert status["kind"] == "Status" and status["apiVersion"] == "v1" and status["status"] == "Failure"
    return status


def test_defaults_are_kube_apiservers() -> None:
    """secure_serving.go: IdleTimeout 90 s, ReadHeaderTimeout 32 s, MaxHeaderBytes 1 MiB."""
    assert ConnectionLimits(90.0, 32.0, 1 << 20, 1024) == DEFAULT_LIMITS


def test_connection_without_a_request_is_closed_at_the_header_timeout(server: APIServer) -> None:
    with _connect(server) as silent:
        assert _served(server)
        closed = read_until_closed(silent)
    assert closed.data == b""  # closed without an answer, as Go does on a header read timeout


def test_slowloris_is_cut_while_others_are_served(server: APIServer) -> None:
    """A client sending its head one byte at a time (never its end) is closed without an answer."""
    head = _get(server, "/version")[:-2]
    with _connect(server) as slow:
        for i in range(len(head)):
            try:
                slow.sendall(head[i : i + 1])
            except OSError:  # the server is gone
                break
            if i == 3:
                assert _served(server)
            if select.select([slow], [], [], 0.05)[0]:  # the server closed (it sends nothing else)
                break
        closed = read_until_closed(slow)
    assert b"HTTP/" not in closed.data
    assert _served(server)


def test_unfinished_head_after_a_request_is_cut(server: APIServer) -> None:
    """On a keep-alive connection the next request's head has the header time too."""
    with _connect(server) as conn:
        conn.sendall(_get(server, "/version"))
        first = conn.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 ")
        conn.sendall(b"GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        closed = read_until_closed(conn)
    assert b"HTTP/1.1" not in closed.data


def test_idle_connection_is_closed_after_its_request(server: APIServer) -> None:
    with _connect(server) as idle:
        idle.sendall(_get(server, "/version"))
        assert _served(server)
        closed = read_until_closed(idle)
    assert closed.status == 200 and b"gitVersion" in closed.body
    assert closed.data.count(b"HTTP/1.1 ") == 1


def test_a_tls_handshake_never_begun_is_cut(server: APIServer) -> None:
    """Go gives the TLS handshake the header time: a client that connects and says nothing is closed."""
    with open_connection(server.port) as plain:  # TCP only: no ClientHello is ever sent
        assert _served(server)
        closed = read_until_closed(plain)
    assert closed.data == b""


def test_pipelined_requests_are_all_served(server: APIServer) -> None:
    with _connect(server) as conn:
        conn.sendall(_get(server, "/version") + _get(server, "/healthz", b"Connection: close\r\n"))
        closed = read_until_closed(conn)
    assert closed.data.count(b"HTTP/1.1 200 OK\r\n") == 2
    assert closed.data.endswith(b"ok")


def test_a_slow_body_is_not_cut_by_the_header_timeout(server: APIServer) -> None:
    """ReadHeaderTimeout ends with the head (kube-apiserver sets no ReadTimeout): a body may come later."""
    body = json.dumps({"metadata": {"name": "slow-body"}, "data": {"k": "v"}}).encode()
    extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n"
    with _connect(server) as conn:
        conn.sendall(
            _get(server, "/api/v1/namespaces/default/configmaps", extra.encode()).replace(b"GET", b"POST", 1)
        )
        # Past the head deadline, observed: a head begun after ours is cut by the server first.
        with _connect(server) as witness:
            witness.sendall(b"GET /version HTTP/1.1\r\n")
            assert read_until_closed(witness).data == b""
        conn.sendall(body)
        closed = read_until_closed(conn)
    assert closed.status == 201
    assert json.loads(closed.body)["metadata"]["name"] == "slow-body"


def test_a_70kb_query_string_is_served(server: APIServer) -> None:
    """Go reads heads up to MaxHeaderBytes (1 MiB): a long query string is an ordinary request."""
    query = "x" * 70_000
    with _connect(server) as conn:
        conn.sendall(_get(server, f"/api/v1/namespaces?ignored={query}", b"Connection: close\r\n"))
        closed = read_until_closed(conn)
    assert closed.status == 200
    assert json.loads(closed.body)["kind"] == "NamespaceList"


def test_a_head_just_under_the_bound_is_served(server: APIServer) -> None:
    value = b"v" * ((1 << 20) - 1000)
    with _connect(server) as conn:
        conn.sendall(_get(server, "/version", b"X-Big: " + value + b"\r\nConnection: close\r\n"))
        closed = read_until_closed(conn)
    assert closed.status == 200


@pytest.mark.parametrize(
    "extra_path, extra_headers",
    [
        ("?q=" + "x" * (1 << 21), b""),  # a request line of 2 MiB
        ("", b"".join(b"X-H%d: %s\r\n" % (i, b"h" * 4000) for i in range(300))),  # 300 headers of 4 KB
    ],
    ids=["request-line", "many-headers"],
)
def test_a_head_over_the_bound_gets_431_status(
    server: APIServer, extra_path: str, extra_headers: bytes
) -> None:
    with _connect(server) as conn:
        conn.sendall(_get(server, "/version" + extra_path, extra_headers))
        closed = read_until_closed(conn)
    assert closed.status == 431
    assert b"Connection: close" in closed.data.partition(b"\r\n\r\n")[0]
    status = _status(closed)
    assert status["code"] == 431
    assert "reason" not in status  # client-go's reason for a bare 431 is Unknown
    assert "exceed 1048576 bytes" in status["message"]
    assert _served(server)


def test_a_malformed_head_gets_400_status(server: APIServer) -> None:
    with _connect(server) as conn:
        conn.sendall(b"GET /version NOTHTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        closed = read_until_closed(conn)
    assert closed.status == 400
    status = _status(closed)
    assert (status["code"], status["reason"]) == (400, "BadRequest")
    assert status["message"]


@pytest.mark.parametrize("method", [b"FOO", b"BREW", b"X-CUSTOM"])
def test_a_method_the_router_does_not_know_gets_405_status(server: APIServer, method: bytes) -> None:
    """Go hands any token method to the router, which answers 405 MethodNotAllowed; aiohttp's parser
    refuses methods it does not know before a handler sees them, and is answered the same way."""
    with _connect(server) as conn:
        conn.sendall(_get(server, "/api/v1/namespaces").replace(b"GET", method, 1))
        closed = read_until_closed(conn)
    assert closed.status == 405
    status = _status(closed)
    assert (status["code"], status["reason"], status["details"]) == (405, "MethodNotAllowed", {})
    assert status["message"] == "the server does not allow this method on the requested resource"


def test_a_method_that_is_no_token_is_a_malformed_head(server: APIServer) -> None:
    with _connect(server) as conn:
        conn.sendall(b"G(T /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        closed = read_until_closed(conn)
    assert closed.status == 400 and _status(closed)["reason"] == "BadRequest"


def test_connections_over_the_bound_are_refused_with_429() -> None:
    limits = ConnectionLimits(idle_timeout=30.0, read_header_timeout=30.0, max_connections=2)
    with APIServer(connection_limits=limits) as server:
        held = [_connect(server) for _ in range(2)]
        try:
            for conn in held:  # both are served and kept open
                conn.sendall(_get(server, "/version"))
                assert conn.recv(65536).startswith(b"HTTP/1.1 200 ")
            with _connect(server) as extra:
                extra.sendall(_get(server, "/version"))
                closed = read_until_closed(extra)
            assert closed.status == 429
            head = closed.data.partition(b"\r\n\r\n")[0]
            assert b"Retry-After: 1" in head and b"Connection: close" in head
            status = _status(closed)
            assert (status["code"], status["reason"]) == (429, "TooManyRequests")
            assert status["details"] == {"retryAfterSeconds": 1}
            assert "too many open connections (limit 2)" in status["message"]
        finally:
            for conn in held:
                conn.close()
        # The slots are free again once the server has seen the connections close.
        eventually(lambda: _served(server), message="served again after the held connections closed")
