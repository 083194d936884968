"""The body of an apply patch (``application/apply-patch+yaml``): YAML or JSON, decoded as kube-apiserver's
YAML decoder does (no timestamps, string keys)."""

from __future__ import annotations

from typing import Any

import orjson
import yaml

from ..errors import StatusError


class _Loader(yaml.SafeLoader):
    """YAML as sigs.k8s.io/yaml reads it into JSON: timestamps stay strings."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _string_keys(v: Any) -> Any:
    if isinstance(v, dict):
        return {_key_text(k): _string_keys(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_string_keys(x) for x in v]
    return v


def _key_text(k: Any) -> str:
    if isinstance(k, bool):
        return "true" if k else "false"
    return k if isinstance(k, str) else str(k)


def load_apply_config(raw: bytes) -> dict:
    """The body of an ``application/apply-patch+yaml`` request (YAML or JSON) as a JSON object."""
    try:
        doc = orjson.loads(raw) if raw.lstrip()[:1] == b"{" else yaml.load(raw, Loader=_Loader)
    except (orjson.JSONDecodeError, yaml.YAMLError) as e:
        try:
            doc = yaml.load(raw, Loader=_Loader)
        except yaml.YAMLError:
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
    return _string_keys(doc)
