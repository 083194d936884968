"""Building blocks of collectors that build their metric families when scraped (the workqueue and
controller metrics): ``NamedStatsCollector`` keeps one numbers object per queue or controller name, and
``PerRegistry`` gives every Prometheus registry one collector of a kind, registered on first use.
``register_runtime_collectors`` adds the process, platform and GC collectors to a registry.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.registry import Collector

__all__ = ["NamedStatsCollector", "PerRegistry", "register_runtime_collectors"]

C = TypeVar("C", bound=Collector)
S = TypeVar("S")


class NamedStatsCollector(Collector, Generic[S]):
    """A collector of one numbers object per name (a queue's or a controller's), made by
    ``new_stats`` on first use; users of the same name add up, as children of one label set would.

    Subclasses build their families from :meth:`named` in ``collect``. The numbers objects guard
    themselves; this only guards the name table."""

    def __init__(self, new_stats: Callable[[], S]) -> None:
        self._new_stats = new_stats
        self._lock = threading.Lock()
        self._stats: dict[str, S] = {}

    def stats_for(self, name: str) -> S:
        """The numbers of ``name`` (made on first use)."""
        with self._lock:
            stats = self._stats.get(name)
            if stats is None:
                stats = self._stats[name] = self._new_stats()
            return stats

    def named(self) -> list[tuple[str, S]]:
        """Every ``(name, numbers)``, sorted by name."""
        with self._lock:
            return sorted(self._stats.items(), key=lambda kv: kv[0])


class PerRegistry(Generic[C]):
    """``get(registry)`` returns the registry's collector made by ``factory``, creating and
    registering it the first time.

    Keyed by the registry itself, weakly: an ``id()`` is reused once a registry is collected, which
    would hand a new registry the numbers of a dead one. ``metric_name`` is one of the collector's
    metric names: when the registry already has a collector of this kind under that name (another
    copy of the defining module, after a reload), it is shared instead of failing on the duplicate.
    """

    def __init__(self, factory: Callable[[], C], metric_name: str) -> None:
        self._factory = factory
        self._metric_name = metric_name
        self._lock = threading.Lock()
        self._collectors: weakref.WeakKeyDictionary[CollectorRegistry, C] = weakref.WeakKeyDictionary()

    def get(self, registry: CollectorRegistry | None = None) -> C:
        """The collector of ``registry`` (default: ``prometheus_client.REGISTRY``)."""
        registry = REGISTRY if registry is None else registry
        with self._lock:
            found = self._collectors.get(registry)
            if found is not None:
                return found
            collector = self._factory()
            try:
                registry.register(collector)
            except ValueError:
                existing: Any = getattr(registry, "_names_to_collectors", {}).get(self._metric_name)
                if not hasattr(existing, "stats_for"):  # duck-typed: a reloaded module has new classes
                    raise
                collector = existing
            self._collectors[registry] = collector
            return collector


def register_runtime_collectors(registry: CollectorRegistry) -> None:
    """Register prometheus_client's process (``process_*``: CPU, memory, open file descriptors, start
    time), platform (``python_info``) and GC (``python_gc_*``) collectors on ``registry``, as
    prometheus_client does on its global ``REGISTRY`` and controller-runtime (Go's process and runtime
    collectors) on its own. The global registry has them already; a second call for a registry is a
    no-op."""
    if registry is REGISTRY:
        return
    names = getattr(registry, "_names_to_collectors", {})
    for name, collector in (
        ("process_cpu_seconds_total", ProcessCollector),
        ("python_info", PlatformCollector),
        ("python_gc_objects_collected_total", GCCollector),
    ):
        if name not in names:
            try:
                collector(registry=registry)  # registers itself
            except ValueError:  # registered meanwhile by another thread
                pass
