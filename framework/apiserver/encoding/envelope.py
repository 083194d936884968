"""The envelope of a written object, TypeMeta and ObjectMeta, decoded with kube-apiserver's error texts.

kube-apiserver reads a body in two steps, and each step has its own error text:

1. The serializer reads ``apiVersion`` and ``kind`` first (``SimpleMetaFactory.Interpret`` in
   k8s.io/apimachinery ``runtime/serializer/json/meta.go``): ``encoding/json`` into an anonymous
   struct of two strings, with case-insensitive keys. A body that is not an object, or a non-string
   ``apiVersion``/``kind``, fails there: ``couldn't get version/kind; json parse error: json: cannot
   unmarshal number into Go struct field .apiVersion of type string``. No kind is known yet, so the
   handler answers ``400 the object provided is unrecognized (must be of type K): ... (<the body's
   first 30 bytes>)`` (``transformDecodeError``). The same for every kind, built-in or custom.
2. The object itself. Built-in kinds are decoded into their Go struct (``typed_decoding``), which
   checks ObjectMeta with the rest: ``json: cannot unmarshal number into Go struct field
   ObjectMeta.metadata.name of type string``. A custom resource is decoded as a map, and the CR
   handler then decodes its ``metadata`` alone into ``metav1.ObjectMeta``
   (apiextensions-apiserver ``schema/objectmeta/coerce.go``, ``GetObjectMetaWithOptions``, which on
   the request path returns the error instead of dropping the field): the field path starts at
   ObjectMeta, ``json: cannot unmarshal number into Go struct field ObjectMeta.name of type
   string``, and since the metadata map is first marshalled back to JSON, the first error is the
   first in sorted key order. Its unknown fields are ``unknown field "metadata.foo"`` for
   ``fieldValidation``. Either way: ``400 K in version "V" cannot be handled as a K: ...``.

A patch's result is decoded the same way, but a failure there is the patch handler's ``422``:
`` "" is invalid: patch: Invalid value: "<patched object>": <decoder error>`` (k8s.io/apiserver
``handlers/patch.go``, ``jsonPatcher.applyPatchToCurrentObject``).

Metadata times (``creationTimestamp``, ``deletionTimestamp``, ``managedFields[].time``) are parsed
as ``metav1.Time`` does: RFC 3339, else Go's ``time.Parse`` error.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from framework.apiserver.encoding import gojson, typed_decoding
from framework.apiserver.endpoints.negotiation import summarize
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError
from framework.meta.time import RFC3339, TimeParseError, parse_layout

__all__ = [
    "EnvelopeError",
    "check_custom_metadata",
    "check_metadata_times",
    "check_type_meta",
    "decode_error",
]

OBJECT_META_MODEL = "V1ObjectMeta"
# How Go prints the anonymous struct Interpret decodes into (reflect's String() of the type).
_TYPE_META_GO = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
)
_TYPE_META_KEYS = {"apiversion": "apiVersion", "kind": "kind"}
_INTERPRET = "couldn't get version/kind; json parse error: "


class EnvelopeError(ValueError):
    """The envelope does not decode; ``str()`` is the decoder's text. ``unrecognized``: the kind could
    not be read at all (step 1), so the request's answer names no kind."""

    def __init__(self, text: str, unrecognized: bool = False) -> None:
        super().__init__(text)
        self.unrecognized = unrecognized


def check_type_meta(body: Any) -> None:
    """``Interpret``: ``body`` must be an object (or ``null``) whose ``apiVersion`` and ``kind`` are
    strings (or ``null``), and ``apiVersion`` a group/version; raises :class:`EnvelopeError`."""
    if body is None:
        return  # null unmarshals into the struct as nothing
    if not isinstance(body, dict):
        raise EnvelopeError(
            f"{_INTERPRET}json: cannot unmarshal {gojson.json_type(body)} into Go value of type "
            + _TYPE_META_GO,
            unrecognized=True,
        )
    found: dict[str, Any] = {}
    for key, value in body.items():
        name = _TYPE_META_KEYS.get(key.lower())
        if name is None or value is None:
            continue
        if not isinstance(value, str):
            # encoding/json keeps going after a type error and reports the first one.
            raise EnvelopeError(
                f"{_INTERPRET}json: cannot unmarshal {gojson.json_type(value)} into Go struct field "
                f".{name} of type string",
                unrecognized=True,
            )
        found[name] = value  # a later key matching case-insensitively wins, as in encoding/json
    api_version = found.get("apiVersion", "")
    if api_version not in ("", "/") and api_version.count("/") > 1:
        # schema.ParseGroupVersion
        raise EnvelopeError(f"unexpected GroupVersion string: {api_version}", unrecognized=True)


def check_custom_metadata(body: dict) -> list[str]:
    """A custom resource's ``metadata`` decoded alone into ``metav1.ObjectMeta``, as the CR handler
    does: raises :class:`EnvelopeError` with the decoder's text; else the unknown fields' paths
    (``metadata.foo``), which are removed. Integral floats become ints, as the JSON round trip
    through Go's ``float64`` makes them."""
    meta = body.get("metadata")
    if meta is None:
        return []
    if not isinstance(meta, dict):
        raise EnvelopeError(
            f"json: cannot unmarshal {gojson.json_type(meta)} into Go value of type v1.ObjectMeta"
        )
    meta = body["metadata"] = _go_numbers(meta)
    try:
        # On a copy in Go's marshalling order first: the first error is the first in sorted keys.
        typed_decoding.decode(OBJECT_META_MODEL, _sorted(meta))
        unknown = typed_decoding.decode(OBJECT_META_MODEL, meta)
        check_metadata_times(meta)
    except typed_decoding.DecodeError as e:
        raise EnvelopeError(str(e)) from None
    return [f"metadata.{path}" for path in unknown]


def check_metadata_times(meta: Any) -> None:
    """``metav1.Time`` parses its string with RFC 3339: ``creationTimestamp``, ``deletionTimestamp``
    and every ``managedFields[].time`` (types are already checked); raises ``DecodeError``."""
    if not isinstance(meta, dict):
        return
    values = [meta.get("creationTimestamp"), meta.get("deletionTimestamp")]
    entries = meta.get("managedFields")
    if isinstance(entries, list):
        values += [e.get("time") for e in entries if isinstance(e, dict)]
    for value in values:
        if isinstance(value, str):
            try:
                parse_layout(RFC3339, value)
            except TimeParseError as e:
                raise typed_decoding.DecodeError(str(e)) from None


def decode_error(
    kind: str,
    version: str,
    text: str,
    *,
    unrecognized: bool,
    patched: dict | None,
    body: Any,
    raw: bytes | None,
) -> StatusError:
    """The answer to an envelope (or body) that does not decode.

    ``patched``: the result of a patch (the patch handler's 422 quoting it). Otherwise the create or
    update handler's 400: ``transformDecodeError``'s "unrecognized" form with the body's summary when
    no kind could be read, else ``K in version "V" cannot be handled as a K``. ``raw`` is the body as
    sent (its summary); without it the body is re-encoded.
    """
    if patched is not None:
        return patch_invalid(patched, text)
    if unrecognized:
        data = raw if raw is not None else orjson.dumps(body)
        return errors.bad_request(
            f"the object provided is unrecognized (must be of type {kind}): {text} ({summarize(data)})"
        )
    return errors.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {text}')


def patch_invalid(patched: Any, text: str) -> StatusError:
    """The patch handler's 422 for a patch whose result does not decode (``text``), quoting the result
    (compact JSON, keys sorted; see the deviations in docs/apiserver.md)."""
    value = orjson.dumps(patched, option=orjson.OPT_SORT_KEYS).decode()
    cause = errors.invalid_value("patch", value, text)
    # NewInvalid with an empty GroupKind: "%s %q is invalid" begins with the empty kind's space
    return StatusError(422, "Invalid", f' "" is invalid: {cause.message()}', {"causes": [cause.cause()]})


def _sorted(value: Any) -> Any:
    """A deep copy with every object's keys in sorted order (Go marshals maps so)."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return copy.copy(value)


def _go_numbers(value: Any) -> Any:
    """Integral floats as ints, everywhere in ``value``: ``json.Marshal`` writes ``float64(1)`` as
    ``1``, which then decodes into an integer field."""
    if isinstance(value, dict):
        return {k: _go_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_numbers(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value
