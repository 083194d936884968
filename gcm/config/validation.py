"""Validation of a defaulted ``ControllerManagerConfiguration``: every problem, each with its field path.

Gardener's rules (``pkg/api/config/controllermanager/v1alpha1/validation`` with component-base's client
connection and leader election checks and apimachinery's label selector validation), in Gardener's
order, then gcm's own (marked gcm below):

- ``gardenClientConnection.burst`` ≥ 0;
- leader election, only when ``leaderElect`` is true: the three durations > 0, ``leaseDuration`` >
  ``renewDeadline`` > 1.2 x ``retryPeriod`` (the last is client-go's ``NewLeaderElector`` check, made
  at start-up instead of at runtime), ``resourceLock``/``resourceName``/``resourceNamespace`` required,
  and (gcm) ``resourceLock`` one of ``leases`` or a legacy lock name (gcm always uses a Lease);
- ``logLevel`` ∈ {debug, info, error}, ``logFormat`` ∈ {json, text} when set;
- ``controllers.project.quotas[i].projectSelector`` a valid label selector;
- ``controllers.shootState.concurrentSyncs`` ≥ 0 (Gardener's only section check; the section is
  otherwise ignored);
- gcm: ``concurrentSyncs`` ≥ 0 (0 means one worker, for every controller, as controller-runtime) and
  the day counts ≥ 0 in the sections we implement; ``staleSyncPeriod``, ``ttlNonShootEvents`` and
  ``cacheSyncTimeout`` > 0; listener ports within 1-65535.
"""

from __future__ import annotations

from typing import Any

from framework.meta import labels
from framework.meta.validation import is_qualified_name, is_valid_label_value
from gcm.config.errors import FieldError, invalid, not_supported, required
from gcm.config.types import (
    LOG_FORMATS,
    LOG_LEVELS,
    ControllerManagerConfiguration,
    LabelSelector,
    to_dict,
)

__all__ = [
    "LEGACY_RESOURCE_LOCKS",
    "SUPPORTED_RESOURCE_LOCKS",
    "is_qualified_name",
    "is_valid_label_value",
    "validate",
    "validate_label_selector",
]

SUPPORTED_RESOURCE_LOCKS = ("leases",)
# Accepted for old files (the default before v1.36 was "configmaps"); gcm still uses a Lease.
LEGACY_RESOURCE_LOCKS = ("configmaps", "configmapsleases", "endpoints", "endpointsleases")

# client-go leaderelection.JitterFactor: renewDeadline must exceed retryPeriod times it.
LEADER_ELECTION_JITTER = 1.2
NEGATIVE_ERROR = "must be greater than or equal to 0"  # apimachinery's IsNegativeErrorMsg
POSITIVE_DURATION_ERROR = "must be greater than zero"
PORT_ERROR = "must be between 1 and 65535, inclusive"  # validation.InclusiveRangeError(1, 65535)


def validate_label_selector(selector: LabelSelector | None, path: str) -> list[FieldError]:
    """``metav1validation.ValidateLabelSelector`` with default options (label values are checked)."""
    return [] if selector is None else labels.validate_label_selector(to_dict(selector), path)


def _non_negative(value: int | None, path: str) -> list[FieldError]:
    return [invalid(path, value, NEGATIVE_ERROR)] if value is not None and value < 0 else []


def _positive_duration(value: Any, path: str) -> list[FieldError]:
    return [invalid(path, value, POSITIVE_DURATION_ERROR)] if value is not None and value <= 0 else []


def _port(value: int, path: str) -> list[FieldError]:
    return [] if 1 <= value <= 65535 else [invalid(path, value, PORT_ERROR)]


def validate(cfg: ControllerManagerConfiguration) -> list[FieldError]:
    """Every validation error of a (defaulted) configuration; empty when it is valid."""
    errs: list[FieldError] = []

    # gardenClientConnection (component-base ValidateClientConnectionConfiguration)
    if cfg.garden_client_connection.burst < 0:
        errs.append(
            invalid(
                "gardenClientConnection.burst", cfg.garden_client_connection.burst, "must be non-negative"
            )
        )

    # leaderElection (component-base ValidateLeaderElectionConfiguration)
    le = cfg.leader_election
    if le is not None and le.leader_elect:
        p = "leaderElection"
        errs += _positive_duration(le.lease_duration, f"{p}.leaseDuration")
        errs += _positive_duration(le.renew_deadline, f"{p}.renewDeadline")
        errs += _positive_duration(le.retry_period, f"{p}.retryPeriod")
        if le.lease_duration <= le.renew_deadline:
            errs.append(
                invalid(
                    f"{p}.leaseDuration",
                    le.lease_duration,
                    "LeaseDuration must be greater than RenewDeadline",
                )
            )
        if le.retry_period > 0 and le.renew_deadline <= LEADER_ELECTION_JITTER * le.retry_period:
            # client-go's NewLeaderElector refuses this at runtime; say so at start-up instead.
            errs.append(
                invalid(
                    f"{p}.renewDeadline",
                    le.renew_deadline,
                    f"must be greater than {LEADER_ELECTION_JITTER} x retryPeriod "
                    f"({le.retry_period}): a leader must be able to retry its renewal",
                )
            )
        if not le.resource_lock:
            errs.append(required(f"{p}.resourceLock", "resourceLock is required"))
        elif le.resource_lock not in SUPPORTED_RESOURCE_LOCKS + LEGACY_RESOURCE_LOCKS:
            errs.append(not_supported(f"{p}.resourceLock", le.resource_lock, SUPPORTED_RESOURCE_LOCKS))
        if not le.resource_name:
            errs.append(required(f"{p}.resourceName", "resourceName is required"))
        if not le.resource_namespace:
            errs.append(required(f"{p}.resourceNamespace", "resourceNamespace is required"))

    if cfg.log_level and cfg.log_level not in LOG_LEVELS:
        errs.append(not_supported("logLevel", cfg.log_level, LOG_LEVELS))
    if cfg.log_format and cfg.log_format not in LOG_FORMATS:
        errs.append(not_supported("logFormat", cfg.log_format, LOG_FORMATS))

    # controllers
    ctrl = cfg.controllers
    project = ctrl.project
    if project is not None:
        for i, quota in enumerate(project.quotas):
            errs += validate_label_selector(
                quota.project_selector, f"controllers.project.quotas[{i}].projectSelector"
            )
    shoot_state = ctrl.unimplemented.get("shootState")
    if isinstance(shoot_state, dict):
        syncs = shoot_state.get("concurrentSyncs")
        if isinstance(syncs, int) and not isinstance(syncs, bool):
            errs += _non_negative(syncs, "controllers.shootState.concurrentSyncs")

    # gcm's own checks
    errs += _positive_duration(ctrl.cache_sync_timeout, "controllers.cacheSyncTimeout")
    if project is not None:
        p = "controllers.project"
        errs += _non_negative(project.concurrent_syncs, f"{p}.concurrentSyncs")
        errs += _non_negative(project.minimum_lifetime_days, f"{p}.minimumLifetimeDays")
        errs += _non_negative(project.stale_grace_period_days, f"{p}.staleGracePeriodDays")
        errs += _non_negative(project.stale_expiration_time_days, f"{p}.staleExpirationTimeDays")
        errs += _positive_duration(project.stale_sync_period, f"{p}.staleSyncPeriod")
    if ctrl.event is not None:
        errs += _non_negative(ctrl.event.concurrent_syncs, "controllers.event.concurrentSyncs")
        errs += _positive_duration(ctrl.event.ttl_non_shoot_events, "controllers.event.ttlNonShootEvents")

    server = cfg.server
    if server.health_probes is not None:
        errs += _port(server.health_probes.port, "server.healthProbes.port")
    if server.metrics is not None:
        errs += _port(server.metrics.port, "server.metrics.port")
    if server.webhooks is not None:
        errs += _port(server.webhooks.port, "server.webhooks.port")
    elif server.https is not None:
        errs += _port(server.https.port, "server.https.port")
    return errs
