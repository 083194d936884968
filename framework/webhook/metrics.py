"""controller-runtime's webhook metrics, created once per Prometheus registry (the certwatcher's are in
:mod:`framework.certwatcher`)."""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["WebhookMetrics", "webhook_metrics"]

# Go's prometheus.DefBuckets (controller-runtime uses the defaults for the webhook latency).
_GO_DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass(frozen=True)
class WebhookMetrics:
    latency: Histogram  # controller_runtime_webhook_latency_seconds{webhook}
    requests: Counter  # controller_runtime_webhook_requests_total{webhook,code} (HTTP status code)
    in_flight: Gauge  # controller_runtime_webhook_requests_in_flight{webhook}


_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, WebhookMetrics] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def webhook_metrics(registry: CollectorRegistry | None = None) -> WebhookMetrics:
    """The webhook metrics of ``registry`` (default ``REGISTRY``), registering them on first use."""
    registry = REGISTRY if registry is None else registry
    with _lock:
        metrics = _by_registry.get(registry)
        if metrics is None:
            metrics = _by_registry[registry] = WebhookMetrics(
                latency=Histogram(
                    "controller_runtime_webhook_latency_seconds",
                    "Histogram of the latency of processing admission requests",
                    ["webhook"],
                    buckets=_GO_DEFAULT_BUCKETS,
                    registry=registry,
                ),
                requests=Counter(
                    "controller_runtime_webhook_requests_total",
                    "Total number of admission requests by HTTP status code.",
                    ["webhook", "code"],
                    registry=registry,
                ),
                in_flight=Gauge(
                    "controller_runtime_webhook_requests_in_flight",
                    "Current number of admission requests being served.",
                    ["webhook"],
                    registry=registry,
                ),
            )
        return metrics
