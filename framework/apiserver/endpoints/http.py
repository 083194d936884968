"""HTTP front end: the entry point of every request, routing by path (the URL layout of
https://kubernetes.io/docs/reference/using-api/api-concepts/) to health, discovery, OpenAPI and the
resource verbs.

Runs on one asyncio event loop (aiohttp); every storage access happens on that loop, so each request
is applied atomically between awaits. The concepts one request passes through have their own modules:
``request_auth`` (authentication, impersonation, authorization), ``routing`` (what a resource URL
addresses), ``negotiation`` (Accept and Content-Type), ``discovery``, ``openapi``, ``health``,
``faults``, ``list_serving``, ``watch_serving`` and ``responses``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import structlog
from aiohttp import web

from framework.apiserver.accounting.requests import REQUEST_INFO, RequestInfo
from framework.apiserver.admission.review import DELETE_REQUESTER
from framework.apiserver.crd.conversion import uses_webhook
from framework.apiserver.crd.conversion_scope import ConversionScope
from framework.apiserver.crd.deprecation import deprecation_warning
from framework.apiserver.encoding import envelope
from framework.apiserver.endpoints import params as query
from framework.apiserver.endpoints import scale
from framework.apiserver.endpoints.discovery import ROOT_PATHS, VERSION_INFO, Discovery
from framework.apiserver.endpoints.health import health, is_health_path
from framework.apiserver.endpoints.list_serving import serve_list, validate_list_options
from framework.apiserver.endpoints.negotiation import (
    JSON_FORM,
    METADATA_FORM,
    RAW_BODY,
    TABLE_FORM,
    aggregated_discovery,
    json_error,
    negotiate,
    read_body,
    read_raw,
    table_converter,
    table_version,
)
from framework.apiserver.endpoints.pod_log import pod_log_options
from framework.apiserver.endpoints.request_auth import RequestAuth
from framework.apiserver.endpoints.responses import (
    DEPRECATION,
    json_response,
    method_not_allowed,
    path_not_found,
    respond,
    status_response,
    warning_headers,
    warning_value,
)
from framework.apiserver.endpoints.reviews import create_review
from framework.apiserver.endpoints.routing import Target, request_verb, resolve_target
from framework.apiserver.endpoints.table import parse_include_object, partial_metadata
from framework.apiserver.endpoints.watch_serving import WatchConversion, serve_watch
from framework.apiserver.faults import control as fault_control
from framework.apiserver.faults.injection import Fault, check_faults
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.managed_fields.apply_config import apply_body_as_json
from framework.apiserver.openapi.handler import openapi
from framework.apiserver.registry.rest.options import WriteOptions
from framework.apiserver.registry.rest.patch import PATCH_TYPES_BUILTIN, PATCH_TYPES_CUSTOM
from framework.apiserver.storage.cache_watcher import Watcher
from framework.meta.object import get_resource_version

if TYPE_CHECKING:
    from framework.apiserver.registry.strategy import ResourceType
    from framework.apiserver.server import APIServer

log = structlog.get_logger("framework.apiserver")

T = TypeVar("T")


class Handler:
    """Answers every request of one :class:`APIServer`."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.api = server.api
        self.registry = server.registry
        self.auth = RequestAuth(server)
        # Simulated nodes' kubelets answer ``pods/log``.
        self.extra_subresources = {"pods": ("log",)} if server.simulated is not None else {}
        self.discovery = Discovery(server.registry, self.extra_subresources)
        self.faults: list[Fault] = []
        self.watchers: set[Watcher] = set()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one request; a ``StatusError`` becomes its Status, anything else a logged 500."""
        info = RequestInfo(verb=request.method.lower(), resource=request.path)
        request[REQUEST_INFO] = info
        started = time.time()
        try:
            resp = await self._handle(request)
        except StatusError as e:
            resp = status_response(e)
        except asyncio.CancelledError:
            # The client went away (e.g. a watch it closed): nothing was answered, so nothing is counted,
            # but a test recording every request still sees that it was made and authorized.
            self.server.accounting.record_unanswered(info)
            raise
        except Exception as e:  # a bug in the emulator: answer 500 like the real server, and log it
            log.exception("internal error", path=request.path)
            resp = json_response(
                errors.failure_status(500, "InternalError", f"Internal error occurred: {e}"), 500
            )
        warning = request.get(DEPRECATION)
        if warning and not resp.prepared:
            value = warning_value(warning)
            resp.headers["Warning"] = (
                f"{value}, {resp.headers['Warning']}" if "Warning" in resp.headers else value
            )
        self.server.accounting.record(info, resp.status)
        if self.server.request_log is not None:
            body = resp.body if isinstance(resp, web.Response) and isinstance(resp.body, bytes) else None
            self.server.request_log.record(info, resp.status, body, started, time.time())
        return resp

    def drop_watches(self) -> None:
        """End every open watch (clients see the stream close and re-watch)."""
        for w in list(self.watchers):
            w.close()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        info: RequestInfo = request[REQUEST_INFO]
        info.user = self.auth.authenticate(request)
        parts = [p for p in path.split("/") if p]
        if not ((parts[:1] == ["api"] and len(parts) > 2) or (parts[:1] == ["apis"] and len(parts) > 3)):
            self.auth.authorize_path(request)
        if is_health_path(path):
            return health(request)
        if not parts:
            return json_response({"paths": ROOT_PATHS})
        if path == fault_control.PATH and self.server.fault_control is not None:
            return await self.server.fault_control.handle(request, info.user)
        if parts == ["metrics"]:
            return web.Response(body=self.server.accounting.render(), content_type="text/plain")
        if parts[0] == "version" and len(parts) == 1:
            return json_response(VERSION_INFO)
        if parts[0] == "openapi":
            return openapi(request, parts, self.server.registry)
        if parts[0] == "api":
            if len(parts) == 1:
                if (disc := aggregated_discovery(request)) is not None:
                    return self.discovery.aggregated(disc, [("", ["v1"])])
                host = request.host or f"{self.server.host}:{self.server.port}"
                return json_response(self.discovery.core_versions(host))
            if parts[1] != "v1":
                raise path_not_found()
            if len(parts) == 2:
                return json_response(self.discovery.resource_list("", "v1"))
            return await self._resource(request, "", "v1", parts[2:])
        if parts[0] == "apis":
            if len(parts) == 1:
                if (disc := aggregated_discovery(request)) is not None:
                    return self.discovery.aggregated(disc, self.discovery.groups())
                return json_response(self.discovery.group_list())
            group = parts[1]
            versions = self.registry.group_versions().get(group)
            if not versions or group == "":
                raise path_not_found()
            if len(parts) == 2:
                return json_response(self.discovery.group(group, versions))
            if parts[2] not in versions:
                raise path_not_found()
            if len(parts) == 3:
                return json_response(self.discovery.resource_list(group, parts[2]))
            return await self._resource(request, group, parts[2], parts[3:])
        raise path_not_found()

    async def _resource(
        self, request: web.Request, group: str, version: str, parts: list[str]
    ) -> web.StreamResponse:
        t = resolve_target(self.registry, group, version, parts, self.extra_subresources)
        q = request.query
        method = request.method
        # Go's query decoding: any value but "0"/"false" is true (watch=maybe watches).
        is_watch = t.watch_path or (method == "GET" and bool(query.query_bool(q, "watch")))
        verb = request_verb(method, t, is_watch)
        info = request[REQUEST_INFO]
        info.namespace, info.name = t.namespace, t.name  # set first: a refused request is accounted too
        self.auth.authorize_resource(request, t, verb)
        rt = t.rt
        check_faults(self.faults, verb, rt.resource, rt.group, t.namespace, rt.qualified)
        if self.server.fault_control is not None:
            await self.server.fault_control.before(info.user.name if info.user else "", verb, rt.resource)
        if t.name is None and t.namespace is None and rt.namespaced and verb not in ("list", "watch"):
            raise method_not_allowed()
        form, form_version = negotiate(request) if verb in ("get", "list", "watch") else (JSON_FORM, "")
        meta_only = form == METADATA_FORM
        table_as = form_version if form == TABLE_FORM else ""
        if rt.is_custom and (warning := deprecation_warning(rt)):
            request[DEPRECATION] = warning
        if verb == "get" and meta_only and not t.subresource:
            return respond(request, 200, partial_metadata(self.api.get(rt, t.namespace, t.name or "")))
        if verb == "get" and t.subresource == "log" and self.server.simulated is not None:
            options = pod_log_options(q, t.name or "")
            pod = self.api.get(rt, t.namespace, t.name or "")
            body = self.server.simulated.log(pod, options.container, options.previous)
            return web.Response(body=body, content_type="text/plain")
        if verb == "get":
            if t.subresource == "finalize":
                raise method_not_allowed()

            async def get() -> dict:
                return self.api.get(rt, t.namespace, t.name or "")

            obj = await self._converting(rt, get, rerun=True)
            if t.subresource == "scale":
                return respond(request, 200, scale.to_scale(rt, obj))
            if table_as and not t.subresource:
                include = parse_include_object(q.get("includeObject"))
                rv = {"resourceVersion": get_resource_version(obj) or None}
                return respond(
                    request, 200, table_version(table_converter(rt).table([obj], rv, include), table_as)
                )
            return respond(request, 200, obj)
        if verb == "list" and meta_only:  # metadata needs no conversion (nor a conversion webhook)
            return await serve_list(self.server, request, t, meta_only, table_as)
        if verb == "list":
            return await self._converting(
                rt, lambda: serve_list(self.server, request, t, meta_only, table_as), rerun=True, as_list=True
            )
        if verb == "watch":
            convert = (
                WatchConversion(self.server.conversion, rt)
                if uses_webhook(rt.crd) and not meta_only
                else None
            )
            return await serve_watch(self.server, self.watchers, request, t, meta_only, table_as, convert)
        if verb in ("delete", "deletecollection"):
            return await self._delete(request, t, verb)
        return await self._write(request, t, verb)

    async def _converting(
        self, rt: ResourceType, op: Callable[[], Awaitable[T]], rerun: bool = False, as_list: bool = False
    ) -> T:
        """``op``, in a conversion scope when ``rt``'s CRD converts through a webhook
        (``crd.conversion_scope``); ``rerun`` for reads, ``as_list`` for lists (one review)."""
        if not uses_webhook(rt.crd):
            return await op()
        assert rt.crd is not None
        return await ConversionScope(rt.crd, self.server.conversion, as_list=as_list).run(op, rerun)

    async def _write(self, request: web.Request, t: Target, verb: str) -> web.Response:
        """create, update and patch, through the admission webhooks (the admission package)."""
        rt = t.rt
        opts = write_options(request, patch=verb == "patch")
        opts.user = request[REQUEST_INFO].user
        admission = self.server.admission
        duplicates: list[str] = []  # what the strict decoder says of repeated keys (read_body)
        if verb == "create" and (not rt.persisted or t.subresource == "token"):
            body = check_type_meta(request, rt, await read_body(request, rt), t.subresource)
            res = create_review(self.server, rt, t.namespace, t.name, body, opts.user)
        elif verb == "create":
            body = check_type_meta(request, rt, await read_body(request, rt, duplicates), t.subresource)
            report_duplicates(opts, rt, duplicates)
            res = await self._converting(rt, lambda: admission.create(rt, t.namespace, body, fresh(opts)))
        elif verb == "update":
            body = check_type_meta(request, rt, await read_body(request, rt, duplicates), t.subresource)
            report_duplicates(opts, rt, duplicates)
            res = await self._converting(
                rt, lambda: admission.update(rt, t.namespace, t.name or "", body, fresh(opts), t.subresource)
            )
        else:  # patch
            raw = await read_raw(request)
            ctype = request.headers.get("Content-Type", "").split(";")[0].strip()
            if ctype == "application/apply-patch+yaml":
                repeated: list[str] | None = None if opts.field_validation == "Ignore" else []
                raw = await apply_body_as_json(raw, repeated)  # YAML is decoded off the loop
                opts.apply_duplicates = repeated or []
            elif raw and ctype in (PATCH_TYPES_CUSTOM if rt.smp is None else PATCH_TYPES_BUILTIN):
                # The patch is decoded by the synchronous patch code; a malformed one is worded here,
                # off the loop (Go's words come from a Python walk of the text).
                problem = await json_error(raw)
                if problem is not None:
                    raise errors.bad_request(f"error decoding patch: {problem}")
            res = await self._converting(
                rt,
                lambda: admission.patch(
                    rt, t.namespace, t.name or "", ctype, raw, fresh(opts), t.subresource
                ),
            )
        return respond(request, res.code, res.body, warning_headers(res.warnings))

    async def _delete(self, request: web.Request, t: Target, verb: str) -> web.Response:
        """delete and deletecollection: DeleteOptions from the body, or from the query without one."""
        rt, q = t.rt, request.query
        if verb == "deletecollection":
            validate_list_options(q, rt, for_watch=False)
        raw = await read_raw(request)
        options = await query.delete_options(raw, request.headers.get("Content-Type", ""), q)
        # dryRun comes with the options, wherever they came from (kubectl sends it in the body).
        dry_run = bool(options.get("dryRun"))
        user = request[REQUEST_INFO].user
        DELETE_REQUESTER.set(user)
        admission = self.server.admission
        if verb == "delete":
            res = await self._converting(
                rt, lambda: admission.delete(rt, t.namespace, t.name or "", options, dry_run, user)
            )
        else:
            res = await self._converting(
                rt,
                lambda: admission.delete_collection(
                    rt, t.namespace, options, q.get("labelSelector"), q.get("fieldSelector"), dry_run, user
                ),
            )
        return respond(request, res.code, res.body, warning_headers(res.warnings))


# The kinds subresources take instead of their resource's (the Go type the body is decoded into).
_BODY_KINDS = {"scale": "Scale", "token": "TokenRequest"}


def check_type_meta(request: web.Request, rt: ResourceType, body: Any, subresource: str | None) -> Any:
    """The serializer's first look at a create or update body, before anything else reads it: an
    object with string ``apiVersion``/``kind`` (``envelope.check_type_meta``); 400 quoting the body as
    sent otherwise. Returns ``body``."""
    try:
        envelope.check_type_meta(body)
    except envelope.EnvelopeError as e:
        raise envelope.decode_error(
            _BODY_KINDS.get(subresource or "", rt.kind),
            rt.version,
            str(e),
            unrecognized=e.unrecognized,
            patched=None,
            body=body,
            raw=request.get(RAW_BODY),
        ) from None
    return body


def report_duplicates(opts: WriteOptions, rt: ResourceType, duplicates: list[str]) -> None:
    """What the strict decoder found of a body's repeated keys: warnings now, or under Strict for a
    built-in kind refused together with its unknown fields once its typed decoding has found them (one
    strict decoding error, as kube-apiserver's decoder reports both). A custom resource's unknown fields
    are found with its schema, after the mutating webhooks: its repeated keys are refused at once."""
    if opts.field_validation == "Strict" and not rt.is_custom:
        opts.pending_strict = list(duplicates)
    else:
        opts.strict_decoding(duplicates)


def fresh(opts: WriteOptions) -> WriteOptions:
    """A copy of ``opts`` whose lists a run of the operation may extend (a conversion scope may run a
    write more than once)."""
    return replace(
        opts,
        decode_warnings=list(opts.decode_warnings),
        unknown_metadata=list(opts.unknown_metadata),
        pending_strict=list(opts.pending_strict),
    )


def write_options(request: web.Request, patch: bool) -> WriteOptions:
    """Create/Update/PatchOptions from the query, validated as ``ValidateCreateOptions`` & co. (422)."""
    q = request.query
    method = request.method
    kind = "PatchOptions" if patch else "CreateOptions" if method == "POST" else "UpdateOptions"
    errs = []
    dry = q.getall("dryRun", [])
    fv = q.get("fieldValidation") or ""
    manager = q.get("fieldManager")
    force = False
    if patch:
        ctype = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if ctype == "application/apply-patch+yaml":
            force = bool(query.query_bool(q, "force"))
        elif "force" in q:
            errs.append(errors.forbidden("force", "may not be specified for non-apply patch"))
    if manager is not None and (len(manager) > 128 or not manager.isprintable()):
        errs.append(errors.invalid_value("fieldManager", manager, "must be at most 128 printable characters"))
    if any(d != "All" for d in dry):
        errs.append(errors.not_supported("dryRun", list(dry), ["All"]))
    if fv not in ("", "Ignore", "Warn", "Strict"):
        errs.append(errors.not_supported("fieldValidation", fv, ["", "Ignore", "Strict", "Warn"]))
    if errs:
        raise errors.options_invalid(kind, errs)
    fv = fv or "Warn"
    return WriteOptions(
        dry_run=bool(dry),
        field_validation=fv,
        field_manager=manager,
        user_agent=request.headers.get("User-Agent", ""),
        force=force,
    )
