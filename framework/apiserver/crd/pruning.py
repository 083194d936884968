"""Pruning of custom resources (16-6): fields their structural schema does not specify are dropped, as
apiextensions-apiserver's ``pkg/apiserver/schema/pruning`` does, and reported for ``fieldValidation``
(4-5)."""

from __future__ import annotations

from typing import Any

from framework.apiserver.crd.values import EMBEDDED, META_FIELDS, PRESERVE, join_path
from framework.apiserver.machinery.jsonvalues import as_dict


def prune(obj: Any, schema: dict, path: str = "") -> list[str]:
    """Remove fields the structural schema does not specify, in place (16-6).

    ``path=""`` means ``obj`` is a resource root, whose ``apiVersion``, ``kind`` and ``metadata`` are
    never touched (as for ``x-kubernetes-embedded-resource`` nodes); a non-empty ``path`` prunes a
    nested value and prefixes the reported paths. Fields under ``x-kubernetes-preserve-unknown-fields``
    or matched by ``additionalProperties`` are kept. Returns the removed paths (``spec.foo``,
    ``spec.items[0].foo``) sorted as upstream reports them, for ``fieldValidation`` (4-5).
    """
    removed: list[str] = []
    prune_node(obj, schema, path, removed, not path)
    return sorted(removed)


def _addl_schema(s: dict) -> tuple[bool, dict | None]:
    """Whether ``additionalProperties`` is set (even to a bool) and its schema, if it has one."""
    addl = s.get("additionalProperties")
    return addl is not None, addl if isinstance(addl, dict) else None


def prune_node(x: Any, s: Any, path: str, out: list[str], embedded: bool = False) -> None:
    if isinstance(s, dict) and s.get(PRESERVE) is True:
        _skip_prune(x, s, path, out, embedded)
        return
    if isinstance(x, dict):
        if not isinstance(s, dict):
            for k in list(x):
                out.append(join_path(path, k))
                del x[k]
            return
        embedded = embedded or s.get(EMBEDDED) is True
        props = as_dict(s.get("properties"))
        has_addl, addl = _addl_schema(s)
        for k in list(x):
            if embedded and k in META_FIELDS:
                continue
            if k in props:
                prune_node(x[k], props[k], join_path(path, k), out)
            elif has_addl:
                prune_node(x[k], addl, join_path(path, k), out)
            else:
                out.append(join_path(path, k))
                del x[k]
    elif isinstance(x, list):
        items = s.get("items") if isinstance(s, dict) else None
        for i, v in enumerate(x):
            prune_node(v, items, f"{path}[{i}]", out)


def _skip_prune(x: Any, s: dict, path: str, out: list[str], embedded: bool) -> None:
    """Under preserve-unknown-fields unknown keys stay, but specified ones are still pruned inside."""
    if isinstance(x, dict):
        embedded = embedded or s.get(EMBEDDED) is True
        props = as_dict(s.get("properties"))
        has_addl, addl = _addl_schema(s)
        for k in list(x):
            if embedded and k in META_FIELDS:
                continue
            if k in props:
                prune_node(x[k], props[k], join_path(path, k), out)
            elif has_addl:
                prune_node(x[k], addl, join_path(path, k), out)
    elif isinstance(x, list) and isinstance(s.get("items"), dict):
        for i, v in enumerate(x):
            _skip_prune(v, s["items"], f"{path}[{i}]", out, False)
