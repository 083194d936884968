"""``/openapi/v2``: the OpenAPI document kubectl fetches for client-side validation and ``explain``.

It is empty so far: kubectl then skips client-side validation (3-7, 24-1).
"""

from __future__ import annotations

from aiohttp import web

from .discovery import GIT_VERSION
from .responses import json_response, path_not_found

SWAGGER = {
    "swagger": "2.0",
    "info": {"title": "Kubernetes", "version": GIT_VERSION},
    "paths": {},
    "definitions": {},
}


def openapi(request: web.Request, parts: list[str]) -> web.Response:
    """Serve ``/openapi/...`` (``parts`` are the path's segments)."""
    if parts[1:] == ["v2"]:
        accept = request.headers.get("Accept", "")
        if "protobuf" in accept and "application/json" not in accept:
            # An empty protobuf document: kubectl then skips client-side validation (3-7, 24-1).
            return web.Response(body=b"", content_type="application/octet-stream")
        return json_response(SWAGGER)
    raise path_not_found()
