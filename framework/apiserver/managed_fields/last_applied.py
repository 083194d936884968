"""kubectl's bridge between client-side and server-side apply: the last-applied-configuration annotation
(``lastAppliedManager`` / ``lastAppliedUpdater``) and manager names derived from the user agent."""

from __future__ import annotations

import json

import orjson

from framework.apiserver.managed_fields.fieldpath import PathSet, TypedError
from framework.apiserver.managed_fields.managers import without_managed_fields
from framework.apiserver.managed_fields.schema import Schema
from framework.apiserver.managed_fields.typed import compare, copy_value, field_set
from framework.meta import jsoncodec
from framework.meta.object import get_annotations, get_metadata

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL_MANAGER = "kubectl"


# --- the last-applied bridge for kubectl (lastAppliedManager / lastAppliedUpdater) ----------------------


def allowed_by_last_applied(live: dict | None, s: Schema) -> PathSet:
    """Fields ``kubectl`` may take over without conflict while migrating from client-side apply: those
    in the last-applied annotation whose live value still equals it."""
    annotations = get_annotations(live)
    raw = annotations.get(LAST_APPLIED)
    if not raw:
        return set()
    try:
        last = jsoncodec.loads(raw)
        if not isinstance(last, dict):
            return set()
        last_set = field_set(last, s, lenient=True)
    except (orjson.JSONDecodeError, TypedError):
        return set()
    return last_set - compare(last, without_managed_fields(live), s).modified


def last_applied_value(config: dict) -> str:
    """``buildLastApplied``: the applied configuration minus the annotation, as Go encodes JSON."""
    obj = copy_value(config)
    annotations = get_metadata(obj).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for ch, esc in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(ch, esc)
    return text + "\n"


# --- manager names ------------------------------------------------------------------------------------


def manager_from_user_agent(user_agent: str) -> str:
    """``prefixFromUserAgent``: what precedes the first ``/``, printable characters, at most 128 bytes."""
    out = ""
    size = 0
    for ch in user_agent.split("/")[0]:
        if not ch.isprintable():
            continue
        n = len(ch.encode())
        if size + n > 128:
            break
        out += ch
        size += n
    return out
