"""Field paths and sets (sigs.k8s.io/structured-merge-diff ``fieldpath``) and their FieldsV1 encoding.

Field sets are Python sets of paths; a path is a tuple of path elements:

* ``("f", name)`` — a field of a map (``f:name`` in FieldsV1, ``.name`` in messages);
* ``("k", json)`` — an item of an associative list, ``json`` the compact, key-sorted object of its key
  fields (``k:{"name":"c"}``, ``[name="c"]``);
* ``("v", json)`` — an item of a set list (``v:"x"``, ``[="x"]``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from framework.meta import jsoncodec

if TYPE_CHECKING:
    from framework.apiserver.managed_fields.schema import Schema


PathElement = tuple[str, Any]
Path = tuple[PathElement, ...]
PathSet = set[Path]

MISSING: Any = object()


# --- path elements and paths ----------------------------------------------------------------------------


class TypedError(Exception):
    """The object does not fit its schema (an associative list item without its key, duplicates)."""


def _json(value: Any) -> str:
    return jsoncodec.dumps(value, sort_keys=True).decode()


def item_pe(
    item: Any, list_type: str, keys: tuple[str, ...], item_schema: Schema, where: str, index: int
) -> PathElement:
    if list_type == "set":
        if isinstance(item, dict | list):
            raise TypedError(f"{where}: element {index}: set items must be scalars")
        return ("v", _json(item))
    if not isinstance(item, dict):
        raise TypedError(f"{where}: element {index}: associative list items must be objects")
    key = {}
    for k in keys:
        value = item.get(k, item_schema.key_default(k))
        if value is MISSING or isinstance(value, dict | list):
            raise TypedError(
                f"{where}: element {index}: associative list with keys has an element that omits key "
                f'field "{k}" (and doesn\'t have default value)'
            )
        key[k] = value
    return ("k", _json(key))


def _go_value(v: Any) -> str:
    """``value.ToString``: strings Go-quoted, numbers and booleans bare."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def pe_string(pe: PathElement) -> str:
    kind, value = pe
    if kind == "f":
        return "." + value
    if kind == "k":
        key = jsoncodec.loads(value)
        return "[" + ",".join(f"{k}={_go_value(v)}" for k, v in key.items()) + "]"
    if kind == "v":
        return f"[={_go_value(jsoncodec.loads(value))}]"
    return f"[{value}]"


def path_string(path: Path) -> str:
    """SMD notation: ``.spec.containers[name="c"].image``, ``.metadata.labels.app``."""
    return "".join(pe_string(pe) for pe in path)


def _pe_sort(pe: PathElement) -> tuple[int, Any]:
    rank = {"f": 0, "k": 1, "v": 2, "i": 3}[pe[0]]
    return (rank, pe[1])


# --- FieldsV1 -----------------------------------------------------------------------------------------


def to_fields_v1(paths: Iterable[Path]) -> dict:
    """A set of paths as the FieldsV1 tree (``"."`` marks a member that also has children)."""
    tree: dict[PathElement, Any] = {}
    members: set[Path] = set()
    for p in paths:
        node = tree
        for pe in p:
            node = node.setdefault(pe, {})
        members.add(p)

    def render(node: dict, prefix: Path) -> dict:
        out: dict[str, Any] = {}
        if node and prefix in members and prefix:
            out["."] = {}
        for pe in sorted(node, key=_pe_sort):
            kind, value = pe
            name = f"{kind}:{value}"
            out[name] = render(node[pe], (*prefix, pe))
        return out

    return render(tree, ())


def from_fields_v1(tree: Any) -> PathSet:
    out: PathSet = set()

    def walk(node: Any, prefix: Path) -> None:
        if not isinstance(node, dict):
            raise ValueError("FieldsV1 nodes must be objects")
        if not node and prefix:
            out.add(prefix)
        for name, child in node.items():
            if name == ".":
                if prefix:
                    out.add(prefix)
                continue
            kind, sep, value = name.partition(":")
            if not sep or kind not in ("f", "k", "v", "i"):
                raise ValueError(f"invalid path element {name!r}")
            pe: PathElement
            if kind == "f":
                pe = ("f", value)
            elif kind == "i":
                pe = ("i", int(value))
            else:
                parsed = jsoncodec.loads(value)
                if kind == "k" and not isinstance(parsed, dict):
                    raise ValueError(f"invalid key {value!r}")
                pe = (kind, _json(parsed))
            walk(child, (*prefix, pe))

    walk(tree, ())
    return out


def iterate(paths: Iterable[Path]) -> list[Path]:
    """``fieldpath.Set.Iterate`` order: at each level the members first, then the children's subtrees."""
    tree: dict[PathElement, Any] = {}
    members = set(paths)
    for p in members:
        node = tree
        for pe in p:
            node = node.setdefault(pe, {})
    out: list[Path] = []

    def walk(node: dict, prefix: Path) -> None:
        order = sorted(node, key=_pe_sort)
        out.extend((*prefix, pe) for pe in order if (*prefix, pe) in members)
        for pe in order:
            if node[pe]:
                walk(node[pe], (*prefix, pe))

    walk(tree, ())
    return out
