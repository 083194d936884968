"""``framework.leaderelection`` — client-go's leader election over a ``coordination.k8s.io/v1`` Lease.

Several replicas run a :class:`LeaderElector` on the same Lease; at most one leads at a time.
Expiry is judged on each candidate's monotonic clock from when it last saw the record change, every
write is optimistic (resourceVersion), and a leader that cannot renew within ``renew_deadline`` stops
leading at once — before its lease can expire in anyone else's eyes. Usage::

    import socket, threading, uuid

    from framework.client import Client
    from framework.leaderelection import LeaderElectionConfig, LeaderElectionLost, LeaderElector, LeaseLock

    client = Client.from_kubeconfig()
    identity = f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
    lost = threading.Event()

    def lead(stop: threading.Event) -> None:  # runs in its own thread while leading
        while not stop.wait(1.0):
            ...  # leader-only work; return promptly once ``stop`` is set

    elector = LeaderElector(
        LeaderElectionConfig(
            lock=LeaseLock(client, "kube-system", "my-controller", identity),
            lease_duration=15, renew_deadline=10, retry_period=2,  # client-go's defaults
            release_on_cancel=True,  # hand over at once on a graceful shutdown
            on_started_leading=lead,
            on_stopped_leading=lambda: print("stopped leading"),
            on_new_leader=lambda who: print("leader is", who),
        )
    )
    stop = threading.Event()  # set it (e.g. from a SIGTERM handler) to step down gracefully
    elector.run(stop)  # blocks: campaigns, leads, and returns when stopped or when leadership is lost
    if elector.lost:
        raise LeaderElectionLost("leader election lost")  # exit non-zero, as controller-runtime does

``elector.is_leader()``, ``elector.get_leader()`` and ``elector.check(tolerance)`` (a health check that
raises :class:`LeaderElectionLost` for a leader whose renewals are long overdue) are thread-safe.
Metrics: ``leader_election_master_status{name}`` and ``leader_election_slowpath_total{name}`` on the
registry given to ``LeaderElector(..., registry=...)`` (default ``prometheus_client.REGISTRY``).
"""

from .leader_elector import JITTER_FACTOR, LeaderElectionConfig, LeaderElectionLost, LeaderElector
from .metrics import ElectionMetrics, election_metrics
from .resourcelock import (
    LEASE_API_VERSION,
    LEASE_KIND,
    LeaderElectionRecord,
    LeaseLock,
    ResourceLock,
)

__all__ = [
    "JITTER_FACTOR",
    "LEASE_API_VERSION",
    "LEASE_KIND",
    "ElectionMetrics",
    "LeaderElectionConfig",
    "LeaderElectionLost",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "ResourceLock",
    "election_metrics",
]
