"""Prometheus counters of the event broadcaster, shared by every broadcaster on one registry.

- ``events_dropped_total{reason}``: events given up on. ``reason`` is ``queue_full`` (the bounded
  queue was full when ``eventf`` was called), ``write_failed`` (the API server refused the event or
  every retry failed), ``shutdown`` (recorded after or abandoned by ``shutdown``) or ``invalid`` (an
  unsupported type or an object without a name).
- ``events_written_total{verb}``: successful writes, ``create`` (a new Event) or ``patch`` (a series
  update of an existing one).
"""

from __future__ import annotations

import threading
import weakref

from prometheus_client import REGISTRY, CollectorRegistry, Counter

__all__ = ["DROP_REASONS", "EventMetrics", "event_metrics"]

DROP_REASONS = ("queue_full", "write_failed", "shutdown", "invalid")


class EventMetrics:
    """The broadcaster counters of one registry."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.dropped = Counter(
            "events_dropped",
            "Events the recorder dropped, by reason (queue_full, write_failed, shutdown, invalid)",
            ["reason"],
            registry=registry,
        )
        self.written = Counter(
            "events_written",
            "Events written to the API server, by verb (create for a new Event, patch for a series)",
            ["verb"],
            registry=registry,
        )
        for reason in DROP_REASONS:
            self.dropped.labels(reason)
        for verb in ("create", "patch"):
            self.written.labels(verb)


_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, EventMetrics] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def event_metrics(registry: CollectorRegistry | None = None) -> EventMetrics:
    """The counters registered on ``registry`` (default ``prometheus_client.REGISTRY``), created once."""
    registry = REGISTRY if registry is None else registry
    with _lock:
        metrics = _by_registry.get(registry)
        if metrics is None:
            try:
                metrics = EventMetrics(registry)
            except ValueError:
                # The names are taken on this registry (another copy of this module, e.g. after a
                # reload): count without exporting rather than fail to record events.
                metrics = EventMetrics(None)
            _by_registry[registry] = metrics
        return metrics
