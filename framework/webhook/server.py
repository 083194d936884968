"""An HTTPS server for admission webhooks, in the manner of controller-runtime's ``webhook.Server``.

Handlers are registered by path and see ``AdmissionRequest`` objects; the server does the HTTP and the
AdmissionReview protocol (see ``framework.webhook.admission``): every call that reaches a registered
path is answered HTTP 200 with an AdmissionReview of the request's apiVersion. Certificates come from
``cert_dir`` (``tls.crt``/``tls.key``) and are re-read when the files change (``CertWatcher``).
"""

from __future__ import annotations

import os
import ssl
import tempfile
import time
from pathlib import Path
from typing import Any

import structlog
from prometheus_client import CollectorRegistry

from framework.certwatcher import CertWatcher
from framework.meta import jsoncodec
from framework.server import BodyTooLarge, ConnectionLimits, HTTPServer, Request, Response, RouteHandler
from framework.webhook.admission import (
    MAX_REQUEST_SIZE,
    V1,
    AdmissionHandler,
    encode_review,
    errored,
    review,
)
from framework.webhook.metrics import webhook_metrics

__all__ = ["DEFAULT_CERT_DIR", "WebhookServer"]

log = structlog.get_logger("framework.webhook")

# controller-runtime's default: <os temp dir>/k8s-webhook-server/serving-certs
DEFAULT_CERT_DIR = os.path.join(tempfile.gettempdir(), "k8s-webhook-server", "serving-certs")


class WebhookServer(HTTPServer):
    """HTTPS admission webhook server; ``register(path, handler)`` then ``start()``.

    ``host``/``port`` default to ``0.0.0.0:9443`` (port 0 picks a free port; see ``port``). Metrics go
    to ``registry``; without one, to the registry of the :class:`~framework.manager.Manager` the
    server is given to (so the manager's ``/metrics`` shows them), or ``prometheus_client.REGISTRY``
    when the server runs on its own: ``controller_runtime_webhook_requests_total{webhook,code}``,
    ``controller_runtime_webhook_latency_seconds{webhook}``,
    ``controller_runtime_webhook_requests_in_flight{webhook}`` (``webhook`` = the path) and
    ``certwatcher_read_certificate_total`` / ``_errors_total``.
    """

    scheme = "https"

    def __init__(
        self,
        host: str = "0.0.0.0",
        port: int = 9443,
        cert_dir: str | os.PathLike[str] | None = None,
        cert_name: str = "tls.crt",
        key_name: str = "tls.key",
        registry: CollectorRegistry | None = None,
        *,
        name: str = "webhook-server",
        handshake_timeout: float = 10.0,
        shutdown_timeout: float = 30.0,
        limits: ConnectionLimits | None = None,
    ) -> None:
        super().__init__(
            host,
            port,
            name=name,
            shutdown_timeout=shutdown_timeout,
            handshake_timeout=handshake_timeout,
            limits=limits,
        )
        self.cert_dir = Path(DEFAULT_CERT_DIR if cert_dir is None else cert_dir)
        self.certs = CertWatcher(self.cert_dir / cert_name, self.cert_dir / key_name, registry=registry)
        self._registry = registry
        self.registry_given = registry is not None
        # The metric children of each webhook path, made on its first request (after the registry is
        # final) instead of one label lookup per request.
        self._children: dict[str, tuple[Any, Any, Any]] = {}
        self._webhooks: dict[str, AdmissionHandler] = {}

    @property
    def registry(self) -> CollectorRegistry | None:
        """Where the webhook and certwatcher metrics go (``None``: ``prometheus_client.REGISTRY``)."""
        return self._registry

    def use_registry(self, registry: CollectorRegistry) -> None:
        """Report the metrics to ``registry`` (the manager does this for a server made without one)."""
        self._registry = self.certs.registry = registry
        self._children = {}

    def _metric_children(self, path: str) -> tuple[Any, Any, Any]:
        children = self._children.get(path)
        if children is None:
            metrics = webhook_metrics(self._registry)
            children = (metrics.latency.labels(path), metrics.in_flight.labels(path), metrics.requests)
            for code in ("200", "500"):  # the likely codes exist from the start, as controller-runtime's
                metrics.requests.labels(path, code)
            self._children[path] = children
        return children

    @property
    def webhooks(self) -> dict[str, AdmissionHandler]:
        """Registered handlers by path (a copy)."""
        return dict(self._webhooks)

    def register(self, path: str, handler: AdmissionHandler) -> None:
        """Serve admission reviews posted to ``path`` with ``handler(AdmissionRequest)``.

        Paths are unique (ValueError otherwise); registering after ``start()`` is allowed.
        """
        if not callable(handler):
            raise TypeError(f"webhook handler for {path!r} is not callable")
        self.route(path, self._admission_route(path, handler))
        self._webhooks[path] = handler
        if self.is_running():
            self._metric_children(path)

    def _admission_route(self, path: str, handler: AdmissionHandler) -> RouteHandler:
        def serve(request: Request) -> Response:
            latency, in_flight, requests = self._metric_children(path)
            in_flight.inc()
            started = time.perf_counter()
            code = 500
            try:
                try:
                    body = request.read_body(MAX_REQUEST_SIZE)
                except BodyTooLarge:
                    message = f"request entity is too large; limit is {MAX_REQUEST_SIZE} bytes"
                    log.warning("rejected an admission review", webhook=path, code=413, error=message)
                    doc = encode_review(V1, "", errored(413, message))
                except ValueError as error:  # broken chunked encoding
                    log.warning("cannot read an admission review body", webhook=path, error=str(error))
                    doc = encode_review(V1, "", errored(400, f"unable to read the request body: {error}"))
                else:
                    doc = review(body, request.content_type, handler, webhook=path)
                response = Response(200, jsoncodec.dumps(doc), "application/json")
                code = 200
                return response
            finally:
                in_flight.dec()
                latency.observe(time.perf_counter() - started)
                requests.labels(path, str(code)).inc()

        return serve

    def _prepare(self) -> None:
        self.certs.read()  # fail start() if the certificate cannot be loaded, as controller-runtime does
        for path in self._webhooks:  # the registry is final now: every webhook's series are scraped
            self._metric_children(path)

    def ssl_context(self) -> ssl.SSLContext:
        return self.certs.listener_context()
