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
            prefix = "json patch " if content_type == "application/json-patch+json" else ""
            opts.strict_decoding(
                [f'{prefix}duplicate field "{p}"' for p in gojson.duplicate_fields(raw, doc)]
            )
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
        if subresource == "scale":
            self._decode_scale(rt, patched, opts, patched=True)
            return self._write_scale(rt, ns, name, patched, opts)
        obj = self._type_meta(rt, patched, opts, patched=True)
        meta = obj["metadata"]
        if meta.get("name") != name:
            raise errors.bad_request(
                f"the name of the object ({meta.get('name', '')}) does not match the name on the URL ({name})"
            )
        if rt.namespaced:
            meta["namespace"] = ns
        return self._update(rt, ns, name, obj, old, opts, subresource)
