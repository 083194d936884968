"""The Event TTL reconciler (gardener/gardener pkg/controllermanager/controller/event/reconciler.go).

Shoot events (``regarding`` in group ``core.gardener.cloud``, kind ``Shoot``) are never deleted; every
other event is deleted once its reference time plus ``ttlNonShootEvents`` has passed and requeued until
then. The reference time is, first match wins: ``series.lastObservedTime``, ``eventTime``,
``deprecatedLastTimestamp`` (zero when none is set: the event is deleted at once).
As Gardener's ``pkg/controllermanager/controller/event/reconciler.go``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from framework.client import NotFound, ReaderWriter
from framework.clock import Clock
from framework.markers.rbac import rbac
from framework.meta.object import get_metadata
from framework.meta.schema import parse_group_version
from framework.meta.time import parse_time
from framework.reconcile import Request, Result
from gcm.apis.constants import GROUP_CORE, KIND_SHOOT
from gcm.controllers.event.metrics import EventTTLMetrics

EVENT_API_VERSION = "events.k8s.io/v1"
SHOOT_GROUP = GROUP_CORE
SHOOT_KIND = KIND_SHOOT

# Go's zero time.Time (``metav1.Time{}``); the JSON of a zero MicroTime/Time is null or absent.
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)

# The reference-time fields in the order Gardener's reconciler tries them: (top-level field, nested field).
REFERENCE_FIELDS = (("series", "lastObservedTime"), ("eventTime", None), ("deprecatedLastTimestamp", None))


def is_shoot_event(event: dict) -> bool:
    """Whether ``event.regarding`` is a Shoot: group exactly ``core.gardener.cloud`` and kind ``Shoot``."""
    regarding = event.get("regarding")
    if not isinstance(regarding, dict) or regarding.get("kind") != SHOOT_KIND:
        return False
    try:
        return parse_group_version(regarding.get("apiVersion") or "").group == SHOOT_GROUP
    except ValueError:
        return False


def event_time(value: Any) -> datetime:
    """A Time/MicroTime field as an aware datetime; unset (``None``/absent/``""``) is the zero time."""
    return parse_time(value) or ZERO_TIME


def _field_value(event: dict, top: str, nested: str | None) -> Any:
    value = event.get(top)
    if nested is not None:
        value = value.get(nested) if isinstance(value, dict) else None
    return value


def _reference(event: dict) -> tuple[tuple[str, str | None] | None, datetime]:
    """(the field that gives the reference time, that time); (None, zero) when every one is zero."""
    for top, nested in REFERENCE_FIELDS:
        at = event_time(_field_value(event, top, nested))
        if at != ZERO_TIME:
            return (top, nested), at
    return None, ZERO_TIME


def reference_field(event: dict) -> tuple[str, str | None] | None:
    """The field that gives the event's reference time, or None when every one is zero.

    The first set value that is plainly not the zero time (a string from year 1000 on) decides without
    being parsed: if it does not parse, :func:`reference_time` raises on that same field. Otherwise the
    values are parsed in order, and an unreadable one raises ``TypeError`` / ``ValueError``.
    """
    for top, nested in REFERENCE_FIELDS:
        value = _field_value(event, top, nested)
        if value is None or value == "":
            continue
        if type(value) is str and value[:4].isdigit() and value[:4] >= "1000":
            return top, nested
        break
    return _reference(event)[0]


def reference_time(event: dict) -> datetime:
    """``series.lastObservedTime``, else ``eventTime``, else ``deprecatedLastTimestamp``; else zero."""
    return _reference(event)[1]


# Non-Shoot Events past their TTL (delete).
@rbac(groups="events.k8s.io", resources="events", verbs="delete")
class Reconciler:
    """Deletes non-Shoot events ``ttl`` seconds after their reference time.

    ``client`` reads Events (the manager's cache in gcm) and deletes them; ``clock`` gives ``now``;
    ``metrics`` (the manager's, when given) counts the deletes and how late they came.
    Nothing is logged per event, as in Gardener's reconciler (the controller logs a failed delete).
    """

    def __init__(
        self,
        client: ReaderWriter,
        clock: Clock,
        ttl_non_shoot_events: float,
        *,
        metrics: EventTTLMetrics | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.ttl = timedelta(seconds=float(ttl_non_shoot_events))
        self.metrics = metrics

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
        meta = get_metadata(event)
        # Preconditions: never delete a recreated event of the same name, nor one whose series moved
        # on since the cache was read (Conflict: retried, and the retry reads the newer state). The
        # slim cache keeps no uid; the resourceVersion alone already tells both apart.
        preconditions = {k: meta[k] for k in ("uid", "resourceVersion") if meta.get(k)}
        try:
            self.client.delete(
                EVENT_API_VERSION,
                "Event",
                request.name,
                request.namespace,
                preconditions=preconditions or None,
            )
        except NotFound:
            return None  # deleted by someone else (or the API server's TTL) meanwhile: not ours to count
        if self.metrics is not None:
            self.metrics.deleted(-remaining)
        return None
