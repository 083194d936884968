"""events.k8s.io/v1 Event: a view of the core Event table, converted on the way in and out
(``pkg/registry/core/event``; its stricter create/update rules in ``pkg/apis/core/validation/events.go``)."""

from __future__ import annotations

import dataclasses

from framework.apiserver.encoding import decoding
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.registry.core import event as core_event
from framework.apiserver.registry.core.event_validation import validate_event
from framework.apiserver.registry.events import conversion as event_conversion


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    # Hooks run on the stored (core) form; the events.k8s.io view adds its stricter rules.
    return validate_event(
        obj, created_via_events_v1=old is None, old_core=old, updated_via_events_v1=old is not None
    )


STRATEGIES = [
    # The core Event's strategy (same table, fields and merge keys) with the view's own validation and
    # conversion.
    dataclasses.replace(
        core_event.STRATEGIES[0],
        group="events.k8s.io",
        internal_group="core",  # a view of the core Event
        null_shape=decoding.shape(
            keep=("deprecatedFirstTimestamp", "deprecatedLastTimestamp", *core_event.EVENT_TIMES)
        ),
        validate=validate,
        to_storage=event_conversion.events_v1_to_core,
        from_storage=event_conversion.stored_to_events_v1,
        extra={},
    ),
]
