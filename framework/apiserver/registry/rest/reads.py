"""The reads: get, and list with selectors, resourceVersion semantics and pagination (14-1..14-4)."""

from __future__ import annotations

import base64
from bisect import bisect_left, bisect_right
from typing import Any

import orjson

from framework.apiserver.machinery import errors
from framework.apiserver.machinery.selectors import parse_field_selector, parse_label_selector
from framework.apiserver.registry.rest.base import RESTBase
from framework.apiserver.registry.rest.objects import object_key
from framework.apiserver.registry.strategy import ResourceType
from framework.apiserver.storage.store import ObjKey


class Reads(RESTBase):
    """The get and list verbs on storage."""

    def get_stored(self, rt: ResourceType, ns: str | None, name: str) -> dict:
        obj = self.storage.get(rt.storage, object_key(ns, name))
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
