"""The body of an apply patch (``application/apply-patch+yaml``): YAML or JSON, decoded as kube-apiserver's
YAML decoder does (no timestamps, string keys), within its bounds (:mod:`..yaml_decoding`)."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from framework.apiserver.encoding import gojson
from framework.apiserver.encoding.yaml_decoding import YAMLDecodeError
from framework.apiserver.encoding.yaml_decoding import decode as decode_yaml
from framework.apiserver.machinery.errors import StatusError
from framework.meta import jsoncodec


def _decode(raw: bytes, duplicates: list[str] | None) -> Any:
    if raw.lstrip()[:1] == b"{":
        try:
            doc = jsoncodec.loads(raw)
        except jsoncodec.DepthError:
            raise YAMLDecodeError(f"yaml: exceeded max depth of {jsoncodec.MAX_DEPTH}") from None
        except orjson.JSONDecodeError:
            pass  # not JSON: perhaps YAML that starts with a flow mapping
        else:
            if duplicates is None or not gojson.duplicate_fields(raw, doc):
                return doc
            # JSON is YAML: read again as goyaml.v2 reads it, for its words on the repeated keys
    return decode_yaml(raw, duplicates)


def load_apply_config(raw: bytes, duplicates: list[str] | None = None) -> dict:
    """The body of an ``application/apply-patch+yaml`` request (YAML or JSON) as a JSON object. Keys
    it repeats (the last value wins) are appended to ``duplicates`` when it is given, as goyaml.v2's
    strict mode words them (``line 10: key "paused" already set in map``)."""
    try:
        doc = _decode(raw, duplicates)
    except YAMLDecodeError as e:
        raise StatusError(400, "BadRequest", f"error decoding YAML: {e}") from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        kind = "array" if isinstance(doc, list) else "string" if isinstance(doc, str) else "number"
        if isinstance(doc, bool):
            kind = "bool"
        raise StatusError(
            400,
            "BadRequest",
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal "
            f"{kind} into Go value of type map[string]interface {{}}",
        )
    return doc


async def apply_body_as_json(raw: bytes, duplicates: list[str] | None = None) -> bytes:
    """An apply body as JSON, for the (synchronous) apply path: a YAML body is decoded on the loop's
    executor (building it is Python work per node) and handed on as JSON, which decodes at C speed;
    a body that does not decode is answered here (400), as the apply path would answer it. The keys
    it repeats are appended to ``duplicates`` when it is given (:func:`load_apply_config`)."""
    if raw.lstrip()[:1] == b"{":
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
        else:
            if duplicates is None or not gojson.duplicate_fields(raw, doc):
                return raw
    doc = await asyncio.get_running_loop().run_in_executor(None, load_apply_config, raw, duplicates)
    return jsoncodec.dumps(doc)
