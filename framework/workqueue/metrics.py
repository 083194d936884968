"""Prometheus metrics for named workqueues, with client-go's names and the ``name`` label.

One ``WorkqueueCollector`` is registered per registry (the default ``prometheus_client.REGISTRY``
unless one is passed), the first time a named queue is created on it; every queue shares it, so
creating many queues is safe. Queues with the same name add up. Queues without a name record nothing.

Why a collector instead of ``Counter``/``Histogram`` children: their per-call locking and bucket loops
cost several times a whole queue operation. Here a queue operation bumps plain numbers under one lock,
and the metric families are built when scraped. The two in-progress gauges
(``workqueue_unfinished_work_seconds``, ``workqueue_longest_running_processor_seconds``) are computed
at scrape time too; client-go refreshes them every 500 ms from a goroutine, which needs a thread here.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Hashable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

from framework.clock import Clock
from framework.compact import oversized
from framework.metrics.collectors import NamedStatsCollector, PerRegistry
from framework.metrics.histogram import BucketHistogram

__all__ = ["DURATION_BUCKETS", "QueueMetrics", "WorkqueueCollector", "workqueue_collector"]

# controller-runtime's buckets (pkg/internal/metrics/workqueue.go): 1e-8 s growing x10, 12 buckets.
DURATION_BUCKETS: tuple[float, ...] = tuple(10.0**exp for exp in range(-8, 4))

_DEPTH = ("workqueue_depth", "Current depth of workqueue")
_ADDS = ("workqueue_adds", "Total number of adds handled by workqueue")
_QUEUE_DURATION = (
    "workqueue_queue_duration_seconds",
    "How long in seconds an item stays in workqueue before being requested",
)
_WORK_DURATION = (
    "workqueue_work_duration_seconds",
    "How long in seconds processing an item from workqueue takes",
)
_UNFINISHED = (
    "workqueue_unfinished_work_seconds",
    "How many seconds of work has been done that is in progress and hasn't been observed by "
    "work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads "
    "by observing the rate at which this increases.",
)
_LONGEST = (
    "workqueue_longest_running_processor_seconds",
    "How many seconds has the longest running processor for workqueue been running.",
)
_RETRIES = ("workqueue_retries", "Total number of retries handled by workqueue")


class _NameStats:
    """Everything recorded for one queue name; guarded by ``lock``."""

    __slots__ = ("adds", "depth", "lock", "queue_duration", "queues", "retries", "work_duration")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.adds = 0
        self.depth = 0
        self.retries = 0
        self.queue_duration = BucketHistogram(DURATION_BUCKETS)
        self.work_duration = BucketHistogram(DURATION_BUCKETS)
        self.queues: weakref.WeakSet[QueueMetrics] = weakref.WeakSet()


class WorkqueueCollector(NamedStatsCollector[_NameStats]):
    """Builds the seven ``workqueue_*`` metric families from every named queue's numbers."""

    def __init__(self) -> None:
        super().__init__(_NameStats)

    def describe(self) -> Iterable[Any]:
        return [
            GaugeMetricFamily(*_DEPTH),
            CounterMetricFamily(*_ADDS),
            HistogramMetricFamily(*_QUEUE_DURATION),
            HistogramMetricFamily(*_WORK_DURATION),
            GaugeMetricFamily(*_UNFINISHED),
            GaugeMetricFamily(*_LONGEST),
            CounterMetricFamily(*_RETRIES),
        ]

    def collect(self) -> Iterable[Any]:
        labels = ["name"]
        depth = GaugeMetricFamily(*_DEPTH, labels=labels)
        adds = CounterMetricFamily(*_ADDS, labels=labels)
        queue_duration = HistogramMetricFamily(*_QUEUE_DURATION, labels=labels)
        work_duration = HistogramMetricFamily(*_WORK_DURATION, labels=labels)
        unfinished = GaugeMetricFamily(*_UNFINISHED, labels=labels)
        longest = GaugeMetricFamily(*_LONGEST, labels=labels)
        retries = CounterMetricFamily(*_RETRIES, labels=labels)
        for name, stats in self.named():
            # Snapshot under the stats lock, then ask the queues (their own locks) without holding it:
            # queue operations take the queue lock first and the stats lock second.
            with stats.lock:
                depth.add_metric([name], stats.depth)
                adds.add_metric([name], stats.adds)
                retries.add_metric([name], stats.retries)
                queue_buckets, queue_sum = stats.queue_duration.snapshot()
                work_buckets, work_sum = stats.work_duration.snapshot()
                queues = list(stats.queues)
            queue_duration.add_metric([name], queue_buckets, queue_sum)
            work_duration.add_metric([name], work_buckets, work_sum)
            unfinished.add_metric([name], sum(q.unfinished_work_seconds() for q in queues))
            longest.add_metric(
                [name], max((q.longest_running_processor_seconds() for q in queues), default=0.0)
            )
        return [depth, adds, queue_duration, work_duration, unfinished, longest, retries]


_per_registry = PerRegistry(WorkqueueCollector, _DEPTH[0])


def workqueue_collector(registry: CollectorRegistry | None = None) -> WorkqueueCollector:
    """The workqueue collector of ``registry`` (default ``REGISTRY``), registering it on first use."""
    return _per_registry.get(registry)


class QueueMetrics:
    """What one named queue records. ``add``/``get``/``done`` are called under the queue's ``lock``."""

    __slots__ = ("__weakref__", "_add_times", "_lock", "_monotonic", "_processing_start", "_stats")

    def __init__(
        self, name: str, clock: Clock, lock: threading.Lock, registry: CollectorRegistry | None = None
    ) -> None:
        self._monotonic = clock.monotonic
        self._lock = lock
        self._stats = workqueue_collector(registry).stats_for(name)
        self._add_times: dict[Hashable, float] = {}
        self._processing_start: dict[Hashable, float] = {}
        with self._stats.lock:
            self._stats.queues.add(self)

    def add(self, item: Hashable) -> None:
        stats = self._stats
        with stats.lock:
            stats.adds += 1
            stats.depth += 1
        if item not in self._add_times:
            self._add_times[item] = self._monotonic()

    def get(self, item: Hashable) -> None:
        now = self._monotonic()
        self._processing_start[item] = now
        added = self._add_times.pop(item, None)
        if oversized(self._add_times):
            self._add_times = {}
        stats = self._stats
        with stats.lock:
            stats.depth -= 1
            if added is not None:
                stats.queue_duration.observe(now - added)

    def done(self, item: Hashable) -> None:
        started = self._processing_start.pop(item, None)
        if started is not None:
            elapsed = self._monotonic() - started
            with self._stats.lock:
                self._stats.work_duration.observe(elapsed)

    def retry(self) -> None:
        with self._stats.lock:
            self._stats.retries += 1

    def unfinished_work_seconds(self) -> float:
        """Total seconds the items now being processed have been in progress."""
        with self._lock:
            now = self._monotonic()
            return sum(now - started for started in self._processing_start.values())

    def longest_running_processor_seconds(self) -> float:
        """Seconds the longest-running item now being processed has been in progress."""
        with self._lock:
            if not self._processing_start:
                return 0.0
            return self._monotonic() - min(self._processing_start.values())
