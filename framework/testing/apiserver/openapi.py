"""``/openapi/v2`` and ``/openapi/v3``: the OpenAPI documents kubectl fetches for ``explain`` and
field validation.

v2 is the Swagger 2.0 document of :mod:`openapi_v2` for JSON clients; asked for gnostic's protobuf
(kubectl's discovery client), it answers an empty document, by which kubectl skips its v2 client-side
validation. v3 is served per group-version by :mod:`openapi_v3`, which kubectl ≥ 1.27 prefers for
``explain`` and ``apply``.
"""

from __future__ import annotations

from aiohttp import web

from . import openapi_v2, openapi_v3
from .registry import Registry
from .responses import json_response, path_not_found


def openapi(request: web.Request, parts: list[str], registry: Registry) -> web.Response:
    """Serve ``/openapi/...`` (``parts`` are the path's segments)."""
    if parts[1:] == ["v3"]:
        return json_response(openapi_v3.root(registry))
    if parts[1:2] == ["v3"]:
        rest = parts[2:]
        if rest[:1] == ["api"] and len(rest) == 2:
            doc = openapi_v3.document(registry, "", rest[1])
        elif rest[:1] == ["apis"] and len(rest) == 3:
            doc = openapi_v3.document(registry, rest[1], rest[2])
        else:
            doc = None
        if doc is None:
            raise path_not_found()
        return json_response(doc)
    if parts[1:] == ["v2"]:
        accept = request.headers.get("Accept", "")
        if "protobuf" in accept and "application/json" not in accept:
            # An empty protobuf document: kubectl then skips its v2 client-side validation.
            return web.Response(body=b"", content_type="application/octet-stream")
        return json_response(openapi_v2.document(registry))
    raise path_not_found()
