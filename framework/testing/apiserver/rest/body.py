"""A write's body as kube-apiserver's decoder reads it: type meta, the metadata kept, Go's nulls,
typed decoding of built-in kinds and unknown fields per ``fieldValidation``."""

from __future__ import annotations

from typing import Any

from .. import decoding, errors
from ..kinds.strategy import ResourceType
from .base import RESTBase
from .options import WriteOptions
from .typed import check_bytes_fields, decode_builtin, internal_group

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
        if not isinstance(body, dict):
            raise errors.bad_request(
                f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                "json: cannot unmarshal into Go value of type " + rt.kind
            )
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
        meta = body.get("metadata")
        if meta is None:
            meta = body["metadata"] = {}
        if not isinstance(meta, dict):
            raise errors.bad_request(
                f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                "json: cannot unmarshal into Go struct field .metadata of type v1.ObjectMeta"
            )
        # A null is decoded as Go would (mostly: like an absent field) before anything reads the body.
        decoding.decode(rt.null_shape, body, custom=rt.is_custom)
        self._decode_typed(rt, body, opts, patched)
        check_bytes_fields(rt, body)
        for k in list(meta):
            if k not in META_KEYS or meta[k] in (None, {}, [], ""):
                # Unknown keys are dropped (6-10); empty ones are omitted like Go's omitempty.
                del meta[k]
        return body

    def _decode_typed(self, rt: ResourceType, body: dict, opts: WriteOptions | None, patched: bool) -> None:
        """The Go decoder's type checks and unknown fields for a built-in kind (``typed_decoding``).

        A wrong JSON type is a 400 (422 for a patch, whose result failed to decode) and nothing is
        stored; unknown fields are dropped, with warnings or an error per ``fieldValidation``.
        """
        if rt.is_custom:
            return
        unknown = decode_builtin(rt, body, patched=patched)
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
