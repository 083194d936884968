"""What the CRD modules share: the ``x-kubernetes-*`` extension names, path joining and Go's
formatting of JSON numbers (JSON-value type checks are ``jsonvalues``)."""

from __future__ import annotations

import math
from typing import Any

from framework.meta import jsoncodec

PRESERVE = "x-kubernetes-preserve-unknown-fields"
EMBEDDED = "x-kubernetes-embedded-resource"
INT_OR_STRING = "x-kubernetes-int-or-string"
META_FIELDS = ("apiVersion", "kind", "metadata")


def join_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --- Go formatting ------------------------------------------------------------------------------


def json_text(v: Any) -> str:
    """``json.Marshal`` of a decoded JSON value (enum values are float64 in Go, so 1.0 is ``1``)."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    return jsoncodec.dumps(v, sort_keys=True).decode()


def is_json_integer(f: float) -> bool:
    """``swag.IsFloat64AJSONInteger``: integral, or positive and within 1e-9 relative error of one."""
    if not math.isfinite(f) or abs(f) > 2**53 - 1:
        return False
    if f.is_integer():
        return True
    g = math.trunc(f)
    return f > 0 and g != 0 and (f - g) / (f + g) < 1e-9


def schema_type(s: dict) -> str:
    """A schema node's ``type``, ``""`` when unset."""
    t = s.get("type")
    return t if isinstance(t, str) else ""


def has_rules(s: Any) -> bool:
    """Whether a schema has ``x-kubernetes-validations`` rules anywhere (CEL is loaded only then)."""
    if not isinstance(s, dict):
        return False
    if s.get("x-kubernetes-validations"):
        return True
    props = s.get("properties")
    children = [
        *(props.values() if isinstance(props, dict) else ()),
        s.get("items"),
        s.get("additionalProperties"),
    ]
    return any(has_rules(c) for c in children)
