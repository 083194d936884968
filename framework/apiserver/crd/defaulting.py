"""Defaulting of custom resources from their version's structural schema (16-5), as apiextensions-apiserver's
``pkg/apiserver/schema/defaulting`` does: ``default`` values applied, ``null``s of non-nullable fields
without a default pruned."""

from __future__ import annotations

import copy
from typing import Any

from framework.apiserver.machinery.jsonvalues import as_dict


def _has_default(s: Any) -> bool:
    # `default: null` decodes to no default upstream.
    return isinstance(s, dict) and s.get("default") is not None


def _non_nullable(s: Any) -> bool:
    return isinstance(s, dict) and s.get("nullable") is not True


def apply_defaults(obj: Any, schema: dict) -> None:
    """Default ``obj`` in place (16-7): drop non-nullable nulls without a default, then fill defaults.

    Absent fields get their schema ``default`` (deep-copied), also inside array items and
    additionalProperties; a JSON null where the schema is not ``nullable`` counts as absent.
    """
    _prune_nulls(obj, schema)
    _default(obj, schema)


def _prune_nulls(x: Any, s: Any) -> None:
    if not isinstance(s, dict):
        return
    if isinstance(x, dict):
        props = as_dict(s.get("properties"))
        addl = s.get("additionalProperties")
        for k in list(x):
            if k in props:
                sub = props[k]
            elif isinstance(addl, dict):
                sub = addl
            else:
                continue
            if x[k] is None and _non_nullable(sub) and not _has_default(sub):
                del x[k]
            else:
                _prune_nulls(x[k], sub)
    elif isinstance(x, list):
        for v in x:
            _prune_nulls(v, s.get("items"))


def _default(x: Any, s: Any) -> None:
    if not isinstance(s, dict):
        return
    if isinstance(x, dict):
        props = as_dict(s.get("properties"))
        for k, p in props.items():
            if _has_default(p) and (k not in x or (x[k] is None and _non_nullable(p))):
                x[k] = copy.deepcopy(p["default"])
        addl = s.get("additionalProperties")
        for k in list(x):
            if k in props:
                _default(x[k], props[k])
            elif isinstance(addl, dict):
                if x[k] is None and _non_nullable(addl):
                    x[k] = copy.deepcopy(addl.get("default"))
                _default(x[k], addl)
    elif isinstance(x, list):
        items = s.get("items")
        for i in range(len(x)):
            if x[i] is None and isinstance(items, dict) and _non_nullable(items):
                x[i] = copy.deepcopy(items.get("default"))
            _default(x[i], items)
