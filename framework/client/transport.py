"""HTTP plumbing for :class:`~framework.client.Client`: a urllib3 pool and auth headers built from an
official ``kubernetes.client.Configuration`` (kubeconfig, in-cluster or hand-made).

The Configuration is only read, never turned into an ``ApiClient``: TLS material (CA, client
certificate, ``verify_ssl``, SNI) and the proxy go into one :class:`urllib3.PoolManager`; the
``Authorization`` header is taken from ``Configuration.auth_settings()`` on every request, which runs
the loader's refresh hook, so exec-plugin, OIDC and projected service-account tokens that rotate are
picked up without rebuilding the client.
"""

from __future__ import annotations

import platform
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


_COALESCE_LIMIT = 64 * 1024
"""Bodies up to this size go out in one write with their header block (larger ones are streamed)."""


class _CheckedSend:
    """Connection mixin: the first ``send`` of a request (its header block) runs the pending check,
    and a small body is sent in the same write as the headers.

    urllib3 writes the header block and the body separately; with ``TCP_NODELAY`` that is two packets
    and two reads on the server for every write request. http.client joins them the same way when it
    is handed the body with the headers.
    """

    _hold = False
    _held: bytes | None = None

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
