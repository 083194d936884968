"""controller-runtime's controller metrics, one set per Prometheus registry."""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

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


@dataclass(frozen=True)
class ControllerMetrics:
    reconcile_total: Counter
    reconcile_errors: Counter
    terminal_errors: Counter
    panics: Counter
    reconcile_time: Histogram
    timeouts: Counter
    max_concurrent: Gauge
    active_workers: Gauge
    # Ours, no controller-runtime equivalent (Go's handlers cannot fail, its workers cannot die).
    handler_errors: Counter
    worker_restarts: Counter


_lock = threading.Lock()
# Keyed by the registry itself, weakly: an id() is reused once a registry is collected, which handed a
# new registry the metrics of a dead one.
_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, ControllerMetrics] = weakref.WeakKeyDictionary()


def controller_metrics(registry: CollectorRegistry | None = None) -> ControllerMetrics:
    """The metric set registered on ``registry`` (created once per registry)."""
    registry = registry or REGISTRY
    with _lock:
        m = _by_registry.get(registry)
        if m is None:
            label = ["controller"]
            m = ControllerMetrics(
                Counter(
                    "controller_runtime_reconcile",
                    "Total number of reconciliations per controller",
                    [*label, "result"],
                    registry=registry,
                ),
                Counter(
                    "controller_runtime_reconcile_errors",
                    "Total number of reconciliation errors per controller",
                    label,
                    registry=registry,
                ),
                Counter(
                    "controller_runtime_terminal_reconcile_errors",
                    "Total number of terminal reconciliation errors per controller",
                    label,
                    registry=registry,
                ),
                Counter(
                    "controller_runtime_reconcile_panics",
                    "Total number of reconciliation panics per controller",
                    label,
                    registry=registry,
                ),
                Histogram(
                    "controller_runtime_reconcile_time_seconds",
                    "Length of time per reconciliation per controller",
                    label,
                    buckets=RECONCILE_BUCKETS,
                    registry=registry,
                ),
                Counter(
                    "controller_runtime_reconcile_timeouts",
                    "Total number of reconciliation timeouts per controller",
                    label,
                    registry=registry,
                ),
                Gauge(
                    "controller_runtime_max_concurrent_reconciles",
                    "Maximum number of concurrent reconciles per controller",
                    label,
                    registry=registry,
                ),
                Gauge(
                    "controller_runtime_active_workers",
                    "Number of currently used workers per controller",
                    label,
                    registry=registry,
                ),
                Counter(
                    "controller_event_handler_errors",
                    "Events dropped because an event handler, map function or predicate failed",
                    [*label, "event"],
                    registry=registry,
                ),
                Counter(
                    "controller_worker_restarts",
                    "Worker threads that exited unexpectedly and were restarted",
                    label,
                    registry=registry,
                ),
            )
            _by_registry[registry] = m
        return m


class ControllerSeries:
    """One controller's children of the metric set, looked up once (``labels()`` costs a lock and a
    dict lookup per call, several per reconcile otherwise)."""

    __slots__ = (
        "active_workers",
        "errors",
        "panics",
        "reconcile_time",
        "result_error",
        "result_requeue",
        "result_requeue_after",
        "result_success",
        "terminal_errors",
        "timeouts",
    )

    def __init__(self, m: ControllerMetrics, name: str) -> None:
        self.result_success = m.reconcile_total.labels(name, "success")
        self.result_error = m.reconcile_total.labels(name, "error")
        self.result_requeue = m.reconcile_total.labels(name, "requeue")
        self.result_requeue_after = m.reconcile_total.labels(name, "requeue_after")
        self.errors = m.reconcile_errors.labels(name)
        self.terminal_errors = m.terminal_errors.labels(name)
        self.panics = m.panics.labels(name)
        self.reconcile_time = m.reconcile_time.labels(name)
        self.timeouts = m.timeouts.labels(name)
        self.active_workers = m.active_workers.labels(name)
