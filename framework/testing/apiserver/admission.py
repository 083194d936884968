"""Admission webhooks (spec §21): the server calls Mutating/ValidatingWebhookConfigurations like
kube-apiserver's ``MutatingAdmissionWebhook`` and ``ValidatingAdmissionWebhook`` plugins.

How a write is admitted
-----------------------
The REST layer (``rest.py``) is synchronous and runs on the server's event loop; webhooks are remote
HTTPS calls and must not block that loop (a webhook may well call back into this server). So the HTTP
layer hands create/update/patch/delete/deletecollection to :class:`Admission`, which runs the
synchronous REST operation up to three times, awaiting the webhooks in between:

1. *mutate*: the operation runs (dry) until just before built-in validation; there the object is
   captured and the matching mutating webhooks are called in order (configuration name, then list
   order; ``reinvocationPolicy: IfNeeded`` webhooks once more if a later one changed the object). Their
   JSONPatches are applied in turn.
2. *validate*: the operation runs (dry) again with the mutated object substituted before validation, so
   built-in validation (and the schema of a custom resource) judges the mutated object; the object as it
   would be persisted is captured and the matching validating webhooks are called (concurrently).
3. *commit*: the operation runs for real with the same substitution. If the stored object changed while
   the webhooks were called (another writer got in between), everything starts over, as kube-apiserver's
   optimistic update loop would (at most :data:`MAX_ATTEMPTS` times, then 409).

When no webhook's rules can match the request, the operation simply runs once (no overhead). DELETE
(21-7) reviews the stored object as ``oldObject`` at the point where the deletion would change
something — a Namespace is reviewed before it is marked Terminating; ``deletecollection`` reviews each
object. Writes of the in-process controllers (namespace controller, garbage collector) do not go through
webhooks.

Calls
-----
``clientConfig.url`` is called as given; ``clientConfig.service`` is resolved through
``APIServer.webhook_service_map[(namespace, name, port)] = "host:port"`` (there is no cluster network),
while TLS still verifies the name ``NAME.NAMESPACE.svc`` against ``caBundle`` (system roots without
one). Requests and responses follow 21-4/21-5 (AdmissionReview ``v1`` or ``v1beta1``, whichever the
webhook lists first); failures and denials produce kube-apiserver's Status messages (21-5, 21-6).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ssl
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson
import structlog

from framework.meta.labels import Selector, label_selector_as_selector

from . import decoding, errors, patch
from .errors import FieldError, StatusError
from .resources import ResourceType, normalize_times
from .rest import Result, WriteOptions, deep_copy

if TYPE_CHECKING:
    from .rest import API
    from .server import APIServer

log = structlog.get_logger("framework.testing.apiserver")

GROUP = "admissionregistration.k8s.io"
VALIDATING = f"validatingwebhookconfigurations.{GROUP}"
MUTATING = f"mutatingwebhookconfigurations.{GROUP}"
V1 = "admission.k8s.io/v1"
V1BETA1 = "admission.k8s.io/v1beta1"
MAX_ATTEMPTS = 5
# Server-owned metadata a mutating webhook cannot change (the REST operation's values are kept).
_SYSTEM_META = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
# Fields a CREATE's mutating webhooks do not see yet (kube-apiserver sets them after mutation).
_UNSET_ON_CREATE = ("uid", "creationTimestamp", "generation")
# k8s.io/apimachinery NewGenericServerResponse messages for a webhook's non-2xx answer without Status.
_GENERIC = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    403: "the server does not allow access to the requested resource",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    409: "the server reported a conflict",
    415: "the server responded with the status code 415 but did not return more information",
    422: "the server rejected our request due to an error in our request",
    429: "the server has received too many requests and has asked us to try again later",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing "
    "the request",
}


class _Captured(Exception):
    """Stops a dry phase of a REST operation at an admission point, carrying the object there."""

    def __init__(self, stored: dict | None, old: dict | None) -> None:
        super().__init__("captured")
        self.stored = stored
        self.old = old


class _Retry(Exception):
    """The stored object changed while webhooks were called: run the request again."""


class CallError(Exception):
    """A failed webhook call (kube-apiserver's ``ErrCallingWebhook``): failurePolicy decides."""


# --- configurations ------------------------------------------------------------------------------------


@dataclass
class Webhook:
    """One ``webhooks[]`` entry of a configuration, compiled for matching and calling."""

    configuration: str
    name: str
    mutating: bool
    rules: list[dict]
    namespace_selector: Selector | None  # None: the selector does not parse
    object_selector: Selector | None
    failure_policy: str
    match_policy: str
    timeout: float
    client_config: dict
    review_version: str
    reinvoke: bool


def _compile(config: dict, mutating: bool) -> list[Webhook]:
    out = []
    for hook in config.get("webhooks") or []:
        versions = [v for v in hook.get("admissionReviewVersions") or [] if v in ("v1", "v1beta1")]
        out.append(
            Webhook(
                configuration=config["metadata"]["name"],
                name=hook.get("name", ""),
                mutating=mutating,
                rules=list(hook.get("rules") or []),
                namespace_selector=_selector(hook.get("namespaceSelector")),
                object_selector=_selector(hook.get("objectSelector")),
                failure_policy=hook.get("failurePolicy") or "Fail",
                match_policy=hook.get("matchPolicy") or "Equivalent",
                timeout=float(hook.get("timeoutSeconds") or 10),
                client_config=dict(hook.get("clientConfig") or {}),
                review_version=V1BETA1 if versions[:1] == ["v1beta1"] else V1,
                reinvoke=mutating and hook.get("reinvocationPolicy") == "IfNeeded",
            )
        )
    return out


def _selector(raw: Any) -> Selector | None:
    try:
        # Unset is defaulted to {} (everything) before a configuration is stored.
        return label_selector_as_selector({} if raw is None else raw)
    except (ValueError, AttributeError, TypeError):
        return None


def _rule_matches(rule: dict, operation: str, rt: ResourceType, sub: str, namespace: str) -> bool:
    """``rules.Matcher.Matches``: scope, operation, group, version and resource(/subresource)."""
    is_namespace = rt.group == "" and rt.resource == "namespaces"
    scope = rule.get("scope") or "*"
    if scope == "Namespaced" and (is_namespace or not namespace):
        return False
    if scope == "Cluster" and not (is_namespace or not namespace):
        return False
    ops = rule.get("operations") or []
    if "*" not in ops and operation not in ops:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and rt.group not in groups:
        return False
    versions = rule.get("apiVersions") or []
    if "*" not in versions and rt.version not in versions:
        return False
    for entry in rule.get("resources") or []:
        res, _, want_sub = entry.partition("/")
        if (res == "*" or res == rt.resource) and (want_sub == "*" or want_sub == sub):
            return True
    return False


# --- one request -------------------------------------------------------------------------------------


@dataclass
class Attributes:
    """What is being admitted (``admission.Attributes``); objects in stored form."""

    rt: ResourceType
    subresource: str
    operation: str
    name: str
    namespace: str
    obj: dict | None
    old: dict | None
    user: Any
    dry_run: bool
    options: dict


@dataclass
class Review:
    """The admission state of one write request, handed to the REST layer as ``WriteOptions.admission``.

    ``mode`` is ``mutate`` (capture before validation), ``validate`` (capture before persistence) or
    ``commit``; ``mutated`` is the object the mutating webhooks produced (stored form), substituted in
    the later phases.
    """

    mode: str
    request_name: str = ""
    pinned_name: str = ""
    mutated: dict | None = None
    old_rv: str | None = None
    final: dict | None = None

    def mutate(
        self,
        api: API,
        rt: ResourceType,
        stored: dict,
        old: dict | None,
        opts: WriteOptions,
        errs: list[FieldError],
        warnings: list[str],
    ) -> tuple[dict, list[FieldError]]:
        if self.mode == "mutate":
            raise _Captured(deep_copy(stored), old)
        self._check_old(old)
        if self.mutated is None:
            return stored, errs
        return _substitute(api, rt, stored, old, self.mutated, opts, warnings)

    def validate(
        self, api: API, rt: ResourceType, stored: dict, old: dict | None, opts: WriteOptions
    ) -> None:
        if self.mode == "validate":
            raise _Captured(deep_copy(stored), old)
        self._check_old(old)
        if old is None and self.final is not None:
            # The object the validating webhooks saw is the one created.
            for k in ("uid", "creationTimestamp"):
                if k in self.final["metadata"]:
                    stored["metadata"][k] = self.final["metadata"][k]

    def _check_old(self, old: dict | None) -> None:
        rv = old["metadata"].get("resourceVersion") if old is not None else None
        if self.mode != "mutate" and rv != self.old_rv:
            raise _Retry()


def _substitute(
    api: API,
    rt: ResourceType,
    stored: dict,
    old: dict | None,
    mutated: dict,
    opts: WriteOptions,
    warnings: list[str],
) -> tuple[dict, list[FieldError]]:
    """The mutated object in place of the REST operation's own, re-defaulted for validation.

    Server-owned metadata stays the operation's. The errors found so far are replaced by those of the
    custom-resource schema on the mutated object (built-in validation follows in the REST layer).
    """
    obj = api.external(rt, deep_copy(mutated))
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise errors.internal_error("a mutating webhook made metadata not an object")
    current = stored["metadata"]
    for k in _SYSTEM_META:
        if k in current:
            meta[k] = current[k]
        else:
            meta.pop(k, None)
    if "managedFields" in current and old is None:
        meta["managedFields"] = current["managedFields"]
    obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
    decoding.decode(rt.group, rt.kind, obj, custom=rt.is_custom)  # the patched JSON is decoded anew
    errs: list[FieldError] = []
    if rt.is_custom:
        errs += api._custom_schema(rt, obj, opts, warnings)
    new = api._to_stored(rt, obj)
    normalize_times(rt, new)
    if rt.normalize:
        rt.normalize(new, old)
    return new, errs


class Admission:
    """Calls the admission webhooks of ``server``'s configurations for requests of its HTTP layer."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.api = server.api
        self.storage = server.storage
        self._compiled: dict[tuple[str, str], tuple[str, list[Webhook]]] = {}
        self._ssl: dict[str, ssl.SSLContext] = {}
        self._session: aiohttp.ClientSession | None = None

    # -- configuration --------------------------------------------------------------------------------

    def webhooks(self, mutating: bool) -> list[Webhook]:
        """Every webhook of the stored configurations, ordered by configuration name, then list order."""
        table_name = MUTATING if mutating else VALIDATING
        table = self.storage.tables.get(table_name)  # not storage.table(): that would create it
        objs = table.objects if table is not None else {}
        if not objs:
            return []
        out: list[Webhook] = []
        for key in sorted(objs, key=lambda k: k[1]):
            config = objs[key]
            rv = config["metadata"].get("resourceVersion", "")
            cached = self._compiled.get((table_name, key[1]))
            if cached is None or cached[0] != rv:
                cached = (rv, _compile(config, mutating))
                self._compiled[(table_name, key[1])] = cached
            out.extend(cached[1])
        live = {(table_name, k[1]) for k in objs}
        for key in [k for k in self._compiled if k[0] == table_name and k not in live]:
            del self._compiled[key]
        return out

    def _equivalents(self, rt: ResourceType) -> list[ResourceType]:
        """The other group/versions serving the same stored objects (CRD versions, events)."""
        return [r for r in self.server.registry.all() if r.storage == rt.storage and r is not rt]

    def _match_rules(
        self, hook: Webhook, operation: str, rt: ResourceType, sub: str, ns: str
    ) -> ResourceType | None:
        if any(_rule_matches(r, operation, rt, sub, ns) for r in hook.rules):
            return rt
        if hook.match_policy == "Equivalent":
            equivalents = self._equivalents(rt)
            for rule in hook.rules:
                for eq in equivalents:
                    if (not sub or sub in eq.subresources) and _rule_matches(rule, operation, eq, sub, ns):
                        return eq
        return None

    def _relevant(self, rt: ResourceType, sub: str | None, operations: tuple[str, ...], ns: str) -> bool:
        """Whether any webhook's rules could match: without one the request skips admission."""
        if rt.group == GROUP and rt.resource in (
            "validatingwebhookconfigurations",
            "mutatingwebhookconfigurations",
        ):
            return False  # never sent to webhooks (21-1)
        hooks = self.webhooks(True) + self.webhooks(False)
        return any(self._match_rules(h, op, rt, sub or "", ns) for h in hooks for op in operations)

    def _namespace_labels(self, a: Attributes) -> dict:
        is_namespace = a.rt.group == "" and a.rt.resource == "namespaces" and not a.subresource
        if is_namespace and a.operation in ("CREATE", "UPDATE") and a.obj is not None:
            return a.obj["metadata"].get("labels") or {}  # the request's own object, not the stored one
        ns = self.storage.get("namespaces", ("", a.namespace))
        if ns is None:
            raise errors.not_found("namespaces", "", a.namespace)
        return ns["metadata"].get("labels") or {}

    def matching(self, a: Attributes, mutating: bool) -> list[tuple[Webhook, ResourceType]]:
        """``ShouldCallHook`` for every webhook: selectors, then rules (with equivalent resources)."""
        out = []
        for hook in self.webhooks(mutating):
            ns_error: StatusError | None = None
            is_namespace = a.rt.group == "" and a.rt.resource == "namespaces"
            sel = hook.namespace_selector
            if sel is None:
                ns_error = errors.internal_error(f"invalid namespaceSelector of webhook {hook.name!r}")
            elif not sel.empty and (a.namespace or is_namespace):
                try:
                    if not sel.matches(self._namespace_labels(a)):
                        continue
                except StatusError as e:
                    ns_error = e
            osel = hook.object_selector
            obj_error: StatusError | None = None
            if osel is None:
                obj_error = errors.internal_error(f"invalid objectSelector of webhook {hook.name!r}")
            elif not osel.empty and not any(
                o is not None and osel.matches(o["metadata"].get("labels")) for o in (a.obj, a.old)
            ):
                continue
            matched = self._match_rules(hook, a.operation, a.rt, a.subresource, a.namespace)
            if matched is None:
                continue
            if ns_error is not None:
                raise ns_error
            if obj_error is not None:
                raise obj_error
            out.append((hook, matched))
        return out

    # -- REST entry points (called by the HTTP layer) -------------------------------------------------

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
        if not self._relevant(rt, None, ("DELETE",), namespace):
            return self.api.delete(rt, ns, name, options, dry_run)
        for _ in range(MAX_ATTEMPTS):

            def capture(old: dict) -> None:
                raise _Captured(None, deep_copy(old))

            try:
                self.api.delete(rt, ns, name, options, True, admission=capture)
            except _Captured as c:
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
                    raise _Retry()

            try:
                res = self.api.delete(rt, ns, name, options, dry_run, admission=check)
            except _Retry:
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
        if not self._relevant(rt, None, ("DELETE",), ns or ("*" if rt.namespaced else "")):
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
        if not self._relevant(rt, sub, operations, namespace or ("*" if rt.namespaced else "")):
            return call(opts)
        for _ in range(MAX_ATTEMPTS):
            review = Review("mutate", request_name=request_name)
            warnings: list[str] = []
            try:
                call(replace(opts, dry_run=True, admission=review))
            except _Captured as c:
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
            except _Captured as c:
                final = c.stored
            except _Retry:
                continue
            else:
                return call(opts)
            review.final = final
            a = self._attributes(rt, sub, namespace, request_name, final, old, opts)
            await self._validate(a, warnings)
            review.mode = "commit"
            try:
                res = call(replace(opts, admission=review))
            except _Retry:
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

    # -- calling webhooks -------------------------------------------------------------------------------

    async def _mutate(self, a: Attributes, warnings: list[str]) -> dict | None:
        """Run the mutating webhooks; returns the mutated object (stored form) or None if unchanged."""
        hooks = self.matching(a, True)
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
        response = await self._invoke(hook, rt, attrs, warnings)
        if response is None or obj is None:
            return None
        raw_patch = response.get("patch")
        if not raw_patch:
            return None
        try:
            ops = orjson.loads(base64.b64decode(raw_patch, validate=True))
        except (binascii.Error, ValueError, TypeError) as e:
            raise errors.internal_error(str(e)) from None
        current = self._versioned(rt, obj)
        try:
            patched = patch.json_patch(current, ops)
        except StatusError as e:
            raise errors.internal_error(e.message) from None
        if not isinstance(patched, dict):
            raise errors.internal_error("the patched object is not a JSON object")
        # Server-owned metadata (uid, name, ...) is put back when the result replaces the object.
        return self.api._to_stored(rt, patched)

    async def _validate(self, a: Attributes, warnings: list[str]) -> None:
        hooks = self.matching(a, False)
        if not hooks:
            return
        results = await asyncio.gather(
            *(self._invoke(hook, rt, a, warnings) for hook, rt in hooks), return_exceptions=True
        )
        for result in results:  # the first refusal in webhook order wins
            if isinstance(result, BaseException):
                raise result

    def _versioned(self, rt: ResourceType, stored: dict | None) -> dict | None:
        """A stored object as the webhook's (possibly equivalent) resource version shows it."""
        return None if stored is None else self.api.external(rt, deep_copy(stored))

    def _request(self, hook: Webhook, rt: ResourceType, a: Attributes, uid: str) -> dict:
        obj = self._versioned(rt, a.obj)
        if obj is not None and a.operation == "CREATE" and hook.mutating:
            meta = obj.get("metadata") or {}
            for k in _UNSET_ON_CREATE:
                meta.pop(k, None)
            if not a.name:
                meta.pop("name", None)  # generateName: the name is generated after mutation
        kind_of = {"group": rt.group, "version": rt.version, "kind": rt.kind}
        req: dict[str, Any] = {
            "uid": uid,
            "kind": kind_of,
            "resource": {"group": rt.group, "version": rt.version, "resource": rt.resource},
        }
        if a.subresource:
            req["subResource"] = a.subresource
        req["requestKind"] = {"group": a.rt.group, "version": a.rt.version, "kind": a.rt.kind}
        req["requestResource"] = {"group": a.rt.group, "version": a.rt.version, "resource": a.rt.resource}
        if a.subresource:
            req["requestSubResource"] = a.subresource
        if a.name:
            req["name"] = a.name
        if a.namespace:
            req["namespace"] = a.namespace
        req["operation"] = a.operation
        req["userInfo"] = a.user.as_dict() if a.user is not None else {"username": ""}
        req["object"] = obj
        req["oldObject"] = self._versioned(rt, a.old)
        req["dryRun"] = a.dry_run
        req["options"] = self._options(a)
        return {"apiVersion": hook.review_version, "kind": "AdmissionReview", "request": req}

    @staticmethod
    def _options(a: Attributes) -> dict:
        kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}[a.operation]
        out: dict[str, Any] = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
        if a.dry_run:
            out["dryRun"] = ["All"]
        if a.operation == "DELETE":
            for k in ("gracePeriodSeconds", "preconditions", "orphanDependents", "propagationPolicy"):
                if a.options.get(k) is not None:
                    out[k] = a.options[k]
        elif a.options.get("fieldManager"):
            out["fieldManager"] = a.options["fieldManager"]
        return out

    async def _invoke(
        self, hook: Webhook, rt: ResourceType, a: Attributes, warnings: list[str]
    ) -> dict | None:
        """Call one webhook; returns its ``response`` when it allowed the request (None when a failure
        was ignored), raises the Status error of a refusal or of a failure under ``Fail``."""
        uid = str(uuid.uuid4())
        try:
            response = await self._call(hook, self._request(hook, rt, a, uid), uid)
        except CallError as e:
            message = f'failed calling webhook "{hook.name}": {e}'
            if hook.failure_policy == "Ignore":
                log.warning("failed calling webhook, failing open", webhook=hook.name, error=str(e))
                return None
            log.warning("failed calling webhook, failing closed", webhook=hook.name, error=str(e))
            raise errors.internal_error(message) from None
        for w in response.get("warnings") or []:
            if isinstance(w, str):
                warnings.append(w)
        if response.get("allowed") is True:
            return response
        raise _denied(hook.name, response.get("status"), warnings)

    async def _call(self, hook: Webhook, review: dict, uid: str) -> dict:
        url, connect_url, server_hostname, context = self._target(hook)
        timeout_s = int(hook.timeout)
        sep = "&" if "?" in url else "?"
        url += f"{sep}timeout={timeout_s}s"
        connect_url += f"{sep}timeout={timeout_s}s"
        headers = {"Content-Type": "application/json", "Accept": "application/json, */*"}
        if server_hostname:
            headers["Host"] = url.split("/")[2]
        session = self._client()
        try:
            async with session.post(
                connect_url,
                data=orjson.dumps(review),
                headers=headers,
                ssl=context,
                server_hostname=server_hostname,
                timeout=aiohttp.ClientTimeout(total=hook.timeout),
                allow_redirects=False,
            ) as resp:
                body = await resp.read()
                status = resp.status
        except TimeoutError:
            raise CallError(f'failed to call webhook: Post "{url}": context deadline exceeded') from None
        except aiohttp.ClientConnectorCertificateError as e:
            cause = getattr(e.certificate_error, "verify_message", None) or str(e.certificate_error)
            raise CallError(
                f'failed to call webhook: Post "{url}": tls: failed to verify certificate: {cause}'
            ) from None
        except (aiohttp.ClientError, OSError, ssl.SSLError) as e:
            raise CallError(f'failed to call webhook: Post "{url}": {_describe(e)}') from None
        if not 200 <= status < 300:
            raise CallError(f"failed to call webhook: {_http_error(status, body)}")
        try:
            doc = orjson.loads(body)
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            raise CallError(
                f"failed to call webhook: couldn't get version/kind; json parse error: {e}"
            ) from None
        response = doc.get("response")
        problem = None
        if not isinstance(response, dict):
            problem = "webhook response was absent"
        elif review["apiVersion"] == V1:
            got_uid = response.get("uid", "")
            if got_uid != uid:
                problem = f'expected response.uid="{uid}", got "{got_uid}"'
            elif doc.get("apiVersion") != V1 or doc.get("kind") != "AdmissionReview":
                got = f"{doc.get('apiVersion') or ''}, Kind={doc.get('kind') or ''}"
                problem = f"expected webhook response of {V1}, Kind=AdmissionReview, got {got}"
        if problem is None:
            assert isinstance(response, dict)
            has_patch, patch_type = bool(response.get("patch")), response.get("patchType") or ""
            if hook.mutating and has_patch and not patch_type:
                problem = "webhook returned response.patch but not response.patchType"
            elif hook.mutating and patch_type and not has_patch:
                problem = "webhook returned response.patchType but not response.patch"
            elif not hook.mutating and has_patch:
                problem = "validating webhook may not return response.patch"
            elif not hook.mutating and patch_type:
                problem = "validating webhook may not return response.patchType"
            elif has_patch and patch_type != "JSONPatch" and response.get("allowed") is True:
                raise CallError(f'unsupported patch type "{patch_type}"')
        if problem is not None:
            raise CallError(f"received invalid webhook response: {problem}")
        assert isinstance(response, dict)
        return response

    def _target(self, hook: Webhook) -> tuple[str, str, str | None, ssl.SSLContext]:
        """(URL as kube-apiserver names it, URL to connect to, TLS server name, TLS context)."""
        cc = hook.client_config
        context = self._context(cc.get("caBundle") or "")
        if cc.get("url"):
            return cc["url"], cc["url"], None, context
        svc = cc.get("service") or {}
        ns, name, port = svc.get("namespace", ""), svc.get("name", ""), int(svc.get("port") or 443)
        path = svc.get("path") or ""
        if path and not path.startswith("/"):
            path = "/" + path
        host = f"{name}.{ns}.svc"
        url = f"https://{host}:{port}{path}"
        address = self.server.webhook_service_map.get((ns, name, port))
        if address is None:
            raise CallError(
                f'failed to call webhook: Post "{url}?timeout={int(hook.timeout)}s": service "{ns}/{name}" '
                f"port {port} is not mapped to an address (APIServer.webhook_service_map)"
            )
        return url, f"https://{address}{path}", host, context

    def _context(self, ca_bundle: str) -> ssl.SSLContext:
        context = self._ssl.get(ca_bundle)
        if context is None:
            if ca_bundle:
                try:
                    pem = base64.b64decode(ca_bundle, validate=True).decode()
                    context = ssl.create_default_context(cadata=pem)
                except (binascii.Error, ValueError, ssl.SSLError) as e:
                    raise CallError(f"failed to call webhook: invalid caBundle: {e}") from None
            else:
                context = ssl.create_default_context()
            self._ssl[ca_bundle] = context
        return context

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _denied(name: str, status: Any, warnings: list[str]) -> StatusError:
    """``webhookerrors.ToStatusErr``: the webhook's Status with the kube-apiserver message."""
    result = dict(status) if isinstance(status, dict) else {}
    raw_code = result.get("code")
    code = raw_code if isinstance(raw_code, int) else 0
    if code < 400:
        code = 400
    by = f'admission webhook "{name}" denied the request'
    message, reason = result.get("message") or "", result.get("reason") or ""
    if message:
        message = f"{by}: {message}"
    elif reason:
        message = f"{by}: {reason}"
    else:
        message = f"{by} without explanation"
    details = result.get("details") if isinstance(result.get("details"), dict) else None
    headers = {}
    if warnings:
        headers["Warning"] = ", ".join(_warning(w) for w in warnings)
    return StatusError(code, reason or None, message, details, headers)


def _warning(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def _http_error(status: int, body: bytes) -> str:
    try:
        doc = orjson.loads(body)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status" and doc.get("message"):
        return str(doc["message"])
    if status in _GENERIC:
        return _GENERIC[status]
    text = body.decode(errors="replace").strip() if body and len(body) < 1024 else "unknown"
    return f'an error on the server ("{text}") has prevented the request from succeeding'


def _describe(e: BaseException) -> str:
    if isinstance(e, aiohttp.ClientConnectorError):
        inner = e.os_error
        if isinstance(inner, ssl.SSLError):
            return f"tls: {inner.reason or inner}"
        if isinstance(inner, ConnectionRefusedError):
            return f"dial tcp {e.host}:{e.port}: connect: connection refused"
        return f"dial tcp {e.host}:{e.port}: {inner.strerror or inner}"
    if isinstance(e, aiohttp.ServerDisconnectedError):
        return "EOF"
    return str(e) or type(e).__name__
