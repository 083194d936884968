"""client-go's REST client metrics (``k8s.io/component-base/metrics/prometheus/restclient``), counted by
:class:`~framework.client.Client` when it reports to a Prometheus registry.

=============================================  =================  ======================================
family                                         labels             what
=============================================  =================  ======================================
``rest_client_requests_total``                 code, host, method every attempt's outcome: the HTTP
                                                                  status, or ``<error>`` when no answer
                                                                  came back (client-go's ``sanitize``)
``rest_client_request_duration_seconds``       verb, host         one call, throttling and retries
                                                                  included
``rest_client_rate_limiter_duration_seconds``  verb, host         the token bucket's wait per attempt
``rest_client_request_size_bytes``             verb, host         the body sent per attempt (0: none)
``rest_client_response_size_bytes``            verb, host         the body of a call's final answer
                                                                  (not for watches, as client-go's
                                                                  ``Watch``)
=============================================  =================  ======================================

``host`` is the server URL's ``host:port``; ``method`` and ``verb`` the HTTP method (``GET``, ``POST``).
The buckets are client-go's (latency 5 ms to 60 s, sizes 64 B to 16 MiB).

Like the work queue metrics, the numbers are plain counters under one lock per (host, verb), and the
families are built when scraped: a ``prometheus_client`` histogram child per call would cost a
measurable share of a request's client CPU (``bench/client_bench.py`` shows the ratio).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily

from framework.metrics.collectors import NamedStatsCollector, PerRegistry
from framework.metrics.histogram import BucketHistogram

__all__ = [
    "DURATION_BUCKETS",
    "ERROR_CODE",
    "SIZE_BUCKETS",
    "HostStats",
    "RESTClientCollector",
    "rest_client_collector",
]

DURATION_BUCKETS: tuple[float, ...] = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
"""client-go's request and rate-limiter latency buckets (seconds)."""

SIZE_BUCKETS: tuple[float, ...] = (64, 256, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216)
"""client-go's request and response size buckets (bytes, 64 B to 16 MiB)."""

ERROR_CODE = "<error>"
"""The ``code`` of an attempt that got no HTTP answer (connection refused, timeout)."""

_REQUESTS = (
    "rest_client_requests_total",
    "Number of HTTP requests, partitioned by status code, method, and host.",
)
_DURATION = (
    "rest_client_request_duration_seconds",
    "Request latency in seconds. Broken down by verb, and host.",
)
_RATE_LIMITER = (
    "rest_client_rate_limiter_duration_seconds",
    "Client side rate limiter latency in seconds. Broken down by verb, and host.",
)
_REQUEST_SIZE = ("rest_client_request_size_bytes", "Request size in bytes. Broken down by verb and host.")
_RESPONSE_SIZE = ("rest_client_response_size_bytes", "Response size in bytes. Broken down by verb and host.")


class _VerbStats:
    """The numbers of one (host, verb); guarded by ``lock``."""

    __slots__ = ("codes", "duration", "lock", "rate_limiter", "request_size", "response_size")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.codes: dict[str, int] = {}
        self.duration = BucketHistogram(DURATION_BUCKETS)
        self.rate_limiter = BucketHistogram(DURATION_BUCKETS)
        self.request_size = BucketHistogram(SIZE_BUCKETS)
        self.response_size = BucketHistogram(SIZE_BUCKETS)


class HostStats:
    """What a client of one API server records; the client calls :meth:`attempt` per request sent (or
    failed to send) and :meth:`call` once per call."""

    __slots__ = ("_lock", "_verbs")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._verbs: dict[str, _VerbStats] = {}

    def _verb(self, verb: str) -> _VerbStats:
        stats = self._verbs.get(verb)  # a dict read needs no lock; only the insert does
        if stats is None:
            with self._lock:
                stats = self._verbs.setdefault(verb, _VerbStats())
        return stats

    def attempt(self, verb: str, waited: float, request_size: int, code: str) -> None:
        """One attempt: the rate limiter's wait (seconds), the body size sent and the answer's code."""
        stats = self._verb(verb)
        with stats.lock:
            stats.rate_limiter.observe(waited)
            stats.request_size.observe(request_size)
            stats.codes[code] = stats.codes.get(code, 0) + 1

    def call(self, verb: str, seconds: float, response_size: int | None) -> None:
        """One call done (answered, failed or raised): its latency and, if known, the final body's size."""
        stats = self._verb(verb)
        with stats.lock:
            stats.duration.observe(seconds)
            if response_size is not None:
                stats.response_size.observe(response_size)

    def response(self, verb: str, size: int) -> None:
        """The size of a final error answer's body (a call that raises records none in :meth:`call`)."""
        stats = self._verb(verb)
        with stats.lock:
            stats.response_size.observe(size)

    def verbs(self) -> list[tuple[str, _VerbStats]]:
        with self._lock:
            return sorted(self._verbs.items())


class RESTClientCollector(NamedStatsCollector[HostStats]):
    """Builds the five ``rest_client_*`` families from every host's numbers (one per registry)."""

    def __init__(self) -> None:
        super().__init__(HostStats)

    def describe(self) -> Iterable[Any]:
        return [
            CounterMetricFamily(_REQUESTS[0].removesuffix("_total"), _REQUESTS[1]),
            HistogramMetricFamily(*_DURATION),
            HistogramMetricFamily(*_RATE_LIMITER),
            HistogramMetricFamily(*_REQUEST_SIZE),
            HistogramMetricFamily(*_RESPONSE_SIZE),
        ]

    def collect(self) -> Iterable[Any]:
        requests = CounterMetricFamily(
            _REQUESTS[0].removesuffix("_total"), _REQUESTS[1], labels=["code", "host", "method"]
        )
        labels = ["verb", "host"]
        duration = HistogramMetricFamily(*_DURATION, labels=labels)
        rate_limiter = HistogramMetricFamily(*_RATE_LIMITER, labels=labels)
        request_size = HistogramMetricFamily(*_REQUEST_SIZE, labels=labels)
        response_size = HistogramMetricFamily(*_RESPONSE_SIZE, labels=labels)
        for host, host_stats in self.named():
            for verb, stats in host_stats.verbs():
                with stats.lock:
                    codes = sorted(stats.codes.items())
                    snapshots = [
                        (family, histogram.snapshot())
                        for family, histogram in (
                            (duration, stats.duration),
                            (rate_limiter, stats.rate_limiter),
                            (request_size, stats.request_size),
                            (response_size, stats.response_size),
                        )
                    ]
                for code, count in codes:
                    requests.add_metric([code, host, verb], count)
                for family, (buckets, total) in snapshots:
                    family.add_metric([verb, host], buckets, total)
        return [requests, duration, rate_limiter, request_size, response_size]


_per_registry = PerRegistry(RESTClientCollector, _DURATION[0])


def rest_client_collector(registry: CollectorRegistry | None = None) -> RESTClientCollector:
    """The REST client collector of ``registry`` (default ``REGISTRY``), registering it on first use."""
    return _per_registry.get(registry)
