"""core/v1 Event, stored in the table the events.k8s.io/v1 view shares (``pkg/registry/core/event``,
``ValidateEvent`` in ``pkg/apis/core/validation/events.go``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.encoding import decoding
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.core.event_validation import validate_event
from framework.apiserver.registry.events import conversion as event_conversion
from framework.apiserver.registry.strategy import ResourceType


def fields(obj: dict) -> dict[str, str]:
    return event_conversion.event_field_set(obj)


CORE_EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)


EVENT_TIME_FIELDS = ("firstTimestamp", "lastTimestamp")


EVENT_MICROTIME_FIELDS = ("eventTime", "series.lastObservedTime")


def normalize(obj: dict, old: dict | None) -> None:
    event_conversion.add_zero_fields(obj)


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    return validate_event(obj, created_via_events_v1=False, old_core=old)


# Non-pointer metav1.Time/MicroTime fields: Go writes their zero value as null itself.
EVENT_TIMES = ("eventTime", "series.lastObservedTime")


def _event_cells(ev: dict, now: datetime) -> list[Any]:
    """``printEvent`` for both APIs (events.k8s.io names the legacy fields ``deprecated*``)."""
    legacy = "involvedObject" in ev or "regarding" not in ev
    first_ts = ev.get("firstTimestamp" if legacy else "deprecatedFirstTimestamp")
    last_ts = ev.get("lastTimestamp" if legacy else "deprecatedLastTimestamp")
    first = printing.since(first_ts or ev.get("eventTime"), now, "<unknown>")
    last = printing.since(last_ts, now, "<unknown>") if last_ts else first
    count = ev.get("count" if legacy else "deprecatedCount") or 0
    series = ev.get("series")
    if isinstance(series, dict):
        last = printing.since(series.get("lastObservedTime"), now, "<unknown>")
        count = series.get("count") or 0
    elif not count:
        count = 1  # singleton events carry no count in the new API
    ref = as_dict(ev.get("involvedObject" if legacy else "regarding"))
    kind = str(ref.get("kind") or "").lower()
    target = f"{kind}/{ref['name']}" if ref.get("name") else kind
    source = as_dict(ev.get("source" if legacy else "deprecatedSource"))
    parts = [source.get("component") or ev.get("reportingController") or ev.get("reportingComponent") or ""]
    host = source.get("host") or ev.get("reportingInstance") or ""
    if host:
        parts.append(host)
    message = (ev.get("message") if legacy else ev.get("note")) or ""
    return [
        last,
        ev.get("type") or "",
        ev.get("reason") or "",
        target,
        ref.get("fieldPath") or "",
        ", ".join(parts),
        message.strip(),
        first,
        int(count),
        printing.name(ev),
    ]


# ``printEvent``'s columns, shared by the events.k8s.io view (which copies this strategy).
PRINTER: printing.Printer = (
    [
        printing.col("Last Seen", "Time of the last occurrence"),
        printing.col("Type", "Type of this event (Normal, Warning)"),
        printing.col(
            "Reason", "Short, machine understandable string that gives the reason for the transition"
        ),
        printing.col("Object", "The object that this event is about"),
        printing.col("Subobject", "The field of the object that this event is about", priority=1),
        printing.col("Source", "The component reporting this event", priority=1),
        printing.col("Message", "A human-readable description of the status of this operation"),
        printing.col("First Seen", "Time of the first occurrence", priority=1),
        printing.col("Count", "The number of times this event has occurred", priority=1),
        {**printing.NAME, "priority": 1},
    ],
    _event_cells,
)


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "events",
        "Event",
        True,
        "event",
        null_shape=decoding.shape(keep=("firstTimestamp", "lastTimestamp", *EVENT_TIMES)),
        # ObjectReference is +structType=atomic (regarding: its events.k8s.io name).
        apply_atomic=frozenset({"involvedObject", "related", "regarding"}),
        short_names=("ev",),
        put_creates=True,
        supports_gc=False,
        normalize=normalize,
        validate=validate,
        fields=fields,
        field_names=CORE_EVENT_FIELDS,
        own_field_labels=True,
        printer=PRINTER,
        storage="events",
        time_fields=EVENT_TIME_FIELDS,
        microtime_fields=EVENT_MICROTIME_FIELDS,
    ),
]
