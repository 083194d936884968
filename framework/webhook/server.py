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
from collections.abc import Callable
from pathlib import Path

import structlog
from prometheus_client import CollectorRegistry

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
from framework.webhook.certwatcher import CertWatcher
from framework.webhook.conversion import ConversionScheme, review_conversion
from framework.webhook.metrics import webhook_metrics

__all__ = ["DEFAULT_CERT_DIR", "WebhookServer"]

log = structlog.get_logger("framework.webhook")

# controller-runtime's default: <os temp dir>/k8s-webhook-server/serving-certs
DEFAULT_CERT_DIR = os.path.join(tempfile.gettempdir(), "k8s-webhook-server", "serving-certs")


class WebhookServer(HTTPServer):
    """HTTPS admission webhook server; ``register(path, handler)`` then ``start()``.

    ``host``/``port`` default to ``0.0.0.0:9443`` (port 0 picks a free port; see ``port``). Metrics go
    to ``registry`` (default ``prometheus_client.REGISTRY``): ``controller_runtime_webhook_requests_total
    {webhook,code}``, ``controller_runtime_webhook_latency_seconds{webhook}``,
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
        self._metrics = webhook_metrics(registry)
        self._webhooks: dict[str, AdmissionHandler] = {}
        self._conversions: dict[str, ConversionScheme] = {}

    @property
    def webhooks(self) -> dict[str, AdmissionHandler]:
        """Registered handlers by path (a copy)."""
        return dict(self._webhooks)

    def register(self, path: str, handler: AdmissionHandler) -> None:
        """Serve admission reviews posted to ``path`` with ``handler(AdmissionRequest)``.

        Paths are unique (ValueError otherwise); registering after ``start()`` is allowed.
        """
        if path in self._conversions:
            raise ValueError(f"{self.name}: a handler for {path!r} is already registered")
        if not callable(handler):
            raise TypeError(f"webhook handler for {path!r} is not callable")
        self.route(path, self._admission_route(path, handler))
        self._webhooks[path] = handler

    @property
    def conversions(self) -> dict[str, ConversionScheme]:
        """Registered conversion webhooks (their schemes) by path (a copy)."""
        return dict(self._conversions)

    def register_conversion(self, path: str, scheme: ConversionScheme) -> None:
        """Serve ConversionReviews posted to ``path`` (controller-runtime: ``/convert``) by converting
        with ``scheme`` (see ``framework.webhook.conversion``); same metrics as the admission webhooks."""
        if path in self._webhooks or path in self._conversions:
            raise ValueError(f"{self.name}: a handler for {path!r} is already registered")

        def answer(request: Request) -> tuple[int, bytes, str]:
            doc: dict | str
            try:
                body = request.read_body(MAX_REQUEST_SIZE)
            except BodyTooLarge:
                code, doc = 413, f"request entity is too large; limit is {MAX_REQUEST_SIZE} bytes"
            except ValueError as error:  # broken chunked encoding
                code, doc = 400, f"unable to read the request body: {error}"
            else:
                code, doc = review_conversion(body, scheme, webhook=path)
            if isinstance(doc, str):  # controller-runtime answers these with http.Error
                log.warning("rejected a conversion review", webhook=path, code=code, error=doc)
                return code, doc.encode() + b"\n", "text/plain; charset=utf-8"
            return code, jsoncodec.dumps(doc), "application/json"

        self.route(path, self._instrumented(path, answer))
        self._conversions[path] = scheme

    def _admission_route(self, path: str, handler: AdmissionHandler) -> RouteHandler:
        def answer(request: Request) -> tuple[int, bytes, str]:
            doc: dict | str
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
            return 200, jsoncodec.dumps(doc), "application/json"

        return self._instrumented(path, answer)

    def _instrumented(self, path: str, answer: Callable[[Request], tuple[int, bytes, str]]) -> RouteHandler:
        """``answer`` with controller-runtime's per-path webhook metrics (``InstrumentedHook``)."""
        latency = self._metrics.latency.labels(path)
        in_flight = self._metrics.in_flight.labels(path)
        requests = self._metrics.requests

        def serve(request: Request) -> Response:
            in_flight.inc()
            started = time.perf_counter()
            code = 500
            try:
                code, body, content_type = answer(request)
                return Response(code, body, content_type)
            finally:
                in_flight.dec()
                latency.observe(time.perf_counter() - started)
                requests.labels(path, str(code)).inc()

        return serve

    def _prepare(self) -> None:
        self.certs.read()  # fail start() if the certificate cannot be loaded, as controller-runtime does

    def ssl_context(self) -> ssl.SSLContext:
        # The listener's context only carries the callback: every handshake switches to the watcher's
        # current context, so a rotated certificate is served to new connections while established
        # ones keep theirs.
        base = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        base.minimum_version = ssl.TLSVersion.TLSv1_2
        base.set_alpn_protocols(["http/1.1"])
        base.load_cert_chain(self.certs.cert_path, self.certs.key_path)
        base.sni_callback = self._select_context
        return base

    def _select_context(self, connection: ssl.SSLObject, server_name: str | None, _: ssl.SSLContext) -> None:
        try:
            connection.context = self.certs.context()
        except Exception:  # keep the listener's context; the watcher logged and counted the failure
            log.exception("cannot select the serving certificate", server=self.name)
