"""Kubernetes ``Status`` errors, with the exact reasons, codes and messages of kube-apiserver.

Every failure inside the server raises :class:`StatusError`; the HTTP layer renders it as a
``Status`` body (spec 5-1). Field-level validation problems are collected as :class:`FieldError`
values and turned into one ``422 Invalid`` by :func:`invalid` (spec 5-3, 5-4).
"""

from __future__ import annotations

from typing import Any

from framework.meta import field
from framework.meta.schema import GroupKind, GroupResource


class StatusError(Exception):
    """An error that the server answers with a ``Status`` object."""

    def __init__(
        self,
        code: int,
        reason: str | None,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        # None omits ``details``; an explicit ``{}`` is rendered (the router's 404 carries one, 2-6).
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        return failure_status(self.code, self.reason, self.message, self.details)

    def __repr__(self) -> str:
        return f"StatusError({self.code}, {self.reason!r}, {self.message!r})"


def failure_status(code: int, reason: str | None, message: str, details: dict | None = None) -> dict:
    """A ``Status`` body with ``status: Failure``; an empty reason and absent details are omitted (5-1)."""
    out: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
    out["message"] = message
    if reason:
        out["reason"] = reason
    if details is not None:
        out["details"] = details
    out["code"] = code
    return out


# --- field errors: framework.meta.field, under the names the server's modules use ---------------

FieldError = field.Error
REQUIRED = field.ErrorType.REQUIRED
INVALID = field.ErrorType.INVALID
FORBIDDEN = field.ErrorType.FORBIDDEN
NOT_SUPPORTED = field.ErrorType.NOT_SUPPORTED
DUPLICATE = field.ErrorType.DUPLICATE
TOO_LONG = field.ErrorType.TOO_LONG
TOO_MANY = field.ErrorType.TOO_MANY
TYPE_INVALID = field.ErrorType.TYPE_INVALID
NOT_FOUND = field.ErrorType.NOT_FOUND
go_value = field.go_value
required = field.required
invalid_value = field.invalid
forbidden = field.forbidden
not_supported = field.not_supported
duplicate = field.duplicate
too_long = field.too_long
type_invalid = field.type_invalid


# --- Status constructors (5-3) --------------------------------------------------------------------


def qualified_resource(resource: str, group: str) -> str:
    return str(GroupResource(group, resource))


def qualified_kind(kind: str, group: str) -> str:
    return str(GroupKind(group, kind))


def not_found(resource: str, group: str, name: str) -> StatusError:
    return StatusError(
        404,
        "NotFound",
        f'{qualified_resource(resource, group)} "{name}" not found',
        {"name": name, "group": group, "kind": resource} if group else {"name": name, "kind": resource},
    )


def _details(name: str, group: str, kind: str) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    d["kind"] = kind
    return d


def already_exists(resource: str, group: str, name: str) -> StatusError:
    return StatusError(
        409,
        "AlreadyExists",
        f'{qualified_resource(resource, group)} "{name}" already exists',
        _details(name, group, resource),
    )


def generate_name_exhausted(resource: str, group: str, name: str) -> StatusError:
    d = _details(name, group, resource)
    d["retryAfterSeconds"] = 1
    return StatusError(
        409,
        "AlreadyExists",
        f'{qualified_resource(resource, group)} "{name}" already exists, '
        "the server was not able to generate a unique name for the object",
        d,
    )


def conflict(resource: str, group: str, name: str, why: str | None = None) -> StatusError:
    why = why or (
        "the object has been modified; please apply your changes to the latest version and try again"
    )
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified_resource(resource, group)} "{name}": {why}',
        _details(name, group, resource),
    )


def invalid(kind: str, group: str, name: str, errors: list[FieldError]) -> StatusError:
    """``422 Invalid`` for one or more field errors (5-3: details.kind is the Kind)."""
    text = field.aggregate(e.message() for e in errors)
    d = _details(name, group, kind)
    d["causes"] = [e.cause() for e in errors]
    return StatusError(422, "Invalid", f'{qualified_kind(kind, group)} "{name}" is invalid: {text}', d)


def forbidden_error(
    resource: str, group: str, name: str, why: str, causes: list | None = None
) -> StatusError:
    res = qualified_resource(resource, group)
    msg = f'{res} "{name}" is forbidden: {why}' if name else f"{res} is forbidden: {why}"
    d = _details(name, group, resource)
    if causes:
        d["causes"] = causes
    return StatusError(403, "Forbidden", msg, d)


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def method_not_allowed(verb: str, resource: str, group: str = "", name: str = "") -> StatusError:
    return StatusError(
        405,
        "MethodNotAllowed",
        f'{verb} is not supported on resources of kind "{qualified_resource(resource, group)}"',
        _details(name, group, resource),
    )


def not_acceptable(accepted: list[str]) -> StatusError:
    return StatusError(
        406, "NotAcceptable", "only the following media types are accepted: " + ", ".join(accepted)
    )


def unsupported_media_type(accepted: list[str]) -> StatusError:
    return StatusError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted),
    )


def expired(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def too_large_rv(requested: int, current: int) -> StatusError:
    return StatusError(
        504,
        "Timeout",
        f"Too large resource version: {requested}, current: {current}",
        {
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        },
    )


def options_invalid(options_kind: str, errors: list[FieldError]) -> StatusError:
    """``422`` for ListOptions / PatchOptions / DeleteOptions validation (5-6)."""
    text = field.aggregate(e.message() for e in errors)
    return StatusError(
        422,
        "Invalid",
        f'{options_kind}.meta.k8s.io "" is invalid: {text}',
        {"group": "meta.k8s.io", "kind": options_kind, "causes": [e.cause() for e in errors]},
    )


def internal_error(message: str) -> StatusError:
    return StatusError(
        500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]}
    )


def too_many_requests(message: str, retry_after: int | None) -> StatusError:
    details: dict[str, Any] = {}
    headers: dict[str, str] = {}
    if retry_after is not None:
        details["retryAfterSeconds"] = retry_after
        headers["Retry-After"] = str(retry_after)
    return StatusError(429, "TooManyRequests", message, details or None, headers)
