"""The manager: shared cache, cache-backed client, leader election, servers and controllers.

::

    from framework.client import Client
    from framework.manager import LeaderElectionOptions, Manager

    mgr = Manager(
        Client.from_kubeconfig(),
        leader_election=LeaderElectionOptions(namespace="garden", name="my-controller-leader-election"),
        metrics_bind_address=":8080",
        health_probe_bind_address=":8081",
    )
    ...  # Builder(mgr)...complete(reconciler)
    mgr.start()  # blocks until SIGTERM/SIGINT; raises LeaderElectionLost if the lease was lost

``mgr.cache`` is a Reader plus informers; ``mgr.client`` is the live client with that cache in front of
its reads (deep copies; kinds in ``Manager(disable_for=[...])`` read live) and writes to the API server;
``mgr.api_reader`` reads live. ``CacheOptions`` per ``(apiVersion, kind)`` restrict what is cached.
Informers resync every ``sync_period`` (default ``DEFAULT_SYNC_PERIOD``, 10 h, jittered, as
controller-runtime).
Controllers start once the caches synced; after ``cache_sync_timeout`` (default 2 min) ``start()``
raises ``CacheSyncTimeout`` naming the kinds that did not.
"""

from framework.leaderelection import LeaderElectionLost
from framework.manager.cache import DEFAULT_SYNC_PERIOD, Cache, CacheOptions
from framework.manager.manager import (
    DEFAULT_CACHE_SYNC_TIMEOUT,
    CacheSyncTimeout,
    LeaderElectionOptions,
    Manager,
    Runnable,
)

__all__ = [
    "DEFAULT_CACHE_SYNC_TIMEOUT",
    "DEFAULT_SYNC_PERIOD",
    "Cache",
    "CacheOptions",
    "CacheSyncTimeout",
    "LeaderElectionLost",
    "LeaderElectionOptions",
    "Manager",
    "Runnable",
]
