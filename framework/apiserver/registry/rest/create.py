"""create: a new object, with generateName, namespace lifecycle and the create-time system fields."""

from __future__ import annotations

import builtins
import random
import uuid
from typing import Any

from framework.apiserver.encoding import timefmt
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import FieldError, StatusError
from framework.apiserver.registry.rest.managed import ManagedFields
from framework.apiserver.registry.rest.objects import object_key
from framework.apiserver.registry.rest.options import Result, WriteOptions
from framework.apiserver.registry.rest.write_checks import WriteChecks
from framework.apiserver.registry.strategy import ResourceType, normalize_times

GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class Create(WriteChecks, ManagedFields):
    """create, and the create half of an upsert (PUT that creates, apply)."""

    def create(self, rt: ResourceType, ns: str | None, body: Any, opts: WriteOptions | None = None) -> Result:
        opts = opts or WriteOptions()
        obj = self._type_meta(rt, body, opts)
        meta = obj["metadata"]
        if rt.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and ns and body_ns != ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            ns = ns or body_ns
            if not ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        return self._create(rt, ns, obj, opts)

    def _create(
        self,
        rt: ResourceType,
        ns: str | None,
        obj: dict,
        opts: WriteOptions,
        applied: builtins.list[dict] | None = None,
    ) -> Result:
        meta = obj["metadata"]
        if not opts.dry_run and _parsed_rv(meta.get("resourceVersion")):
            # The etcd3 store's check (ErrResourceVersionSetOnCreate): only an RV that parses as a
            # non-zero uint64; anything else is cleared on the way into storage, and a dry run never
            # reaches the store.
            raise StatusError(500, None, "resourceVersion should not be set on objects to be created")
        meta.pop("resourceVersion", None)
        name = meta.get("name", "")
        generate = meta.get("generateName", "")
        if not name and not generate:
            raise errors.invalid(
                rt.kind, rt.group, "", [errors.required("metadata.name", "name or generateName is required")]
            )
        if rt.namespaced:
            self._check_namespace_for_create(rt, ns or "", name or generate)
        self._check_crd_not_terminating(rt, name or generate)
        for k in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ):
            meta.pop(k, None)
        warnings: list[str] = list(opts.decode_warnings)
        errs: list[FieldError] = []
        if rt.is_custom:
            if rt.has_status:
                obj.pop("status", None)
            errs += self._custom_schema(rt, obj, opts, warnings)
        stored = self._to_stored(rt, obj)
        meta = stored["metadata"]
        normalize_times(rt, stored)
        if not name:
            meta["name"] = name = self._generated_name(rt, ns, generate)
        # FillObjectMetaSystemFields runs before the strategy's PrepareForCreate (a Job's generated
        # selector is its uid).
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = timefmt.now_time()
        if rt.normalize:
            rt.normalize(stored, None)
        if rt.allocate:
            errs += rt.allocate(self.storage.table(rt.storage).objects, object_key(ns, name), stored, None)
        if rt.tracks_generation:
            meta["generation"] = 1
        if self.admit_mutate is not None:  # built-in mutating admission plugins
            self.admit_mutate(rt, stored, None, opts)
        if opts.admission is not None:  # mutating admission webhooks (21-1)
            stored, errs = opts.admission.mutate(self, rt, stored, None, opts, errs, warnings)
        errs += self._validate(rt, stored, None, bool(generate))
        self._raise_invalid(rt, name, errs)
        self._set_managed_fields(rt, None, stored, opts, None, applied)
        if self.admit is not None:
            self.admit(rt, stored, None, opts)
            warnings += opts.admission_warnings
            opts.admission_warnings.clear()
        if opts.admission is not None:  # validating admission webhooks (21-1)
            opts.admission.validate(self, rt, stored, None, opts)
        obj_key = object_key(ns, name)
        if self.storage.get(rt.storage, obj_key) is not None:
            if generate and name.startswith(generate[:58]) and len(name) == len(generate[:58]) + 5:
                raise errors.generate_name_exhausted(rt.resource, rt.group, name)
            raise errors.already_exists(rt.resource, rt.group, name)
        if not opts.dry_run:
            self.storage.create(rt.storage, obj_key, stored)
        return Result(201, self.external(rt, stored), warnings)

    def _generated_name(self, rt: ResourceType, ns: str | None, prefix: str) -> str:
        prefix = prefix[:58]
        name = ""
        for _ in range(8):
            name = prefix + "".join(random.choices(GENERATE_ALPHABET, k=5))
            if self.storage.get(rt.storage, object_key(ns, name)) is None:
                return name
        return name  # collides: _create answers 409 with the generateName message (6-6)


def _parsed_rv(rv: object) -> int:
    """``strconv.ParseUint(rv, 10, 64)`` as the store's versioner reads an object's RV; 0 when it
    does not parse."""
    if not isinstance(rv, str) or not rv.isascii() or not rv.isdigit():
        return 0
    n = int(rv)
    return n if n < 2**64 else 0
