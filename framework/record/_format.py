"""Pure helpers: object references, event names, note truncation."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from framework.meta.validation import is_dns1123_subdomain, is_qualified_name

__all__ = [
    "MAX_NOTE_BYTES",
    "event_name",
    "object_reference",
    "truncate_note",
    "validate_controller_name",
]

MAX_NOTE_BYTES = 1024
"""``note``/``message`` limit the API server enforces (bytes, as Go's ``len``)."""

_REF_KEYS = ("apiVersion", "kind", "namespace", "name", "uid", "resourceVersion", "fieldPath")
_NAME_SUFFIX_LEN = 17  # "." + up to 16 hex digits of UnixNano
_MAX_NAME = 253
_INVALID_NAME_CHARS = re.compile(r"[^a-z0-9.-]+")


def object_reference(obj: Mapping[str, Any]) -> dict[str, str]:
    """An ``ObjectReference`` for ``obj``: a full object (with ``metadata``) or a reference dict.

    Only the non-empty fields among apiVersion, kind, namespace, name, uid, resourceVersion and
    fieldPath are kept, so the result is a snapshot independent of later changes to ``obj``.
    """
    if not isinstance(obj, Mapping):
        raise TypeError(f"an object or ObjectReference dict is required, not {type(obj).__name__}")
    meta = obj.get("metadata")
    if isinstance(meta, Mapping):
        source = {
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "namespace": meta.get("namespace"),
            "name": meta.get("name"),
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
        }
    else:
        source = {key: obj.get(key) for key in _REF_KEYS}
    ref = {key: str(value) for key, value in source.items() if value}
    if not ref.get("name"):
        raise ValueError("the regarding/related object needs a name")
    return ref


def truncate_note(note: str) -> str:
    """``note`` cut to :data:`MAX_NOTE_BYTES` UTF-8 bytes, never splitting a character."""
    raw = note.encode("utf-8", "replace")
    if len(raw) <= MAX_NOTE_BYTES:
        return note
    return raw[:MAX_NOTE_BYTES].decode("utf-8", "ignore")


def event_name(regarding_name: str, unix_nanos: int) -> str:
    """client-go's ``<regarding name>.<UnixNano in hex>``, made a valid DNS subdomain.

    Names such as ``system:controller:foo`` (valid for RBAC objects) would be rejected by the
    events.k8s.io API, so invalid characters become ``-`` and the prefix is shortened to fit 253.
    """
    prefix = regarding_name if not is_dns1123_subdomain(regarding_name) else _sanitize(regarding_name)
    prefix = prefix[: _MAX_NAME - _NAME_SUFFIX_LEN].rstrip(".-") or "event"
    return f"{prefix}.{unix_nanos:x}"


def _sanitize(name: str) -> str:
    cleaned = _INVALID_NAME_CHARS.sub("-", name.lower())
    labels = (label.strip("-") for label in cleaned.split("."))
    return ".".join(label for label in labels if label)


def validate_controller_name(name: str) -> None:
    """Raise ``ValueError`` unless ``name`` is a qualified name (``[prefix/]name``), as the API server
    requires of ``reportingController``; the message carries the API server's own texts."""
    problems = is_qualified_name(name)
    if problems:
        raise ValueError(f"invalid controller name {name!r}: " + "; ".join(problems))
