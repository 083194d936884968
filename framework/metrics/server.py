"""The ``/metrics`` endpoint: a plain-HTTP server exposing a Prometheus registry."""

from __future__ import annotations

import gzip

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.exposition import choose_encoder

from framework.server import ConnectionLimits, HTTPServer, Request, Response, RouteHandler, parse_bind_address

__all__ = ["DEFAULT_BIND_ADDRESS", "MetricsServer", "metrics_handler"]

DEFAULT_BIND_ADDRESS = ":8080"  # controller-runtime's default; "0" disables the server


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
    ) -> None:
        parsed = parse_bind_address(bind_address)
        if parsed is None:
            raise ValueError(f"metrics bind address {bind_address!r} disables the server")
        super().__init__(*parsed, name=name, shutdown_timeout=shutdown_timeout, limits=limits)
        self.registry = REGISTRY if registry is None else registry
        self.route(path, metrics_handler(self.registry))
