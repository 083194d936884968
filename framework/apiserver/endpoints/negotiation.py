"""Content negotiation: which form a response takes (``Accept``) and how a request body is read
(``Content-Type``).

Responses are JSON or YAML objects, metadata-only ``PartialObjectMetadata[List]`` or ``Table``s
(4-1..4-3), as k8s.io/apiserver's ``pkg/endpoints/handlers/negotiation`` chooses them; protobuf output
is declined (24-2). Bodies are JSON, YAML, or protobuf for the kinds kubectl's typed clients send so.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

from framework.apiserver.encoding import gojson, yaml_decoding
from framework.apiserver.endpoints.table import TableConverter
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.registry.strategy import ResourceType
from framework.meta import jsoncodec

MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's request body limit
SERVED_MEDIA = ["application/json", "application/yaml"]
BODY_MEDIA = ["application/json", "application/yaml"]

JSON_FORM, METADATA_FORM, TABLE_FORM = "json", "metadata", "table"
# The request key under which read_body keeps the body as sent (decode errors quote its first bytes).
RAW_BODY = web.RequestKey("raw_body", bytes)


def media_types(header: str) -> list[tuple[str, dict[str, str]]]:
    """An ``Accept`` header's media types in order, each with its parameters."""
    out = []
    for part in header.split(","):
        fields = [f.strip() for f in part.split(";")]
        if not fields[0]:
            continue
        params = {}
        for f in fields[1:]:
            k, _, v = f.partition("=")
            params[k.strip()] = v.strip()
        out.append((fields[0].lower(), params))
    return out


def negotiate(request: web.Request) -> tuple[str, str]:
    """The output form Accept asks for, first acceptable wins: ``(form, meta.k8s.io version)``.

    Forms: plain JSON, metadata-only (PartialObjectMetadata[List]) and Table (4-1..4-3). Protobuf output
    is declined cleanly (24-2); 406 when nothing acceptable remains.
    """
    accept = request.headers.get("Accept", "")
    if not accept:
        return JSON_FORM, ""
    for mt, params in media_types(accept):
        as_ = params.get("as")
        if as_:
            version = params.get("v")
            if (
                mt != "application/json"
                or params.get("g") != "meta.k8s.io"
                or version not in ("v1", "v1beta1")
            ):
                continue
            if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList"):
                return METADATA_FORM, version
            if as_ == "Table":
                return TABLE_FORM, version
            continue
        if mt in ("*/*", "application/*", "application/json", "application/yaml"):
            return JSON_FORM, ""
    raise errors.not_acceptable(SERVED_MEDIA)


def aggregated_discovery(request: web.Request) -> str | None:
    """The apidiscovery.k8s.io version an ``Accept`` asks for first (``v2`` or ``v2beta1``), if any."""
    for mt, params in media_types(request.headers.get("Accept", "")):
        if params.get("as") == "APIGroupDiscoveryList" and params.get("g") == "apidiscovery.k8s.io":
            if mt == "application/json" and params.get("v") in ("v2", "v2beta1"):
                return params["v"]
            continue
        if mt in ("*/*", "application/json", "application/*"):
            return None  # the legacy document comes first
    return None


def wants_yaml(request: web.Request) -> bool:
    """Whether the client's first choice is YAML."""
    types = media_types(request.headers.get("Accept", ""))
    return bool(types) and types[0][0] == "application/yaml"


def table_converter(rt: ResourceType) -> TableConverter:
    """The kind's printer (apiserver's default columns without one); the served version's printer
    columns for custom resources."""
    if rt.crd is None:
        return TableConverter(printer=rt.printer)
    for v in (rt.crd.get("spec") or {}).get("versions") or []:
        if v.get("name") == rt.version:
            return TableConverter(list(v.get("additionalPrinterColumns") or []))
    return TableConverter([])


def table_version(table: dict, version: str) -> dict:
    """The Table in the ``meta.k8s.io`` version asked for (v1beta1 Tables are still served)."""
    table["apiVersion"] = f"meta.k8s.io/{version}"
    return table


async def read_raw(request: web.Request) -> bytes:
    """The request body, 413 beyond kube-apiserver's limit."""
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY}")
    if (
        request.content_length is not None
        and request.headers.get("Content-Encoding", "identity") == "identity"
    ):
        # The usual case: one read of exactly the declared size (a short body, cut by the peer, is
        # what arrived). A compressed body is decoded on the way in, so its length is not known here.
        try:
            return await request.content.readexactly(request.content_length)
        except asyncio.IncompleteReadError as e:
            return e.partial
    # Chunked: ``read(n)`` returns what has arrived so far (one TCP/TLS record), not n bytes: read up
    # to EOF.
    buf = bytearray()
    while len(buf) <= MAX_BODY:
        chunk = await request.content.read(MAX_BODY + 1 - len(buf))
        if not chunk:
            break
        buf += chunk
    data = bytes(buf)
    if len(data) > MAX_BODY:
        raise StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY}")
    return data


async def read_body(request: web.Request, rt: ResourceType, duplicates: list[str] | None = None) -> Any:
    """The request body decoded by its ``Content-Type`` (JSON, YAML, protobuf where decodable); 415 else.
    What the strict decoder says of the keys the body repeats (their last value wins) is appended to
    ``duplicates`` when it is given: ``duplicate field "data.a"`` for JSON, for YAML goyaml.v2's one
    error (:data:`YAML_DUPLICATES`, then ``line 3: key "a" already set in map`` a line each)."""
    raw = await read_raw(request)
    request[RAW_BODY] = raw
    ctype = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if ctype in ("", "application/json", "*/*", "application/yaml", "application/x-yaml"):
        is_yaml = ctype.endswith("yaml")
        lines: list[str] | None = [] if is_yaml and duplicates is not None else None
        try:
            body = await decode_body(raw, is_yaml, lines)
        except BodyError as e:
            # transformDecodeError: no kind could be read, so the object is "unrecognized".
            cause = str(e) if is_yaml else f"couldn't get version/kind; json parse error: {e}"
            raise errors.bad_request(
                f"the object provided is unrecognized (must be of type {rt.kind}): {cause} ({summarize(raw)})"
            ) from None
        if duplicates is not None and isinstance(body, dict) and not is_yaml:
            duplicates.extend(f'duplicate field "{p}"' for p in gojson.duplicate_fields(raw, body))
        if duplicates is not None and lines:
            duplicates.append(YAML_DUPLICATES + "\n  ".join(lines))
        return body
    from framework.apiserver.encoding import (
        protobuf,  # local: protobuf's tables load only when a protobuf body arrives
    )

    decodable = protobuf.decodable(rt.api_version, rt.kind)
    if ctype == protobuf.CONTENT_TYPE and decodable:
        # kubectl's typed clients (create namespace/configmap/secret/…, auth can-i) send protobuf and
        # never retry in JSON; the answer stays JSON (1-9). Other kinds: 415 below (24-2).
        return protobuf.decode(raw, rt.api_version, rt.kind)
    raise errors.unsupported_media_type([*BODY_MEDIA, protobuf.CONTENT_TYPE] if decodable else BODY_MEDIA)


class BodyError(ValueError):
    """A JSON or YAML body that does not decode; its text is Go's (``invalid character 'x' looking for
    beginning of value``, ``yaml: document contains excessive aliasing``)."""


# How sigs.k8s.io/yaml's strict conversion begins its error for repeated keys (one line each follows).
YAML_DUPLICATES = "yaml: unmarshal errors:\n  "


async def decode_body(raw: bytes, is_yaml: bool, duplicates: list[str] | None = None) -> Any:
    """A JSON or YAML request body, decoded within kube-apiserver's bounds without stalling the loop.

    JSON is read by orjson on the loop (a few milliseconds per megabyte); what orjson refuses (its
    depth limit is below Go's, or a syntax error to be worded as Go words it) and all YAML (built
    node by node in Python) is handled on the loop's executor. Raises :class:`BodyError`.
    """
    jsoncodec.allow_deep_values()  # again: a test tool (hypothesis) may have put the limit back
    loop = asyncio.get_running_loop()
    if is_yaml:
        return await loop.run_in_executor(None, _decode_yaml, raw, duplicates)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        first = e
    return await loop.run_in_executor(None, _decode_json_slowly, raw, first)


async def json_error(raw: bytes) -> str | None:
    """Why a JSON body does not decode, in Go's words (None if it decodes), found as :func:`decode_body`
    finds it: for a synchronous decoder that follows, so that a malformed body is worded off the loop."""
    try:
        await decode_body(raw, is_yaml=False)
    except BodyError as e:
        return str(e)
    return None


def _decode_yaml(raw: bytes, duplicates: list[str] | None = None) -> Any:
    try:
        return yaml_decoding.decode(raw, duplicates)
    except yaml_decoding.YAMLDecodeError as e:
        raise BodyError(str(e)) from None


def _decode_json_slowly(raw: bytes, first: orjson.JSONDecodeError) -> Any:
    """What orjson refused: a deep document decoded up to Go's limit, or the error in Go's words."""
    try:
        if jsoncodec.is_depth_error(first):
            return jsoncodec.loads(raw)
        raise first
    except orjson.JSONDecodeError as e:
        raise BodyError(gojson.error_text(raw, e)) from None


def summarize(data: bytes, limit: int = 30) -> str:
    """apiserver's ``summarizeData``: JSON-looking bodies as text, anything else hex-encoded."""
    if not data:
        return "<empty>"
    head = data[:limit]
    text = head.decode("utf-8", errors="replace") if data[:1] == b"{" else head.hex()
    return text + (" ..." if len(data) > limit else "")
