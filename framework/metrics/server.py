"""The ``/metrics`` endpoint: a server exposing a Prometheus registry, over plain HTTP or, ``secure``, over
HTTPS with every caller checked by the API server (kubebuilder's ``--metrics-secure``)."""

from __future__ import annotations

import gzip
import os
import shutil
import ssl
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.exposition import choose_encoder

from framework.server import ConnectionLimits, HTTPServer, Request, Response, RouteHandler, parse_bind_address

if TYPE_CHECKING:
    from framework.certwatcher import CertWatcher
    from framework.metrics.filters import DelegatingAuth

__all__ = ["DEFAULT_BIND_ADDRESS", "SELF_SIGNED_CA_NAME", "MetricsServer", "metrics_handler"]

DEFAULT_BIND_ADDRESS = ":8080"  # controller-runtime's default; "0" disables the server
# The issuer of the self-signed certificate of secure serving without a cert_dir (controller-runtime's
# names what it serves too: "localhost-ca@<time>"), so a scraper's error names the metrics server.
SELF_SIGNED_CA_NAME = "framework-metrics-ca"


def metrics_handler(registry: CollectorRegistry | None = None) -> RouteHandler:
    """A route handler rendering ``registry`` (text format, or OpenMetrics when the scraper asks for it;
    gzip when accepted; ``?name[]=metric`` restricts the output as prometheus_client's handler does)."""
    registry = REGISTRY if registry is None else registry

    def serve(request: Request) -> Response:
        encoder, content_type = choose_encoder(request.headers.get("Accept") or "")
        names = request.query.get("name[]")
        body = encoder(registry.restricted_registry(names) if names else registry)
        headers = {}
        if "gzip" in (request.headers.get("Accept-Encoding") or ""):
            body = gzip.compress(body, compresslevel=1)
            headers["Content-Encoding"] = "gzip"
        return Response(200, body, content_type, headers)

    return serve


class MetricsServer(HTTPServer):
    """Serves ``registry`` (default ``prometheus_client.REGISTRY``) at ``path`` on ``bind_address``.

    ``bind_address`` is controller-runtime style: ``":8080"``, ``"127.0.0.1:0"`` (a free port; see
    ``port``); ``"0"`` disables metrics, so it is refused here. Extra endpoints can be added with
    ``route()``.

    ``secure`` serves HTTPS (controller-runtime's ``SecureServing``): the certificate and key are
    ``cert_dir``/``cert_name`` and ``cert_dir``/``key_name``, re-read when the files change
    (:class:`~framework.certwatcher.CertWatcher`); without ``cert_dir`` a self-signed certificate for
    ``localhost`` is made at start (its CA in :attr:`ca_pem`, for a client that wants to verify).
    ``auth`` (:class:`~framework.metrics.filters.DelegatingAuth`) puts every route behind a
    TokenReview and a SubjectAccessReview (controller-runtime's ``FilterProvider``
    ``WithAuthenticationAndAuthorization``).
    """

    def __init__(
        self,
        bind_address: str = DEFAULT_BIND_ADDRESS,
        registry: CollectorRegistry | None = None,
        *,
        path: str = "/metrics",
        name: str = "metrics-server",
        shutdown_timeout: float = 5.0,
        limits: ConnectionLimits | None = None,
        secure: bool = False,
        cert_dir: str | os.PathLike[str] | None = None,
        cert_name: str = "tls.crt",
        key_name: str = "tls.key",
        auth: DelegatingAuth | None = None,
    ) -> None:
        parsed = parse_bind_address(bind_address)
        if parsed is None:
            raise ValueError(f"metrics bind address {bind_address!r} disables the server")
        super().__init__(*parsed, name=name, shutdown_timeout=shutdown_timeout, limits=limits)
        self.registry = REGISTRY if registry is None else registry
        self.secure = secure
        self.scheme = "https" if secure else "http"
        self.auth = auth
        self.cert_dir = Path(cert_dir) if cert_dir is not None else None
        self._cert_name, self._key_name = cert_name, key_name
        self.certs: CertWatcher | None = None
        self.ca_pem: bytes | None = None
        self._self_signed_dir: str | None = None
        self.route(path, metrics_handler(self.registry))

    def route(self, path: str, handler: RouteHandler, *, prefix: bool = False) -> None:
        """Serve ``path`` with ``handler``; with ``auth``, behind it (as controller-runtime filters every
        handler of its metrics server, extra ones included)."""
        super().route(path, self.auth.filter(handler) if self.auth is not None else handler, prefix=prefix)

    def _prepare(self) -> None:
        if not self.secure:
            return
        from framework.certwatcher import CertWatcher

        if self.cert_dir is None:
            from framework.certs import self_signed_cert

            self._self_signed_dir = tempfile.mkdtemp(prefix="metrics-serving-certs-")
            cert, key, self.ca_pem = self_signed_cert(self._self_signed_dir, ca_name=SELF_SIGNED_CA_NAME)
        else:
            cert, key = self.cert_dir / self._cert_name, self.cert_dir / self._key_name
        self.certs = CertWatcher(cert, key, registry=self.registry)
        self.certs.read()  # fail start() naming the files if they cannot be loaded

    def ssl_context(self) -> ssl.SSLContext | None:
        return self.certs.listener_context() if self.certs is not None else None

    def stop(self, timeout: float | None = None) -> bool:
        stopped = super().stop(timeout)
        if self._self_signed_dir is not None:
            shutil.rmtree(self._self_signed_dir, ignore_errors=True)
            self._self_signed_dir = None
        return stopped
