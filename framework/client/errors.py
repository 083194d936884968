"""Typed Kubernetes API errors, chosen from a ``Status`` object's ``reason`` (falling back to its code).

Every failed request raises an :class:`APIError` subclass, so callers branch on the type instead of
comparing numbers::

    try:
        client.get("v1", "ConfigMap", "settings", namespace="default")
    except NotFound:
        ...

The mapping follows apimachinery's ``pkg/api/errors`` (``IsNotFound``, ``IsConflict``, ...): the
``reason`` decides, the HTTP code only when the reason is missing or unknown. A 410 is :class:`Gone`
whether the server says ``Expired`` (current servers) or ``Gone`` (legacy).

Errors that happen without an HTTP answer use ``status == 0``: :class:`Timeout` for client-side
connect/read timeouts (e.g. a silent watch) and :class:`NetworkError` for refused or broken connections.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Any

import orjson

__all__ = [
    "APIError",
    "AlreadyExists",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "MethodNotAllowed",
    "NetworkError",
    "NotAcceptable",
    "NotFound",
    "ServerError",
    "Timeout",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "error_class",
    "from_response",
    "from_status",
    "parse_retry_after",
]


class APIError(Exception):
    """A request the API server (or the transport to it) refused.

    Attributes:
        status: the HTTP status code (``code`` of the Status); 0 when no response was received.
        reason: the Status ``reason`` (``NotFound``, ``Conflict``, ...), or ``""``.
        message: the human-readable Status ``message``.
        details: the Status ``details`` (``name``, ``group``, ``kind``, ``causes``, ...), or ``{}``.
        body: the decoded response body when it was JSON, else ``None``.
        retry_after: seconds the server asked to wait (``Retry-After`` header or
            ``details.retryAfterSeconds``), else ``None``.
    """

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        body: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(status, reason, message, details, body, retry_after)
        self.status = status
        self.reason = reason
        self.message = message
        self.details: dict[str, Any] = details or {}
        self.body = body
        self.retry_after = retry_after

    @property
    def code(self) -> int:
        """Alias of :attr:`status` (the Status object's field name)."""
        return self.status

    @property
    def causes(self) -> list[dict[str, Any]]:
        """``details.causes``: field-level problems (``reason``, ``message``, ``field``)."""
        return list(self.details.get("causes") or [])

    def __str__(self) -> str:
        head = f"{self.status} {self.reason}" if self.reason else str(self.status)
        return f"{head}: {self.message}" if self.message else head

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.status}, {self.reason!r}, {self.message!r})"


class BadRequest(APIError):
    """400: a malformed request (bad selector, bad patch document, ...)."""


class Unauthorized(APIError):
    """401: missing or invalid credentials."""


class Forbidden(APIError):
    """403: the user may not do this (RBAC, terminating namespace, protected namespace)."""


class NotFound(APIError):
    """404: the object (or the resource type) does not exist."""


class MethodNotAllowed(APIError):
    """405: the resource does not support this verb."""


class NotAcceptable(APIError):
    """406: the server cannot produce the requested media type."""


class AlreadyExists(APIError):
    """409 ``AlreadyExists``: create of a name that is taken."""


class Conflict(APIError):
    """409 ``Conflict``: a stale resourceVersion or failed precondition; re-read and retry."""


class Gone(APIError):
    """410 (reason ``Expired`` or ``Gone``): a resourceVersion or continue token is too old; relist."""


class UnsupportedMediaType(APIError):
    """415: the body or patch type is not accepted (e.g. apply on a server without server-side apply)."""


class Invalid(APIError):
    """422: validation failed; see :attr:`APIError.causes` for the fields."""


class TooManyRequests(APIError):
    """429: throttled by the server (raised once the client's retries are exhausted)."""


class ServerError(APIError):
    """5xx other than a timeout: an internal error or an unavailable server."""


class Timeout(APIError):
    """504 / reason ``Timeout`` / ``ServerTimeout``, or a client-side connect/read timeout (status 0)."""


class NetworkError(APIError):
    """No usable HTTP response: connection refused or reset, TLS failure (status 0)."""


_BY_REASON: dict[str, type[APIError]] = {
    "BadRequest": BadRequest,
    "Unauthorized": Unauthorized,
    "Forbidden": Forbidden,
    "NotFound": NotFound,
    "MethodNotAllowed": MethodNotAllowed,
    "NotAcceptable": NotAcceptable,
    "AlreadyExists": AlreadyExists,
    "Conflict": Conflict,
    "Gone": Gone,
    "Expired": Gone,
    "UnsupportedMediaType": UnsupportedMediaType,
    "Invalid": Invalid,
    "TooManyRequests": TooManyRequests,
    "InternalError": ServerError,
    "ServiceUnavailable": ServerError,
    "Timeout": Timeout,
    "ServerTimeout": Timeout,
}

_BY_CODE: dict[int, type[APIError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    406: NotAcceptable,
    409: Conflict,
    410: Gone,
    415: UnsupportedMediaType,
    422: Invalid,
    429: TooManyRequests,
    504: Timeout,
}

# Messages client-go renders for error answers without a Status body (rest/request.go).
_DEFAULT_MESSAGES = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    403: "the server does not allow access to the requested resource",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    409: "the server reported a conflict",
    410: "the server has asked for the client to provide a newer resource version",
    415: "the server responded with the status code 415 but did not return more information",
    422: "the server rejected our request due to an error in our request",
    429: "the server has received too many requests and has asked us to try again later",
    500: "an error on the server has prevented the request from succeeding",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing",
}


def error_class(status: int, reason: str | None) -> type[APIError]:
    """The :class:`APIError` subclass for a Status ``reason`` (preferred) or HTTP ``status``."""
    cls = _BY_REASON.get(reason or "")
    if cls is not None:
        return cls
    cls = _BY_CODE.get(status)
    if cls is not None:
        return cls
    if status >= 500:
        return ServerError
    return APIError


def from_status(
    status: Mapping[str, Any],
    http_status: int | None = None,
    retry_after: float | None = None,
) -> APIError:
    """Build the typed error for a ``Status`` object (an error body or a watch ``ERROR`` event)."""
    code = status.get("code")
    if not isinstance(code, int) or code == 0:
        code = http_status or 500
    reason = status.get("reason") or ""
    details = status.get("details") or {}
    if not isinstance(details, dict):
        details = {}
    if retry_after is None:
        seconds = details.get("retryAfterSeconds")
        if isinstance(seconds, int | float) and seconds > 0:
            retry_after = float(seconds)
    message = status.get("message") or _DEFAULT_MESSAGES.get(code, "")
    cls = error_class(code, reason)
    return cls(code, reason, message, details, dict(status), retry_after)


def from_response(
    status: int,
    data: bytes | str | Mapping[str, Any] | None,
    headers: Mapping[str, str] | None = None,
) -> APIError:
    """Build the typed error for an HTTP error response.

    ``data`` may be the raw body or an already decoded one. A ``Status`` body supplies reason, message
    and details; anything else becomes the message (like client-go, which shows the body text).
    ``Retry-After`` (seconds or an HTTP date) wins over ``details.retryAfterSeconds``.
    """
    retry_after = parse_retry_after((headers or {}).get("Retry-After"))
    body: Any = data
    if isinstance(data, bytes | str):
        text = data.strip()
        try:
            body = orjson.loads(text) if text else None
        except orjson.JSONDecodeError:
            body = None
            message = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
            cls = error_class(status, None)
            return cls(status, "", message[:4096] or _DEFAULT_MESSAGES.get(status, ""), {}, None, retry_after)
    if isinstance(body, Mapping) and body.get("kind") == "Status":
        return from_status(body, http_status=status, retry_after=retry_after)
    cls = error_class(status, None)
    decoded = dict(body) if isinstance(body, Mapping) else None
    return cls(
        status, "", _DEFAULT_MESSAGES.get(status, f"unexpected HTTP {status}"), {}, decoded, retry_after
    )


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP-date); ``None`` if absent/invalid."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(int(value)))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
