"""AdmissionReview requests and responses, and the review logic the webhook server runs per call.

``review(body, content_type, handler)`` turns one HTTP body into the AdmissionReview to answer with,
following controller-runtime (pkg/webhook/admission/http.go) and the request/response contract of
https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/:

- the answer is always an AdmissionReview of the request's apiVersion (``admission.k8s.io/v1`` or
  ``v1beta1``; v1 when the request's version cannot be told) with ``response.uid`` = ``request.uid``;
- an empty body, a ``Content-Type`` other than ``application/json``, a body that is not JSON, not an
  AdmissionReview, or has no ``request`` → ``allowed: false``, ``status.code`` 400 with the error text
  (the server answers 413 itself for bodies over 7 MiB);
- a handler that raises → ``allowed: false``, ``status.code`` 500, and the exception is logged;
- the status code defaults to 200, and a patch goes out base64-encoded with ``patchType: JSONPatch``.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
import structlog

from framework.meta import jsoncodec
from framework.meta.schema import GroupVersionKind, GroupVersionResource

__all__ = [
    "MAX_REQUEST_SIZE",
    "SUPPORTED_VERSIONS",
    "AdmissionHandler",
    "AdmissionRequest",
    "AdmissionResponse",
    "GroupVersionKind",
    "GroupVersionResource",
    "ReviewError",
    "allowed",
    "decode_review",
    "denied",
    "encode_review",
    "errored",
    "patched",
    "review",
]

log = structlog.get_logger("framework.webhook")

V1 = "admission.k8s.io/v1"
V1BETA1 = "admission.k8s.io/v1beta1"
SUPPORTED_VERSIONS = (V1, V1BETA1)
# controller-runtime's limit (pkg/webhook/admission/http.go); kube-apiserver caps request objects lower.
MAX_REQUEST_SIZE = 7 * 1024 * 1024

_PATCH_OPS = frozenset({"add", "remove", "replace", "move", "copy", "test"})
# metav1.StatusReason for the codes a webhook is likely to use (k8s.io/apimachinery/pkg/api/errors).
_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class ReviewError(Exception):
    """A request the server cannot hand to a handler; answered with ``errored(code, message)``."""

    def __init__(self, code: int, message: str, api_version: str = V1, uid: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.api_version = api_version
        self.uid = uid


def _field(raw: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    value = raw.get(key)
    if value is None:
        return default
    if not isinstance(value, kind):
        raise ValueError(f"request.{key}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _gvk(raw: Mapping[str, Any], key: str) -> GroupVersionKind | None:
    value = _field(raw, key, dict, None)
    if value is None:
        return None
    return GroupVersionKind(*(_field(value, k, str, "") for k in ("group", "version", "kind")))


def _gvr(raw: Mapping[str, Any], key: str) -> GroupVersionResource | None:
    value = _field(raw, key, dict, None)
    if value is None:
        return None
    return GroupVersionResource(*(_field(value, k, str, "") for k in ("group", "version", "resource")))


@dataclass(frozen=True)
class AdmissionRequest:
    """A read-only view of ``AdmissionReview.request`` (the same in v1 and v1beta1).

    ``kind`` / ``resource`` compare equal to plain tuples: ``req.resource == ("", "v1", "namespaces")``.
    ``request_kind`` / ``request_resource`` / ``request_sub_resource`` are what the client originally
    asked for when a ``matchPolicy: Equivalent`` webhook receives a converted request. ``object`` is
    None for DELETE, ``old_object`` None for CREATE. ``raw`` is the request exactly as received.
    """

    uid: str
    kind: GroupVersionKind
    resource: GroupVersionResource
    sub_resource: str
    name: str
    namespace: str
    operation: str
    user_info: Mapping[str, Any]
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None
    dry_run: bool
    options: dict[str, Any] | None
    raw: Mapping[str, Any] = field(repr=False)
    request_kind: GroupVersionKind | None = None
    request_resource: GroupVersionResource | None = None
    request_sub_resource: str = ""

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> AdmissionRequest:
        """Decode ``request``; raises ValueError when a field has the wrong type or ``uid`` is missing."""
        uid = _field(raw, "uid", str, "")
        if not uid:
            raise ValueError("request.uid is missing")
        return cls(
            uid=uid,
            kind=_gvk(raw, "kind") or GroupVersionKind("", "", ""),
            resource=_gvr(raw, "resource") or GroupVersionResource("", "", ""),
            sub_resource=_field(raw, "subResource", str, ""),
            name=_field(raw, "name", str, ""),
            namespace=_field(raw, "namespace", str, ""),
            operation=_field(raw, "operation", str, ""),
            user_info=_field(raw, "userInfo", dict, {}),
            object=_field(raw, "object", dict, None),
            old_object=_field(raw, "oldObject", dict, None),
            dry_run=_field(raw, "dryRun", bool, False),
            options=_field(raw, "options", dict, None),
            raw=raw,
            request_kind=_gvk(raw, "requestKind"),
            request_resource=_gvr(raw, "requestResource"),
            request_sub_resource=_field(raw, "requestSubResource", str, ""),
        )

    @property
    def username(self) -> str:
        return str(self.user_info.get("username", ""))


@dataclass(frozen=True)
class AdmissionResponse:
    """The verdict a handler returns; build it with ``allowed``, ``denied``, ``patched`` or ``errored``.

    ``status`` holds metav1.Status fields (``code``, ``reason``, ``message``, ``details``, ``status``);
    ``patch`` is a list of JSONPatch operations.
    """

    allowed: bool
    status: Mapping[str, Any] | None = None
    patch: tuple[Mapping[str, Any], ...] = ()
    warnings: tuple[str, ...] = ()
    audit_annotations: Mapping[str, str] | None = None

    @property
    def code(self) -> int:
        """``status.code`` as sent (200 unless set)."""
        return int((self.status or {}).get("code") or 200)

    def to_dict(self, uid: str) -> dict[str, Any]:
        """The ``response`` member of an AdmissionReview answering request ``uid``."""
        status = {"metadata": {}, **(self.status or {})}
        if not status.get("code"):
            status["code"] = 200
        response: dict[str, Any] = {"uid": uid, "allowed": self.allowed, "status": status}
        if self.patch:
            response["patch"] = base64.b64encode(jsoncodec.dumps(list(self.patch))).decode()
            response["patchType"] = "JSONPatch"
        if self.warnings:
            response["warnings"] = list(self.warnings)
        if self.audit_annotations:
            response["auditAnnotations"] = dict(self.audit_annotations)
        return response


def allowed(message: str | None = None, warnings: Iterable[str] = ()) -> AdmissionResponse:
    """Admit the request (``status.code`` 200, with ``message`` if given)."""
    status: dict[str, Any] = {"code": 200}
    if message:
        status["message"] = message
    return AdmissionResponse(True, status, warnings=tuple(warnings))


def denied(
    message: str,
    code: int = 403,
    reason: str | None = None,
    *,
    details: Mapping[str, Any] | None = None,
    warnings: Iterable[str] = (),
) -> AdmissionResponse:
    """Reject the request: ``status`` Failure with ``code`` (403) and ``reason`` (derived from the code:
    ``Forbidden`` for 403). kube-apiserver shows the client ``admission webhook "<name>" denied the
    request: <message>`` with this code (codes below 400 become 400)."""
    status: dict[str, Any] = {"status": "Failure", "code": code, "message": message}
    reason = reason or _REASONS.get(code)
    if reason:
        status["reason"] = reason
    if details:
        status["details"] = dict(details)
    return AdmissionResponse(False, status, warnings=tuple(warnings))


def errored(code: int, message: str | BaseException) -> AdmissionResponse:
    """Reject because the request could not be processed: ``status.code`` = ``code``, no reason."""
    return AdmissionResponse(False, {"status": "Failure", "code": code, "message": str(message)})


def patched(
    patch_ops: Iterable[Mapping[str, Any]], message: str | None = None, warnings: Iterable[str] = ()
) -> AdmissionResponse:
    """Admit the request with JSONPatch operations (``[{"op": "add", "path": ..., "value": ...}]``)."""
    ops = tuple(patch_ops)
    for op in ops:
        if (
            not isinstance(op, Mapping)
            or op.get("op") not in _PATCH_OPS
            or not isinstance(op.get("path"), str)
        ):
            raise ValueError(f"not a JSONPatch operation: {op!r}")
    base = allowed(message, warnings)
    return AdmissionResponse(True, base.status, patch=ops, warnings=base.warnings)


AdmissionHandler = Callable[[AdmissionRequest], AdmissionResponse]


def encode_review(api_version: str, uid: str, response: AdmissionResponse) -> dict[str, Any]:
    """The AdmissionReview answering request ``uid`` in ``api_version``."""
    return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response.to_dict(uid)}


def _peek(body: bytes) -> tuple[str, str]:
    """Best-effort apiVersion and uid of a body that is rejected for another reason."""
    try:
        doc = jsoncodec.loads(body, jsoncodec.WRAPPED_MAX_DEPTH)
    except orjson.JSONDecodeError:
        return V1, ""
    if not isinstance(doc, dict):
        return V1, ""
    version = doc["apiVersion"] if doc.get("apiVersion") in SUPPORTED_VERSIONS else V1
    request = doc.get("request")
    uid = request.get("uid") if isinstance(request, dict) else None
    return version, uid if isinstance(uid, str) else ""


def decode_review(body: bytes, content_type: str = "application/json") -> tuple[str, AdmissionRequest]:
    """``(apiVersion, request)`` of an AdmissionReview body; raises ReviewError (code 400) otherwise."""
    if not body:
        raise ReviewError(400, "request body is empty")
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        version, uid = _peek(body)
        raise ReviewError(400, f"contentType={content_type}, expected application/json", version, uid)
    try:
        doc = jsoncodec.loads(body, jsoncodec.WRAPPED_MAX_DEPTH)
    except orjson.JSONDecodeError as error:
        raise ReviewError(400, f"couldn't decode the AdmissionReview: {error}") from None
    if not isinstance(doc, dict):
        raise ReviewError(
            400, f"couldn't decode the AdmissionReview: expected a JSON object, got {type(doc).__name__}"
        )
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if kind != "AdmissionReview" or api_version not in SUPPORTED_VERSIONS:
        raise ReviewError(
            400,
            f"unsupported object apiVersion={api_version!r} kind={kind!r}: expected an AdmissionReview "
            f"of {V1} or {V1BETA1}",
        )
    raw = doc.get("request")
    if raw is None:
        raise ReviewError(400, "the AdmissionReview has no request", api_version)
    if not isinstance(raw, dict):
        raise ReviewError(400, f"request: expected an object, got {type(raw).__name__}", api_version)
    try:
        return api_version, AdmissionRequest.from_dict(raw)
    except ValueError as error:
        uid = raw["uid"] if isinstance(raw.get("uid"), str) else ""
        raise ReviewError(400, str(error), api_version, uid) from None


def review(body: bytes, content_type: str, handler: AdmissionHandler, *, webhook: str = "") -> dict[str, Any]:
    """The AdmissionReview answering ``body`` (see the module docstring). Never raises."""
    try:
        api_version, request = decode_review(body, content_type)
    except ReviewError as error:
        log.warning(
            "rejected a malformed admission review", webhook=webhook, code=error.code, error=error.message
        )
        return encode_review(error.api_version, error.uid, errored(error.code, error.message))
    bound = log.bind(
        webhook=webhook,
        uid=request.uid,
        operation=request.operation,
        resource=request.resource.resource,
        namespace=request.namespace,
        name=request.name,
    )
    try:
        response = handler(request)
    except Exception as error:
        bound.error("admission handler raised", exc_info=True)
        response = errored(500, f"webhook handler failed: {type(error).__name__}: {error}")
    else:
        if not isinstance(response, AdmissionResponse):
            bound.error(
                "admission handler returned a non-AdmissionResponse", returned=type(response).__name__
            )
            response = errored(
                500, f"webhook handler returned {type(response).__name__}, not an AdmissionResponse"
            )
    try:
        return encode_review(api_version, request.uid, response)
    except (TypeError, orjson.JSONEncodeError) as error:  # e.g. a patch value orjson cannot encode
        bound.error("admission response cannot be encoded", exc_info=True)
        return encode_review(api_version, request.uid, errored(500, f"cannot encode the response: {error}"))
