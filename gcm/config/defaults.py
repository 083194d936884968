"""Defaulting of ``ControllerManagerConfiguration`` in the order of Gardener's
``pkg/apis/config/controllermanager/v1alpha1/defaults.go`` (plus gcm's own fields in steps 6 and 7).

Explicitly set values are never overwritten. As in Gardener, "unset" means ``None`` for optional
fields and the zero value for Go value fields (``qps``/``burst`` 0, empty strings, and the three leader
election durations ``0s``, which component-base treats as unset).

1. ``logLevel`` := info, ``logFormat`` := json, ``leaderElection`` := {} when absent;
2. ``gardenClientConnection.qps`` := 50, ``burst`` := 100 when 0;
3. ``controllers.project`` := {} when absent (``event`` stays absent = disabled); ``cacheSyncTimeout`` := 2m;
4. project: concurrentSyncs 5, minimumLifetimeDays 30, staleGracePeriodDays 14, staleExpirationTimeDays
   90, staleSyncPeriod 12h, quota entries without ``projectSelector`` get ``{}``, gcm's
   ``extensionRoles`` false (secure by default: writing them needs cluster-admin-equivalent RBAC);
   event (only if present): concurrentSyncs 5, ttlNonShootEvents 1h;
5. leader election: resourceLock := leases; leaderElect := true, leaseDuration 15s, renewDeadline 10s,
   retryPeriod 2s; resourceNamespace := garden, resourceName := gardener-controller-manager-leader-election;
6. server: healthProbes := {} and port 2718, metrics := {} and port 2719; bind addresses stay empty;
   gcm's additions: ``server.webhooks`` (when present) port 2721, legacy ``server.https`` (when present)
   port 2721 (never 2719, the modern metrics port);
7. gcm: ``debugging`` := {enableProfiling: false, enableContentionProfiling: false}.
"""

from __future__ import annotations

from framework.meta.duration import HOUR, MINUTE, SECOND, Duration
from gcm.config.types import (
    DEFAULT_CONTROLLER_CONCURRENT_SYNCS,
    DEFAULT_HEALTH_PROBES_PORT,
    DEFAULT_LOCK_OBJECT_NAME,
    DEFAULT_LOCK_OBJECT_NAMESPACE,
    DEFAULT_METRICS_PORT,
    DEFAULT_WEBHOOK_PORT,
    ControllerManagerConfiguration,
    DebuggingConfiguration,
    EventControllerConfiguration,
    LabelSelector,
    LeaderElectionConfiguration,
    ProjectControllerConfiguration,
    Server,
    ServerConfiguration,
)

__all__ = [
    "DEFAULT_CACHE_SYNC_TIMEOUT",
    "DEFAULT_LEASE_DURATION",
    "DEFAULT_RENEW_DEADLINE",
    "DEFAULT_RETRY_PERIOD",
    "DEFAULT_STALE_SYNC_PERIOD",
    "DEFAULT_TTL_NON_SHOOT_EVENTS",
    "set_defaults",
]

DEFAULT_QPS = 50.0
DEFAULT_BURST = 100
DEFAULT_CACHE_SYNC_TIMEOUT = Duration(nanoseconds=2 * MINUTE)
DEFAULT_MINIMUM_LIFETIME_DAYS = 30
DEFAULT_STALE_GRACE_PERIOD_DAYS = 14
DEFAULT_STALE_EXPIRATION_TIME_DAYS = 90
DEFAULT_STALE_SYNC_PERIOD = Duration(nanoseconds=12 * HOUR)
DEFAULT_TTL_NON_SHOOT_EVENTS = Duration(nanoseconds=1 * HOUR)
DEFAULT_RESOURCE_LOCK = "leases"
DEFAULT_LEASE_DURATION = Duration(nanoseconds=15 * SECOND)
DEFAULT_RENEW_DEADLINE = Duration(nanoseconds=10 * SECOND)
DEFAULT_RETRY_PERIOD = Duration(nanoseconds=2 * SECOND)


def set_defaults(cfg: ControllerManagerConfiguration) -> ControllerManagerConfiguration:
    """Fill every unset field with its default, in place; returns ``cfg``."""
    # 1. top level
    if not cfg.log_level:
        cfg.log_level = "info"
    if not cfg.log_format:
        cfg.log_format = "json"
    if cfg.leader_election is None:
        cfg.leader_election = LeaderElectionConfiguration()

    # 2. garden client connection
    conn = cfg.garden_client_connection
    if conn.qps == 0:
        conn.qps = DEFAULT_QPS
    if conn.burst == 0:
        conn.burst = DEFAULT_BURST

    # 3. controller sections (every optional one but event exists afterwards)
    ctrl = cfg.controllers
    if ctrl.project is None:
        ctrl.project = ProjectControllerConfiguration()
    if ctrl.cache_sync_timeout is None:
        ctrl.cache_sync_timeout = DEFAULT_CACHE_SYNC_TIMEOUT

    # 4. per-section defaults
    _default_project(ctrl.project)
    if ctrl.event is not None:
        _default_event(ctrl.event)

    # 5. leader election
    _default_leader_election(cfg.leader_election)

    # 6. servers
    _default_server(cfg.server)

    # 7. (gcm) debugging
    if cfg.debugging is None:
        cfg.debugging = DebuggingConfiguration()
    if cfg.debugging.enable_profiling is None:
        cfg.debugging.enable_profiling = False
    if cfg.debugging.enable_contention_profiling is None:
        cfg.debugging.enable_contention_profiling = False
    return cfg


def _default_project(p: ProjectControllerConfiguration) -> None:
    if p.concurrent_syncs is None:
        p.concurrent_syncs = DEFAULT_CONTROLLER_CONCURRENT_SYNCS
    if p.minimum_lifetime_days is None:
        p.minimum_lifetime_days = DEFAULT_MINIMUM_LIFETIME_DAYS
    if p.stale_grace_period_days is None:
        p.stale_grace_period_days = DEFAULT_STALE_GRACE_PERIOD_DAYS
    if p.stale_expiration_time_days is None:
        p.stale_expiration_time_days = DEFAULT_STALE_EXPIRATION_TIME_DAYS
    if p.stale_sync_period is None:
        p.stale_sync_period = DEFAULT_STALE_SYNC_PERIOD
    if p.extension_roles is None:
        p.extension_roles = False
    for quota in p.quotas:
        if quota.project_selector is None:
            quota.project_selector = LabelSelector()


def _default_event(e: EventControllerConfiguration) -> None:
    if e.concurrent_syncs is None:
        e.concurrent_syncs = DEFAULT_CONTROLLER_CONCURRENT_SYNCS
    if e.ttl_non_shoot_events is None:
        e.ttl_non_shoot_events = DEFAULT_TTL_NON_SHOOT_EVENTS


def _default_leader_election(le: LeaderElectionConfiguration) -> None:
    if not le.resource_lock:
        le.resource_lock = DEFAULT_RESOURCE_LOCK
    # component-base RecommendedDefaultLeaderElectionConfiguration (zero durations are "unset")
    if le.lease_duration == 0:
        le.lease_duration = DEFAULT_LEASE_DURATION
    if le.renew_deadline == 0:
        le.renew_deadline = DEFAULT_RENEW_DEADLINE
    if le.retry_period == 0:
        le.retry_period = DEFAULT_RETRY_PERIOD
    if le.leader_elect is None:
        le.leader_elect = True
    if not le.resource_namespace:
        le.resource_namespace = DEFAULT_LOCK_OBJECT_NAMESPACE
    if not le.resource_name:
        le.resource_name = DEFAULT_LOCK_OBJECT_NAME


def _default_server(s: ServerConfiguration) -> None:
    if s.health_probes is None:
        s.health_probes = Server()
    if s.health_probes.port == 0:
        s.health_probes.port = DEFAULT_HEALTH_PROBES_PORT
    if s.metrics is None:
        s.metrics = Server()
    if s.metrics.port == 0:
        s.metrics.port = DEFAULT_METRICS_PORT
    if s.webhooks is not None and s.webhooks.port == 0:
        s.webhooks.port = DEFAULT_WEBHOOK_PORT
    if s.https is not None and s.https.port == 0:
        s.https.port = DEFAULT_WEBHOOK_PORT
