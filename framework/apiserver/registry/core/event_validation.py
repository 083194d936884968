"""``ValidateEvent`` (``pkg/apis/core/validation/events.go``): the rules of core/v1 Events and the
stricter ones of events.k8s.io/v1 writes, both run on the stored (core) form (spec 18-2)."""

from __future__ import annotations

from framework.apiserver.encoding.gorender import go_invalid, go_str_field, go_struct, go_time_string
from framework.apiserver.machinery.errors import FieldError, go_value, invalid_value, required
from framework.apiserver.machinery.validation import (
    FIELD_IMMUTABLE,
    validate_object_meta,
    validate_object_meta_update,
)
from framework.meta.object import get_metadata, get_namespace
from framework.meta.validation import is_dns1123_subdomain, is_qualified_name

OBJECT_REFERENCE_FIELDS = [
    ("Kind", "kind"),
    ("Namespace", "namespace"),
    ("Name", "name"),
    ("UID", "uid"),
    ("APIVersion", "apiVersion"),
    ("ResourceVersion", "resourceVersion"),
    ("FieldPath", "fieldPath"),
]


def go_object_reference(ref: dict | None) -> str:
    ref = ref or {}
    return go_struct("core.ObjectReference", [(g, go_str_field(ref, j)) for g, j in OBJECT_REFERENCE_FIELDS])


def _legacy_validate_event(ev: dict) -> list[FieldError]:
    """``legacyValidateEvent``: applies to every Event write through either API version."""
    errs: list[FieldError] = []
    namespace = get_namespace(ev)
    involved_ns = (ev.get("involvedObject") or {}).get("namespace") or ""
    mismatch = invalid_value("involvedObject.namespace", involved_ns, "does not match event.namespace")
    if not ev.get("eventTime"):
        if (not involved_ns and namespace not in ("", "default")) or (
            involved_ns and namespace != involved_ns
        ):
            errs.append(mismatch)
    else:
        if not involved_ns and namespace not in ("default", "kube-system"):
            errs.append(mismatch)
        controller = ev.get("reportingComponent") or ""
        if not controller:
            errs.append(required("reportingController"))
        errs.extend(
            invalid_value("reportingController", controller, m) for m in is_qualified_name(controller)
        )
        for key, limit in (("reportingInstance", 128), ("action", 128), ("reason", 128)):
            value = ev.get(key) or ""
            if not value:
                errs.append(required(key))
            if len(value.encode()) > limit:  # Go's len() counts bytes
                errs.append(invalid_value(key, "", f"can have at most {limit} characters"))
        if len((ev.get("message") or "").encode()) > 1024:
            errs.append(invalid_value("message", "", "can have at most 1024 characters"))
    errs.extend(invalid_value("namespace", namespace, m) for m in is_dns1123_subdomain(namespace))
    return errs


def _event_series_errors(ev: dict) -> list[FieldError]:
    series = ev.get("series")
    if series is None:
        return []
    errs: list[FieldError] = []
    if (series.get("count") or 0) < 2:
        errs.append(invalid_value("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(required("series.lastObservedTime"))
    return errs


def _event_immutable_errors(new: dict, old: dict) -> list[FieldError]:
    """The ``ValidateImmutableField`` calls of ``ValidateEventUpdate``, in upstream order."""
    errs: list[FieldError] = []

    def ref_fields(ref: dict | None) -> tuple:
        return tuple((ref or {}).get(j) or "" for _, j in OBJECT_REFERENCE_FIELDS)

    def source_fields(src: dict | None) -> tuple:
        return ((src or {}).get("component") or "", (src or {}).get("host") or "")

    def check_str(path: str, key: str) -> None:
        value = new.get(key) or ""
        if value != (old.get(key) or ""):
            errs.append(invalid_value(path, value, FIELD_IMMUTABLE))

    def check_time(path: str, key: str) -> None:
        if (new.get(key) or None) != (old.get(key) or None):
            errs.append(go_invalid(path, go_time_string(new.get(key)), FIELD_IMMUTABLE))

    if ref_fields(new.get("involvedObject")) != ref_fields(old.get("involvedObject")):
        errs.append(
            go_invalid("involvedObject", go_object_reference(new.get("involvedObject")), FIELD_IMMUTABLE)
        )
    check_str("reason", "reason")
    check_str("message", "message")
    if source_fields(new.get("source")) != source_fields(old.get("source")):
        component, host = source_fields(new.get("source"))
        rendered = go_struct(
            "core.EventSource", [("Component", go_value(component)), ("Host", go_value(host))]
        )
        errs.append(go_invalid("source", rendered, FIELD_IMMUTABLE))
    check_time("firstTimestamp", "firstTimestamp")
    check_time("lastTimestamp", "lastTimestamp")
    if (new.get("count") or 0) != (old.get("count") or 0):
        errs.append(invalid_value("count", new.get("count") or 0, FIELD_IMMUTABLE))
    check_str("reason", "reason")  # upstream checks reason twice
    check_str("type", "type")
    check_time("eventTime", "eventTime")
    check_str("action", "action")
    if (ref_fields(new["related"]) if new.get("related") else None) != (
        ref_fields(old["related"]) if old.get("related") else None
    ):
        rendered = go_object_reference(new["related"]) if new.get("related") else "null"
        errs.append(go_invalid("related", rendered, FIELD_IMMUTABLE))
    check_str("reportingController", "reportingComponent")
    check_str("reportingInstance", "reportingInstance")
    return errs


def validate_event(
    core_obj: dict,
    *,
    created_via_events_v1: bool,
    old_core: dict | None = None,
    updated_via_events_v1: bool = False,
) -> list[FieldError]:
    """``ValidateEventCreate`` / ``ValidateEventUpdate`` on the core/v1 form of an Event.

    Field paths are upstream's hard-coded ones, identical for both API versions: the validation runs
    on the internal type, so even events.k8s.io requests see ``involvedObject.namespace``,
    ``reportingController``, ``firstTimestamp``, ``source`` … (never ``regarding``/``note``), and
    core requests see ``reportingController`` rather than the JSON name ``reportingComponent``.

    The strict rules (creates/updates through events.k8s.io/v1) include upstream's own metadata
    checks (DNS-subdomain name, update immutability); core/v1 Events only get the generic
    metadata pass the caller runs afterwards.
    """
    errs = _legacy_validate_event(core_obj)
    meta = get_metadata(core_obj)
    if old_core is None:
        if not created_via_events_v1:
            return errs
        errs.extend(
            validate_object_meta(
                meta,
                namespaced=True,
                name_rule="subdomain",
                generate_name_used=bool(meta.get("generateName")),
            )
        )
        errs.extend(_event_series_errors(core_obj))
        if not core_obj.get("eventTime"):
            errs.append(required("eventTime"))
        event_type = core_obj.get("type") or ""
        if event_type not in ("Normal", "Warning"):
            errs.append(invalid_value("type", "", f"has invalid value: {event_type}"))
        for key in ("firstTimestamp", "lastTimestamp"):
            if core_obj.get(key):
                errs.append(invalid_value(key, "", "needs to be unset"))
        if core_obj.get("count"):
            errs.append(invalid_value("count", "", "needs to be unset"))
        source = core_obj.get("source") or {}
        if source.get("component") or source.get("host"):
            errs.append(invalid_value("source", "", "needs to be unset"))
        return errs
    if not updated_via_events_v1:
        return errs
    errs.extend(validate_object_meta_update(meta, get_metadata(old_core)))
    if core_obj.get("series") != old_core.get("series"):
        errs.extend(_event_series_errors(core_obj))
    errs.extend(_event_immutable_errors(core_obj, old_core))
    return errs
