"""Prometheus metrics over HTTP, with controller-runtime's bind-address conventions.

::

    from prometheus_client import CollectorRegistry
    from framework.metrics import MetricsServer, parse_bind_address

    registry = CollectorRegistry()  # one per manager, so several managers can share a process
    if parse_bind_address(bind_address) is not None:  # "0" disables metrics
        server = MetricsServer(bind_address, registry)  # ":8080", "127.0.0.1:0", "[::1]:8080"
        server.start()
        print(server.url + "/metrics")
        ...
        server.stop()

``MetricsServer(bind_address, registry, secure=True, auth=DelegatingAuth(client))`` serves HTTPS
(``cert_dir`` with ``tls.crt``/``tls.key`` re-read on change, or self-signed) to callers the API server
authenticates (TokenReview) and authorizes for ``get /metrics`` (SubjectAccessReview), as kubebuilder's
``--metrics-secure``; ``Manager(metrics_secure=True)`` builds it (:mod:`framework.metrics.filters`).

``/metrics`` is rendered by prometheus-client (text format, OpenMetrics if the scraper asks for it,
gzip when accepted). The server is ``framework.server.HTTPServer``: a named accept thread, a daemon
thread per connection, ``stop(timeout)`` with a bounded join, and ``port`` for port 0.
"""

from framework.metrics.collectors import register_runtime_collectors
from framework.metrics.filters import DelegatingAuth
from framework.metrics.server import DEFAULT_BIND_ADDRESS, MetricsServer, metrics_handler
from framework.server import parse_bind_address

__all__ = [
    "DEFAULT_BIND_ADDRESS",
    "DelegatingAuth",
    "MetricsServer",
    "metrics_handler",
    "parse_bind_address",
    "register_runtime_collectors",
]
