"""Managed fields of ordinary writes (6-9): the Update entries a create, update or patch records."""

from __future__ import annotations

import builtins

from framework.apiserver import managed_fields as mf
from framework.apiserver.crd.definition import version_entry
from framework.apiserver.registry.rest.base import RESTBase
from framework.apiserver.registry.rest.options import WriteOptions
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.object import get_metadata


class ManagedFields(RESTBase):
    """Field ownership bookkeeping of writes."""

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
        return "kube-apiserver" if creating else rt.in_process_manager

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
