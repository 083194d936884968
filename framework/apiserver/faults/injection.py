"""Injected failures: a test asks the server to fail matching requests with a chosen status.

``APIServer.inject_fault`` adds a :class:`Fault`; every resource request is checked against the list
after authorization, so the failure looks to the client like the real server refusing the request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from framework.apiserver.machinery.errors import StatusError

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


@dataclass
class Fault:
    """Fail requests of ``verb`` on ``resource`` (in ``group``/``namespace`` if set) with ``status``,
    ``remaining`` times (forever if ``None``), suggesting a retry after ``retry_after`` seconds."""

    verb: str
    resource: str
    group: str | None
    namespace: str | None
    status: int
    remaining: int | None
    retry_after: int | None


def check_faults(
    faults: list[Fault], verb: str, resource: str, group: str, namespace: str | None, qualified: str
) -> None:
    """Raise the first fault matching the request, counting it down (and dropping it once used up)."""
    for f in faults:
        if f.verb != verb or f.resource != resource:
            continue
        if f.group is not None and f.group != group:
            continue
        if f.namespace is not None and f.namespace != namespace:
            continue
        if f.remaining is not None:
            f.remaining -= 1
            if f.remaining <= 0:
                faults.remove(f)
        headers = {}
        details: dict[str, Any] = {}
        if f.retry_after is not None:
            headers["Retry-After"] = str(f.retry_after)
            details["retryAfterSeconds"] = f.retry_after
        raise StatusError(
            f.status,
            REASONS.get(f.status),
            f"injected failure for {verb} {qualified}",
            details,
            headers,
        )
