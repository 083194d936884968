"""JSON merge patch, JSON patch and strategic merge patch on plain JSON values.

Every function returns a new value and never mutates its arguments. Errors are the
:class:`StatusError` values kube-apiserver answers with; the messages follow
``k8s.io/apiserver/pkg/endpoints/handlers/patch.go``, ``evanphx/json-patch`` and
``k8s.io/apimachinery/pkg/util/strategicpatch``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from framework.apiserver.machinery.errors import StatusError, bad_request

MAX_JSON_PATCH_OPERATIONS = 10000

MergeStrategy = tuple[str, str | None]
"""``("merge", merge_key)``; ``merge_key`` is ``None`` for a list of primitives (a set)."""


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _json_equal(a: Any, b: Any) -> bool:
    """JSON value equality: ``1 == 1.0`` but ``true != 1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_json_equal, a, b))
    return type(a) is type(b) and a == b


def _contains(values: list, value: Any) -> bool:
    return any(_json_equal(v, value) for v in values)


def _go_kind(value: Any) -> str:
    """The JSON type name Go's ``encoding/json`` uses in unmarshal errors."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "null" if value is None else "number"


def _go(value: Any) -> str:
    """Go's ``%v`` of a decoded JSON value, for messages that print patch content."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return "<nil>" if value is None else str(value)


# --- JSON merge patch (RFC 7386, spec 8-3) ------------------------------------------------------


def merge_patch(doc: Any, patch: Any) -> dict[str, Any]:
    """Apply a JSON merge patch: objects merge recursively, ``null`` deletes, the rest replaces."""
    if not isinstance(patch, dict):
        raise bad_request(
            f"error decoding patch: json: cannot unmarshal {_go_kind(patch)} "
            "into Go value of type map[string]interface {}"
        )
    return _merge(doc, patch)


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return _copy(patch)
    out = {k: v if k in patch else _copy(v) for k, v in target.items()} if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


# --- JSON patch (RFC 6902, spec 8-4) ------------------------------------------------------------

_OP_FIELDS = {
    "add": ("path", "value"),
    "remove": ("path",),
    "replace": ("path", "value"),
    "move": ("from", "path"),
    "copy": ("from", "path"),
    "test": ("path", "value"),
}
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")


def json_patch(doc: Any, ops: Any) -> Any:
    """Apply a JSON patch atomically: either every operation applies or an error is raised."""
    if not isinstance(ops, list):
        raise bad_request(f"json: cannot unmarshal {_go_kind(ops)} into Go value of type jsonpatch.Patch")
    for op in ops:
        if not isinstance(op, dict):
            raise bad_request(
                f"json: cannot unmarshal {_go_kind(op)} into Go value of type jsonpatch.Operation"
            )
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise StatusError(
            413,
            "RequestEntityTooLarge",
            "Request entity too large: The allowed operations in this JSON patch exceed the limit of "
            f"{MAX_JSON_PATCH_OPERATIONS}",
        )
    for op in ops:
        _check_op(op)
    out = _copy(doc)
    for op in ops:
        out = _apply_op(out, op)
    return out


def _check_op(op: dict[str, Any]) -> None:
    """An operation json-patch cannot apply (unknown op, missing or mistyped member): like a failing
    operation, kube-apiserver answers 422 — the document itself decoded fine."""
    kind = op.get("op")
    if kind not in _OP_FIELDS:
        raise _op_failed(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
    for name in _OP_FIELDS[kind]:
        if name not in op:
            raise _op_failed(f"{kind} operation missing {name} field")
        if name != "value" and not isinstance(op[name], str):
            raise _op_failed(f"json: cannot unmarshal {_go_kind(op[name])} into Go value of type string")


def _op_failed(message: str) -> StatusError:
    return StatusError(
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
        {"causes": [{"reason": "UnexpectedServerResponse", "message": message}]},
    )


def _apply_op(doc: Any, op: dict[str, Any]) -> Any:
    kind, path = op["op"], op["path"]
    missing = f"{kind} operation does not apply: doc is missing path: {path}"
    if kind == "test":
        if not _json_equal(_get(doc, path, missing), op["value"]):
            raise _op_failed(f"testing value {path} failed: test failed")
        return doc
    if kind == "remove":
        _remove(doc, path, missing)
        return doc
    if kind in ("move", "copy"):
        source = op["from"]
        source_missing = f"{kind} operation does not apply: doc is missing from path: {source}"
        if kind == "move":
            return _add(doc, path, _remove(doc, source, source_missing), missing)
        return _add(doc, path, _copy(_get(doc, source, source_missing)), missing)
    if kind == "replace":
        if path == "":
            return _copy(op["value"])
        _remove(doc, path, missing)
    return _add(doc, path, _copy(op["value"]), missing)


def _tokens(pointer: str, missing: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise _op_failed(missing)
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _index(token: str, size: int) -> int | None:
    return int(token) if _ARRAY_INDEX.fullmatch(token) and int(token) < size else None


def _walk(doc: Any, tokens: list[str], missing: str) -> Any:
    for token in tokens:
        if isinstance(doc, dict) and token in doc:
            doc = doc[token]
        elif isinstance(doc, list) and (i := _index(token, len(doc))) is not None:
            doc = doc[i]
        else:
            raise _op_failed(missing)
    return doc


def _get(doc: Any, pointer: str, missing: str) -> Any:
    return _walk(doc, _tokens(pointer, missing), missing)


def _remove(doc: Any, pointer: str, missing: str) -> Any:
    """Remove and return the value at ``pointer`` (the document root cannot be removed)."""
    tokens = _tokens(pointer, missing)
    if not tokens:
        raise _op_failed(missing)
    parent, last = _walk(doc, tokens[:-1], missing), tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list) and (i := _index(last, len(parent))) is not None:
        return parent.pop(i)
    raise _op_failed(missing)


def _add(doc: Any, pointer: str, value: Any, missing: str) -> Any:
    """Add ``value`` at ``pointer`` and return the (possibly replaced) document."""
    tokens = _tokens(pointer, missing)
    if not tokens:
        return value
    parent, last = _walk(doc, tokens[:-1], missing), tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif (
        isinstance(parent, list)
        and (i := len(parent) if last == "-" else _index(last, len(parent) + 1)) is not None
    ):
        parent.insert(i, value)
    else:
        raise _op_failed(missing)
    return doc


# --- strategic merge patch (spec 8-6) -----------------------------------------------------------

_PATCH = "$patch"
_RETAIN_KEYS = "$retainKeys"
_DELETE_FROM = "$deleteFromPrimitiveList"
_SET_ORDER = "$setElementOrder"


def strategic_merge_patch(
    doc: dict[str, Any], patch: Any, strategies: Mapping[str, MergeStrategy]
) -> dict[str, Any]:
    """Apply a strategic merge patch.

    ``strategies`` maps dotted field paths (list items written ``[]``, e.g.
    ``"webhooks[].matchConditions"``) to a :data:`MergeStrategy`; lists not named there replace
    wholesale. A built-in kind's come from its strategy (``ResourceType.smp``: its Go structs' tags,
    ``catalog/strategic_merge.py``). Directives never survive into the result.
    """
    if not isinstance(patch, dict):
        raise bad_request(
            f"json: cannot unmarshal {_go_kind(patch)} into Go value of type map[string]interface {{}}"
        )
    return _StrategicMerge(strategies).merge_map(_copy(doc), patch, "")


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _directive_field(key: str, prefix: str, value: Any, message: str) -> str:
    head, slash, field = key.partition("/")
    if head != prefix or not slash or not isinstance(value, list):
        raise bad_request(message)
    return field


def _merge_key_error(item: Any, key: str | None) -> StatusError:
    return bad_request(f"map: {_go(item)} does not contain declared merge key: {key or ''}")


class _StrategicMerge:
    """Merges patches into a private copy of the document, mutating that copy in place."""

    def __init__(self, strategies: Mapping[str, MergeStrategy]) -> None:
        self.strategies = strategies

    def _strategy(self, path: str) -> tuple[bool, str | None]:
        strategy = self.strategies.get(path)
        if strategy is None or strategy[0] != "merge":
            return False, None
        return True, strategy[1]

    def fresh(self, value: Any, path: str) -> Any:
        """A patch value landing where there is nothing to merge with: only its directives apply."""
        if isinstance(value, dict):
            return self.merge_map({}, value, path)
        if isinstance(value, list):
            return self.merge_list([], value, path)
        return value

    def merge_map(self, orig: dict[str, Any], patch: dict[str, Any], path: str) -> dict[str, Any]:
        if _PATCH in patch:
            directive = patch[_PATCH]
            if directive == "delete":
                return {}
            if directive != "replace":
                raise bad_request(f"unknown patch type: {_go(directive)} in map: {_go(patch)}")
            orig, patch = {}, {k: v for k, v in patch.items() if k != _PATCH}
        if _RETAIN_KEYS in patch:
            self._retain_keys(orig, patch)
        orders = {
            _directive_field(key, _SET_ORDER, value, "invalid patch format of setElementOrder list"): value
            for key, value in patch.items()
            if key.startswith(_SET_ORDER)
        }
        before = {field: orig.get(field) for field in orders}
        for key, value in patch.items():
            if key == _RETAIN_KEYS or key.startswith(_SET_ORDER):
                continue
            if key.startswith(_DELETE_FROM):
                field = _directive_field(key, _DELETE_FROM, value, "invalid patch format of primitive list")
                if isinstance(orig.get(field), list):
                    orig[field] = [v for v in orig[field] if not _contains(value, v)]
                continue
            child, current = _child(path, key), orig.get(key)
            if value is None:
                orig.pop(key, None)
            elif isinstance(value, dict) and isinstance(current, dict):
                orig[key] = self.merge_map(current, value, child)
            elif isinstance(value, list) and isinstance(current, list):
                orig[key] = self.merge_list(current, value, child)
            else:
                orig[key] = self.fresh(value, child)
        for field, order in orders.items():
            merge, merge_key = self._strategy(_child(path, field))
            if merge and isinstance(orig.get(field), list):
                if merge_key is not None:
                    for item in order:
                        if not isinstance(item, dict) or merge_key not in item:
                            raise _merge_key_error(item, merge_key)
                prior = before[field]
                server = prior if isinstance(prior, list) else []
                orig[field] = _order(orig[field], order, server, _identity(merge_key))
        return orig

    @staticmethod
    def _retain_keys(orig: dict[str, Any], patch: dict[str, Any]) -> None:
        keep = patch[_RETAIN_KEYS]
        if not isinstance(keep, list):
            raise bad_request("invalid patch format of retainKeys")
        for key, value in patch.items():
            directive = key == _RETAIN_KEYS or key.startswith((_DELETE_FROM, _SET_ORDER))
            if value is not None and not directive and key not in keep:
                raise bad_request("patch content doesn't match retainKeys list")
        for key in [k for k in orig if k not in keep]:
            del orig[key]

    def merge_list(self, orig: list[Any], patch: list[Any], path: str) -> list[Any]:
        merge, key = self._strategy(path)
        items, deletes, replace = [], [], False
        for item in patch:
            if not (isinstance(item, dict) and _PATCH in item):
                items.append(item)
            elif item[_PATCH] == "replace":
                replace = True
            elif item[_PATCH] != "delete":
                raise bad_request(f"unknown patch type: {_go(item[_PATCH])} in map: {_go(item)}")
            elif key is None or key not in item:
                raise _merge_key_error(item, key)
            else:
                deletes.append(item[key])
        child = path + "[]"
        if replace or not merge:
            return [self.fresh(v, child) for v in items]
        ident = _identity(key)
        if key is None:
            if any(isinstance(v, dict | list) for v in items):
                raise bad_request(f"cannot merge lists without merge key for {path}")
            merged: list[Any] = []
            for value in [*orig, *items]:
                if not _contains(merged, value):
                    merged.append(value)
            return _order(merged, items, orig, ident)
        server = [o for o in orig if not _contains(deletes, ident(o))]
        merged = list(server)
        for item in items:
            if not isinstance(item, dict) or key not in item:
                raise _merge_key_error(item, key)
            i = _position(merged, item, ident)
            if i < 0:
                merged.append(self.fresh(item, child))
            else:
                merged[i] = self.merge_map(merged[i], item, child)
        return _order(merged, items, server, ident)


def _identity(key: str | None) -> Callable[[Any], Any]:
    """What identifies a list element: its merge key's value, or the element itself for primitives."""
    if key is None:
        return lambda item: item
    return lambda item: item.get(key) if isinstance(item, dict) else None


def _position(items: list[Any], item: Any, ident: Callable[[Any], Any]) -> int:
    target = ident(item)
    return next((i for i, x in enumerate(items) if _json_equal(ident(x), target)), -1)


def _order(merged: list[Any], order: list[Any], server: list[Any], ident: Callable[[Any], Any]) -> list[Any]:
    """Upstream ``normalizeElementOrder``: elements named in ``order`` follow that order, the others
    keep their relative server order, and the two runs are interleaved by server position (so an
    element new to the server lands before the server-only ones, as upstream does)."""
    in_order = sorted(
        (m for m in merged if _position(order, m, ident) >= 0), key=lambda m: _position(order, m, ident)
    )
    server_only = sorted(
        (m for m in merged if _position(order, m, ident) < 0), key=lambda m: _position(server, m, ident)
    )
    out, i, j = [], 0, 0
    while i < len(server_only) and j < len(in_order):
        left, right = _position(server, server_only[i], ident), _position(server, in_order[j], ident)
        if 0 <= left < right:
            out.append(server_only[i])
            i += 1
        else:
            out.append(in_order[j])
            j += 1
    return out + server_only[i:] + in_order[j:]
