"""Serving ``watch``: a chunked stream of watch events, from a resourceVersion or with synthetic
``ADDED`` events for the current state, with bookmarks and the server's timeout.

k8s.io/apiserver's counterpart is ``pkg/endpoints/handlers/watch.go``; the per-watcher buffering and
encoding is :class:`watch.Watcher`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog
from aiohttp import web

from framework.apiserver.crd import conversion
from framework.apiserver.crd.conversion import ConversionError
from framework.apiserver.endpoints import params as query
from framework.apiserver.endpoints.list_serving import validate_list_options, wait_for_rv
from framework.apiserver.endpoints.negotiation import table_converter, table_version
from framework.apiserver.endpoints.responses import DEPRECATION, JSON, warning_value
from framework.apiserver.endpoints.routing import Target
from framework.apiserver.endpoints.table import parse_include_object, partial_metadata
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.registry.strategy import ResourceType
from framework.apiserver.storage.cache_watcher import Watcher, bookmark, error_line
from framework.meta import jsoncodec
from framework.meta.object import get_resource_version

if TYPE_CHECKING:
    from framework.apiserver.crd.conversion_webhook import WebhookConverter
    from framework.apiserver.server import APIServer

log = structlog.get_logger("framework.apiserver")


async def serve_watch(
    server: APIServer,
    watchers: set[Watcher],
    request: web.Request,
    t: Target,
    meta_only: bool = False,
    table_as: str = "",
    convert: WatchConversion | None = None,
) -> web.StreamResponse:
    """Stream the watch of ``t`` until its timeout or the client leaves; ``watchers`` holds it meanwhile.

    Events are objects, ``PartialObjectMetadata`` if ``meta_only``, or one-row Tables in the
    ``meta.k8s.io`` version ``table_as``. ``convert`` converts the events of a webhook-converted CRD
    (the watcher then encodes them as stored).
    """
    q = request.query
    include = parse_include_object(q.get("includeObject")) if table_as else ""
    rv, _, _ = validate_list_options(q, t.rt, for_watch=True)
    field_selector = q.get("fieldSelector")
    if t.name is not None:
        pin = f"metadata.name={t.name}"
        field_selector = f"{field_selector},{pin}" if field_selector else pin
    matcher = server.api.matcher(t.rt, t.namespace, q.get("labelSelector"), field_selector)
    bookmarks = bool(query.query_bool(q, "allowWatchBookmarks"))
    initial = bool(query.query_bool(q, "sendInitialEvents"))
    requested = query.query_int(q, "timeoutSeconds")
    timeout: float
    if not requested:
        timeout = random.uniform(server.min_request_timeout, 2 * server.min_request_timeout)
    else:
        # A negative value is taken as given (apiserver's GetTimeoutForWatch): its timer has already
        # fired, so the watch ends at once.
        timeout = requested
    headers = {"Content-Type": JSON}
    if request.get(DEPRECATION):
        headers["Warning"] = warning_value(request[DEPRECATION])
    resp = web.StreamResponse(status=200, headers=headers)
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    if table_as:
        converter = table_converter(t.rt)
        first = [True]

        def table_row(ext: dict) -> dict:
            # Column definitions with the first event only, as kube-apiserver (NoHeaders after).
            headers, first[0] = first[0], False
            meta = {"resourceVersion": get_resource_version(ext) or None}
            return table_version(converter.table([ext], meta, include, headers=headers), table_as)

        if convert is not None:  # rows of the converted objects, made as they are sent
            convert.render = table_row
            w = Watcher(t.rt, matcher, _as_stored, server.watch_buffer, codec="stored")
        else:
            # Per-watcher encoding (codec None): the header flag and ages make lines unshareable.
            w = Watcher(
                t.rt,
                matcher,
                lambda rt, obj: table_row(server.api.external(rt, obj)),
                server.watch_buffer,
                codec=None,
            )
    elif meta_only:
        w = Watcher(
            t.rt,
            matcher,
            lambda rt, obj: partial_metadata(server.api.external(rt, obj)),
            server.watch_buffer,
            codec="PartialObjectMetadata",
        )
    elif convert is not None:
        w = Watcher(t.rt, matcher, _as_stored, server.watch_buffer, codec="stored")
    else:
        w = Watcher(t.rt, matcher, server.api.external, server.watch_buffer)

    async def drain() -> bytes | None:
        """The buffered lines, converted if need be; None when a conversion failed (the stream ends,
        as kube-apiserver ends a watch whose event it cannot encode)."""
        lines = w.drain()
        if convert is None:
            return lines
        return await convert.lines(lines)

    table = server.storage.table(t.rt.storage)
    if rv and rv != "0" and not initial:
        n = int(rv)
        if n > server.storage.rv:
            try:
                await wait_for_rv(server, n, exact=False)
            except StatusError as e:
                await resp.write(error_line(e.status()))
                return resp
        if n < table.window_start:
            status = errors.expired(f"too old resource version: {n} ({table.window_start + 1})").status()
            await resp.write(error_line(status))
            return resp
        for ev in table.events_after(n):
            line = w.filter(ev)
            if line is not None:
                w.buffer.append(line)
    else:
        # Synthetic ADDED for the current state, taken atomically with the registration below.
        for k in sorted(table.objects):
            obj = table.objects[k]
            if matcher(obj):
                w.buffer.append(w.encode("ADDED", obj))
        if initial and bookmarks:
            w.buffer.append(bookmark(t.rt, server.storage.rv, initial_end=True))
    table.watchers.add(w)
    watchers.add(w)
    deadline = time.monotonic() + timeout
    next_bookmark = time.monotonic() + server.bookmark_interval
    # One last bookmark shortly before the timeout, so clients resume from a fresh RV (15-6).
    final_bookmark: float | None = deadline - 1.0 if bookmarks else None
    try:
        while True:
            now = time.monotonic()
            if w.buffer:
                chunk = await drain()
                if chunk is None:
                    break
                await resp.write(chunk)
            if w.closed or now >= deadline:
                break
            # Events may have arrived while the write above waited for a slow reader: a bookmark
            # at the current RV would then overtake them (15-6), so it waits for an empty buffer.
            final_due = final_bookmark is not None and now >= final_bookmark
            if bookmarks and not w.buffer and (now >= next_bookmark or final_due):
                await resp.write(bookmark(t.rt, server.storage.rv))
                next_bookmark = now + server.bookmark_interval
                if final_due:
                    final_bookmark = None
            due = [deadline]
            if bookmarks:
                due.append(next_bookmark)
            if final_bookmark is not None:
                due.append(final_bookmark)
            await w.wait(max(0.01, min(min(due) - time.monotonic(), 1.0)))
        if w.buffer and (chunk := await drain()) is not None:
            await resp.write(chunk)
        await resp.write_eof()
    except (ConnectionResetError, ConnectionError):
        pass  # the client went away: release the watch (15-10)
    finally:
        table.watchers.discard(w)
        watchers.discard(w)
    return resp


def _as_stored(rt: ResourceType, obj: dict) -> dict:
    return obj


class WatchConversion:
    """Converts the events of a watch on a webhook-converted CRD's version, one review per event
    object (kube-apiserver converts each event as it encodes it)."""

    def __init__(self, converter: WebhookConverter, rt: ResourceType) -> None:
        assert rt.crd is not None
        self.converter = converter
        self.crd = rt.crd
        self.target = rt.api_version
        # What each converted event object becomes (a Table row for ``kubectl get -w``), if anything.
        self.render: Callable[[dict], dict] | None = None

    async def lines(self, chunk: bytes) -> bytes | None:
        out = []
        for line in chunk.split(b"\n"):
            if not line:
                continue
            event = jsoncodec.loads(line)
            obj = event.get("object") if isinstance(event, dict) else None
            if isinstance(obj, dict) and event.get("type") in _CONVERTED:
                if obj.get("apiVersion") != self.target:
                    try:
                        [obj] = await self.converter.convert(
                            self.crd, [obj], self.target, conversion.gvk_text(obj), as_list=False
                        )
                    except ConversionError as e:
                        log.warning("ending a watch: an event could not be converted", error=str(e))
                        return None
                event["object"] = self.render(obj) if self.render is not None else obj
                line = jsoncodec.dumps(event)
            out.append(line + b"\n")
        return b"".join(out)


_CONVERTED = ("ADDED", "MODIFIED", "DELETED")
