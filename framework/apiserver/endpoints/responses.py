"""How the HTTP front end answers: JSON documents, Status errors, YAML on request and warning headers.

kube-apiserver writes every response through ``k8s.io/apiserver/pkg/endpoints/handlers/responsewriters``;
these helpers are that layer for our server.
"""

from __future__ import annotations

from typing import Any

import yaml
from aiohttp import web

from framework.apiserver.endpoints.negotiation import wants_yaml
from framework.apiserver.machinery.errors import StatusError
from framework.meta import jsoncodec

JSON = "application/json"


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """A JSON document ending with a newline, as Go's json.Encoder writes it (clients compare bodies)."""
    return web.Response(
        body=jsoncodec.dumps(body, newline=True),
        status=status,
        headers={"Content-Type": JSON, **(headers or {})},
    )


def status_response(err: StatusError) -> web.Response:
    """A ``Status`` error; ``Retry-After`` is set, like kube-apiserver, for errors that suggest a retry."""
    headers = dict(err.headers)
    retry = (err.details or {}).get("retryAfterSeconds")
    if retry and "Retry-After" not in headers:
        headers["Retry-After"] = str(retry)
    return json_response(err.status(), err.code, headers)


# A deprecated custom resource version's warning, added to whatever the request answers.
DEPRECATION = web.RequestKey("crd_deprecation_warning", str)


def respond(
    request: web.Request, code: int, body: dict, headers: dict[str, str] | None = None
) -> web.Response:
    """An object in the negotiated serialization: YAML when the client's first choice is YAML, else JSON."""
    if wants_yaml(request):
        return web.Response(
            body=yaml.safe_dump(body).encode(),
            status=code,
            headers={"Content-Type": "application/yaml", **(headers or {})},
        )
    return json_response(body, code, headers)


def warning_headers(warnings: list[str]) -> dict[str, str] | None:
    """The ``Warning`` header for the warnings of one request, ``None`` without any."""
    return {"Warning": ", ".join(warning_value(w) for w in warnings)} if warnings else None


def warning_value(text: str) -> str:
    """4-6: ``299 - "text"`` with ``"`` and ``\\`` escaped as in a quoted-string (apimachinery
    ``NewWarningHeader``); client-go drops warnings whose quotes are not escaped, so kubectl would not
    print them."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def method_not_allowed() -> StatusError:
    """What kube-apiserver's router answers for a method no route of the path serves (go-restful's
    405 through ``NewGenericServerResponse``): PUT/PATCH on a collection, POST on an object, a verb
    the resource does not implement."""
    return StatusError(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}
    )


def path_not_found() -> StatusError:
    """The router's 404 for a path no API serves."""
    return StatusError(404, "NotFound", "the server could not find the requested resource", {})
