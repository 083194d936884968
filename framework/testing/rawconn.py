"""Raw connections for tests of what a server does to a connection (deadlines, bounds, malformed heads):
plain or TLS sockets on loopback, and reading until the server closes.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass

__all__ = ["Closed", "open_connection", "read_until_closed"]


def open_connection(port: int, ca_file: str | None = None, timeout: float = 10.0) -> socket.socket:
    """A connection to ``127.0.0.1:port``; with ``ca_file`` a TLS one verified against that CA."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    if ca_file is None:
        return sock
    context = ssl.create_default_context(cafile=ca_file)
    context.check_hostname = False  # the serving certificate names the server, not this address
    try:
        return context.wrap_socket(sock)
    except BaseException:
        sock.close()
        raise


@dataclass
class Closed:
    """What a connection received before the server ended it, and how it ended."""

    data: bytes
    reset: bool  # ended by a reset (or a TLS stream cut short) rather than a clean close

    @property
    def status(self) -> int | None:
        """The status code of the first response received (None: none came)."""
        if not self.data.startswith(b"HTTP/1."):
            return None
        return int(self.data.split(b" ", 2)[1])

    @property
    def body(self) -> bytes:
        """The body of the first response (everything after its head)."""
        return self.data.partition(b"\r\n\r\n")[2]


def read_until_closed(sock: socket.socket, timeout: float = 10.0, limit: int = 1 << 22) -> Closed:
    """Read until the server closes the connection; raises TimeoutError if it is still open after
    ``timeout`` seconds without sending anything (or has sent more than ``limit`` bytes)."""
    sock.settimeout(timeout)
    data = b""
    while len(data) <= limit:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, ssl.SSLError):
            return Closed(data, reset=True)
        except TimeoutError as error:
            raise TimeoutError(f"the server kept the connection open; got {data[:200]!r}") from error
        if not chunk:
            return Closed(data, reset=False)
        data += chunk
    raise TimeoutError(f"the server sent more than {limit} bytes without closing")
