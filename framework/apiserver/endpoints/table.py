"""Server-side printing: ``meta.k8s.io/v1`` Table output for ``kubectl get`` (spec 4-2, 4-3).

kubectl asks for ``application/json;as=Table;v=v1;g=meta.k8s.io`` on get, list and watch and prints
the columns the server chooses. Custom resources get ``Name``, then their version's
``additionalPrinterColumns`` (a JSONPath per column, evaluated per row), then ``Age`` unless a column
of that name exists. A built-in kind whose strategy declares a :data:`Printer` (kube-apiserver's
``pkg/printers/internalversion``) gets its columns; every other kind gets apiserver's default columns
(``Name``, ``Created At``). Row objects are
PartialObjectMetadata unless ``includeObject`` asks for ``Object`` or ``None``. On a watch only the
first event carries the column definitions, as in kube-apiserver.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from framework.apiserver.machinery import errors
from framework.meta import jsoncodec
from framework.meta.object import get_metadata
from framework.meta.time import parse_time_or_none

__all__ = [
    "CREATED_DESCRIPTION",
    "NAME_COLUMN",
    "Printer",
    "TableConverter",
    "human_duration",
    "parse_include_object",
    "parse_printed_time",
    "partial_metadata",
]

# metav1.ObjectMeta's swagger descriptions, which apiserver uses for the default columns.
NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically. Name "
    "is primarily intended for creation idempotence and configuration definition. Cannot be updated. "
    "More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
CREATED_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is "
    "not guaranteed to be set in happens-before order across separate operations. Clients may not set "
    "this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. "
    "Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
NAME_COLUMN = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "description": NAME_DESCRIPTION,
    "priority": 0,
}
_CREATED_COLUMN = {
    "name": "Created At",
    "type": "date",
    "format": "",
    "description": CREATED_DESCRIPTION,
    "priority": 0,
}
_AGE_COLUMN = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}

INCLUDE_OBJECT = ("None", "Object", "Metadata")


def partial_metadata(obj: dict) -> dict:
    """The metadata-only view of an object (``meta.k8s.io/v1`` PartialObjectMetadata): a Table row's
    default object, and what metadata-only get, list and watch responses carry."""
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata", {}),
    }


def parse_include_object(value: str | None) -> str:
    """The ``includeObject`` query parameter (default ``Metadata``); 400 for anything else."""
    if value in (None, ""):
        return "Metadata"
    if value not in INCLUDE_OBJECT:
        raise errors.bad_request(
            f'includeObject: Unsupported value: "{value}": supported values: "Metadata", "None", "Object"'
        )
    return value


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: ``45s``, ``3m20s``, ``5h12m``, ``3d4h``, ``2y30d``."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        rest = hours % 24
        return f"{days}d" if rest == 0 else f"{days}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years = days // 365
    if hours < 24 * 365 * 8:
        rest = days % 365
        return f"{years}y" if rest == 0 else f"{years}y{rest}d"
    return f"{years}y"


def parse_printed_time(value: Any) -> datetime | None:
    """A printed time column's value; unparsable ones are printed as unknown, as kubectl does."""
    return parse_time_or_none(value)


# --- the JSONPath subset of printer columns: .a.b, ['a.b'], [N], [*], [?(@.k=="v")] ---------------

_STEP = re.compile(
    r"""\.(?P<field>[A-Za-z0-9_$-]+)            # .field
      | \[\s*'(?P<quoted>[^']*)'\s*\]              # ['field.with.dots']
      | \[\s*(?P<index>-?\d+)\s*\]                 # [0], [-1]
      | \[\s*\*\s*\]                               # [*]
      | \[\s*\?\(\s*@\.(?P<fkey>[A-Za-z0-9_.-]+)\s*==\s*(?:"(?P<fdq>[^"]*)"|'(?P<fsq>[^']*)')\s*\)\s*\]
    """,
    re.VERBOSE,
)


def compile_json_path(path: str) -> Callable[[Any], list[Any]]:
    """A function returning every value ``path`` selects in an object; ValueError if unsupported."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    steps: list[Callable[[list[Any]], list[Any]]] = []
    pos = 0
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None:
            raise ValueError(f"unsupported JSONPath {path!r} at {text[pos:]!r}")
        pos = m.end()
        if m.group("field") is not None or m.group("quoted") is not None:
            name = m.group("field") if m.group("field") is not None else m.group("quoted")

            def member(vs: list[Any], n: str = name) -> list[Any]:
                return [v[n] for v in vs if isinstance(v, dict) and n in v]

            steps.append(member)
        elif m.group("index") is not None:

            def element(vs: list[Any], i: int = int(m.group("index"))) -> list[Any]:
                return [v[i] for v in vs if isinstance(v, list) and -len(v) <= i < len(v)]

            steps.append(element)
        elif m.group("fkey") is not None:
            keys = m.group("fkey").split(".")
            want = m.group("fdq") if m.group("fdq") is not None else m.group("fsq")

            def select(vs: list[Any], keys: list[str] = keys, want: str | None = want) -> list[Any]:
                out = []
                for v in vs:
                    for item in v if isinstance(v, list) else []:
                        got: Any = item
                        for k in keys:
                            got = got.get(k) if isinstance(got, dict) else None
                        if got == want:
                            out.append(item)
                return out

            steps.append(select)
        else:  # [*]
            steps.append(
                lambda vs: [
                    x
                    for v in vs
                    for x in (v if isinstance(v, list) else v.values() if isinstance(v, dict) else [])
                ]
            )

    def evaluate(obj: Any) -> list[Any]:
        values = [obj]
        for step in steps:
            values = step(values)
            if not values:
                break
        return values

    return evaluate


def _text(value: Any) -> str:
    """How the JSONPath printer renders one value as text (strings bare, the rest as JSON)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return jsoncodec.dumps(value).decode()


Printer = tuple[list[dict], Callable[[dict, datetime], list[Any]]]
"""A kind's kubectl columns (``pkg/printers/internalversion/printers.go``): the column definitions and a
function of the object and the current time giving its cells, every column's (the server always prints
"wide"; kubectl hides the priority-1 columns unless ``-o wide``). Declared on the kind's strategy."""


class TableConverter:
    """Builds Tables for one resource type: a custom resource's printer columns, a kind's printer, or
    apiserver's default columns."""

    def __init__(
        self,
        printer_columns: list[dict] | None = None,
        now: Callable[[], datetime] | None = None,
        printer: Printer | None = None,
    ) -> None:
        self._now = now or (lambda: datetime.now(UTC))
        self._custom = printer_columns is not None
        self._printer = printer
        self._columns: list[dict] = [NAME_COLUMN]
        self._paths: list[tuple[str, Callable[[Any], list[Any]] | None]] = []
        if printer is not None:
            self._columns = list(printer[0])
            return
        if not self._custom:
            self._columns.append(_CREATED_COLUMN)
            return
        columns = list(printer_columns or [])
        if not any(c.get("name") == "Age" for c in columns):
            columns.append(_AGE_COLUMN)
        for col in columns:
            json_path = col.get("jsonPath", "")
            try:
                evaluate: Callable[[Any], list[Any]] | None = compile_json_path(json_path)
            except ValueError:
                evaluate = None  # an unsupported path prints an empty cell, never fails the request
            self._paths.append((col.get("type", "string"), evaluate))
            self._columns.append(
                {
                    "name": col.get("name", ""),
                    "type": col.get("type", "string"),
                    "format": col.get("format", ""),
                    "description": col.get("description")
                    or f"Custom resource definition column (in JSONPath format): {json_path}",
                    "priority": int(col.get("priority", 0) or 0),
                }
            )

    def _cells(self, obj: dict) -> list[Any]:
        meta = get_metadata(obj)
        if self._printer is not None:
            return self._printer[1](obj, self._now())
        if not self._custom:
            return [meta.get("name", ""), meta.get("creationTimestamp")]
        cells: list[Any] = [meta.get("name", "")]
        for col_type, evaluate in self._paths:
            values = evaluate(obj) if evaluate is not None else []
            if not values:
                cells.append(None)
            else:
                cells.append(self._cell(col_type, values[0]))
        return cells

    def _cell(self, col_type: str, value: Any) -> Any:
        """apiextensions' ``cellForJSONValue`` (and text for string columns)."""
        if col_type == "string":
            return _text(value)
        if col_type == "integer":
            return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        if col_type == "number":
            return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        if col_type == "boolean":
            return value if isinstance(value, bool) else None
        if col_type == "date":
            if not isinstance(value, str):
                return None
            when = parse_printed_time(value)
            if when is None:
                return "<invalid>"
            return human_duration((self._now() - when).total_seconds())
        return None

    def _row(self, obj: dict, include_object: str) -> dict:
        row: dict[str, Any] = {"cells": self._cells(obj)}
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "Metadata":
            row["object"] = partial_metadata(obj)
        else:
            row["object"] = None
        return row

    def table(self, objs: list[dict], list_meta: dict, include_object: str, headers: bool = True) -> dict:
        """A Table of ``objs``; ``list_meta`` gives resourceVersion/continue/remainingItemCount."""
        meta = {
            k: list_meta[k] for k in ("resourceVersion", "continue", "remainingItemCount") if list_meta.get(k)
        }
        return {
            "kind": "Table",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": meta,
            "columnDefinitions": [dict(c) for c in self._columns] if headers else None,
            "rows": [self._row(o, include_object) for o in objs],
        }
