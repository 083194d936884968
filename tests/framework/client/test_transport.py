"""The client's connections: a small request body leaves in the same write as its header block.

A SOCK_SEQPACKET socket pair keeps the boundaries of each ``send``, so the peer sees how many writes a
request took.
"""

from __future__ import annotations

import socket

import pytest

from framework.client.transport import _COALESCE_LIMIT, _CheckedHTTPConnection, before_send


@pytest.fixture
def connect():
    """A new connection (http.client sends one request per connection until a response is read)."""
    sockets: list[socket.socket] = []

    def new() -> tuple[_CheckedHTTPConnection, socket.socket]:
        ours, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sockets.extend((ours, peer))
        c = _CheckedHTTPConnection("apiserver.test", 80)
        c.sock = ours
        return c, peer

    yield new
    for s in sockets:
        s.close()


def _records(peer: socket.socket) -> list[bytes]:
    out = []
    peer.settimeout(0.2)
    while True:
        try:
            out.append(peer.recv(1 << 20))
        except TimeoutError:
            return out


def test_a_small_body_goes_out_with_the_headers_in_one_write(connect):
    c, peer = connect()
    c.request(
        "POST",
        "/api/v1/namespaces",
        body=b'{"kind":"Namespace"}',
        headers={"Content-Type": "application/json"},
    )
    records = _records(peer)
    assert len(records) == 1
    head, _, body = records[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /api/v1/namespaces HTTP/1.1\r\n")
    assert b"Content-Length: 20" in head
    assert body == b'{"kind":"Namespace"}'


def test_a_request_without_a_body_and_a_large_body_are_sent_as_before(connect):
    c, peer = connect()
    c.request("GET", "/api/v1/namespaces")
    records = _records(peer)
    assert len(records) == 1 and records[0].endswith(b"\r\n\r\n")
    big = b"x" * (_COALESCE_LIMIT + 1)
    c, peer = connect()
    c.request("PUT", "/api/v1/namespaces/a", body=big)
    records = _records(peer)
    assert len(records) == 2  # headers, then the body streamed on its own
    assert records[0].endswith(b"\r\n\r\n") and b"".join(records[1:]) == big


def test_the_write_guard_still_runs_before_the_first_byte(connect):
    c, peer = connect()

    def refuse() -> None:
        raise PermissionError("lease lost")

    with before_send(refuse), pytest.raises(PermissionError):
        c.request("DELETE", "/api/v1/namespaces/a", body=b"{}")
    assert _records(peer) == []
