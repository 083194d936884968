"""core/v1 ⇄ events.k8s.io/v1 Event conversion and Event field-selector values (spec 18-1, 14-2).

Events are stored once, in their core/v1 form; the events.k8s.io/v1 endpoint converts on the way
in and out. The mapping is upstream's ``pkg/apis/events/v1/conversion.go``: a pure renaming of
top-level fields (nested objects such as ``series`` or ``source`` have identical shapes in both
versions). ``metadata`` passes through untouched; fields unknown to the target version are dropped,
as the real decoder drops them; absent fields stay absent.
"""

from __future__ import annotations

import copy
from typing import Any

from framework.meta.object import get_metadata

# core/v1 JSON name → events.k8s.io/v1 JSON name, for every Event field except metadata/TypeMeta.
CORE_TO_EVENTS_V1 = {
    "involvedObject": "regarding",
    "message": "note",
    "source": "deprecatedSource",
    "firstTimestamp": "deprecatedFirstTimestamp",
    "lastTimestamp": "deprecatedLastTimestamp",
    "count": "deprecatedCount",
    "reportingComponent": "reportingController",
    "eventTime": "eventTime",
    "series": "series",
    "related": "related",
    "action": "action",
    "reason": "reason",
    "type": "type",
    "reportingInstance": "reportingInstance",
}
EVENTS_V1_TO_CORE = {v: k for k, v in CORE_TO_EVENTS_V1.items()}

# What Go serialises for a core/v1 Event whose fields are zero: struct fields are never omitted
# (``involvedObject``, ``source``: ``{}``; ``metav1.Time``/``MicroTime``: ``null``) and the reporting
# fields have no ``omitempty`` (``""``). Stored Events carry them, so both versions show them.
CORE_ZERO_FIELDS: dict[str, Any] = {
    "involvedObject": {},
    "source": {},
    "firstTimestamp": None,
    "lastTimestamp": None,
    "eventTime": None,
    "reportingComponent": "",
    "reportingInstance": "",
}
# events.k8s.io/v1 fields with ``omitempty`` on a scalar: an empty value is not served.
_EVENTS_V1_OMITEMPTY = ("reportingController", "reportingInstance")


def add_zero_fields(core: dict) -> None:
    """Give a core/v1 Event (stored form) the zero-valued fields Go always writes, in place."""
    for key, zero in CORE_ZERO_FIELDS.items():
        if key not in core:
            core[key] = copy.copy(zero)


_INVOLVED_OBJECT_KEYS = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")


def _convert(src: dict, mapping: dict[str, str], api_version: str, share: bool = False) -> dict:
    out: dict = {"apiVersion": api_version, "kind": "Event"}
    if "metadata" in src:
        out["metadata"] = src["metadata"] if share else copy.deepcopy(src["metadata"])
    for key, value in src.items():
        if key in mapping:
            out[mapping[key]] = value if share else copy.deepcopy(value)
    return out


def core_to_events_v1(core: dict) -> dict:
    """The events.k8s.io/v1 form of a core/v1 Event (a new dict; the input is not modified)."""
    return _convert(core, CORE_TO_EVENTS_V1, "events.k8s.io/v1")


def stored_to_events_v1(core: dict) -> dict:
    """What the events.k8s.io/v1 endpoint serves for a stored Event: the conversion, with the empty
    scalars that version omits (``omitempty``) left out.

    The result shares its nested values with the stored object, as every served view does (stored
    objects are immutable; callers that change a view copy it first). A deep copy here was 15 % of
    the server's CPU when a controller deleted Events: every list item and watch event is converted.
    """
    out = _convert(core, CORE_TO_EVENTS_V1, "events.k8s.io/v1", share=True)
    for key in _EVENTS_V1_OMITEMPTY:
        if out.get(key) == "":
            del out[key]
    return out


def events_v1_to_core(ev: dict) -> dict:
    """The core/v1 form of an events.k8s.io/v1 Event (a new dict; the input is not modified)."""
    return _convert(ev, EVENTS_V1_TO_CORE, "v1")


def event_field_set(core: dict) -> dict[str, str]:
    """The field-selector values of a core/v1 Event (``event.ToSelectableFields``).

    ``source`` is ``source.component``, falling back to ``reportingComponent`` when that is empty,
    as upstream does so that events.k8s.io-written Events are selectable by their controller.
    """
    meta = get_metadata(core)
    involved = core.get("involvedObject") or {}
    source = (core.get("source") or {}).get("component") or core.get("reportingComponent") or ""
    fields = {f"involvedObject.{key}": str(involved.get(key) or "") for key in _INVOLVED_OBJECT_KEYS}
    fields.update(
        {
            "reason": str(core.get("reason") or ""),
            "reportingComponent": str(core.get("reportingComponent") or ""),
            "source": str(source),
            "type": str(core.get("type") or ""),
            "metadata.name": str(meta.get("name") or ""),
            "metadata.namespace": str(meta.get("namespace") or ""),
        }
    )
    return fields
