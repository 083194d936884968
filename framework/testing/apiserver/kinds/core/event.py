"""core/v1 Event, stored in the table the events.k8s.io/v1 view shares (``pkg/registry/core/event``,
``ValidateEvent`` in ``pkg/apis/core/validation/events.go``)."""

from __future__ import annotations

from ... import decoding, event_conversion
from ...errors import FieldError
from ...patch import BUILTIN_SMP_STRATEGIES as smp
from ..strategy import ResourceType
from .event_validation import validate_event


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
        smp=smp["Event"],
        storage="events",
        time_fields=EVENT_TIME_FIELDS,
        microtime_fields=EVENT_MICROTIME_FIELDS,
    ),
]
