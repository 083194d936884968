"""Leader-election metrics with client-go's names: ``leader_election_master_status{name}`` (gauge, 1 while
this process leads the election ``name``) and ``leader_election_slowpath_total{name}`` (renewals that
needed a read first because the optimistic update failed).

One :class:`ElectionMetrics` is registered per registry (the default ``prometheus_client.REGISTRY``
unless one is passed) on first use and shared by every elector on it, so creating many electors is
safe. Several electors of the same name on one registry (tests running candidates in one process)
report 1 while any of them leads.
"""

from __future__ import annotations

import threading
import weakref

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge

__all__ = ["ElectionMetrics", "election_metrics"]

_MASTER_STATUS = "leader_election_master_status"
_SLOWPATH = "leader_election_slowpath_total"


class ElectionMetrics:
    """The two leader-election metric families of one registry."""

    def __init__(self, master_status: Gauge, slowpath: Counter) -> None:
        self.master_status = master_status
        self.slowpath = slowpath
        self._lock = threading.Lock()
        self._leading: dict[str, int] = {}

    @classmethod
    def create(cls, registry: CollectorRegistry) -> ElectionMetrics:
        master = Gauge(
            _MASTER_STATUS,
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, "
            "1 indicates master. 'name' is the string used to identify the lease. Please make sure to "
            "group by name.",
            ["name"],
            registry=registry,
        )
        try:
            slowpath = Counter(
                _SLOWPATH,
                "Total number of slow path exercised in renewing leader leases. 'name' is the string "
                "used to identify the lease. Please make sure to group by name.",
                ["name"],
                registry=registry,
            )
        except ValueError:
            registry.unregister(master)
            raise
        return cls(master, slowpath)

    def register(self, name: str) -> None:
        """Make the series of ``name`` visible (master status 0 unless an elector already leads)."""
        self.master_status.labels(name)
        self.slowpath.labels(name)

    def leader_on(self, name: str) -> None:
        with self._lock:
            self._leading[name] = self._leading.get(name, 0) + 1
            self.master_status.labels(name).set(1)

    def leader_off(self, name: str) -> None:
        with self._lock:
            count = max(self._leading.get(name, 0) - 1, 0)
            self._leading[name] = count
            self.master_status.labels(name).set(1 if count else 0)

    def slowpath_exercised(self, name: str) -> None:
        self.slowpath.labels(name).inc()


_metrics_lock = threading.Lock()
_metrics: weakref.WeakKeyDictionary[CollectorRegistry, ElectionMetrics] = weakref.WeakKeyDictionary()


def election_metrics(registry: CollectorRegistry | None = None) -> ElectionMetrics:
    """The leader-election metrics of ``registry`` (default ``REGISTRY``), registering them on first use."""
    registry = REGISTRY if registry is None else registry
    with _metrics_lock:
        metrics = _metrics.get(registry)
        if metrics is None:
            try:
                metrics = ElectionMetrics.create(registry)
            except ValueError:
                # Registered by another copy of this module (e.g. after a reload): share those.
                names = getattr(registry, "_names_to_collectors", {})
                master, slowpath = names.get(_MASTER_STATUS), names.get(_SLOWPATH)
                if not isinstance(master, Gauge) or not isinstance(slowpath, Counter):
                    raise
                metrics = ElectionMetrics(master, slowpath)
            _metrics[registry] = metrics
        return metrics
