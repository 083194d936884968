"""HTTP front end: URL layout (§2), discovery (§3), content negotiation (§4), REST verbs and watch.

Runs on one asyncio event loop (aiohttp); every storage access happens on that loop, so each request
is applied atomically between awaits.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
import structlog
import yaml
from aiohttp import web

from framework.meta.object import get_resource_version

from . import errors, gojson
from . import params as query
from .auth import Attributes, UserInfo, forbidden_message
from .errors import StatusError
from .resources import ResourceType
from .rest import WriteOptions
from .selectors import parse_field_selector, single_name
from .table import BUILTIN_PRINTERS, TableConverter, parse_include_object, partial_metadata
from .watch import Watcher, bookmark, error_line

if TYPE_CHECKING:
    from .server import APIServer

log = structlog.get_logger("framework.testing.apiserver")

MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's request body limit
JSON = "application/json"
SERVED_MEDIA = ["application/json", "application/yaml"]
BODY_MEDIA = ["application/json", "application/yaml"]
GIT_VERSION = "v1.32.4"

VERSION_INFO = {
    "major": "1",
    "minor": "32",
    "gitVersion": GIT_VERSION,
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-04-22T00:00:00Z",
    "goVersion": "go1.23.6",
    "compiler": "gc",
    "platform": "linux/amd64",
}

SWAGGER = {
    "swagger": "2.0",
    "info": {"title": "Kubernetes", "version": GIT_VERSION},
    "paths": {},
    "definitions": {},
}
ROOT_PATHS = ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/openapi/v2", "/readyz", "/version"]


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # Go's json.Encoder ends every document with a newline; clients comparing bodies see it.
    return web.Response(
        body=orjson.dumps(body, option=orjson.OPT_APPEND_NEWLINE),
        status=status,
        headers={"Content-Type": JSON, **(headers or {})},
    )


def status_response(err: StatusError) -> web.Response:
    headers = dict(err.headers)
    retry = (err.details or {}).get("retryAfterSeconds")
    if retry and "Retry-After" not in headers:
        headers["Retry-After"] = str(retry)  # like kube-apiserver, for errors that suggest a retry
    return json_response(err.status(), err.code, headers)


@dataclass
class Target:
    """What a resource URL addresses."""

    rt: ResourceType
    namespace: str | None
    name: str | None
    subresource: str | None
    watch_path: bool


@dataclass
class RequestInfo:
    """Who asked for what, for request accounting (filled in while the request is handled)."""

    verb: str
    resource: str
    user: Any = None


REQUEST_INFO = web.RequestKey("k8s", RequestInfo)


@dataclass
class Fault:
    verb: str
    resource: str
    group: str | None
    namespace: str | None
    status: int
    remaining: int | None
    retry_after: int | None


REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class Handler:
    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.api = server.api
        self.storage = server.storage
        self.registry = server.registry
        self.faults: list[Fault] = []
        self.watchers: set[Watcher] = set()

    # -- entry ---------------------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        info = RequestInfo(verb=request.method.lower(), resource=request.path)
        request[REQUEST_INFO] = info
        try:
            resp = await self._handle(request)
        except StatusError as e:
            resp = status_response(e)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug in the emulator: answer 500 like the real server, and log it
            log.exception("internal error", path=request.path)
            resp = json_response(
                errors.failure_status(500, "InternalError", f"Internal error occurred: {e}"), 500
            )
        self.server.accounting.record(info, resp.status)
        return resp

    # -- authentication and authorization (§22) ------------------------------------------------------

    def _authenticate(self, request: web.Request) -> UserInfo:
        peercert = request.transport.get_extra_info("peercert") if request.transport else None
        user = self.server.authenticator.authenticate(request.headers, peercert)
        as_user = request.headers.get("Impersonate-User")
        as_groups = request.headers.getall("Impersonate-Group", [])
        if not as_user:
            if as_groups:
                raise errors.bad_request("requested impersonation of groups without impersonating a user")
            return user
        targets = [("users", "", as_user)] + [("groups", "", g) for g in as_groups]
        if as_user.startswith("system:serviceaccount:") and as_user.count(":") == 3:
            _, _, sa_ns, sa_name = as_user.split(":")
            targets[0] = ("serviceaccounts", sa_ns, sa_name)
        for resource, ns, name in targets:
            a = Attributes(user, "impersonate", True, "", "v1", resource, "", name, ns)
            if not self._allowed(a):
                raise errors.forbidden_error(resource, "", name, forbidden_message(a))
        groups = tuple(as_groups)
        if as_user.startswith("system:serviceaccount:") and not groups:
            sa_ns = as_user.split(":")[2]
            groups = ("system:serviceaccounts", f"system:serviceaccounts:{sa_ns}")
        return UserInfo(as_user, "", groups).with_authenticated()

    def _allowed(self, a: Attributes) -> bool:
        return self.server.authorization == "AlwaysAllow" or self.server.authorizer.allowed(a)

    def _authorize_path(self, request: web.Request) -> None:
        info: RequestInfo = request[REQUEST_INFO]
        a = Attributes(info.user, request.method.lower(), False, path=request.path)
        if not self._allowed(a):
            raise StatusError(403, "Forbidden", "forbidden: " + forbidden_message(a), {})

    def _authorize_resource(self, request: web.Request, t: Target, verb: str) -> None:
        info: RequestInfo = request[REQUEST_INFO]
        rt = t.rt
        info.verb, info.resource = verb, rt.qualified + (f"/{t.subresource}" if t.subresource else "")
        name = t.name or ""
        if verb in ("list", "watch") and not name:
            # A field selector pinning metadata.name authorizes like a request for that name.
            name = _pinned_name(rt, request.query.get("fieldSelector"))
        a = Attributes(
            info.user,
            verb,
            True,
            rt.group,
            rt.version,
            rt.resource,
            t.subresource or "",
            name,
            t.namespace or "",
        )
        if not self._allowed(a):
            raise errors.forbidden_error(rt.resource, rt.group, t.name or "", forbidden_message(a))

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        info: RequestInfo = request[REQUEST_INFO]
        info.user = self._authenticate(request)
        segments = [p for p in path.split("/") if p]
        if not (
            (segments[:1] == ["api"] and len(segments) > 2)
            or (segments[:1] == ["apis"] and len(segments) > 3)
        ):
            self._authorize_path(request)
        if path in ("/healthz", "/livez", "/readyz") or path.startswith(("/healthz/", "/livez/", "/readyz/")):
            return _health(request)
        parts = [p for p in path.split("/") if p]
        if not parts:
            return json_response({"paths": ROOT_PATHS})
        if parts == ["metrics"]:
            return web.Response(body=self.server.accounting.render(), content_type="text/plain")
        if parts[0] == "version" and len(parts) == 1:
            return json_response(VERSION_INFO)
        if parts[0] == "openapi":
            return self._openapi(request, parts)
        if parts[0] == "api":
            if len(parts) == 1:
                if (disc := _aggregated_discovery(request)) is not None:
                    return self._discovery_response(disc, [("", ["v1"])])
                return json_response(self._core_versions(request))
            if parts[1] != "v1":
                raise _path_not_found()
            if len(parts) == 2:
                return json_response(self._resource_list("", "v1"))
            return await self._resource(request, "", "v1", parts[2:])
        if parts[0] == "apis":
            if len(parts) == 1:
                if (disc := _aggregated_discovery(request)) is not None:
                    groups = sorted(self.registry.group_versions().items(), key=_group_order)
                    return self._discovery_response(disc, [(g, vs) for g, vs in groups if g])
                return json_response(self._group_list())
            group = parts[1]
            versions = self.registry.group_versions().get(group)
            if not versions or group == "":
                raise _path_not_found()
            if len(parts) == 2:
                return json_response(self._group(group, versions))
            if parts[2] not in versions:
                raise _path_not_found()
            if len(parts) == 3:
                return json_response(self._resource_list(group, parts[2]))
            return await self._resource(request, group, parts[2], parts[3:])
        raise _path_not_found()

    # -- discovery (§3) -------------------------------------------------------------------------------

    def _core_versions(self, request: web.Request) -> dict:
        host = request.host or f"{self.server.host}:{self.server.port}"
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
        }

    @staticmethod
    def _group(group: str, versions: list[str]) -> dict:
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {
            "kind": "APIGroup",
            "apiVersion": "v1",
            "name": group,
            "versions": gvs,
            "preferredVersion": gvs[0],
        }

    def _group_list(self) -> dict:
        groups = [
            self._group(g, vs)
            for g, vs in sorted(self.registry.group_versions().items(), key=_group_order)
            if g
        ]
        for g in groups:
            g.pop("kind")
            g.pop("apiVersion")
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def _discovery_response(self, version: str, groups: list[tuple[str, list[str]]]) -> web.Response:
        """Aggregated discovery (``apidiscovery.k8s.io`` ``APIGroupDiscoveryList``, spec 3-6): every group,
        version and resource in one document, from the same entries as the per-version lists."""
        items = []
        for group, versions in groups:
            entries = []
            for v in versions:
                entries.append(
                    {"version": v, "resources": self._discovery_resources(group, v), "freshness": "Current"}
                )
            meta: dict[str, Any] = {"name": group} if group else {}
            meta["creationTimestamp"] = None
            items.append({"metadata": meta, "versions": entries})
        body = {
            "kind": "APIGroupDiscoveryList",
            "apiVersion": f"apidiscovery.k8s.io/{version}",
            "metadata": {},
            "items": items,
        }
        ctype = f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
        resp = json_response(body)
        resp.headers["Content-Type"] = ctype
        resp.headers["Vary"] = "Accept"
        return resp

    def _discovery_resources(self, group: str, version: str) -> list[dict]:
        legacy = self._resource_list(group, version)["resources"]
        out: list[dict] = []
        by_name: dict[str, dict] = {}
        for entry in legacy:
            name = entry["name"]
            if "/" not in name:
                res: dict[str, Any] = {
                    "resource": name,
                    "responseKind": {"group": group, "version": version, "kind": entry["kind"]},
                    "scope": "Namespaced" if entry["namespaced"] else "Cluster",
                    "singularResource": entry["singularName"],
                    "verbs": entry["verbs"],
                }
                for key in ("shortNames", "categories"):
                    if entry.get(key):
                        res[key] = entry[key]
                by_name[name] = res
                out.append(res)
                continue
            parent, _, sub = name.partition("/")
            kind = {"group": entry.get("group", group), "version": entry.get("version", version)}
            kind["kind"] = entry["kind"]
            by_name[parent].setdefault("subresources", []).append(
                {"subresource": sub, "responseKind": kind, "verbs": entry["verbs"]}
            )
        return out

    def _resource_list(self, group: str, version: str) -> dict:
        gv = f"{group}/{version}" if group else version
        resources = []
        for rt in sorted(self.registry.all(), key=lambda r: r.resource):
            if rt.group != group or rt.version != version:
                continue
            entry: dict[str, Any] = {
                "name": rt.resource,
                "singularName": rt.singular,
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": list(rt.verbs),
            }
            if rt.short_names:
                entry["shortNames"] = list(rt.short_names)
            if rt.categories:
                entry["categories"] = list(rt.categories)
            entry["storageVersionHash"] = _hash(rt)
            resources.append(entry)
            for sub in rt.subresources:
                sub_entry: dict[str, Any] = {
                    "name": f"{rt.resource}/{sub}",
                    "singularName": "",
                    "namespaced": rt.namespaced,
                    "kind": rt.kind,
                    "verbs": ["get", "patch", "update"],
                }
                if sub == "finalize":
                    sub_entry["verbs"] = ["update"]
                elif sub == "scale":
                    sub_entry.update(group="autoscaling", version="v1", kind="Scale")
                elif sub == "token":
                    sub_entry.update(
                        group="authentication.k8s.io", version="v1", kind="TokenRequest", verbs=["create"]
                    )
                resources.append(sub_entry)
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}

    def _openapi(self, request: web.Request, parts: list[str]) -> web.Response:
        if parts[1:] == ["v2"]:
            accept = request.headers.get("Accept", "")
            if "protobuf" in accept and "application/json" not in accept:
                # An empty protobuf document: kubectl then skips client-side validation (3-7, 24-1).
                return web.Response(body=b"", content_type="application/octet-stream")
            return json_response(SWAGGER)
        raise _path_not_found()

    # -- resources ------------------------------------------------------------------------------------

    def _target(self, group: str, version: str, parts: list[str]) -> Target:
        watch_path = False
        if parts and parts[0] == "watch":
            watch_path = True
            parts = parts[1:]
        namespace = None
        # namespaces/NAME/status and /finalize are the Namespace's own subresources.
        if (
            len(parts) >= 3
            and parts[0] == "namespaces"
            and not (len(parts) == 3 and parts[2] in ("status", "finalize"))
        ):
            namespace = parts[1]
            parts = parts[2:]
        if not parts or len(parts) > 3:
            raise _path_not_found()
        rt = self.registry.get(group, version, parts[0])
        if rt is None:
            raise _path_not_found()
        if namespace is not None and not rt.namespaced:
            raise _path_not_found()
        name = parts[1] if len(parts) > 1 else None
        sub = parts[2] if len(parts) > 2 else None
        if sub is not None and sub not in rt.subresources:
            raise _path_not_found()
        return Target(rt, namespace, name, sub, watch_path)

    async def _resource(
        self, request: web.Request, group: str, version: str, parts: list[str]
    ) -> web.StreamResponse:
        t = self._target(group, version, parts)
        q = request.query
        method = request.method
        # Go's query decoding: any value but "0"/"false" is true (watch=maybe watches).
        is_watch = t.watch_path or (method == "GET" and bool(query.query_bool(q, "watch")))
        verb = self._verb(method, t, is_watch)
        self._authorize_resource(request, t, verb)
        self._check_fault(verb, t)
        rt = t.rt
        if t.name is None and t.namespace is None and rt.namespaced and verb not in ("list", "watch"):
            raise _method_not_allowed()
        form, form_version = _negotiate(request) if verb in ("get", "list", "watch") else (JSON_FORM, "")
        meta_only = form == METADATA_FORM
        if verb == "get" and meta_only and not t.subresource:
            return self._respond(request, 200, partial_metadata(self.api.get(rt, t.namespace, t.name or "")))
        if verb == "get":
            if t.subresource in ("finalize", "scale"):
                raise _method_not_allowed()
            obj = self.api.get(rt, t.namespace, t.name or "")
            if form == TABLE_FORM and not t.subresource:
                include = parse_include_object(q.get("includeObject"))
                rv = {"resourceVersion": get_resource_version(obj) or None}
                return self._respond(
                    request, 200, _table_version(_table_converter(rt).table([obj], rv, include), form_version)
                )
            return self._respond(request, 200, obj)
        if verb == "list":
            return await self._list(
                request, t, meta_only, table_version=form_version if form == TABLE_FORM else ""
            )
        if verb == "watch":
            return await self._watch(
                request, t, meta_only, table_version=form_version if form == TABLE_FORM else ""
            )
        if verb in ("delete", "deletecollection"):
            return await self._delete(request, t, verb)
        opts = self._write_options(request, patch=verb == "patch")
        opts.user = request[REQUEST_INFO].user
        # Writes go through the admission webhooks (admission.py, spec §21) on their way to the API.
        admission = self.server.admission
        if verb == "create" and (not rt.persisted or t.subresource == "token"):
            body = await _read_body(request, rt)
            res = self.server.review(rt, t.namespace, t.name, body, opts.user)
        elif verb == "create":
            body = await _read_body(request, rt)
            res = await admission.create(rt, t.namespace, body, opts)
        elif verb == "update":
            body = await _read_body(request, rt)
            res = await admission.update(rt, t.namespace, t.name or "", body, opts, t.subresource)
        else:  # patch
            raw = await _read_raw(request)
            ctype = request.headers.get("Content-Type", "").split(";")[0].strip()
            res = await admission.patch(rt, t.namespace, t.name or "", ctype, raw, opts, t.subresource)
        headers = {"Warning": ", ".join(_warning_value(w) for w in res.warnings)} if res.warnings else None
        return self._respond(request, res.code, res.body, headers)

    async def _delete(self, request: web.Request, t: Target, verb: str) -> web.Response:
        """delete and deletecollection: DeleteOptions from the body, or from the query without one."""
        rt, q = t.rt, request.query
        if verb == "deletecollection":
            _validate_list_options(q, rt, for_watch=False)
        raw = await _read_raw(request)
        options = query.delete_options(raw, request.headers.get("Content-Type", ""), q)
        # dryRun comes with the options, wherever they came from (kubectl sends it in the body).
        dry_run = bool(options.get("dryRun"))
        user = request[REQUEST_INFO].user
        admission = self.server.admission
        if verb == "delete":
            res = await admission.delete(rt, t.namespace, t.name or "", options, dry_run, user)
        else:
            res = await admission.delete_collection(
                rt, t.namespace, options, q.get("labelSelector"), q.get("fieldSelector"), dry_run, user
            )
        headers = {"Warning": ", ".join(_warning_value(w) for w in res.warnings)} if res.warnings else None
        return self._respond(request, res.code, res.body, headers)

    @staticmethod
    def _verb(method: str, t: Target, is_watch: bool) -> str:
        rt = t.rt
        if t.name is None:
            if t.subresource:
                raise _path_not_found()
            verb = {
                "GET": "watch" if is_watch else "list",
                "POST": "create",
                "DELETE": "deletecollection",
            }.get(method)
        else:
            verb = {
                "GET": "watch" if is_watch else "get",
                "PUT": "update",
                "PATCH": "patch",
                "DELETE": "delete",
                "POST": "create" if t.subresource == "token" else None,
            }.get(method)
            if t.subresource and verb in ("delete", "watch"):
                verb = None
        if verb is None:
            raise _method_not_allowed()
        if verb not in rt.verbs and not t.subresource:
            raise _method_not_allowed()
        return verb

    def _respond(
        self, request: web.Request, code: int, body: dict, headers: dict[str, str] | None = None
    ) -> web.Response:
        if _wants_yaml(request):
            return web.Response(
                body=yaml.safe_dump(body).encode(),
                status=code,
                headers={"Content-Type": "application/yaml", **(headers or {})},
            )
        return json_response(body, code, headers)

    def _check_fault(self, verb: str, t: Target) -> None:
        for f in self.faults:
            if f.verb != verb or f.resource != t.rt.resource:
                continue
            if f.group is not None and f.group != t.rt.group:
                continue
            if f.namespace is not None and f.namespace != t.namespace:
                continue
            if f.remaining is not None:
                f.remaining -= 1
                if f.remaining <= 0:
                    self.faults.remove(f)
            headers = {}
            details: dict[str, Any] = {}
            if f.retry_after is not None:
                headers["Retry-After"] = str(f.retry_after)
                details["retryAfterSeconds"] = f.retry_after
            raise StatusError(
                f.status,
                REASONS.get(f.status),
                f"injected failure for {verb} {t.rt.qualified}",
                details,
                headers,
            )

    def _write_options(self, request: web.Request, patch: bool) -> WriteOptions:
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
            errs.append(
                errors.invalid_value("fieldManager", manager, "must be at most 128 printable characters")
            )
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

    # -- list and watch (§14, §15) ------------------------------------------------------------------

    async def _list(
        self, request: web.Request, t: Target, meta_only: bool = False, table_version: str = ""
    ) -> web.Response:
        q = request.query
        include = parse_include_object(q.get("includeObject")) if table_version else ""
        rv, match, limit = _validate_list_options(q, t.rt, for_watch=False)
        field_selector = q.get("fieldSelector")
        if t.name is not None:
            raise _path_not_found()
        if rv and rv != "0" and not q.get("continue"):
            await self._wait_for_rv(int(rv), exact=match == "Exact" or (match is None and limit > 0))
        body = self.api.list(
            t.rt,
            t.namespace,
            label_selector=q.get("labelSelector"),
            field_selector=field_selector,
            limit=limit,
            continue_token=q.get("continue"),
            resource_version=rv,
            resource_version_match=match,
        )
        if table_version:
            table = _table_converter(t.rt).table(body["items"], body["metadata"], include)
            return self._respond(request, 200, _table_version(table, table_version))
        if meta_only:
            body = {
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": body["metadata"],
                "items": [partial_metadata(i) for i in body["items"]],
            }
        return self._respond(request, 200, body)

    async def _wait_for_rv(self, rv: int, exact: bool) -> None:
        """A resourceVersion from the future: wait up to ~3 s for it, then 504 (14-4)."""
        deadline = time.monotonic() + self.server.future_rv_wait
        while self.storage.rv < rv:
            if time.monotonic() >= deadline:
                raise errors.too_large_rv(rv, self.storage.rv)
            await asyncio.sleep(0.05)

    async def _watch(
        self, request: web.Request, t: Target, meta_only: bool = False, table_version: str = ""
    ) -> web.StreamResponse:
        q = request.query
        include = parse_include_object(q.get("includeObject")) if table_version else ""
        rv, _, _ = _validate_list_options(q, t.rt, for_watch=True)
        field_selector = q.get("fieldSelector")
        if t.name is not None:
            pin = f"metadata.name={t.name}"
            field_selector = f"{field_selector},{pin}" if field_selector else pin
        matcher = self.api.matcher(t.rt, t.namespace, q.get("labelSelector"), field_selector)
        bookmarks = bool(query.query_bool(q, "allowWatchBookmarks"))
        initial = bool(query.query_bool(q, "sendInitialEvents"))
        requested = query.query_int(q, "timeoutSeconds")
        timeout: float
        if requested is None or requested <= 0:
            timeout = random.uniform(self.server.min_request_timeout, 2 * self.server.min_request_timeout)
        else:
            timeout = requested
        resp = web.StreamResponse(status=200, headers={"Content-Type": JSON})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        if table_version:
            converter = _table_converter(t.rt)
            first = [True]

            def one_row_table(rt: ResourceType, obj: dict) -> dict:
                # Column definitions with the first event only, as kube-apiserver (NoHeaders after).
                headers, first[0] = first[0], False
                ext = self.api.external(rt, obj)
                meta = {"resourceVersion": get_resource_version(ext) or None}
                return _table_version(converter.table([ext], meta, include, headers=headers), table_version)

            # Per-watcher encoding (codec None): the header flag and ages make lines unshareable.
            w = Watcher(t.rt, matcher, one_row_table, self.server.watch_buffer, codec=None)
        elif meta_only:
            w = Watcher(
                t.rt,
                matcher,
                lambda rt, obj: partial_metadata(self.api.external(rt, obj)),
                self.server.watch_buffer,
                codec="PartialObjectMetadata",
            )
        else:
            w = Watcher(t.rt, matcher, self.api.external, self.server.watch_buffer)
        table = self.storage.table(t.rt.storage)
        if rv and rv != "0" and not initial:
            n = int(rv)
            if n > self.storage.rv:
                try:
                    await self._wait_for_rv(n, exact=False)
                except StatusError as e:
                    await resp.write(error_line(e.status()))
                    return resp
            if n < table.window_start:
                status = errors.expired(f"too old resource version: {n} ({table.window_start + 1})").status()
                await resp.write(error_line(status))
                return resp
            for ev in table.events_after(n):
                line = w.filter(ev)
                if line is not None:
                    w.buffer.append(line)
        else:
            # Synthetic ADDED for the current state, taken atomically with the registration below.
            for k in sorted(table.objects):
                obj = table.objects[k]
                if matcher(obj):
                    w.buffer.append(w.encode("ADDED", obj))
            if initial and bookmarks:
                w.buffer.append(bookmark(t.rt, self.storage.rv, initial_end=True))
        table.watchers.add(w)
        self.watchers.add(w)
        deadline = time.monotonic() + timeout
        next_bookmark = time.monotonic() + self.server.bookmark_interval
        # One last bookmark shortly before the timeout, so clients resume from a fresh RV (15-6).
        final_bookmark: float | None = deadline - 1.0 if bookmarks else None
        try:
            while True:
                now = time.monotonic()
                if w.buffer:
                    await resp.write(w.drain())
                if w.closed or now >= deadline:
                    break
                # Events may have arrived while the write above waited for a slow reader: a bookmark
                # at the current RV would then overtake them (15-6), so it waits for an empty buffer.
                final_due = final_bookmark is not None and now >= final_bookmark
                if bookmarks and not w.buffer and (now >= next_bookmark or final_due):
                    await resp.write(bookmark(t.rt, self.storage.rv))
                    next_bookmark = now + self.server.bookmark_interval
                    if final_due:
                        final_bookmark = None
                due = [deadline]
                if bookmarks:
                    due.append(next_bookmark)
                if final_bookmark is not None:
                    due.append(final_bookmark)
                await w.wait(max(0.01, min(min(due) - time.monotonic(), 1.0)))
            if w.buffer:
                await resp.write(w.drain())
            await resp.write_eof()
        except (ConnectionResetError, ConnectionError):
            pass  # the client went away: release the watch (15-10)
        finally:
            table.watchers.discard(w)
            self.watchers.discard(w)
        return resp

    def drop_watches(self) -> None:
        for w in list(self.watchers):
            w.close()


# --- helpers -----------------------------------------------------------------------------------------


def _pinned_name(rt: ResourceType, field_selector: str | None) -> str:
    if not field_selector:
        return ""
    try:
        return single_name(parse_field_selector(field_selector, rt.selectable_fields(), True)) or ""
    except StatusError:
        return ""  # a bad selector is answered after authorization, as 400


# kube-apiserver's health checks (k8s.io/apiserver pkg/server/healthz and the post-start hooks it
# registers); every one of them is trivially passing in an in-process server.
_CHECKS = [
    "ping",
    "log",
    "etcd",
    "poststarthook/start-apiserver-admission-initializer",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/start-apiextensions-informers",
    "poststarthook/start-apiextensions-controllers",
    "poststarthook/crd-informer-synced",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/bootstrap-controller",
    "poststarthook/aggregator-reload-proxy-client-cert",
]
_READY_ONLY = ["etcd-readiness", "informer-sync", "shutdown"]


def _health(request: web.Request) -> web.Response:
    """``/healthz``, ``/livez``, ``/readyz`` (1-6): ``ok``; ``?verbose`` lists the checks; a single
    check is ``/livez/NAME``; ``?exclude=NAME`` leaves one out."""
    endpoint, _, check = request.path.strip("/").partition("/")
    checks = _CHECKS[:3] + (_READY_ONLY[:2] if endpoint == "readyz" else []) + _CHECKS[3:]
    if endpoint == "readyz":
        checks.append("shutdown")
    if check:
        if check not in checks:
            return web.Response(status=404, text="404 page not found\n", content_type="text/plain")
        return web.Response(text="ok", content_type="text/plain")
    if "verbose" not in request.query:
        return web.Response(text="ok", content_type="text/plain")
    excluded = set(request.query.getall("exclude", []))
    lines = [f"[+]{c} ok" for c in checks if c not in excluded]
    lines += [f"[+]{c} excluded: ok" for c in checks if c in excluded]
    lines.append(f"{endpoint} check passed")
    return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")


def _aggregated_discovery(request: web.Request) -> str | None:
    """The apidiscovery.k8s.io version an ``Accept`` asks for first (``v2`` or ``v2beta1``), if any."""
    for mt, params in _media_types(request.headers.get("Accept", "")):
        if params.get("as") == "APIGroupDiscoveryList" and params.get("g") == "apidiscovery.k8s.io":
            if mt == "application/json" and params.get("v") in ("v2", "v2beta1"):
                return params["v"]
            continue
        if mt in ("*/*", "application/json", "application/*"):
            return None  # the legacy document comes first
    return None


def _method_not_allowed() -> StatusError:
    """What kube-apiserver's router answers for a method no route of the path serves (go-restful's
    405 through ``NewGenericServerResponse``): PUT/PATCH on a collection, POST on an object, a verb
    the resource does not implement."""
    return StatusError(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}
    )


def _path_not_found() -> StatusError:
    return StatusError(404, "NotFound", "the server could not find the requested resource", {})


def _warning_value(text: str) -> str:
    """4-6: ``299 - "text"`` with ``"`` and ``\\`` escaped as in a quoted-string (apimachinery
    ``NewWarningHeader``); client-go drops warnings whose quotes are not escaped, so kubectl would not
    print them."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def _hash(rt: ResourceType) -> str:
    import hashlib

    return hashlib.sha256(f"{rt.group}/{rt.version}/{rt.kind}".encode()).digest()[:8].hex()[:11]


def _group_order(item: tuple[str, list[str]]) -> tuple[int, str]:
    return (0 if item[0].endswith(".k8s.io") or "." not in item[0] else 1, item[0])


def _media_types(header: str) -> list[tuple[str, dict[str, str]]]:
    out = []
    for part in header.split(","):
        fields = [f.strip() for f in part.split(";")]
        if not fields[0]:
            continue
        params = {}
        for f in fields[1:]:
            k, _, v = f.partition("=")
            params[k.strip()] = v.strip()
        out.append((fields[0].lower(), params))
    return out


JSON_FORM, METADATA_FORM, TABLE_FORM = "json", "metadata", "table"


def _negotiate(request: web.Request) -> tuple[str, str]:
    """The output form Accept asks for, first acceptable wins: ``(form, meta.k8s.io version)``.

    Forms: plain JSON, metadata-only (PartialObjectMetadata[List]) and Table (4-1..4-3). Protobuf output
    is declined cleanly (24-2); 406 when nothing acceptable remains.
    """
    accept = request.headers.get("Accept", "")
    if not accept:
        return JSON_FORM, ""
    for mt, params in _media_types(accept):
        as_ = params.get("as")
        if as_:
            version = params.get("v")
            if (
                mt != "application/json"
                or params.get("g") != "meta.k8s.io"
                or version not in ("v1", "v1beta1")
            ):
                continue
            if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList"):
                return METADATA_FORM, version
            if as_ == "Table":
                return TABLE_FORM, version
            continue
        if mt in ("*/*", "application/*", "application/json", "application/yaml"):
            return JSON_FORM, ""
    raise errors.not_acceptable(SERVED_MEDIA)


def _table_converter(rt: ResourceType) -> TableConverter:
    """Default columns for built-in kinds; the served version's printer columns for custom resources."""
    if rt.crd is None:
        return TableConverter(printer=rt.extra.get("printer") or BUILTIN_PRINTERS.get((rt.group, rt.kind)))
    for v in (rt.crd.get("spec") or {}).get("versions") or []:
        if v.get("name") == rt.version:
            return TableConverter(list(v.get("additionalPrinterColumns") or []))
    return TableConverter([])


def _table_version(table: dict, version: str) -> dict:
    """The Table in the ``meta.k8s.io`` version asked for (v1beta1 Tables are still served)."""
    table["apiVersion"] = f"meta.k8s.io/{version}"
    return table


def _wants_yaml(request: web.Request) -> bool:
    types = _media_types(request.headers.get("Accept", ""))
    return bool(types) and types[0][0] == "application/yaml"


async def _read_raw(request: web.Request) -> bytes:
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY}")
    # ``read(n)`` returns what has arrived so far (one TCP/TLS record), not n bytes: read up to EOF.
    buf = bytearray()
    while len(buf) <= MAX_BODY:
        chunk = await request.content.read(MAX_BODY + 1 - len(buf))
        if not chunk:
            break
        buf += chunk
    data = bytes(buf)
    if len(data) > MAX_BODY:
        raise StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY}")
    return data


async def _read_body(request: web.Request, rt: ResourceType) -> Any:
    raw = await _read_raw(request)
    ctype = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if ctype in ("", "application/json", "*/*"):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            # transformDecodeError: no kind could be read, so the object is "unrecognized".
            raise errors.bad_request(
                f"the object provided is unrecognized (must be of type {rt.kind}): couldn't get "
                f"version/kind; json parse error: {gojson.error_text(raw, e)} ({_summarize(raw)})"
            ) from None
    if ctype in ("application/yaml", "application/x-yaml"):
        try:
            return yaml.safe_load(raw)
        except yaml.YAMLError as e:
            raise errors.bad_request(f"couldn't get version/kind; yaml parse error: {e}") from None
    from . import protobuf  # local: keeps this change inside _read_body

    decodable = protobuf.decodable(rt.api_version, rt.kind)
    if ctype == protobuf.CONTENT_TYPE and decodable:
        # kubectl's typed clients (create namespace/configmap/secret/…, auth can-i) send protobuf and
        # never retry in JSON; the answer stays JSON (1-9). Other kinds: 415 below (24-2).
        return protobuf.decode(raw, rt.api_version, rt.kind)
    raise errors.unsupported_media_type([*BODY_MEDIA, protobuf.CONTENT_TYPE] if decodable else BODY_MEDIA)


def _summarize(data: bytes, limit: int = 30) -> str:
    """apiserver's ``summarizeData``: JSON-looking bodies as text, anything else hex-encoded."""
    if not data:
        return "<empty>"
    head = data[:limit]
    text = head.decode("utf-8", errors="replace") if data[:1] == b"{" else head.hex()
    return text + (" ..." if len(data) > limit else "")


def _validate_list_options(q: Any, rt: ResourceType, for_watch: bool) -> tuple[str | None, str | None, int]:
    """Apply the ListOptions rules of 14-4 and 15-8; returns (resourceVersion, match, limit)."""
    rv = q.get("resourceVersion") or None
    match = q.get("resourceVersionMatch") or None
    cont = q.get("continue") or None
    initial = q.get("sendInitialEvents")
    limit = query.query_int(q, "limit") or 0
    query.query_int(q, "timeoutSeconds")  # a list ignores it, but it must decode (400 otherwise)
    if rv is not None and rv != "0":
        try:
            if int(rv) < 0:
                raise ValueError
        except ValueError:
            raise errors.options_invalid(
                "ListOptions", [errors.invalid_value("resourceVersion", rv, "must be a non-negative integer")]
            ) from None
    errs = []
    if for_watch:
        if initial is not None and query.go_bool(initial):
            if match != "NotOlderThan":
                errs.append(
                    errors.forbidden(
                        "resourceVersionMatch",
                        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    )
                )
        elif initial is None and match:
            errs.append(
                errors.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                )
            )
        elif initial is not None and match and match != "NotOlderThan":
            errs.append(errors.not_supported("resourceVersionMatch", match, ["NotOlderThan"]))
    else:
        if initial is not None:
            errs.append(errors.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
        if match is not None:
            if match not in ("Exact", "NotOlderThan"):
                errs.append(errors.not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan"]))
            elif cont:
                errs.append(
                    errors.forbidden(
                        "resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"
                    )
                )
            elif rv is None:
                errs.append(
                    errors.forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden unless resourceVersion is provided",
                    )
                )
            elif match == "Exact" and rv == "0":
                errs.append(
                    errors.forbidden(
                        "resourceVersionMatch",
                        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                    )
                )
    if errs:
        raise errors.options_invalid("ListOptions", errs)
    if cont and rv not in (None, "0"):
        raise errors.bad_request("specifying resource version is not allowed when using continue")
    if limit < 0:
        limit = 0
    return rv, match, limit
