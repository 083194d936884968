"""A write's body as kube-apiserver's decoder reads it: type meta, the metadata kept, Go's nulls,
typed decoding of built-in kinds and unknown fields per ``fieldValidation``."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from framework.apiserver.encoding import decoding, envelope, typed_decoding
from framework.apiserver.machinery import errors
from framework.apiserver.registry.rest.base import RESTBase
from framework.apiserver.registry.rest.options import WriteOptions
from framework.apiserver.registry.rest.typed import (
    builtin_model,
    check_bytes_fields,
    decode_model,
    internal_group,
)
from framework.apiserver.registry.strategy import ResourceType

SCALE_MODEL = "V1Scale"  # the Go type /scale decodes (autoscaling/v1 Scale)
META_KEYS = {
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
}


class BodyDecoding(RESTBase):
    """Decoding of request bodies into objects the operations store."""

    def _type_meta(
        self, rt: ResourceType, body: Any, opts: WriteOptions | None = None, patched: bool = False
    ) -> dict:
        """``body`` decoded as kube-apiserver's decoder reads it (type meta, metadata, Go's nulls and
        types, unknown fields): the object to store. ``patched``: the result of a patch or apply,
        whose decode errors are the patch handler's 422 (``envelope``)."""
        if body is None and not patched:
            body = {}  # a JSON null decodes into the empty object (then lacks a name: 422)
        self._check_envelope(rt, body, patched, lambda: envelope.check_type_meta(body))
        api_version = body.get("apiVersion")
        kind = body.get("kind")
        mismatch = (kind and kind != rt.kind) or (api_version and api_version != rt.api_version)
        if mismatch and not rt.is_custom:
            self._check_decodable(rt, api_version or rt.api_version, kind or rt.kind)
        if api_version and api_version != rt.api_version:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({rt.api_version})"
            )
        if kind and kind != rt.kind:
            raise errors.bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
            )
        body["apiVersion"] = rt.api_version
        body["kind"] = rt.kind
        original = copy.deepcopy(body) if patched else None
        # A null is decoded as Go would (mostly: like an absent field) before anything reads the body.
        decoding.decode(rt.null_shape, body, custom=rt.is_custom)
        self._decode_typed(rt, body, opts, original)
        if opts is not None and not rt.is_custom:
            opts.strict_decoding([])  # what the body or patch itself repeats, if no unknown field came
        check_bytes_fields(rt, body)
        meta = body.get("metadata")
        if meta is None:
            meta = body["metadata"] = {}
        for k in list(meta):
            if k not in META_KEYS or meta[k] in (None, {}, [], ""):
                # Unknown keys were reported above; empty ones are omitted like Go's omitempty.
                del meta[k]
        return body

    def _check_envelope(
        self,
        rt: ResourceType,
        body: Any,
        patched: bool,
        check: Callable[[], Any],
        kind_version: tuple[str, str] | None = None,
    ) -> Any:
        """Run ``check``, answering an :class:`~..envelope.EnvelopeError` (or a Go type error) as the
        handler does: 400 for a request body, 422 for a patch's result. ``kind_version``: the kind the
        body is decoded as when it is not ``rt``'s (a Scale)."""
        kind, version = kind_version or (rt.kind, rt.version)
        try:
            return check()
        except (envelope.EnvelopeError, typed_decoding.DecodeError) as e:
            unrecognized = isinstance(e, envelope.EnvelopeError) and e.unrecognized
            raise envelope.decode_error(
                kind,
                version,
                str(e),
                unrecognized=unrecognized,
                patched=body if patched else None,
                body=body,
                raw=None,
            ) from None

    def _decode_scale(self, rt: ResourceType, body: Any, opts: WriteOptions, patched: bool) -> None:
        """A Scale written to ``/scale`` is decoded as ``autoscaling/v1`` Scale: type meta, Go types
        (400, or 422 for a patch's result) and unknown fields."""
        scale_kind = ("Scale", "v1")
        self._check_envelope(rt, body, patched, lambda: envelope.check_type_meta(body), scale_kind)
        if not isinstance(body, dict):
            return
        original = copy.deepcopy(body)
        unknown = self._check_envelope(
            rt, original, patched, lambda: decode_model(SCALE_MODEL, body), scale_kind
        )
        opts.strict_decoding([f'unknown field "{u}"' for u in unknown])

    def _decode_typed(
        self, rt: ResourceType, body: dict, opts: WriteOptions | None, original: dict | None
    ) -> None:
        """The Go decoder's type checks and unknown fields: a built-in kind's whole body
        (``typed_decoding``), a custom resource's metadata (``envelope``; its schema does the rest).

        A wrong JSON type is a 400 (422 for a patch's result, ``original``) and nothing is stored;
        unknown fields are dropped, with warnings or an error per ``fieldValidation``.
        """
        patched = original is not None
        if rt.is_custom:
            unknown = self._check_envelope(
                rt, original, patched, lambda: envelope.check_custom_metadata(body)
            )
            if opts is not None:
                opts.unknown_metadata = unknown  # reported with the schema's (``_custom_schema``)
            return
        model = builtin_model(rt)
        unknown = (
            self._check_envelope(rt, original, patched, lambda: decode_model(model, body)) if model else []
        )
        if unknown and opts is not None:
            opts.strict_decoding([f'unknown field "{u}"' for u in unknown])

    def _check_decodable(self, rt: ResourceType, api_version: str, kind: str) -> None:
        """A built-in endpoint decodes a body of another kind as kube-apiserver's codec does: an
        unregistered kind, or a registered one that does not convert to this kind, is a 400
        ``KIND in version "V" cannot be handled as a TARGET`` (``transformDecodeError``)."""
        version = api_version.rpartition("/")[2]
        known = [
            t
            for t in self.registry.all()
            if not t.is_custom and t.kind == kind and t.api_version == api_version
        ]
        if not known:
            why = (
                f'no kind "{kind}" is registered for version "{api_version}" in scheme '
                '"pkg/api/legacyscheme/scheme.go:30"'
            )
        elif kind != rt.kind or internal_group(known[0]) != internal_group(rt):
            why = f"converting ({version}.{kind}) to ({internal_group(rt)}.{rt.kind}): unknown conversion"
        else:
            return  # the same kind in another version: decodes, then fails the version check
        raise errors.bad_request(f'{kind} in version "{version}" cannot be handled as a {rt.kind}: {why}')
