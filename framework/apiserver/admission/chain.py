"""The admission chain of a write (21-1..21-7): the REST operation run dry to the mutating admission point,
the mutating webhooks, a dry run to the validating point, the validating webhooks, then the commit,
all again if the stored object changed meanwhile (see the package's docstring)."""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from framework.apiserver.admission.client import WebhookClient
from framework.apiserver.admission.configuration import Webhook
from framework.apiserver.admission.matching import WebhookMatcher
from framework.apiserver.admission.review import Attributes, Captured, Retry, Review
from framework.apiserver.machinery import errors, patch
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.registry.rest.objects import deep_copy
from framework.apiserver.registry.rest.options import Result, WriteOptions
from framework.apiserver.registry.strategy import ResourceType
from framework.meta import jsoncodec

if TYPE_CHECKING:
    from framework.apiserver.server import APIServer

MAX_ATTEMPTS = 5


class Admission:
    """Calls the admission webhooks of ``server``'s configurations for requests of its HTTP layer."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.api = server.api
        self.storage = server.storage
        self.matcher = WebhookMatcher(server)
        self.client = WebhookClient(server)

    def _namespace_attr(self, rt: ResourceType, ns: str | None, name: str | None) -> str:
        if rt.namespaced:
            return ns or ""
        if rt.group == "" and rt.resource == "namespaces":
            return name or ""  # the namespace of a request for a Namespace is its name
        return ""

    async def create(self, rt: ResourceType, ns: str | None, body: Any, opts: WriteOptions) -> Result:
        meta = body.get("metadata") if isinstance(body, dict) else None
        request_name = meta.get("name") or "" if isinstance(meta, dict) else ""
        body_ns = (meta.get("namespace") if isinstance(meta, dict) else None) or None
        namespace = self._namespace_attr(rt, ns or body_ns, None)

        def call(o: WriteOptions) -> Result:
            b = deep_copy(body)
            review = o.admission
            if review is not None and review.pinned_name and isinstance(b.get("metadata"), dict):
                b["metadata"]["name"] = review.pinned_name  # the name generated in the first phase
            return self.api.create(rt, ns, b, o)

        return await self._write(rt, None, namespace, request_name, ("CREATE",), opts, call)

    async def update(
        self, rt: ResourceType, ns: str | None, name: str, body: Any, opts: WriteOptions, sub: str | None
    ) -> Result:
        return await self._write(
            rt,
            sub,
            self._namespace_attr(rt, ns, name),
            name,
            ("CREATE", "UPDATE"),
            opts,
            lambda o: self.api.update(rt, ns, name, deep_copy(body), o, sub),
        )

    async def patch(
        self,
        rt: ResourceType,
        ns: str | None,
        name: str,
        content_type: str,
        raw: bytes,
        opts: WriteOptions,
        sub: str | None,
    ) -> Result:
        return await self._write(
            rt,
            sub,
            self._namespace_attr(rt, ns, name),
            name,
            ("CREATE", "UPDATE"),
            opts,
            lambda o: self.api.patch(rt, ns, name, content_type, raw, o, sub),
        )

    async def delete(
        self,
        rt: ResourceType,
        ns: str | None,
        name: str,
        options: dict | None,
        dry_run: bool,
        user: Any,
    ) -> Result:
        dry_run = dry_run or bool((options or {}).get("dryRun"))
        namespace = self._namespace_attr(rt, ns, name)
        if not self.matcher.relevant(rt, None, ("DELETE",), namespace):
            return self.api.delete(rt, ns, name, options, dry_run)
        for _ in range(MAX_ATTEMPTS):

            def capture(old: dict) -> None:
                raise Captured(None, deep_copy(old))

            try:
                self.api.delete(rt, ns, name, options, True, admission=capture)
            except Captured as c:
                old = c.old
            else:  # nothing would change (already being deleted): no review
                return self.api.delete(rt, ns, name, options, dry_run)
            assert old is not None
            a = Attributes(rt, "", "DELETE", name, namespace, None, old, user, dry_run, options or {})
            warnings: list[str] = []
            await self._mutate(a, warnings)
            await self._validate(a, warnings)
            rv = old["metadata"].get("resourceVersion")

            def check(current: dict, rv: str | None = rv) -> None:
                if current["metadata"].get("resourceVersion") != rv:
                    raise Retry()

            try:
                res = self.api.delete(rt, ns, name, options, dry_run, admission=check)
            except Retry:
                continue
            res.warnings[:0] = warnings
            return res
        raise errors.conflict(rt.resource, rt.group, name, "the object kept changing during admission")

    async def delete_collection(
        self,
        rt: ResourceType,
        ns: str | None,
        options: dict | None,
        label_selector: str | None,
        field_selector: str | None,
        dry_run: bool,
        user: Any,
    ) -> Result:
        """``deletecollection`` reviewing each object as a DELETE (21-7); the first refusal ends it."""
        if not self.matcher.relevant(rt, None, ("DELETE",), ns or ("*" if rt.namespaced else "")):
            return self.api.delete_collection(rt, ns, options, label_selector, field_selector, dry_run)
        match = self.api.matcher(rt, ns, label_selector, field_selector)
        self.api._policy(options or {})
        objs = self.storage.table(rt.storage).objects
        targets = sorted(k for k, o in objs.items() if (not ns or k[0] == ns) and match(o))
        items = []
        warnings: list[str] = []
        for k in targets:
            before = self.storage.get(rt.storage, k)
            if before is None:
                continue
            try:
                res = await self.delete(
                    rt, k[0] or None, k[1], {**(options or {}), "preconditions": None}, dry_run, user
                )
            except StatusError as e:
                if e.code == 404:
                    continue
                raise
            warnings += res.warnings
            items.append(res.body if res.body.get("kind") != "Status" else self.api.external(rt, before))
        body = {
            "kind": rt.list_kind,
            "apiVersion": rt.api_version,
            "metadata": {"resourceVersion": str(self.storage.rv)},
            "items": items,
        }
        return Result(200, body, warnings)

    async def _write(
        self,
        rt: ResourceType,
        sub: str | None,
        namespace: str,
        request_name: str,
        operations: tuple[str, ...],
        opts: WriteOptions,
        call: Callable[[WriteOptions], Result],
    ) -> Result:
        # With a namespace still unknown (a POST naming it only in the body), "*" lets scope rules match.
        if not self.matcher.relevant(rt, sub, operations, namespace or ("*" if rt.namespaced else "")):
            return call(opts)
        for _ in range(MAX_ATTEMPTS):
            review = Review("mutate", request_name=request_name)
            warnings: list[str] = []
            try:
                call(replace(opts, dry_run=True, admission=review))
            except Captured as c:
                stored, old = c.stored, c.old
            else:
                return call(opts)  # the operation never reached admission (cannot happen today)
            assert stored is not None
            review.old_rv = old["metadata"].get("resourceVersion") if old is not None else None
            if old is None and not request_name:
                review.pinned_name = stored["metadata"].get("name", "")
            a = self._attributes(rt, sub, namespace, request_name, stored, old, opts)
            mutated = await self._mutate(a, warnings)
            if mutated is not None:
                review.mutated = mutated
            review.mode = "validate"
            try:
                call(replace(opts, dry_run=True, admission=review))
            except Captured as c:
                final = c.stored
            except Retry:
                continue
            else:
                return call(opts)
            review.final = final
            a = self._attributes(rt, sub, namespace, request_name, final, old, opts)
            await self._validate(a, warnings)
            review.mode = "commit"
            try:
                res = call(replace(opts, admission=review))
            except Retry:
                continue
            res.warnings[:0] = warnings
            return res
        raise errors.conflict(
            rt.resource, rt.group, request_name, "the object kept changing during admission"
        )

    def _attributes(
        self,
        rt: ResourceType,
        sub: str | None,
        namespace: str,
        request_name: str,
        stored: dict | None,
        old: dict | None,
        opts: WriteOptions,
    ) -> Attributes:
        operation = "CREATE" if old is None else "UPDATE"
        if rt.namespaced and stored is not None:
            namespace = stored["metadata"].get("namespace") or namespace
        options: dict[str, Any] = {}
        if opts.field_manager:
            options["fieldManager"] = opts.field_manager
        return Attributes(
            rt, sub or "", operation, request_name, namespace, stored, old, opts.user, opts.dry_run, options
        )

    async def _mutate(self, a: Attributes, warnings: list[str]) -> dict | None:
        """Run the mutating webhooks; returns the mutated object (stored form) or None if unchanged."""
        hooks = self.matcher.matching(a, True)
        if not hooks:
            return None
        obj = deep_copy(a.obj) if a.obj is not None else None
        changed = False
        last_change = -1
        invoked: list[int] = []
        for i, (hook, rt) in enumerate(hooks):
            new = await self._call_mutating(hook, rt, a, obj, warnings)
            invoked.append(i)
            if new is not None and new != obj:
                obj, changed, last_change = new, True, i
        if changed:  # reinvocationPolicy IfNeeded: once more for those called before the last change
            for i, (hook, rt) in enumerate(hooks):
                if hook.reinvoke and i < last_change:
                    new = await self._call_mutating(hook, rt, a, obj, warnings)
                    if new is not None:
                        obj = new
        return obj if changed else None

    async def _call_mutating(
        self, hook: Webhook, rt: ResourceType, a: Attributes, obj: dict | None, warnings: list[str]
    ) -> dict | None:
        attrs = replace(a, obj=obj)
        response = await self.client.invoke(hook, rt, attrs, warnings)
        if response is None or obj is None:
            return None
        raw_patch = response.get("patch")
        if not raw_patch:
            return None
        try:
            ops = jsoncodec.loads(base64.b64decode(raw_patch, validate=True))
        except (binascii.Error, ValueError, TypeError) as e:
            raise errors.internal_error(str(e)) from None
        current = self.client.versioned(rt, obj)
        try:
            patched = patch.json_patch(current, ops)
        except StatusError as e:
            raise errors.internal_error(e.message) from None
        if not isinstance(patched, dict):
            raise errors.internal_error("the patched object is not a JSON object")
        # Server-owned metadata (uid, name, ...) is put back when the result replaces the object.
        return self.api._to_stored(rt, patched)

    async def _validate(self, a: Attributes, warnings: list[str]) -> None:
        hooks = self.matcher.matching(a, False)
        if not hooks:
            return
        results = await asyncio.gather(
            *(self.client.invoke(hook, rt, a, warnings) for hook, rt in hooks), return_exceptions=True
        )
        for result in results:  # the first refusal in webhook order wins
            if isinstance(result, BaseException):
                raise result

    async def close(self) -> None:
        """Release the webhook client's connections (the server is stopping)."""
        await self.client.close()
