"""The Event TTL reconciler (gardener/gardener pkg/controllermanager/controller/event/reconciler.go).

Shoot events (``regarding`` in group ``core.gardener.cloud``, kind ``Shoot``) are never deleted; every
other event is deleted once its reference time plus ``ttlNonShootEvents`` has passed and requeued until
then. The reference time is, first match wins: ``series.lastObservedTime``, ``eventTime``,
``deprecatedLastTimestamp`` (zero when none is set: the event is deleted at once).
See ``shared/spec/event-controller.md`` §4.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import structlog

from framework.client import NotFound
from framework.clock import Clock
from framework.reconcile import Request, Result

log = structlog.get_logger("gcm.controllers.event")

EVENT_API_VERSION = "events.k8s.io/v1"
SHOOT_GROUP = "core.gardener.cloud"
SHOOT_KIND = "Shoot"

# Go's zero time.Time (``metav1.Time{}``); the JSON of a zero MicroTime/Time is null or absent.
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)

# The reference-time fields in the order the spec tries them (§4.3): (top-level field, nested field).
REFERENCE_FIELDS = (("series", "lastObservedTime"), ("eventTime", None), ("deprecatedLastTimestamp", None))


class _NotAGroupVersion(ValueError):
    pass


def _group(api_version: str) -> str:
    """The group of ``api_version`` as ``schema.ParseGroupVersion`` parses it."""
    if not api_version:
        return ""
    slashes = api_version.count("/")
    if slashes == 0:
        return ""  # a bare version: the core group
    if slashes == 1:
        return api_version.split("/", 1)[0]
    raise _NotAGroupVersion(api_version)


def is_shoot_event(event: dict) -> bool:
    """Whether ``event.regarding`` is a Shoot: group exactly ``core.gardener.cloud`` and kind ``Shoot``."""
    regarding = event.get("regarding")
    if not isinstance(regarding, dict) or regarding.get("kind") != SHOOT_KIND:
        return False
    try:
        return _group(regarding.get("apiVersion") or "") == SHOOT_GROUP
    except _NotAGroupVersion:
        return False


def parse_time(value: Any) -> datetime:
    """An RFC 3339 Time/MicroTime as an aware datetime; ``None``/absent/"" is the zero time."""
    if not value:
        return ZERO_TIME
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def reference_field(event: dict) -> tuple[str, str | None] | None:
    """The field that gives the event's reference time (§4.3), or None when every one is zero."""
    for top, nested in REFERENCE_FIELDS:
        value = event.get(top)
        if nested is not None:
            value = value.get(nested) if isinstance(value, dict) else None
        if parse_time(value) != ZERO_TIME:
            return top, nested
    return None


def reference_time(event: dict) -> datetime:
    """``series.lastObservedTime``, else ``eventTime``, else ``deprecatedLastTimestamp``; else zero."""
    field = reference_field(event)
    if field is None:
        return ZERO_TIME
    top, nested = field
    return parse_time(event[top][nested] if nested is not None else event[top])


class Reconciler:
    """Deletes non-Shoot events ``ttl`` seconds after their reference time.

    ``client`` reads Events (the manager's cache in gcm) and deletes them; ``clock`` gives ``now``.
    """

    def __init__(self, client: Any, clock: Clock, ttl_non_shoot_events: float) -> None:
        self.client = client
        self.clock = clock
        self.ttl = timedelta(seconds=float(ttl_non_shoot_events))

    def reconcile(self, request: Request) -> Result | None:
        try:
            event = self.client.get(EVENT_API_VERSION, "Event", request.name, request.namespace)
        except NotFound:
            return None  # deleted meanwhile: nothing to do
        if is_shoot_event(event):
            return None  # kept; the API server's --event-ttl is its only bound
        delete_at = reference_time(event) + self.ttl
        remaining = (delete_at - self.clock.now()).total_seconds()
        if remaining > 0:
            return Result(requeue_after=remaining)
        meta = event.get("metadata") or {}
        # Preconditions: never delete a recreated event of the same name, nor one whose series moved
        # on since the cache was read (Conflict: retried, and the retry reads the newer state). The
        # slim cache keeps no uid; the resourceVersion alone already tells both apart.
        preconditions = {k: meta[k] for k in ("uid", "resourceVersion") if meta.get(k)}
        log.debug("deleting event", namespace=request.namespace, name=request.name)
        try:
            self.client.delete(
                EVENT_API_VERSION,
                "Event",
                request.name,
                request.namespace,
                preconditions=preconditions or None,
            )
        except NotFound:
            pass  # deleted by someone else (or the API server's TTL) meanwhile
        return None
