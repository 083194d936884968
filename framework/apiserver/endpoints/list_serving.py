"""Serving ``list``: ListOptions validated as kube-apiserver validates them, a resourceVersion
from the future waited for, and the list answered as objects, metadata only or a Table.

k8s.io/apiserver's counterparts: ``pkg/endpoints/handlers/get.go`` (``ListResource``) and
``pkg/apis/meta/internalversion/validation`` (``ValidateListOptions``).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from aiohttp import web

from framework.apiserver.endpoints import params as query
from framework.apiserver.endpoints.negotiation import table_converter, table_version
from framework.apiserver.endpoints.responses import path_not_found, respond
from framework.apiserver.endpoints.routing import Target
from framework.apiserver.endpoints.table import parse_include_object, partial_metadata
from framework.apiserver.machinery import errors
from framework.apiserver.registry.strategy import ResourceType

if TYPE_CHECKING:
    from framework.apiserver.server import APIServer


async def serve_list(
    server: APIServer, request: web.Request, t: Target, meta_only: bool = False, table_as: str = ""
) -> web.Response:
    """Answer a list of ``t``: objects, ``PartialObjectMetadataList`` if ``meta_only``, or a Table in the
    ``meta.k8s.io`` version ``table_as``."""
    q = request.query
    include = parse_include_object(q.get("includeObject")) if table_as else ""
    rv, match, limit = validate_list_options(q, t.rt, for_watch=False)
    field_selector = q.get("fieldSelector")
    if t.name is not None:
        raise path_not_found()
    if rv and rv != "0" and not q.get("continue"):
        await wait_for_rv(server, int(rv), exact=match == "Exact" or (match is None and limit > 0))
    body = server.api.list(
        t.rt,
        t.namespace,
        label_selector=q.get("labelSelector"),
        field_selector=field_selector,
        limit=limit,
        continue_token=q.get("continue"),
        resource_version=rv,
        resource_version_match=match,
    )
    if table_as:
        table = table_converter(t.rt).table(body["items"], body["metadata"], include)
        return respond(request, 200, table_version(table, table_as))
    if meta_only:
        body = {
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": body["metadata"],
            "items": [partial_metadata(i) for i in body["items"]],
        }
    return respond(request, 200, body)


async def wait_for_rv(server: APIServer, rv: int, exact: bool) -> None:
    """A resourceVersion from the future: wait up to ~3 s for it, then 504 (14-4)."""
    deadline = time.monotonic() + server.future_rv_wait
    while server.storage.rv < rv:
        if time.monotonic() >= deadline:
            raise errors.too_large_rv(rv, server.storage.rv)
        await asyncio.sleep(0.05)


def validate_list_options(q: Any, rt: ResourceType, for_watch: bool) -> tuple[str | None, str | None, int]:
    """Apply the ListOptions rules of 14-4 and 15-8; returns (resourceVersion, match, limit)."""
    rv = q.get("resourceVersion") or None
    match = q.get("resourceVersionMatch") or None
    cont = q.get("continue") or None
    initial = q.get("sendInitialEvents")
    limit = query.query_int(q, "limit") or 0
    query.query_int(q, "timeoutSeconds")  # a list ignores it, but it must decode (400 otherwise)
    if rv is not None and rv != "0":
        try:
            if not 0 <= int(rv) < 1 << 64:  # a uint64, as the storage parses it (ParseUint)
                raise ValueError
        except ValueError:
            raise errors.options_invalid(
                "ListOptions", [errors.invalid_value("resourceVersion", rv, "must be a non-negative integer")]
            ) from None
    errs = []
    if for_watch:
        if initial is not None and query.go_bool(initial):
            if match != "NotOlderThan":
                errs.append(
                    errors.forbidden(
                        "resourceVersionMatch",
                        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    )
                )
        elif initial is None and match:
            errs.append(
                errors.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                )
            )
        elif initial is not None and match and match != "NotOlderThan":
            errs.append(errors.not_supported("resourceVersionMatch", match, ["NotOlderThan"]))
    else:
        if initial is not None:
            errs.append(errors.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
        if match is not None:
            if match not in ("Exact", "NotOlderThan"):
                errs.append(errors.not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan"]))
            elif cont:
                errs.append(
                    errors.forbidden(
                        "resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"
                    )
                )
            elif rv is None:
                errs.append(
                    errors.forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden unless resourceVersion is provided",
                    )
                )
            elif match == "Exact" and rv == "0":
                errs.append(
                    errors.forbidden(
                        "resourceVersionMatch",
                        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                    )
                )
    if errs:
        raise errors.options_invalid("ListOptions", errs)
    if cont and rv not in (None, "0"):
        raise errors.bad_request("specifying resource version is not allowed when using continue")
    if limit < 0:
        limit = 0
    return rv, match, limit
