"""Server-side apply: an upsert merging the applied configuration with field ownership (as the
``applyPatcher`` of k8s.io/apiserver ``pkg/endpoints/handlers/patch.go``)."""

from __future__ import annotations

from framework.apiserver import managed_fields as mf
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.registry.rest.objects import object_key
from framework.apiserver.registry.rest.options import Result, WriteOptions
from framework.apiserver.registry.rest.update import Update
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.object import get_metadata


class Apply(Update):
    """Server-side apply: the ``application/apply-patch+yaml`` patch type, an upsert."""

    def _apply(
        self,
        rt: ResourceType,
        ns: str | None,
        name: str,
        raw: bytes,
        opts: WriteOptions,
        subresource: str | None,
    ) -> Result:
        """Server-side apply: an upsert that merges the applied configuration into the live object
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
        old = self.storage.get(rt.storage, object_key(ns, name))
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
        self._apply_duplicates(opts)
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

    def _apply_duplicates(self, opts: WriteOptions) -> None:
        """The keys the apply body repeats, checked once the apply has succeeded (the apply patcher of
        ``handlers/patch.go`` decodes it again with ``yaml.UnmarshalStrict``): a 400 under Strict, one
        warning each under Warn."""
        found = opts.apply_duplicates
        if not found or opts.field_validation == "Ignore":
            return
        if opts.field_validation == "Strict":
            raise errors.bad_request(
                "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  "
                + "\n  ".join(found)
            )
        opts.decode_warnings.extend(found)
