"""HTTP plumbing for :class:`~framework.client.Client`: a urllib3 pool and auth headers built from an
official ``kubernetes.client.Configuration`` (kubeconfig, in-cluster or hand-made).

The Configuration is only read, never turned into an ``ApiClient``: TLS material (CA, client
certificate, ``verify_ssl``, SNI) and the proxy go into one :class:`urllib3.PoolManager`; the
``Authorization`` header is taken from ``Configuration.auth_settings()`` on every request, which runs
the loader's refresh hook, so exec-plugin, OIDC and projected service-account tokens that rotate are
picked up without rebuilding the client.

The pool's connections are urllib3's with two changes: a small request body leaves in the same
write as its header block, and a response's header block is read without the e-mail parser
(:class:`_Response`).
"""

from __future__ import annotations

import email.parser
import http.client
import platform
import re
import ssl
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from typing import Any

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

__all__ = ["AuthHeaders", "HostTransport", "before_send", "build_pool_manager", "default_user_agent"]

# --- a check run just before a request's first byte goes out -------------------------------------------

_pending = threading.local()


@contextmanager
def before_send(check: Callable[[], None] | None) -> Iterator[None]:
    """Run ``check`` (it may raise) when the request made in this block sends its first byte, after
    the pool handed out a connection and the request was encoded, instead of before all that.

    The write guard of a leader uses it: a process paused (SIGSTOP, a long stall) between the lease
    check and the socket sends a request it should no longer send; checking at the socket narrows that
    window from the pool's and the encoder's time to a few instructions. It cannot close it: nothing in
    the Kubernetes API fences a write by lease.
    """
    _pending.check = check
    try:
        yield
    finally:
        _pending.check = None


# --- the response's header block -------------------------------------------------------------------------

# A header name as the e-mail parser takes it: printable ASCII but space and colon. Anything else, a
# folded line or a character the parser splits lines at (str.splitlines) sends the block to that parser.
_HEADER_NAME = re.compile(r"[\x21-\x39\x3b-\x7e]+")


def _parse_header_block(lines: list[bytes]) -> http.client.HTTPMessage:
    """The ``HTTPMessage`` that ``http.client.parse_headers`` makes of ``lines`` (as read by
    ``http.client``'s header reader, the blank line last), without running the e-mail parser.

    Plain ``Name: value`` lines, which is what API servers send, become the message's headers
    directly, as the parser's compat32 policy reads them: the name as it stands, the value without
    the blanks after the colon and without the line break. Any other block (a folded line, a line
    without a colon, an odd character in a name or a line break inside a value) goes to the e-mail
    parser, which records its defects as before.
    """
    headers = []
    for raw in lines:
        if raw in (b"\r\n", b"\n", b""):
            break
        line = raw.decode("iso-8859-1")
        name, colon, value = line.partition(":")
        if not colon or not _HEADER_NAME.fullmatch(name) or len(line.splitlines()) != 1:
            return _email_parse(lines)
        headers.append((name, value.lstrip(" \t").rstrip("\r\n")))
    msg = http.client.HTTPMessage()
    msg._headers = headers  # type: ignore[attr-defined]  # the (name, value) list the parser fills
    msg.set_payload("")  # the parser's payload: what followed the blank line, nothing
    return msg


def _email_parse(lines: list[bytes]) -> http.client.HTTPMessage:
    text = b"".join(lines).decode("iso-8859-1")
    return email.parser.Parser(_class=http.client.HTTPMessage).parsestr(text)


class _Response(http.client.HTTPResponse):
    """``http.client.HTTPResponse`` whose header block is read by :func:`_parse_header_block`.

    ``http.client`` hands every response's headers to the e-mail parser: 14.6 µs of client CPU for
    an API server's four headers, against 3.4 µs here, header reader included (bench/README.md,
    "Response headers without the e-mail parser"). The rest of ``begin`` (the status line, 100
    Continue, the framing, keep-alive) decides as ``http.client``'s does; the tests read the same
    bytes with both classes and compare.
    """

    def begin(self) -> None:
        if self.headers is not None:
            return
        while True:
            version, status, reason = self._read_status()
            if status != http.client.CONTINUE:
                break
            http.client._read_headers(self.fp)  # a 100's headers: dropped
        self.code = self.status = status
        self.reason = reason.strip()
        if version in ("HTTP/1.0", "HTTP/0.9"):
            self.version = 10
        elif version.startswith("HTTP/1."):
            self.version = 11
        else:
            raise http.client.UnknownProtocol(version)
        headers = _parse_header_block(http.client._read_headers(self.fp))
        self.headers = self.msg = headers
        encoding = headers.get("transfer-encoding")
        self.chunked = bool(encoding) and encoding.lower() == "chunked"
        if self.chunked:
            self.chunk_left = None
        self.will_close = self._check_close()
        self.length = None
        length = headers.get("content-length")
        if length and not self.chunked:
            try:
                n = int(length)
            except ValueError:
                n = -1
            self.length = n if n >= 0 else None
        bodiless = status in (http.client.NO_CONTENT, http.client.NOT_MODIFIED) or 100 <= status < 200
        if bodiless or self._method == "HEAD":
            self.length = 0
        if not self.will_close and not self.chunked and self.length is None:
            self.will_close = True


_COALESCE_LIMIT = 64 * 1024
"""Bodies up to this size go out in one write with their header block (larger ones are streamed)."""


class _CheckedSend:
    """Connection mixin: the first ``send`` of a request (its header block) runs the pending check,
    a small body is sent in the same write as the headers, and responses are :class:`_Response`.

    urllib3 writes the header block and the body separately; with ``TCP_NODELAY`` that is two packets
    and two reads on the server for every write request. http.client joins them the same way when it
    is handed the body with the headers.
    """

    _hold = False
    _held: bytes | None = None
    # _Response relies on http.client's private header reader; a Python without it gets the stock class.
    response_class = _Response if hasattr(http.client, "_read_headers") else http.client.HTTPResponse

    def request(self, method: str, url: str, body: Any = None, headers: Any = None, **kw: Any) -> None:
        self._hold = isinstance(body, bytes) and 0 < len(body) <= _COALESCE_LIMIT
        try:
            super().request(method, url, body=body, headers=headers, **kw)  # type: ignore[misc]
        finally:
            self._hold = False
            held, self._held = self._held, None
        if held is not None:  # nothing followed the headers (not expected for a bytes body)
            super().send(held)  # type: ignore[misc]

    def send(self, data: Any) -> None:
        check = getattr(_pending, "check", None)
        if check is not None:
            _pending.check = None
            check()
        if self._hold:
            self._hold = False
            self._held = bytes(data)
            return
        held = self._held
        if held is not None:
            self._held = None
            data = held + bytes(data)
        super().send(data)  # type: ignore[misc]


class _CheckedHTTPConnection(_CheckedSend, HTTPConnection):
    pass


class _CheckedHTTPSConnection(_CheckedSend, HTTPSConnection):
    pass


class _CheckedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = _CheckedHTTPConnection


class _CheckedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = _CheckedHTTPSConnection


_CHECKED_POOLS = {"http": _CheckedHTTPConnectionPool, "https": _CheckedHTTPSConnectionPool}


def default_user_agent() -> str:
    """``gcm-framework/VERSION (OS/ARCH) python/X.Y``, in the spirit of client-go's default."""
    try:
        version = metadata.version("gcm")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        version = "0.0.0"
    system = platform.system().lower() or "unknown"
    machine = platform.machine().lower() or "unknown"
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    return f"gcm-framework/{version} ({system}/{machine}) python/{py}"


def build_pool_manager(cfg: Any, maxsize: int | None = None) -> urllib3.PoolManager:
    """A PoolManager (or ProxyManager) with the Configuration's TLS, proxy and pool settings.

    urllib3 retries and redirects are turned off: the client decides what to retry.
    """
    pool_args: dict[str, Any] = {
        "cert_reqs": ssl.CERT_REQUIRED if cfg.verify_ssl else ssl.CERT_NONE,
        "ca_certs": cfg.ssl_ca_cert,
        "cert_file": cfg.cert_file,
        "key_file": cfg.key_file,
        "retries": False,
        "maxsize": maxsize or max(int(cfg.connection_pool_maxsize or 0), 16),
    }
    ca_data = getattr(cfg, "ca_cert_data", None)
    if ca_data:
        pool_args["ca_cert_data"] = ca_data
    if cfg.assert_hostname is not None:
        pool_args["assert_hostname"] = cfg.assert_hostname
    if getattr(cfg, "tls_server_name", None):
        pool_args["server_hostname"] = cfg.tls_server_name
    if getattr(cfg, "socket_options", None) is not None:
        pool_args["socket_options"] = cfg.socket_options
    proxy = getattr(cfg, "proxy", None)
    if proxy and not _bypass_proxy(cfg.host, getattr(cfg, "no_proxy", None) or ""):
        if proxy.startswith(("socks4", "socks5")):
            from urllib3.contrib.socks import SOCKSProxyManager

            return SOCKSProxyManager(proxy, headers=getattr(cfg, "proxy_headers", None), **pool_args)
        manager: urllib3.PoolManager = urllib3.ProxyManager(
            proxy, proxy_headers=getattr(cfg, "proxy_headers", None), **pool_args
        )
    else:
        manager = urllib3.PoolManager(**pool_args)
    manager.pool_classes_by_scheme = _CHECKED_POOLS
    return manager


class HostTransport:
    """The connections to one API server: requests by path (and query) below its URL.

    Without a proxy a request goes straight to the host's connection pool; asking the
    :class:`urllib3.PoolManager` instead would parse every URL and build a pool key to find that one
    pool again, per request (bench/README.md, "the request path"). Through a proxy the manager gets
    the whole URL, as its proxy needs.
    """

    def __init__(self, cfg: Any, host: str, maxsize: int | None = None) -> None:
        self.host = host
        self.manager = build_pool_manager(cfg, maxsize)
        self._direct = type(self.manager) is urllib3.PoolManager
        self._base_path = urllib3.util.parse_url(host).path or ""  # a server URL's path prefixes all
        self._pool: HTTPConnectionPool | None = None

    def urlopen(self, method: str, target: str, **kw: Any) -> urllib3.BaseHTTPResponse:
        """Send ``method target`` (``target``: path and query below the server URL); ``kw`` as
        :meth:`urllib3.HTTPConnectionPool.urlopen`."""
        if not self._direct:
            return self.manager.urlopen(method, self.host + target, **kw)
        pool = self._pool
        if pool is None:
            pool = self._pool = self.manager.connection_from_url(self.host)
        return pool.urlopen(method, self._base_path + target, assert_same_host=False, **kw)

    def clear(self) -> None:
        """Close the pooled connections (a later request opens new ones)."""
        self._pool = None
        self.manager.clear()


def _bypass_proxy(host: str, no_proxy: str) -> bool:
    try:
        from kubernetes.client.rest import should_bypass_proxies
    except ImportError:  # pragma: no cover - older clients
        return False
    return bool(should_bypass_proxies(host, no_proxy))


class AuthHeaders:
    """Thread-safe access to the Configuration's credentials, refreshed per request.

    Refresh hooks of the official loaders (exec plugins, token files) are not thread-safe, so calls
    are serialized; between expiries a call costs a dictionary lookup.
    """

    def __init__(self, cfg: Any) -> None:
        self._cfg = cfg
        self._lock = threading.Lock()

    def get(self) -> dict[str, str]:
        with self._lock:
            settings = self._cfg.auth_settings()
            out: dict[str, str] = {}
            for auth in settings.values():
                if auth.get("in") == "header" and auth.get("value"):
                    key = auth.get("key") or "Authorization"
                    out["Authorization" if key.lower() == "authorization" else key] = auth["value"]
            if not out and getattr(self._cfg, "username", None) and getattr(self._cfg, "password", None):
                out["Authorization"] = self._cfg.get_basic_auth_token()
            return out
