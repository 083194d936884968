"""events.k8s.io/v1 Event: a view of the core Event table, converted on the way in and out
(``pkg/registry/core/event``; its stricter create/update rules in ``pkg/apis/core/validation/events.go``)."""

from __future__ import annotations

from ... import event_conversion, validation
from ...errors import FieldError
from ...patch import BUILTIN_SMP_STRATEGIES as smp
from ..core.event import CORE_EVENT_FIELDS, EVENT_MICROTIME_FIELDS, EVENT_TIME_FIELDS, fields, normalize
from ..strategy import ResourceType


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    # Hooks run on the stored (core) form; the events.k8s.io view adds its stricter rules.
    return validation.validate_event(
        obj, created_via_events_v1=old is None, old_core=old, updated_via_events_v1=old is not None
    )


STRATEGIES = [
    ResourceType(
        "events.k8s.io",
        "v1",
        "events",
        "Event",
        True,
        "event",
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
        to_storage=event_conversion.events_v1_to_core,
        from_storage=event_conversion.stored_to_events_v1,
    ),
]
