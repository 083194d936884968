"""Calling one webhook: the ``AdmissionReview`` request (``v1`` or ``v1beta1``), the HTTPS call
(``clientConfig.url``, or ``clientConfig.service`` through ``APIServer.webhook_service_map`` with TLS
verifying ``NAME.NAMESPACE.svc``), the response checks, and kube-apiserver's messages for failures
and denials (21-4..21-6)."""

from __future__ import annotations

import base64
import binascii
import ssl
import uuid
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson
import structlog

from framework.apiserver.admission.configuration import V1, Webhook
from framework.apiserver.admission.review import Attributes
from framework.apiserver.crd import conversion_scope
from framework.apiserver.endpoints.responses import warning_value
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.registry.rest.objects import deep_copy
from framework.apiserver.registry.strategy import ResourceType
from framework.meta import jsoncodec

if TYPE_CHECKING:
    from framework.apiserver.server import APIServer

log = structlog.get_logger("framework.apiserver")

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


class CallError(Exception):
    """A failed webhook call (kube-apiserver's ``ErrCallingWebhook``): failurePolicy decides."""


class WebhookClient:
    """Calls webhooks for ``server``: one HTTP session, TLS contexts cached per ``caBundle``."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.api = server.api
        self._ssl: dict[str, ssl.SSLContext] = {}
        self._session: aiohttp.ClientSession | None = None

    async def invoke(
        self, hook: Webhook, rt: ResourceType, a: Attributes, warnings: list[str]
    ) -> dict | None:
        """Call one webhook; returns its ``response`` when it allowed the request (None when a failure
        was ignored), raises the Status error of a refusal or of a failure under ``Fail``."""
        uid = str(uuid.uuid4())
        scope = conversion_scope.active(rt.crd)
        if scope is not None:  # the objects in the webhook's version of a webhook-converted CRD
            await scope.ensure([a.obj, a.old], rt.api_version)
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

    def versioned(self, rt: ResourceType, stored: dict | None) -> dict | None:
        """A stored object as the webhook's (possibly equivalent) resource version shows it."""
        return None if stored is None else self.api.external(rt, deep_copy(stored))

    def _request(self, hook: Webhook, rt: ResourceType, a: Attributes, uid: str) -> dict:
        req = admission_request(self.api, rt, a, hook.mutating)
        return {"apiVersion": hook.review_version, "kind": "AdmissionReview", "request": {"uid": uid, **req}}

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

    async def _call(self, hook: Webhook, review: dict, uid: str) -> dict:
        try:
            doc = await self.post(hook.client_config, review, hook.timeout, timeout_param=True)
        except CallError as e:
            raise CallError(f"failed to call webhook: {e}") from None
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

    async def post(self, cc: dict, review: dict, timeout: float, timeout_param: bool) -> dict:
        """POST ``review`` as JSON to a webhook's ``clientConfig`` over TLS and answer the decoded JSON
        object; ``CallError`` carries client-go's words for what failed (the ``Post "URL": ...`` of a
        transport error, the Status message of a non-2xx answer, a decode error). ``timeout_param`` adds
        the ``?timeout=`` query admission webhooks get (conversion webhooks do not)."""
        url, connect_url, server_hostname, context = self._target(cc, timeout if timeout_param else None)
        if timeout_param:
            sep = "&" if "?" in url else "?"
            url += f"{sep}timeout={int(timeout)}s"
            connect_url += f"{sep}timeout={int(timeout)}s"
        headers = {"Content-Type": "application/json", "Accept": "application/json, */*"}
        if server_hostname:
            headers["Host"] = url.split("/")[2]
        session = self._client()
        try:
            async with session.post(
                connect_url,
                data=jsoncodec.dumps(review),
                headers=headers,
                ssl=context,
                server_hostname=server_hostname,
                timeout=aiohttp.ClientTimeout(total=timeout),
                allow_redirects=False,
            ) as resp:
                body = await resp.read()
                status = resp.status
        except TimeoutError:
            raise CallError(f'Post "{url}": context deadline exceeded') from None
        except aiohttp.ClientConnectorCertificateError as e:
            cause = getattr(e.certificate_error, "verify_message", None) or str(e.certificate_error)
            raise CallError(f'Post "{url}": tls: failed to verify certificate: {cause}') from None
        except (aiohttp.ClientError, OSError, ssl.SSLError) as e:
            raise CallError(f'Post "{url}": {_describe(e)}') from None
        if not 200 <= status < 300:
            raise CallError(_http_error(status, body))
        try:
            doc = jsoncodec.loads(body)
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            raise CallError(f"couldn't get version/kind; json parse error: {e}") from None
        return doc

    def _target(self, cc: dict, timeout: float | None) -> tuple[str, str, str | None, ssl.SSLContext]:
        """(URL as kube-apiserver names it, URL to connect to, TLS server name, TLS context)."""
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
            shown = url if timeout is None else f"{url}?timeout={int(timeout)}s"
            raise CallError(
                f'Post "{shown}": service "{ns}/{name}" '
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
                    raise CallError(f"invalid caBundle: {e}") from None
            else:
                context = ssl.create_default_context()
            self._ssl[ca_bundle] = context
        return context

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True))
        return self._session

    async def close(self) -> None:
        """Close the HTTP session (a later call opens a new one)."""
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
        headers["Warning"] = ", ".join(warning_value(w) for w in warnings)
    return StatusError(code, reason or None, message, details, headers)


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


def admission_request(api: Any, rt: ResourceType, a: Attributes, mutating: bool) -> dict[str, Any]:
    """An ``AdmissionRequest`` (without ``uid``) for ``a`` as seen through ``rt``, the matched (possibly
    equivalent) resource: what a webhook receives and what CEL's ``request`` variable holds."""

    def versioned(stored: dict | None) -> dict | None:
        return None if stored is None else api.external(rt, deep_copy(stored))

    obj = versioned(a.obj)
    if obj is not None and a.operation == "CREATE" and mutating:
        meta = obj.get("metadata") or {}
        for k in _UNSET_ON_CREATE:
            meta.pop(k, None)
        if not a.name:
            meta.pop("name", None)  # generateName: the name is generated after mutation
    req: dict[str, Any] = {
        "kind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
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
    req["oldObject"] = versioned(a.old)
    req["dryRun"] = a.dry_run
    req["options"] = WebhookClient._options(a)
    return req
