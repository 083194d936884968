"""``/openapi/v2`` and ``/openapi/v3``: the OpenAPI documents kubectl fetches for ``explain`` and
field validation.

v2 is the Swagger 2.0 document of :mod:`.v2`, as JSON or, for kubectl's discovery client, as
gnostic's protobuf (:mod:`.v2_proto`; ``kubectl explain --output=plaintext-openapiv2``).
v3 is served per group-version by :mod:`.v3`, which kubectl ≥ 1.27 prefers for
``explain`` and ``apply``.
"""

from __future__ import annotations

from aiohttp import web

from framework.apiserver.endpoints.responses import json_response, path_not_found
from framework.apiserver.openapi import v2 as openapi_v2
from framework.apiserver.openapi import v3 as openapi_v3
from framework.apiserver.registry.served import Registry


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
            body = openapi_v2.protobuf_document(registry)
            return web.Response(body=body, headers={"Content-Type": openapi_v2.PROTOBUF_CONTENT_TYPE})
        return json_response(openapi_v2.document(registry))
    raise path_not_found()
