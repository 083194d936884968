"""The Go types of built-in kinds: the client's model of a resource, typed decoding of a body
against it, ``[]byte`` fields, and the internal group a kind converts through."""

from __future__ import annotations

import functools

from framework.apiserver import catalog
from framework.apiserver.encoding import envelope, gobase64, gojson, typed_decoding
from framework.apiserver.machinery import errors
from framework.apiserver.registry.strategy import ResourceType


def internal_group(rt: ResourceType) -> str:
    """The Go package of the kind's internal type (``core.ConfigMap``, ``apps.Deployment``, ...)."""
    return rt.internal_group or (rt.group.split(".")[0] if rt.group else "core")


def check_bytes_fields(rt: ResourceType, body: dict) -> None:
    """The kind's ``map[string][]byte`` field decodes as base64, as Go's JSON decoder does (400)."""
    key = rt.bytes_field
    data = body.get(key) if key else None
    if not isinstance(data, dict):
        return
    prefix = f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
    for value in data.values():
        if value is None:
            continue
        if not isinstance(value, str):
            raise errors.bad_request(
                f"{prefix}json: cannot unmarshal {gojson.json_type(value)} into Go struct "
                f"field {rt.kind}.{key} of type []uint8"
            )
        try:
            gobase64.go_base64_decode(value)
        except ValueError as e:
            raise errors.bad_request(prefix + str(e)) from None


@functools.cache
def _models() -> dict[tuple[str, str, str], str]:
    return {(e.group, e.version, e.resource): e.model for e in catalog.builtin_resources() if e.model}


def decode_builtin(
    rt: ResourceType, body: dict, *, model: str | None = None, kind: str | None = None
) -> list[str]:
    """Decode ``body`` (a review's or subresource's request body) as the Go type of built-in ``rt`` (or
    of ``model``, a subresource's kind): the unknown fields' paths (removed from ``body``). A wrong JSON
    type is a 400; kinds the client has no model for are not checked."""
    model = model or builtin_model(rt)
    if model is None:
        return []
    try:
        return decode_model(model, body)
    except typed_decoding.DecodeError as e:
        kind = kind or rt.kind
        raise errors.bad_request(
            f'{kind} in version "{rt.version}" cannot be handled as a {kind}: {e}'
        ) from None


def decode_model(model: str, body: dict) -> list[str]:
    """``body`` decoded as the Go type ``model`` (``typed_decoding``), metadata times parsed as
    ``metav1.Time`` does: the unknown fields' paths; raises ``typed_decoding.DecodeError``."""
    unknown = typed_decoding.decode(model, body)
    envelope.check_metadata_times(body.get("metadata"))
    return unknown


def builtin_model(rt: ResourceType) -> str | None:
    """The client model class of a built-in resource (None when the client has none)."""
    return _models().get((rt.group, rt.version, rt.resource))
