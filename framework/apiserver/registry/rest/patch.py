"""patch: JSON, merge and strategic merge patches (the algorithms live in ``apiserver/patch.py``), on
the object or its Scale; apply patches go to :class:`~.apply.Apply`."""

from __future__ import annotations

import orjson

from framework.apiserver.encoding import gojson
from framework.apiserver.endpoints import scale
from framework.apiserver.machinery import errors, patch
from framework.apiserver.registry.rest.apply import Apply
from framework.apiserver.registry.rest.objects import deep_copy, object_key
from framework.apiserver.registry.rest.options import Result, WriteOptions
from framework.apiserver.registry.strategy import ResourceType
from framework.meta import jsoncodec

PATCH_TYPES_BUILTIN = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
]
PATCH_TYPES_CUSTOM = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
]


class Patch(Apply):
    """The patch verb: a patch applied to the live object (or its Scale), stored as an update."""

    def patch(
        self,
        rt: ResourceType,
        ns: str | None,
        name: str,
        content_type: str,
        raw: bytes,
        opts: WriteOptions | None = None,
        subresource: str | None = None,
    ) -> Result:
        opts = opts or WriteOptions()
        accepted = PATCH_TYPES_CUSTOM if rt.smp is None else PATCH_TYPES_BUILTIN
        if content_type not in accepted:
            raise errors.unsupported_media_type(accepted)
        if content_type == "application/apply-patch+yaml":
            if subresource == "scale":  # documented: no server-side apply of a Scale
                raise errors.unsupported_media_type([t for t in accepted if t != content_type])
            return self._apply(rt, ns, name, raw, opts, subresource)
        try:
            doc = jsoncodec.loads(raw) if raw else None
        except orjson.JSONDecodeError as e:
            raise errors.bad_request(f"error decoding patch: {gojson.error_text(raw, e)}") from None
        old = self.storage.get(rt.storage, object_key(ns, name))
        if old is None:
            raise errors.not_found(rt.resource, rt.group, name)
        current = deep_copy(self.external(rt, old))
        if opts.field_validation != "Ignore" and isinstance(doc, dict | list):
            # Repeated keys of the patch itself (k8s.io/apiserver handlers/patch.go decodes it strictly
            # under Warn and Strict); a JSON patch's are named as its operations' ("json patch ...").
            duplicates = gojson.duplicate_fields(raw, doc)
            if content_type == "application/json-patch+json":
                found = _json_patch_strict_errors(doc, duplicates)
            else:
                found = [f'duplicate field "{p}"' for p in duplicates]
            if opts.field_validation == "Strict":  # refused with the result's unknown fields (422)
                opts.pending_strict = found
            else:
                opts.strict_decoding(found)
        if subresource == "scale":  # the patch applies to the Scale view
            current = scale.to_scale(rt, current)
        if content_type == "application/json-patch+json":
            if not isinstance(doc, list):
                raise errors.bad_request(
                    "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
                )
            patched = patch.json_patch(current, doc)
        elif content_type == "application/merge-patch+json":
            patched = patch.merge_patch(current, doc)
        else:
            if not isinstance(doc, dict):
                raise errors.bad_request(
                    "json: cannot unmarshal into Go value of type map[string]interface {}"
                )
            assert rt.smp is not None
            patched = patch.strategic_merge_patch(current, doc, {} if subresource == "scale" else rt.smp)
        if not isinstance(patched, dict):
            raise errors.bad_request("patched object is not a JSON object")
        if opts.field_validation == "Strict":  # quoted if it has unknown fields or the patch repeats keys
            opts.patched = deep_copy(patched)
        if subresource == "scale":
            self._decode_scale(rt, patched, opts, patched=True)
            return self._write_scale(rt, ns, name, patched, opts)
        obj = self._type_meta(rt, patched, opts, patched=True)  # a CR's unknown fields: in _update
        meta = obj["metadata"]
        if meta.get("name") != name:
            raise errors.bad_request(
                f"the name of the object ({meta.get('name', '')}) does not match the name on the URL ({name})"
            )
        if rt.namespaced:
            meta["namespace"] = ns
        return self._update(rt, ns, name, obj, old, opts, subresource)


_JSON_PATCH_OP_FIELDS = ("op", "path", "from", "value")


def _json_patch_strict_errors(doc: object, duplicates: list[str]) -> list[str]:
    """What sigs.k8s.io/json's strict decoder finds in a JSON patch read as a list of operations
    (``handlers/patch.go``'s ``jsonPatchOp``): keys an operation does not have (``json patch unknown
    field "[0].foo"``) and keys it repeats (``json patch duplicate field "[1].path"``), operation by
    operation (within one, the unknown keys first)."""
    if not isinstance(doc, list):
        return []
    by_op: dict[str, list[str]] = {}
    for path in duplicates:
        by_op.setdefault(path.partition("]")[0] + "]", []).append(path)
    found = []
    for i, op in enumerate(doc):
        if not isinstance(op, dict):
            continue
        unknown = [k for k in op if k not in _JSON_PATCH_OP_FIELDS]
        found += [f'json patch unknown field "[{i}].{k}"' for k in unknown]
        found += [
            f'json patch duplicate field "{p}"'
            for p in by_op.get(f"[{i}]", [])
            if p.partition(".")[2] not in unknown  # an unknown key is reported as unknown only
        ]
    return found
