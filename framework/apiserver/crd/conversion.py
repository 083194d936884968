"""Converting custom resources between the versions of a CRD (apiextensions-apiserver's
``pkg/apiserver/conversion``): the ``None`` strategy changes only ``apiVersion``; the ``Webhook`` strategy
sends a ``ConversionReview`` to the CRD's webhook and checks its answer as ``webhook_converter.go`` does.

This module holds the pure parts: the strategy, the review a request sends (``conversionReviewVersions``
negotiated as kube-apiserver negotiates them), the checks of the answer and the restoring of server-owned
metadata (a webhook may change only labels and annotations), with kube-apiserver's error texts. The HTTP
call is :mod:`framework.apiserver.crd.conversion_webhook`.
"""

from __future__ import annotations

from typing import Any

from framework.apiserver.crd.definition import version_entries
from framework.apiserver.machinery.jsonvalues import as_dict, as_list
from framework.apiserver.machinery.validation import validate_annotations
from framework.apiserver.registry.rest.objects import deep_copy
from framework.meta import jsoncodec
from framework.meta.field import aggregate
from framework.meta.labels import validate_labels
from framework.meta.schema import from_api_version_and_kind, parse_group_version

GROUP = "apiextensions.k8s.io"
REVIEW_V1 = f"{GROUP}/v1"
REVIEW_V1BETA1 = f"{GROUP}/v1beta1"


class ConversionError(Exception):
    """A failed conversion; its text is kube-apiserver's, answered as a 500 Status without a reason."""


def strategy(crd: dict) -> str:
    """``spec.conversion.strategy`` (``None`` when unset)."""
    value = as_dict(as_dict(crd.get("spec")).get("conversion")).get("strategy")
    return value if isinstance(value, str) and value else "None"


def uses_webhook(crd: dict | None) -> bool:
    """Whether objects of ``crd`` are converted by its webhook (a single-version CRD never converts)."""
    return crd is not None and strategy(crd) == "Webhook" and len(version_entries(crd)) > 1


def webhook_config(crd: dict) -> dict:
    """``spec.conversion.webhook``."""
    return as_dict(as_dict(as_dict(crd.get("spec")).get("conversion")).get("webhook"))


def review_api_version(crd: dict) -> str:
    """The ``ConversionReview`` version sent: the first of ``conversionReviewVersions`` the server knows
    (``createConversionReviewObjects``); ``ConversionError`` when none is."""
    for v in as_list(webhook_config(crd).get("conversionReviewVersions")):
        if v == "v1beta1":
            return REVIEW_V1BETA1
        if v == "v1":
            return REVIEW_V1
    raise ConversionError("no supported conversion review versions")


def gvk_text(obj: dict, kind: str | None = None) -> str:
    """``obj``'s ``schema.GroupVersionKind`` as Go prints it (``group/version, Kind=Kind``)."""
    api_version = obj.get("apiVersion")
    k = kind if kind is not None else obj.get("kind")
    return str(
        from_api_version_and_kind(
            api_version if isinstance(api_version, str) else "", k if isinstance(k, str) else ""
        )
    )


def review_request(api_version: str, objects: list[dict], desired: str, uid: str) -> dict:
    """The ``ConversionReview`` asking for ``objects`` in ``desired`` (an apiVersion)."""
    return {
        "kind": "ConversionReview",
        "apiVersion": api_version,
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
    }


def response_objects(api_version: str, doc: dict, uid: str) -> list:
    """The ``convertedObjects`` of a webhook's answer (``getConvertedObjectsFromResponse``): v1 answers
    must name their kind and echo the uid, and a result other than ``Success`` is the failure it states.
    Raises ``ConversionError`` with the problem (the caller adds which conversion failed)."""
    if api_version == REVIEW_V1:
        got = f"{doc.get('apiVersion') or ''}, Kind={doc.get('kind') or ''}"
        if doc.get("apiVersion") != REVIEW_V1 or doc.get("kind") != "ConversionReview":
            raise ConversionError(
                f"expected webhook response of {REVIEW_V1}, Kind=ConversionReview, got {got}"
            )
    response = doc.get("response")
    if not isinstance(response, dict):
        raise ConversionError("no response provided")
    if api_version == REVIEW_V1:  # v1beta1 answers were never checked for their uid (kept as kube keeps it)
        got_uid = response.get("uid") or ""
        if got_uid != uid:
            raise ConversionError(f'expected response.uid="{uid}", got "{got_uid}"')
    result = as_dict(response.get("result"))
    status = result.get("status") or ""
    if status != "Success":
        message = result.get("message")
        if isinstance(message, str) and message:
            raise ConversionError(message)
        raise ConversionError(f"response.result.status was '{status}', not 'Success'")
    return as_list(response.get("convertedObjects"))


def check_converted(original: dict, converted: Any, desired: str) -> str | None:
    """What is wrong with one converted object, or None: it must be an object of the desired group
    version and the original's kind (``invalid groupVersion``/``invalid kind``)."""
    if not isinstance(converted, dict):
        return "invalid type, expected=Unstructured"
    api_version = converted.get("apiVersion")
    try:
        got = str(parse_group_version(api_version if isinstance(api_version, str) else ""))
    except ValueError:
        got = str(api_version)
    if got != desired:
        return f"invalid groupVersion (expected {desired}, received {got})"
    if converted.get("kind") != original.get("kind"):
        return f"invalid kind (expected {original.get('kind') or ''}, received {converted.get('kind') or ''})"
    return None


def check_identity(original: dict, converted: dict) -> str | None:
    """``validateConvertedObject``: kind, name, namespace and uid unchanged."""
    om, cm = as_dict(original.get("metadata")), as_dict(converted.get("metadata"))
    pairs = (
        ("kind", original.get("kind"), converted.get("kind")),
        ("name", om.get("name"), cm.get("name")),
        ("namespace", om.get("namespace"), cm.get("namespace")),
        ("UID", om.get("uid"), cm.get("uid")),
    )
    for what, want, got in pairs:
        if (want or "") != (got or ""):
            return f"must have the same {what}: {want or ''} != {got or ''}"
    return None


def restore_metadata(original: dict, converted: dict) -> dict:
    """``restoreObjectMeta``: the converted object with the original's metadata, but the labels and
    annotations the webhook answered (validated when they changed). Raises ``ConversionError``."""
    answered = converted.get("metadata")
    if "metadata" not in converted:
        raise ConversionError("missing metadata in converted object")
    if not isinstance(answered, dict):
        raise ConversionError(f"invalid metadata of type {_go_type(answered)} in converted object")
    out = dict(converted)
    meta = deep_copy(as_dict(original.get("metadata")))
    for fld in ("labels", "annotations"):
        value = answered.get(fld)
        if value is None:
            meta.pop(fld, None)
            continue
        if not isinstance(value, dict):
            raise ConversionError(f"invalid metadata.{fld} of type {_go_type(value)} in converted object")
        before = meta.get(fld)
        if before is not None and not isinstance(before, dict):
            raise ConversionError(f"invalid metadata.{fld} of type {_go_type(before)} in original object")
        before = before or {}
        changed = len(before) != len(value)
        for k, v in value.items():
            if not isinstance(v, str):
                raise ConversionError(
                    f"metadata.{fld}[{k}] must be a string, but is {_go_type(v)} in converted object"
                )
            if before.get(k) != v:
                changed = True
        if changed:
            if fld == "labels":
                messages = [e.message() for e in validate_labels(value, "metadata.labels")]
            else:
                messages = [e.message() for e in validate_annotations(value, "metadata.annotation")]
            if messages:
                raise ConversionError(aggregate(messages))
        meta[fld] = value
    out["metadata"] = meta
    return out


def naive(obj: dict, api_version: str) -> dict:
    """The ``None`` strategy: the object with only ``apiVersion`` changed."""
    return obj if obj.get("apiVersion") == api_version else {**obj, "apiVersion": api_version}


# Metadata the server owns and restores after every conversion: two objects that differ only there
# convert alike, so one webhook answer serves both.
def content_key(obj: dict, target: str) -> bytes:
    """The cache key of converting ``obj`` to ``target``: everything a webhook's answer may depend on
    and is kept from it (the body, labels and annotations)."""
    meta = as_dict(obj.get("metadata"))
    body = {k: v for k, v in obj.items() if k != "metadata"}
    body["metadata"] = {k: meta[k] for k in ("labels", "annotations") if k in meta}
    body["__target"] = target
    return jsoncodec.dumps(body, sort_keys=True)


def _go_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, str):
        return "string"
    if isinstance(v, int | float):
        return "int64" if isinstance(v, int) else "float64"
    if isinstance(v, list):
        return "[]interface {}"
    if isinstance(v, dict):
        return "map[string]interface {}"
    return "<nil>"
