"""controller-runtime style bind addresses, and the error a server raises when it cannot bind one."""

from __future__ import annotations

import socket

__all__ = ["BindError", "bind_socket", "parse_bind_address"]


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


def bind_socket(host: str, port: int, backlog: int = 128) -> socket.socket:
    """A listening, non-blocking socket for ``host:port``.

    An empty host (or ``::``) listens on every interface with one dual-stack socket where the system
    has IPv6, so port 0 gives one port for both families (as Go's ``net.Listen("tcp", ":0")``).
    """
    if host in ("", "::") and socket.has_dualstack_ipv6():
        try:
            sock = socket.create_server(
                ("::", port), family=socket.AF_INET6, dualstack_ipv6=True, backlog=backlog
            )
        except OSError:
            if host == "::":
                raise
        else:
            sock.setblocking(False)
            return sock
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host or "0.0.0.0", port), family=family, backlog=backlog)
    sock.setblocking(False)
    return sock
