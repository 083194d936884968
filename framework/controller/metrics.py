"""controller-runtime's controller metrics (``pkg/internal/controller/metrics``), one collector per
Prometheus registry.

As for the workqueue metrics (``framework.workqueue.metrics``), a controller bumps plain numbers under
one lock per reconcile and the metric families are built when scraped: ``Counter``/``Gauge``/
``Histogram`` children cost a lock each, and the histogram a Python loop over its 40 buckets, several
times per reconcile, which in a busy controller is more than the rest of its bookkeeping (bench/README.md,
"controller bookkeeping"). Controllers of the same name in one registry add up, as children of one
label set would.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from framework.metrics.collectors import NamedStatsCollector, PerRegistry
from framework.metrics.histogram import BucketHistogram

__all__ = ["RECONCILE_BUCKETS", "RESULTS", "ControllerCollector", "ControllerStats", "controller_collector"]

# controller-runtime's reconcile_time_seconds buckets.
RECONCILE_BUCKETS = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.35,
    0.4,
    0.45,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
    1.25,
    1.5,
    1.75,
    2.0,
    2.5,
    3.0,
    3.5,
    4.0,
    4.5,
    5,
    6,
    7,
    8,
    9,
    10,
    15,
    20,
    25,
    30,
    40,
    50,
    60,
)


RESULTS = ("success", "error", "requeue", "requeue_after")
"""The ``result`` label values of ``controller_runtime_reconcile_total``, all exported from the start."""

_TOTAL = ("controller_runtime_reconcile", "Total number of reconciliations per controller")
_ERRORS = ("controller_runtime_reconcile_errors", "Total number of reconciliation errors per controller")
_TERMINAL = (
    "controller_runtime_terminal_reconcile_errors",
    "Total number of terminal reconciliation errors per controller",
)
_PANICS = ("controller_runtime_reconcile_panics", "Total number of reconciliation panics per controller")
_TIME = ("controller_runtime_reconcile_time_seconds", "Length of time per reconciliation per controller")
_TIMEOUTS = (
    "controller_runtime_reconcile_timeouts",
    "Total number of reconciliation timeouts per controller",
)
_MAX_CONCURRENT = (
    "controller_runtime_max_concurrent_reconciles",
    "Maximum number of concurrent reconciles per controller",
)
_ACTIVE = ("controller_runtime_active_workers", "Number of currently used workers per controller")
# Ours, no controller-runtime equivalent (Go's handlers cannot fail, its workers cannot die).
_HANDLER_ERRORS = (
    "controller_event_handler_errors",
    "Events dropped because an event handler, map function or predicate failed",
)
_RESTARTS = ("controller_worker_restarts", "Worker threads that exited unexpectedly and were restarted")


class ControllerStats:
    """Everything recorded for one controller name; every field is guarded by ``lock``."""

    __slots__ = (
        "active_workers",
        "errors",
        "handler_errors",
        "lock",
        "max_concurrent",
        "panics",
        "reconcile_time",
        "results",
        "terminal_errors",
        "timeouts",
        "worker_restarts",
    )

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.results = dict.fromkeys(RESULTS, 0)
        self.errors = 0
        self.terminal_errors = 0
        self.panics = 0
        self.timeouts = 0
        self.reconcile_time = BucketHistogram(RECONCILE_BUCKETS)
        self.active_workers = 0
        self.max_concurrent = 0
        self.handler_errors: dict[str, int] = {}
        self.worker_restarts = 0

    def set_max_concurrent(self, n: int) -> None:
        with self.lock:
            self.max_concurrent = n

    def started(self) -> None:
        """A reconcile began (``controller_runtime_active_workers`` + 1)."""
        with self.lock:
            self.active_workers += 1

    def finished(
        self,
        result: str | None,
        seconds: float,
        *,
        error: bool = False,
        terminal: bool = False,
        panic: bool = False,
        timeout: bool = False,
    ) -> None:
        """A reconcile that :meth:`started` ended after ``seconds`` with ``result`` (one of
        :data:`RESULTS`; None counts only its time) and what else it was."""
        with self.lock:
            self.active_workers -= 1
            self.reconcile_time.observe(seconds)
            if result is not None:
                self.results[result] += 1
            if error:
                self.errors += 1
            if terminal:
                self.terminal_errors += 1
            if panic:
                self.panics += 1
            if timeout:
                self.timeouts += 1

    def dropped(self) -> None:
        """A queued item that is not a request: an error without a reconcile."""
        with self.lock:
            self.results["error"] += 1
            self.errors += 1

    def handler_failed(self, event: str) -> None:
        with self.lock:
            self.handler_errors[event] = self.handler_errors.get(event, 0) + 1

    def worker_restarted(self) -> None:
        with self.lock:
            self.worker_restarts += 1


class ControllerCollector(NamedStatsCollector[ControllerStats]):
    """Builds the controller metric families from every controller name's :class:`ControllerStats`."""

    def __init__(self) -> None:
        super().__init__(ControllerStats)

    def describe(self) -> Iterable[Any]:
        counters = (_TOTAL, _ERRORS, _TERMINAL, _PANICS, _TIMEOUTS, _HANDLER_ERRORS, _RESTARTS)
        return [
            *(CounterMetricFamily(*c) for c in counters),
            HistogramMetricFamily(*_TIME),
            GaugeMetricFamily(*_MAX_CONCURRENT),
            GaugeMetricFamily(*_ACTIVE),
        ]

    def collect(self) -> Iterable[Any]:
        label = ["controller"]
        total = CounterMetricFamily(*_TOTAL, labels=[*label, "result"])
        errors = CounterMetricFamily(*_ERRORS, labels=label)
        terminal = CounterMetricFamily(*_TERMINAL, labels=label)
        panics = CounterMetricFamily(*_PANICS, labels=label)
        reconcile_time = HistogramMetricFamily(*_TIME, labels=label)
        timeouts = CounterMetricFamily(*_TIMEOUTS, labels=label)
        max_concurrent = GaugeMetricFamily(*_MAX_CONCURRENT, labels=label)
        active = GaugeMetricFamily(*_ACTIVE, labels=label)
        handler_errors = CounterMetricFamily(*_HANDLER_ERRORS, labels=[*label, "event"])
        restarts = CounterMetricFamily(*_RESTARTS, labels=label)
        for name, s in self.named():
            with s.lock:
                for result, count in s.results.items():
                    total.add_metric([name, result], count)
                errors.add_metric([name], s.errors)
                terminal.add_metric([name], s.terminal_errors)
                panics.add_metric([name], s.panics)
                buckets, seconds = s.reconcile_time.snapshot()
                reconcile_time.add_metric([name], buckets, seconds)
                timeouts.add_metric([name], s.timeouts)
                max_concurrent.add_metric([name], s.max_concurrent)
                active.add_metric([name], s.active_workers)
                for event, count in sorted(s.handler_errors.items()):
                    handler_errors.add_metric([name, event], count)
                restarts.add_metric([name], s.worker_restarts)
        return [
            total,
            errors,
            terminal,
            panics,
            reconcile_time,
            timeouts,
            max_concurrent,
            active,
            handler_errors,
            restarts,
        ]


_per_registry = PerRegistry(ControllerCollector, _TOTAL[0])


def controller_collector(registry: CollectorRegistry | None = None) -> ControllerCollector:
    """The controller collector of ``registry`` (default ``REGISTRY``), registering it on first use."""
    return _per_registry.get(registry)
