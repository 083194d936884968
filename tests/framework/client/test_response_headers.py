"""The client's responses: header blocks are read without the e-mail parser, with the same result.

Every case is sent over a real socket twice, once to the client's connection and once to a plain
``http.client`` response, and both sides must agree on the status, the headers (order, duplicates,
defects), the framing (chunked, length, keep-alive) and the body.
"""

from __future__ import annotations

import http.client
import socket
import threading

import pytest
import urllib3

from framework.client.transport import _CheckedHTTPConnection, _Response

CASES = {
    "api server": (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
        b'Date: Thu, 03 Dec 2026 15:35:01 GMT\r\nAudit-Id: 5c2f\r\n\r\n{"kind":1}\n'
    ),
    "duplicate headers": (
        b'HTTP/1.1 200 OK\r\nWarning: 299 - "a"\r\nContent-Length: 2\r\nWarning: 299 - "b"\r\n'
        b'warning: 299 - "c"\r\n\r\nok'
    ),
    "empty value and spaces": (
        b"HTTP/1.1 200 OK\r\nX-Empty:\r\nX-Spaces:   a b  \r\nX-Tab:\tv\r\nContent-Length: 0\r\n\r\n"
    ),
    "latin-1 value": b"HTTP/1.1 200 OK\r\nX-Name: caf\xe9\r\nContent-Length: 0\r\n\r\n",
    "bare LF line ends": b"HTTP/1.1 200 OK\nContent-Length: 3\nX-A: 1\n\nabc",
    "folded header": (b"HTTP/1.1 200 OK\r\nX-Folded: first\r\n  second\r\nContent-Length: 2\r\n\r\nok"),
    "line without a colon": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nnot a header\r\nX-A: 1\r\n\r\nok",
    "space before the colon": b"HTTP/1.1 200 OK\r\nX-A : 1\r\nContent-Length: 2\r\n\r\nok",
    "control character in a name": b"HTTP/1.1 200 OK\r\nX-\x01A: 1\r\nContent-Length: 2\r\n\r\nok",
    "non-ASCII name": b"HTTP/1.1 200 OK\r\nX-\xe9: 1\r\nContent-Length: 2\r\n\r\nok",
    "carriage return inside a value": b"HTTP/1.1 200 OK\r\nX-A: 1\r2\r\nContent-Length: 2\r\n\r\nok",
    "next-line byte inside a value": b"HTTP/1.1 200 OK\r\nX-A: 1\x852\r\nContent-Length: 2\r\n\r\nok",
    "missing name": b"HTTP/1.1 200 OK\r\n: v\r\nContent-Length: 2\r\n\r\nok",
    "chunked": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
        b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    ),
    "chunked beats content-length": (
        b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
    ),
    "no length: read to close": b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end",
    "connection close": b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
    "bad content-length": b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\nuntil the end",
    "negative content-length": b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nuntil the end",
    "no content": b"HTTP/1.1 204 No Content\r\nAudit-Id: 1\r\n\r\n",
    "not modified": b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
    "100 continue first": (
        b"HTTP/1.1 100 Continue\r\nX-Ignored: yes\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"
    ),
    "http/1.0": b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
    "error status": (
        b"HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
    ),
}


def _respond(response_class: type[http.client.HTTPResponse], raw: bytes, method: str = "GET"):
    """Send ``raw`` as the answer to one request and read it with ``response_class``."""
    ours, peer = socket.socketpair()
    try:
        peer.sendall(raw)
        peer.shutdown(socket.SHUT_WR)
        resp = response_class(ours, method=method)
        resp.begin()
        body = resp.read()
        return resp, body
    finally:
        ours.close()
        peer.close()


def _observed(resp: http.client.HTTPResponse, body: bytes) -> dict:
    return {
        "status": resp.status,
        "reason": resp.reason,
        "version": resp.version,
        "items": resp.msg.items(),
        "warnings": resp.msg.get_all("Warning"),
        "content-type": resp.msg.get_content_type(),
        "defects": [type(d) for d in resp.msg.defects],
        "payload": resp.msg.get_payload(),
        "chunked": resp.chunked,
        "will_close": resp.will_close,
        "body": body,
    }


@pytest.mark.parametrize("name", list(CASES))
def test_the_response_reads_as_http_client_reads_it(name):
    resp, body = _respond(_Response, CASES[name])
    assert isinstance(resp.msg, http.client.HTTPMessage)
    stock = _observed(*_respond(http.client.HTTPResponse, CASES[name]))
    assert _observed(resp, body) == stock


def test_a_head_response_has_no_body_whatever_its_length():
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n"
    ours, body = _respond(_Response, raw, method="HEAD")
    stock, stock_body = _respond(http.client.HTTPResponse, raw, method="HEAD")
    assert ours.length == stock.length == 0
    assert body == stock_body == b""
    assert ours.will_close is stock.will_close is False


def test_the_limits_of_http_client_still_hold():
    too_many = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(101)) + b"\r\n"
    with pytest.raises(http.client.HTTPException, match="more than 100 headers"):
        _respond(_Response, too_many)
    too_long = b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n"
    with pytest.raises(http.client.LineTooLong):
        _respond(_Response, too_long)
    with pytest.raises(http.client.UnknownProtocol):
        _respond(_Response, b"HTTP/2.0 200 OK\r\n\r\n")
    with pytest.raises(http.client.BadStatusLine):
        _respond(_Response, b"garbage\r\n\r\n")


class _CannedServer:
    """A TCP server answering each request on a connection with the next canned response."""

    def __init__(self, responses: list[bytes]) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.responses = list(responses)
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, name="canned-http", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        self.connections += 1
        with conn:
            reader = conn.makefile("rb")
            for raw in self.responses:
                while reader.readline() not in (b"\r\n", b""):
                    pass  # the request's header block; the requests here have no body
                conn.sendall(raw)

    def close(self) -> None:
        self.sock.close()
        self.thread.join(5)


def test_urllib3_reuses_the_connection_and_sees_every_header():
    server = _CannedServer([CASES["duplicate headers"], CASES["chunked"], CASES["api server"]])
    try:
        pool = urllib3.HTTPConnectionPool("127.0.0.1", server.port, maxsize=1, retries=False)
        pool.ConnectionCls = _CheckedHTTPConnection
        first = pool.request("GET", "/a")
        assert first.status == 200 and first.data == b"ok"
        assert first.headers["Warning"] == '299 - "a", 299 - "b", 299 - "c"'
        second = pool.request("GET", "/b")
        assert second.data == b"hello world"
        assert second.headers["content-type"] == "application/json"
        third = pool.request("GET", "/c")
        assert third.json() == {"kind": 1}
        assert third.headers["Audit-Id"] == "5c2f"
        assert server.connections == 1  # all three over one kept-alive connection
    finally:
        server.close()
