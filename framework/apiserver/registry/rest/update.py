"""update: replacing an object (PUT), its ``/status``, ``/finalize`` and ``/scale`` subresources, and
the stored-object rules every update obeys (system metadata, generation, no-op, last finalizer)."""

from __future__ import annotations

import builtins
from dataclasses import replace
from typing import Any

from framework.apiserver.endpoints import scale
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import FieldError, StatusError
from framework.apiserver.registry.rest.create import Create
from framework.apiserver.registry.rest.objects import deep_copy, object_key
from framework.apiserver.registry.rest.options import Result, WriteOptions
from framework.apiserver.registry.strategy import ResourceType, normalize_times

# Server-owned metadata that an update cannot change (6-1..6-5).
SYSTEM_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")


class Update(Create):
    """update and the shared ``_update`` of update, patch and apply."""

    def update(
        self,
        rt: ResourceType,
        ns: str | None,
        name: str,
        body: Any,
        opts: WriteOptions | None = None,
        subresource: str | None = None,
    ) -> Result:
        opts = opts or WriteOptions()
        if subresource == "scale":
            self._decode_scale(rt, body, opts, patched=False)
            return self._write_scale(rt, ns, name, body, opts)
        obj = self._type_meta(rt, body, opts)
        meta = obj["metadata"]
        if meta.get("name", "") != name:
            raise errors.bad_request(
                f"the name of the object ({meta.get('name', '')}) does not match the name on the URL ({name})"
            )
        if rt.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and body_ns != ns:
                raise errors.bad_request(
                    f"the namespace of the object ({body_ns}) does not match the namespace on the request "
                    f"({ns})"
                )
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        old = self.storage.get(rt.storage, object_key(ns, name))
        if old is None:
            if subresource or not rt.put_creates or meta.get("resourceVersion"):
                raise errors.not_found(rt.resource, rt.group, name)
            return self._create(rt, ns, obj, opts)
        rv = meta.get("resourceVersion")
        if not rv and rt.put_requires_rv:
            raise StatusError(
                422,
                "Invalid",
                f'{rt.qualified} "{name}" is invalid: metadata.resourceVersion: Invalid value: 0x0: '
                "must be specified for an update",
                {
                    "name": name,
                    "group": rt.group,
                    "kind": rt.resource,
                    "causes": [
                        {
                            "reason": "FieldValueInvalid",
                            "message": "Invalid value: 0x0: must be specified for an update",
                            "field": "metadata.resourceVersion",
                        }
                    ],
                },
            )
        return self._update(rt, ns, name, obj, old, opts, subresource)

    def _write_scale(
        self, rt: ResourceType, ns: str | None, name: str, body: Any, opts: WriteOptions
    ) -> Result:
        """A Scale written to ``/scale``: the object's replica count changes through its own update."""
        old = self.storage.get(rt.storage, object_key(ns, name))
        if old is None:
            raise errors.not_found(rt.resource, rt.group, name)
        wanted = scale.apply_scale(rt, name, deep_copy(self.external(rt, old)), body)
        res = self._update(rt, ns, name, wanted, old, opts, "scale")
        return Result(res.code, scale.to_scale(rt, res.body), res.warnings)

    def _update(
        self,
        rt: ResourceType,
        ns: str | None,
        name: str,
        obj: dict,
        old: dict,
        opts: WriteOptions,
        subresource: str | None,
        applied: builtins.list[dict] | None = None,
    ) -> Result:
        meta = obj["metadata"]
        rv = meta.get("resourceVersion")
        old_meta = old["metadata"]
        if rv and rv != old_meta["resourceVersion"]:
            raise errors.conflict(rt.resource, rt.group, name)
        uid = meta.get("uid")
        if uid and uid != old_meta["uid"]:
            raise errors.conflict(
                rt.resource,
                rt.group,
                name,
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {old_meta['uid']}",
            )
        old_ext = self.external(rt, old)
        warnings: list[str] = list(opts.decode_warnings)
        errs: list[FieldError] = []
        if subresource == "status":
            new = deep_copy(old_ext)
            if "status" in obj:
                new["status"] = obj["status"]
            else:
                new.pop("status", None)
            obj = new
        elif subresource == "finalize":
            new = deep_copy(old_ext)
            spec = new.setdefault("spec", {})
            spec["finalizers"] = (obj.get("spec") or {}).get("finalizers") or []
            if not spec["finalizers"]:
                del spec["finalizers"]  # omitempty: no finalizers left is no key, as for a create
            obj = new
        else:
            if rt.has_status:
                if "status" in old_ext:
                    obj["status"] = deep_copy(old_ext["status"])
                else:
                    obj.pop("status", None)
            if rt.spec_finalizers:  # only /finalize changes them
                obj.setdefault("spec", {})["finalizers"] = list(
                    old_ext.get("spec", {}).get("finalizers") or []
                )
        if rt.is_custom:
            errs += self._custom_schema(rt, obj, opts, warnings, old_ext)
        stored = self._to_stored(rt, obj)
        meta = stored["metadata"]
        normalize_times(rt, stored)
        for k in SYSTEM_META:
            if k in old_meta:
                meta[k] = old_meta[k]
            elif k == "deletionTimestamp" and meta.get(k):
                errs.append(errors.invalid_value("metadata.deletionTimestamp", meta[k], "field is immutable"))
                meta.pop(k)
            else:
                meta.pop(k, None)
        meta["resourceVersion"] = old_meta["resourceVersion"]
        if rt.normalize:
            rt.normalize(stored, old)
        if rt.allocate:
            errs += rt.allocate(self.storage.table(rt.storage).objects, object_key(ns, name), stored, old)
        opts = replace(opts, subresource=subresource or "")  # the same warning list, shared
        if self.admit_mutate is not None:  # built-in mutating admission plugins
            self.admit_mutate(rt, stored, old, opts)
        if opts.admission is not None:  # mutating admission webhooks (21-1)
            stored, errs = opts.admission.mutate(self, rt, stored, old, opts, errs, warnings)
            meta = stored["metadata"]
        errs += self._validate(rt, stored, old, False)
        self._raise_invalid(rt, name, errs)
        if self.admit is not None:
            self.admit(rt, stored, old, opts)
            warnings += opts.admission_warnings
            opts.admission_warnings.clear()
        if opts.admission is not None:  # validating admission webhooks (21-1)
            opts.admission.validate(self, rt, stored, old, opts)
        if rt.tracks_generation and subresource != "status":
            keys = rt.generation_keys
            if keys is None:
                skip = {"metadata", "status"} if rt.has_status else {"metadata"}
                keys = tuple(k for k in {**stored, **old} if k not in skip)
            if any(stored.get(k) != old.get(k) for k in keys):
                meta["generation"] = old_meta.get("generation", 0) + 1
        self._set_managed_fields(rt, old, stored, opts, subresource, applied)
        if stored == old:
            return Result(200, old_ext, warnings)  # no-op: no RV bump, no event (6-3)
        obj_key = object_key(ns, name)
        spec_finalizers = rt.spec_finalizers and (stored.get("spec") or {}).get("finalizers")
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and not spec_finalizers:
            # The last finalizer went away: the object is deleted instead of stored (11-5).
            if not opts.dry_run:
                self.storage.delete(rt.storage, obj_key)
            return Result(200, self.external(rt, stored), warnings)
        if not opts.dry_run:
            meta.pop("resourceVersion", None)
            stored = self.storage.update(rt.storage, obj_key, stored)
        return Result(200, self.external(rt, stored), warnings)
