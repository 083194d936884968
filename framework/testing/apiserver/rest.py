"""The REST operations (create, get, list, update, patch, delete, deletecollection) on storage.

Transport-independent: the HTTP handlers and the in-process controllers (namespace, garbage
collector, CRD) call the same methods, so the controllers' writes go through the same rules and reach
watchers like any client's (spec 0-4).
"""

from __future__ import annotations

import base64
import builtins
import functools
import random
import uuid
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from framework.meta.conditions import set_status_condition
from framework.meta.object import get_metadata

from . import catalog, decoding, errors, gobase64, gojson, patch, scale, timefmt, typed_decoding, validation
from . import managed_fields as mf
from .crd.defaulting import apply_defaults
from .crd.definition import storage_version, version_entry
from .crd.object_validation import validate_object
from .crd.pruning import prune
from .errors import FieldError, StatusError
from .kinds.strategy import ResourceType, normalize_times
from .registry import Registry
from .selectors import parse_field_selector, parse_label_selector
from .storage import ObjKey, Storage

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
# Server-owned metadata that an update cannot change (6-1..6-5).
SYSTEM_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")
GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
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


def deep_copy(obj: Any) -> Any:
    return orjson.loads(orjson.dumps(obj))


@dataclass
class WriteOptions:
    dry_run: bool = False
    field_validation: str = "Warn"
    field_manager: str | None = None
    user: Any = None  # the authenticated requester (auth.UserInfo); None for in-process controllers
    # The request's User-Agent ("" when absent); None for in-process writes. Names the field manager
    # of writes without ``fieldManager`` (9-3).
    user_agent: str | None = None
    force: bool = False  # apply only: take over conflicting fields (9-3 b)
    # Admission webhooks of this request (``admission.Review``): ``mutate`` runs before validation,
    # ``validate`` after it, just before persistence (21-1). None for in-process writes.
    admission: Any = None
    # Unknown fields the decoder dropped from this request's body, as warnings (fieldValidation=Warn).
    decode_warnings: list[str] = field(default_factory=list)


@dataclass
class Result:
    code: int
    body: dict
    warnings: list[str] = field(default_factory=list)


def _without_rv(obj: dict) -> dict:
    meta = dict(get_metadata(obj))
    meta.pop("resourceVersion", None)
    return {**obj, "metadata": meta}


def _key(ns: str | None, name: str) -> ObjKey:
    return (ns or "", name)


class API:
    """Kubernetes REST semantics over :class:`Storage` for the types in :class:`Registry`."""

    def __init__(self, storage: Storage, registry: Registry) -> None:
        self.storage = storage
        self.registry = registry
        # Built-in admission run after validation, before persistence: (type, new, old or None, options).
        self.admit: Callable[[ResourceType, dict, dict | None, WriteOptions], None] | None = None
        # Built-in admission of a DELETE (type, stored object), before anything changes; may raise.
        self.admit_delete: Callable[[ResourceType, dict], None] | None = None

    # -- codec -------------------------------------------------------------------------------------

    def external(self, rt: ResourceType, stored: dict) -> dict:
        """The stored object as this resource type's version shows it."""
        if rt.from_storage:
            return rt.from_storage(stored)
        if rt.is_custom and stored.get("apiVersion") != rt.api_version:
            return {**stored, "apiVersion": rt.api_version}
        return stored

    def _to_stored(self, rt: ResourceType, obj: dict) -> dict:
        if rt.to_storage:
            return rt.to_storage(obj)
        if rt.is_custom:
            assert rt.crd is not None
            obj["apiVersion"] = f"{rt.group}/{storage_version(rt.crd)}"
        return obj

    # -- helpers -----------------------------------------------------------------------------------

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
        _check_bytes_fields(rt, body)
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
            self._unknown_fields(unknown, opts, opts.decode_warnings)

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
        elif kind != rt.kind or _internal_group(known[0]) != _internal_group(rt):
            why = f"converting ({version}.{kind}) to ({_internal_group(rt)}.{rt.kind}): unknown conversion"
        else:
            return  # the same kind in another version: decodes, then fails the version check
        raise errors.bad_request(f'{kind} in version "{version}" cannot be handled as a {rt.kind}: {why}')

    def _check_namespace_for_create(self, rt: ResourceType, ns: str, name: str) -> None:
        """NamespaceLifecycle admission: 404 in a missing namespace, 403 in a terminating one."""
        nsobj = self.storage.get("namespaces", ("", ns))
        if nsobj is None:
            raise errors.not_found("namespaces", "", ns)
        if (
            nsobj["metadata"].get("deletionTimestamp")
            or nsobj.get("status", {}).get("phase") == "Terminating"
        ):
            raise errors.forbidden_error(
                rt.resource,
                rt.group,
                name,
                f"unable to create new content in namespace {ns} because it is being terminated",
                [
                    {
                        "reason": "NamespaceTerminating",
                        "message": f"namespace {ns} is being terminated",
                        "field": "metadata.namespace",
                    }
                ],
            )

    def _check_crd_not_terminating(self, rt: ResourceType, name: str) -> None:
        if rt.crd is None:
            return
        crd = self.storage.get(
            "customresourcedefinitions.apiextensions.k8s.io", ("", rt.crd["metadata"]["name"])
        )
        if crd is None or crd["metadata"].get("deletionTimestamp"):
            raise errors.forbidden_error(
                rt.resource,
                rt.group,
                name,
                "create not allowed while custom resource definition is terminating",
            )

    def _custom_schema(
        self, rt: ResourceType, obj: dict, opts: WriteOptions, warnings: list[str]
    ) -> list[FieldError]:
        """Default, prune and validate a custom resource against its version's schema (16-5..16-7)."""
        assert rt.crd is not None
        entry = version_entry(rt.crd, rt.version) or {}
        schema = (entry.get("schema") or {}).get("openAPIV3Schema")
        if not schema:
            return []
        apply_defaults(obj, schema)
        unknown = prune(obj, schema)
        if unknown:
            self._unknown_fields(unknown, opts, warnings)
        return validate_object(obj, schema)

    @staticmethod
    def _unknown_fields(unknown: list[str], opts: WriteOptions, warnings: list[str]) -> None:
        if opts.field_validation == "Strict":
            raise errors.bad_request(
                "strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown)
            )
        if opts.field_validation == "Warn":
            warnings.extend(f'unknown field "{u}"' for u in unknown)

    def _validate(self, rt: ResourceType, stored: dict, old: dict | None, generate: bool) -> list[FieldError]:
        errs = validation.validate_object_meta(
            stored["metadata"], namespaced=rt.namespaced, name_rule=rt.name_rule, generate_name_used=generate
        )
        if old is not None:
            errs += validation.validate_object_meta_update(stored["metadata"], old["metadata"])
        if rt.validate:
            errs += rt.validate(stored, old)
        return errs

    def _raise_invalid(self, rt: ResourceType, name: str, errs: list[FieldError]) -> None:
        if errs:
            raise errors.invalid(rt.kind, rt.group, name, errs)

    # -- reads -------------------------------------------------------------------------------------

    def get_stored(self, rt: ResourceType, ns: str | None, name: str) -> dict:
        obj = self.storage.get(rt.storage, _key(ns, name))
        if obj is None:
            raise errors.not_found(rt.resource, rt.group, name)
        return obj

    def get(self, rt: ResourceType, ns: str | None, name: str) -> dict:
        return self.external(rt, self.get_stored(rt, ns, name))

    def matcher(
        self, rt: ResourceType, ns: str | None, label_selector: str | None, field_selector: str | None
    ):
        """A predicate on stored objects for namespace + label + field selectors (14-1, 14-2)."""
        labels = parse_label_selector(label_selector)
        fields = parse_field_selector(field_selector, rt.selectable_fields(), rt.own_field_labels)

        def match(obj: dict) -> bool:
            meta = obj["metadata"]
            if ns and meta.get("namespace") != ns:
                return False
            if not labels.empty and not labels.matches(meta.get("labels")):
                return False
            return fields.empty or fields.matches(rt.field_set(obj))

        return match

    def list(
        self,
        rt: ResourceType,
        ns: str | None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = 0,
        continue_token: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> dict:
        """A list response with the resourceVersion and pagination rules of 14-3 and 14-4."""
        match = self.matcher(rt, ns, label_selector, field_selector)
        start_after: ObjKey | None = None
        current = self.storage.rv
        if continue_token:
            snap_rv, start_after = self._decode_continue(continue_token)
            try:
                objs = self.storage.snapshot(rt.storage, snap_rv)
            except ValueError:
                raise errors.expired(
                    "The provided continue parameter is too old to display a consistent list result. "
                    "You can start a new list without the continue parameter."
                ) from None
        else:
            exact = resource_version_match == "Exact" or (
                resource_version_match is None and resource_version not in (None, "", "0") and limit > 0
            )
            if exact and resource_version:
                snap_rv = int(resource_version)
                try:
                    objs = self.storage.snapshot(rt.storage, snap_rv)
                except ValueError:
                    raise errors.expired("The resourceVersion for the provided list is too old.") from None
            else:
                snap_rv = current
                objs = self.storage.table(rt.storage).objects
        # Pages cost O(limit + log n), not a sort of the whole table each: the table keeps its keys
        # sorted until one is added or removed; only a snapshot with later writes is sorted anew.
        table = self.storage.table(rt.storage)
        keys = table.sorted_keys() if objs is table.objects else sorted(objs)
        lo, hi = 0, len(keys)
        if ns:
            # One namespace's (ns, name) keys are contiguous; "\0" sorts before any longer namespace.
            lo, hi = bisect_left(keys, (ns, "")), bisect_left(keys, (ns + "\0", ""))
        if start_after is not None:
            lo = max(lo, bisect_right(keys, start_after))
        items: list[dict] = []
        remaining = 0
        more = False
        selective = bool(label_selector or field_selector)
        for i in range(lo, hi):
            obj = objs[keys[i]]
            if not match(obj):
                continue
            if limit and len(items) >= limit:
                more = True
                remaining = hi - i  # keys left in range, this one included (exact when not selective)
                break
            items.append(self.external(rt, obj))
        meta: dict[str, Any] = {"resourceVersion": str(snap_rv)}
        if more:
            meta["continue"] = self._encode_continue(
                snap_rv, (items[-1]["metadata"].get("namespace", ""), items[-1]["metadata"]["name"])
            )
            if not selective:
                meta["remainingItemCount"] = remaining
        return {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta, "items": items}

    @staticmethod
    def _encode_continue(rv: int, start: ObjKey) -> str:
        raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": list(start)})
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @staticmethod
    def _decode_continue(token: str) -> tuple[int, ObjKey]:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            data = orjson.loads(raw)
            rv = int(data["rv"])
            ns, name = data["start"]
            if rv <= 0 or not isinstance(ns, str) or not isinstance(name, str):
                raise ValueError
            return rv, (ns, name)
        except Exception:
            raise errors.bad_request(
                "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
            ) from None

    # -- create ------------------------------------------------------------------------------------

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
        if meta.get("resourceVersion"):
            raise StatusError(500, None, "resourceVersion should not be set on objects to be created")
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
            errs += rt.allocate(self.storage.table(rt.storage).objects, _key(ns, name), stored, None)
        if rt.tracks_generation:
            meta["generation"] = 1
        if opts.admission is not None:  # mutating admission webhooks (21-1)
            stored, errs = opts.admission.mutate(self, rt, stored, None, opts, errs, warnings)
        errs += self._validate(rt, stored, None, bool(generate))
        self._raise_invalid(rt, name, errs)
        self._set_managed_fields(rt, None, stored, opts, None, applied)
        if self.admit is not None:
            self.admit(rt, stored, None, opts)
        if opts.admission is not None:  # validating admission webhooks (21-1)
            opts.admission.validate(self, rt, stored, None, opts)
        obj_key = _key(ns, name)
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
            if self.storage.get(rt.storage, _key(ns, name)) is None:
                return name
        return name  # collides: _create answers 409 with the generateName message (6-6)

    # -- update / patch ------------------------------------------------------------------------------

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
        old = self.storage.get(rt.storage, _key(ns, name))
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
            doc = orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError as e:
            raise errors.bad_request(f"error decoding patch: {gojson.error_text(raw, e)}") from None
        old = self.storage.get(rt.storage, _key(ns, name))
        if old is None:
            raise errors.not_found(rt.resource, rt.group, name)
        current = deep_copy(self.external(rt, old))
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

    def _write_scale(
        self, rt: ResourceType, ns: str | None, name: str, body: Any, opts: WriteOptions
    ) -> Result:
        """A Scale written to ``/scale``: the object's replica count changes through its own update."""
        old = self.storage.get(rt.storage, _key(ns, name))
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
            if rt.resource == "namespaces" and not rt.group:
                obj.setdefault("spec", {})["finalizers"] = list(
                    old_ext.get("spec", {}).get("finalizers") or []
                )
        if rt.is_custom:
            errs += self._custom_schema(rt, obj, opts, warnings)
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
            errs += rt.allocate(self.storage.table(rt.storage).objects, _key(ns, name), stored, old)
        if opts.admission is not None:  # mutating admission webhooks (21-1)
            stored, errs = opts.admission.mutate(self, rt, stored, old, opts, errs, warnings)
            meta = stored["metadata"]
        errs += self._validate(rt, stored, old, False)
        self._raise_invalid(rt, name, errs)
        if self.admit is not None:
            self.admit(rt, stored, old, opts)
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
        obj_key = _key(ns, name)
        spec_finalizers = rt.resource == "namespaces" and (stored.get("spec") or {}).get("finalizers")
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and not spec_finalizers:
            # The last finalizer went away: the object is deleted instead of stored (11-5).
            if not opts.dry_run:
                self.storage.delete(rt.storage, obj_key)
            return Result(200, self.external(rt, stored), warnings)
        if not opts.dry_run:
            meta.pop("resourceVersion", None)
            stored = self.storage.update(rt.storage, obj_key, stored)
        return Result(200, self.external(rt, stored), warnings)

    # -- managed fields and server-side apply (6-9, §9) ----------------------------------------------

    def _ssa_schema(self, rt: ResourceType) -> mf.Schema:
        if rt.is_custom:
            assert rt.crd is not None
            entry = version_entry(rt.crd, rt.version) or {}
            return mf.custom_schema((entry.get("schema") or {}).get("openAPIV3Schema"))
        schema = rt.extra.get("ssa_schema")
        if schema is None:
            schema = rt.extra["ssa_schema"] = mf.builtin_schema(rt)
        return schema

    @staticmethod
    def _manager(rt: ResourceType, opts: WriteOptions, creating: bool) -> str:
        """``fieldManager``, else the User-Agent's program name (``managerOrUserAgent``); in-process
        writes are the API server's own (creates, CRD status) or the controller manager's."""
        if opts.field_manager:
            return opts.field_manager
        if opts.user_agent is not None:
            return mf.manager_from_user_agent(opts.user_agent)
        if creating or rt.resource == "customresourcedefinitions":
            return "kube-apiserver"
        return "kube-controller-manager"

    def _set_managed_fields(
        self,
        rt: ResourceType,
        old: dict | None,
        stored: dict,
        opts: WriteOptions,
        subresource: str | None,
        applied: builtins.list[dict] | None,
    ) -> None:
        """Set ``metadata.managedFields`` of an object about to be stored: the entries an apply computed,
        or the Update bookkeeping of a create/update/patch. Managed fields a client sends on the main
        resource replace the stored ones (``[{}]`` clears them); on subresources they are ignored."""
        meta = stored["metadata"]
        sent = meta.pop("managedFields", None)
        if applied is not None:
            if applied:
                meta["managedFields"] = applied
            return
        live = get_metadata(old).get("managedFields") or []
        old_ext = self.external(rt, old) if old is not None else None
        change = mf.diff(self._ssa_schema(rt), old_ext, self.external(rt, stored))
        base: mf.Managed | None = None
        if not subresource and sent and sent != live:
            if mf.is_reset(sent):
                base = {}
            else:
                try:
                    base = mf.decode(sent) or None
                except ValueError:
                    base = None
        if base is None:
            if change is None:
                if live:
                    meta["managedFields"] = live  # nothing to record: keep the stored entries as they are
                return
            try:
                base = mf.decode(live, stored=True)
            except ValueError:
                base = {}
        managed = mf.record(change, base, self._manager(rt, opts, old is None), rt.api_version, subresource)
        entries = mf.encode(managed)
        if entries:
            meta["managedFields"] = entries

    def _apply(
        self,
        rt: ResourceType,
        ns: str | None,
        name: str,
        raw: bytes,
        opts: WriteOptions,
        subresource: str | None,
    ) -> Result:
        """Server-side apply (§9): an upsert that merges the applied configuration into the live object
        with field ownership, conflicts, force and removal of fields the applier dropped."""
        manager = opts.field_manager
        if not manager:
            raise errors.options_invalid(
                "PatchOptions", [errors.required("fieldManager", "is required for apply patch")]
            )
        config = mf.load_apply_config(raw)
        api_version = config.get("apiVersion")
        if api_version != rt.api_version:
            raise errors.bad_request(
                "Incorrect version specified in apply patch. Specified patch version: "
                f"{api_version if api_version is not None else ''}, expected: {rt.api_version}"
            )
        kind = config.get("kind")
        if not kind:
            raise errors.bad_request(f"Object 'Kind' is missing in '{raw.decode(errors='replace').strip()}'")
        if kind != rt.kind:
            raise errors.bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
            )
        meta = config.get("metadata")
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            raise errors.bad_request(
                f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                "json: cannot unmarshal into Go struct field .metadata of type v1.ObjectMeta"
            )
        if meta.get("managedFields") is not None:
            raise errors.bad_request("metadata.managedFields must be nil")
        if meta.get("name", "") != name:
            raise errors.bad_request(
                f"the name of the object ({meta.get('name', '')}) does not match the name on the URL ({name})"
            )
        if rt.namespaced:
            if meta.get("namespace") and meta["namespace"] != ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
        else:
            meta.pop("namespace", None)
        old = self.storage.get(rt.storage, _key(ns, name))
        if old is None and subresource:
            raise errors.not_found(rt.resource, rt.group, name)
        schema = self._ssa_schema(rt)
        live = self.external(rt, old) if old is not None else None
        try:
            managed = mf.decode(get_metadata(live).get("managedFields") or [], stored=True)
        except ValueError as e:
            raise StatusError(500, None, f"failed to decode managed fields: {e}") from None
        ignore = mf.ignore_for(rt.has_status, subresource)

        def run(force: bool) -> tuple[dict, mf.Managed]:
            return mf.apply(
                schema, live, config, managed, manager, rt.api_version, subresource, force, ignore
            )

        try:
            try:
                merged, managed = run(opts.force)
            except mf.Conflicts as e:
                # lastAppliedManager: kubectl may take over what its client-side apply set (9-4).
                if manager != mf.KUBECTL_MANAGER:
                    raise mf.conflict_error(e.conflicts) from None
                allowed = mf.allowed_by_last_applied(live, schema)
                remaining = [c for c in e.conflicts if c.path not in allowed]
                if remaining:
                    raise mf.conflict_error(remaining) from None
                merged, managed = run(True)
        except mf.TypedError as e:
            raise StatusError(
                500,
                None,
                f"failed to create typed patch object ({ns + '/' if ns else ''}{name}; "
                f"{rt.group}/{rt.version}, Kind={rt.kind}): {e}",
            ) from None
        if manager == mf.KUBECTL_MANAGER:
            # lastAppliedUpdater: keep a client-side apply annotation in step with kubectl's applies.
            annotations = get_metadata(merged).get("annotations")
            if isinstance(annotations, dict) and mf.LAST_APPLIED in annotations:
                annotations[mf.LAST_APPLIED] = mf.last_applied_value(config)
        entries = mf.encode(managed)
        obj = self._type_meta(rt, merged, opts, patched=True)
        if rt.namespaced:
            obj["metadata"]["namespace"] = ns
        if old is None:
            return self._create(rt, ns, obj, opts, applied=entries)  # upsert (9-2)
        return self._update(rt, ns, name, obj, old, opts, subresource, applied=entries)

    # -- delete ------------------------------------------------------------------------------------

    def delete(
        self,
        rt: ResourceType,
        ns: str | None,
        name: str,
        options: dict | None = None,
        dry_run: bool = False,
        admission: Callable[[dict], None] | None = None,
    ) -> Result:
        """``admission(old)`` (admission webhooks, 21-7) runs once the deletion is certain to change
        something, before anything is written."""
        options = options or {}
        dry_run = dry_run or bool(options.get("dryRun"))  # DeleteOptions.dryRun, wherever it came from
        policy = self._policy(options)  # invalid options are 422 before the object is looked up
        old = self.storage.get(rt.storage, _key(ns, name))
        if old is None:
            raise errors.not_found(rt.resource, rt.group, name)
        self._check_preconditions(rt, name, old, options.get("preconditions"))
        if self.admit_delete is not None:
            self.admit_delete(rt, old)
        meta = old["metadata"]
        is_namespace = rt.resource == "namespaces" and not rt.group
        if is_namespace and name in PROTECTED_NAMESPACES:
            raise errors.forbidden_error("namespaces", "", name, "this namespace may not be deleted")
        if meta.get("deletionTimestamp"):
            if is_namespace and (old.get("spec") or {}).get("finalizers"):
                raise errors.conflict(
                    "namespaces",
                    "",
                    name,
                    "The system is ensuring all content is removed from this namespace.  Upon completion, "
                    "this namespace will automatically be purged by the system.",
                )
            if admission is not None:
                admission(old)
            if is_namespace and not meta.get("finalizers"):
                if not dry_run:
                    self.storage.delete(rt.storage, _key(ns, name))
                return Result(200, self.external(rt, old))
            return Result(200, self.external(rt, old))  # 11-4
        if admission is not None:
            admission(old)
        fins = list(meta.get("finalizers") or [])
        if rt.supports_gc:
            if policy == "Orphan":
                fins = [f for f in fins if f != "foregroundDeletion"]
                if "orphan" not in fins:
                    fins.append("orphan")
            elif policy == "Foreground":
                fins = [f for f in fins if f != "orphan"]
                if "foregroundDeletion" not in fins:
                    fins.append("foregroundDeletion")
            elif policy == "Background":
                fins = [f for f in fins if f not in ("orphan", "foregroundDeletion")]
        is_crd = rt.resource == "customresourcedefinitions"
        if is_crd and CRD_CLEANUP_FINALIZER not in fins:
            fins.append(CRD_CLEANUP_FINALIZER)
        if not fins and not is_namespace:
            last = old
            if not dry_run:
                last = self.storage.delete(rt.storage, _key(ns, name))
            if rt.returns_deleted_object:
                return Result(200, self.external(rt, last))
            details = {"name": name, "kind": rt.resource, "uid": meta["uid"]}
            if rt.group:
                details["group"] = rt.group
            return Result(
                200,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Success",
                    "details": details,
                },
            )
        new = deep_copy(old)
        nmeta = new["metadata"]
        nmeta["deletionTimestamp"] = timefmt.now_time()
        if fins:
            nmeta["finalizers"] = fins
        if is_namespace:
            new.setdefault("status", {})["phase"] = "Terminating"
        else:
            nmeta["deletionGracePeriodSeconds"] = 0
        if rt.tracks_generation and nmeta.get("generation", 0) > 0:
            nmeta["generation"] += 1
        if is_crd:
            _set_condition(
                new,
                "Terminating",
                "True",
                "InstanceDeletionPending",
                "CustomResourceDefinition marked for deletion; instance deletion pending",
            )
        nmeta.pop("resourceVersion", None)
        if not dry_run:
            new = self.storage.update(rt.storage, _key(ns, name), new)
        code = 202 if options.get("orphanDependents") is False else 200
        return Result(code, self.external(rt, new))

    def _check_preconditions(self, rt: ResourceType, name: str, old: dict, pre: Any) -> None:
        if not pre:
            return
        meta = old["metadata"]
        if pre.get("uid") and pre["uid"] != meta["uid"]:
            raise StatusError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {rt.kind} "{name}": the UID in the precondition '
                f"({pre['uid']}) does not match the UID in record ({meta['uid']}). The object might have "
                "been deleted and then recreated",
                {"name": name, "group": rt.group, "kind": rt.kind}
                if rt.group
                else {"name": name, "kind": rt.kind},
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta["resourceVersion"]:
            raise StatusError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {rt.kind} "{name}": the ResourceVersion in the '
                f"precondition ({pre['resourceVersion']}) does not match the ResourceVersion in record "
                f"({meta['resourceVersion']}). The object might have been modified",
                {"name": name, "group": rt.group, "kind": rt.kind}
                if rt.group
                else {"name": name, "kind": rt.kind},
            )

    @staticmethod
    def _policy(options: dict) -> str | None:
        policy = options.get("propagationPolicy")
        orphan = options.get("orphanDependents")
        errs = []
        if policy is not None and orphan is not None:
            errs.append(
                errors.invalid_value(
                    "propagationPolicy", policy, "orphanDependents and deletionPropagation cannot be both set"
                )
            )
        if policy is not None and policy not in ("Orphan", "Background", "Foreground"):
            errs.append(
                errors.not_supported(
                    "propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"]
                )
            )
        grace = options.get("gracePeriodSeconds")
        if grace is not None and not isinstance(grace, int):
            errs.append(errors.invalid_value("gracePeriodSeconds", grace, "must be an integer"))
        dry = options.get("dryRun")
        if dry and any(d != "All" for d in dry):
            errs.append(errors.not_supported("dryRun", dry, ["All"]))
        if errs:
            raise errors.options_invalid("DeleteOptions", errs)
        if orphan is True:
            return "Orphan"
        if orphan is False:
            return "Background"
        return policy

    def delete_collection(
        self,
        rt: ResourceType,
        ns: str | None,
        options: dict | None,
        label_selector: str | None,
        field_selector: str | None,
        dry_run: bool = False,
    ) -> Result:
        match = self.matcher(rt, ns, label_selector, field_selector)
        self._policy(options or {})  # bad options fail the request before anything is deleted
        dry_run = dry_run or bool((options or {}).get("dryRun"))
        objs = self.storage.table(rt.storage).objects
        targets = sorted(k for k, o in objs.items() if (not ns or k[0] == ns) and match(o))
        if self.admit_delete is not None:
            for k in targets:  # built-in admission refuses the whole collection before any delete
                self.admit_delete(rt, objs[k])
        items = []
        for k in targets:
            before = objs[k]
            try:
                res = self.delete(rt, k[0] or None, k[1], {**(options or {}), "preconditions": None}, dry_run)
            except StatusError as e:
                if e.code == 404:
                    continue
                raise
            items.append(res.body if res.body.get("kind") != "Status" else self.external(rt, before))
        return Result(
            200,
            {
                "kind": rt.list_kind,
                "apiVersion": rt.api_version,
                "metadata": {"resourceVersion": str(self.storage.rv)},
                "items": items,
            },
        )


def _internal_group(rt: ResourceType) -> str:
    """The Go package of the kind's internal type (``core.ConfigMap``, ``apps.Deployment``, ...);
    events.k8s.io Events are ``core.Event`` inside."""
    if not rt.group or rt.group == "events.k8s.io":
        return "core"
    return rt.group.split(".")[0]


# ``map[string][]byte`` fields: the JSON decoder base64-decodes them, so bad data fails decoding (400).
_BYTES_FIELDS = {("", "Secret"): "data", ("", "ConfigMap"): "binaryData"}


def _check_bytes_fields(rt: ResourceType, body: dict) -> None:
    key = _BYTES_FIELDS.get((rt.group, rt.kind))
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


def _set_condition(obj: dict, ctype: str, status: str, reason: str, message: str) -> bool:
    """Set a status condition of ``obj`` (``meta.SetStatusCondition``). True if changed."""
    conds = obj.setdefault("status", {}).setdefault("conditions", [])
    condition = {"type": ctype, "status": status, "reason": reason, "message": message}
    return set_status_condition(conds, condition)


set_condition = _set_condition


@functools.cache
def _models() -> dict[tuple[str, str, str], str]:
    return {(e.group, e.version, e.resource): e.model for e in catalog.builtin_resources() if e.model}


def decode_builtin(
    rt: ResourceType, body: dict, *, model: str | None = None, kind: str | None = None, patched: bool = False
) -> list[str]:
    """Decode ``body`` as the Go type of built-in ``rt`` (or of ``model``, a subresource's kind): the
    unknown fields' paths (removed from ``body``). A wrong JSON type is a 400, or a 422 for the result of
    a patch; kinds the client has no model for are not checked."""
    model = model or builtin_model(rt)
    if model is None:
        return []
    try:
        return typed_decoding.decode(model, body)
    except typed_decoding.DecodeError as e:
        kind = kind or rt.kind
        message = f'{kind} in version "{rt.version}" cannot be handled as a {kind}: {e}'
        raise StatusError(422, "Invalid", message) if patched else errors.bad_request(message) from None


def builtin_model(rt: ResourceType) -> str | None:
    """The client model class of a built-in resource (None when the client has none)."""
    return _models().get((rt.group, rt.version, rt.resource))
