"""The API server's connection limits, and the ``Status`` it answers when the HTTP layer refuses a
request before any handler sees it (see :mod:`framework.server.connections` for the mechanism).

kube-apiserver's ``http.Server`` (``staging/src/k8s.io/apiserver/pkg/server/secure_serving.go``) has
``IdleTimeout`` 90 s, ``ReadHeaderTimeout`` 32 s and ``MaxHeaderBytes`` 1 MiB; its TLS handshake gets the
header time too (net/http's ``tlsHandshakeTimeout``). Go itself answers a head over the limit with a
plain-text 431 and a malformed one with a plain-text 400; here both are ``Status`` objects with the same
codes, so clients get a message they can decode. The reason is the one client-go gives such a code
when it builds the Status itself (``NewGenericServerResponse``): BadRequest for 400, none for 431. A
method aiohttp's parser does not know (``FOO``), which Go hands to the router, gets the router's ``405
MethodNotAllowed`` Status.
kube-apiserver has no bound on connections (it bounds requests in flight, answering 429
TooManyRequests with ``Retry-After``); a connection over our bound gets that answer.
"""

from __future__ import annotations

import orjson

from framework.apiserver.machinery.errors import failure_status
from framework.server.connections import ConnectionLimits

__all__ = ["DEFAULT_LIMITS", "REFUSAL_STATUS", "status_answer"]

DEFAULT_LIMITS = ConnectionLimits(max_connections=1024)

# What kube-apiserver's max-in-flight filter answers when it is overloaded.
REFUSAL_STATUS = 429

_REASONS = {400: "BadRequest", 405: "MethodNotAllowed", 429: "TooManyRequests"}


def status_answer(status: int, message: str, retry_after: int | None = None) -> tuple[str, bytes]:
    """A JSON ``Status`` for an answer the HTTP layer gives on its own."""
    details = None if retry_after is None else {"retryAfterSeconds": retry_after}
    if status == 405:  # a method no route serves: the router's Status (``responses.method_not_allowed``)
        details = {}
    body = failure_status(status, _REASONS.get(status), message, details)
    return "application/json", orjson.dumps(body, option=orjson.OPT_APPEND_NEWLINE)
