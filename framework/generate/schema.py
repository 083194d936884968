"""OpenAPI v3 schemas from ``TypedDict`` declarations, as controller-gen derives them from Go types.

The mapping (sigs.k8s.io/controller-tools ``pkg/crd/schema.go``, ``known_types.go``): ``str`` →
string, ``int`` → integer (``Int32``/``Int64`` add the format), ``float`` → number, ``bool`` →
boolean, ``list[T]`` → array, ``dict[str, T]`` → object with ``additionalProperties``, a ``TypedDict``
→ object with its fields as properties (required as ``Required``/``NotRequired``/``total=`` say, listed
alphabetically), ``Literal[...]`` → enum, ``T | None`` → nullable; ``Annotated`` markers
(``framework.markers``) are applied in controller-gen's priority order. Built-in types
(``framework.types``) are inlined in full, except ObjectMeta, which is ``type: object`` as
controller-gen writes it. Descriptions come from the string literal after each field and from class
docstrings (read from the source with ``ast``, as controller-gen reads Go doc comments).

Anything else (``Any`` without ``JSON``/``Schemaless``, a union of two types, a recursive type) is a
``GenerateError`` naming the class and field: never a field dropped in silence.
"""

from __future__ import annotations

import ast
import collections.abc
import copy
import functools
import inspect
import sys
import textwrap
import types
import typing
from typing import Annotated, Any, Literal, NotRequired, Required, get_args, get_origin

from framework.markers.validation import (
    KnownSchema,
    Marker,
    MarkerError,
    PreserveUnknownFields,
    Schemaless,
)

Schema = dict[str, Any]


class GenerateError(Exception):
    """An annotation the generator cannot map (or a declaration it refuses); ``str()`` is one line
    naming the class and field (or the kind)."""

    def __init__(self, message: str, cls_name: str | None = None, field: str | None = None) -> None:
        where = f"{cls_name}.{field}: " if cls_name and field else f"{cls_name}: " if cls_name else ""
        super().__init__(" ".join(f"{where}{message}".split()))  # one line, whatever the reason says
        self.cls_name = cls_name
        self.field = field


def is_typeddict(obj: object) -> bool:
    """A ``TypedDict`` class, ``typing``'s or ``typing_extensions``' (its own class on Python < 3.13)."""
    return typing.is_typeddict(obj) or (isinstance(obj, type) and type(obj).__name__ == "_TypedDictMeta")


# --- descriptions from the source ---------------------------------------------------------------------


def _clean(doc: str) -> str:
    return inspect.cleandoc(doc).strip()


_Classes = dict[str, tuple[str | None, dict[str, str], list[str]]]


def _module_classes(module_name: str) -> _Classes:
    """Every class in a module's source by qualified name: (docstring, field docstrings, base names).
    Read anew on each call (``inspect`` notices an edited file), parsed once per distinct source."""
    module = sys.modules.get(module_name)
    try:
        source = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        return {}
    return _parse_classes(source)


@functools.lru_cache(maxsize=64)
def _parse_classes(source: str) -> _Classes:
    out: _Classes = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = prefix + node.name
                fields: dict[str, str] = {}
                previous: str | None = None
                for stmt in node.body:
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                        previous = stmt.target.id
                        continue
                    if (
                        previous is not None
                        and isinstance(stmt, ast.Expr)
                        and isinstance(stmt.value, ast.Constant)
                        and isinstance(stmt.value.value, str)
                    ):
                        fields[previous] = _clean(stmt.value.value)
                    previous = None
                out[name] = (ast.get_docstring(node), fields, [ast.unparse(b) for b in node.bases])
                visit(node.body, name + ".")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.body, f"{prefix}{node.name}.<locals>.")

    visit(ast.parse(textwrap.dedent(source)).body, "")
    return out


def _resolve(module_name: str, dotted: str) -> object:
    module = sys.modules.get(module_name)
    head, *rest = dotted.split(".")
    obj: object = getattr(module, head, None)
    for part in rest:
        obj = getattr(obj, part, None)
    return obj


def field_docs(cls: type) -> dict[str, str]:
    """The description of each field of a ``TypedDict``: the string literal right after it in the class
    body, its bases' first."""
    return _docs_of(cls.__module__, cls.__qualname__)


def _docs_of(module_name: str, qualname: str) -> dict[str, str]:
    classes = _module_classes(module_name)
    entry = classes.get(qualname)
    if entry is None:
        return {}
    docs: dict[str, str] = {}
    scope = qualname.rpartition(".")[0]
    for base in entry[2]:
        if scope and f"{scope}.{base}" in classes:  # a base declared beside the class (in a function)
            docs.update(_docs_of(module_name, f"{scope}.{base}"))
            continue
        base_cls = _resolve(module_name, base)
        if isinstance(base_cls, type) and is_typeddict(base_cls):
            docs.update(_docs_of(base_cls.__module__, base_cls.__qualname__))
    docs.update(entry[1])
    return docs


def type_doc(cls: type) -> str | None:
    doc = vars(cls).get("__doc__")
    return _clean(doc) if isinstance(doc, str) and doc.strip() else None


# --- annotations to schemas ---------------------------------------------------------------------------


def _json_type(value: object) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


class SchemaBuilder:
    """Maps annotations to schemas; one per generation run (it caches each ``TypedDict``'s schema)."""

    def __init__(self) -> None:
        self._done: dict[type, Schema] = {}
        self._stack: list[type] = []
        self._where: tuple[str, str] | None = None  # (class, field) being mapped, for errors

    def error(self, message: str) -> GenerateError:
        cls_name, field = self._where or (None, None)
        return GenerateError(message, cls_name, field)

    def hints(self, cls: type) -> dict[str, Any]:
        try:
            return typing.get_type_hints(cls, include_extras=True)
        except Exception as e:  # a name the annotations use that the module does not define
            raise GenerateError(
                f"cannot resolve its annotations ({type(e).__name__}: {e})", cls.__name__
            ) from None

    def fields(self, cls: type) -> list[tuple[str, Any, bool]]:
        """``(name, annotation, required)`` of each field, in declaration order."""
        out = []
        required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
        for name, ann in self.hints(cls).items():
            required = name in required_keys
            ann, required = _unwrap_required(ann, required)
            out.append((name, ann, required))
        return out

    def type_schema(self, cls: type) -> Schema:
        """The object schema of a ``TypedDict`` (a fresh copy each call)."""
        if cls in self._done:
            return copy.deepcopy(self._done[cls])
        if cls in self._stack:
            raise self.error(f"recursive type {cls.__name__}: a CRD schema cannot describe a recursive type")
        markers = [m for m in getattr(cls, "__k8s_markers__", ()) if isinstance(m, Marker)]
        known = [m for m in markers if isinstance(m, KnownSchema)]
        self._stack.append(cls)
        outer = self._where
        try:
            schema: Schema
            if known:  # a known type (ObjectMeta): its schema as controller-gen writes it, nothing more
                schema = {}
            else:
                docs = field_docs(cls)
                props: Schema = {}
                required: list[str] = []
                for name, ann, req in self.fields(cls):
                    self._where = (cls.__name__, name)
                    prop = self.schema(ann)
                    if docs.get(name):
                        prop["description"] = docs[name]
                    props[name] = prop
                    if req:
                        required.append(name)
                self._where = (cls.__name__, "<type>")
                schema = {"type": "object"}
                if props:
                    schema["properties"] = props
                if required:
                    schema["required"] = sorted(required)
                doc = type_doc(cls)
                if doc:
                    schema["description"] = doc
            self._apply(schema, markers)
        finally:
            self._stack.pop()
            self._where = outer
        self._done[cls] = schema
        return copy.deepcopy(schema)

    def _apply(self, schema: Schema, markers: list[Marker]) -> None:
        for m in sorted(markers, key=lambda m: m.priority):
            try:
                m.apply(schema)
            except MarkerError as e:
                raise self.error(f"{type(m).__name__}: {e}") from None

    def schema(self, ann: Any) -> Schema:
        """The schema of one annotation (``Required``/``NotRequired`` already removed)."""
        origin = get_origin(ann)
        if origin is Annotated:
            base, *meta = get_args(ann)
            base, _ = _unwrap_required(base, True)
            markers = [m for m in meta if isinstance(m, Marker)]
            if any(isinstance(m, (Schemaless, KnownSchema)) for m in markers):
                schema: Schema = {}
            elif any(isinstance(m, PreserveUnknownFields) for m in markers) and _is_any_json(base):
                schema = {"type": "object"} if base is not Any else {}
            else:
                schema = self.schema(base)
            self._apply(schema, markers)
            return schema
        if ann is Any or ann is object:
            raise self.error(
                "cannot map Any: use framework.markers.JSON (any JSON value), a dict[str, Any] with "
                "PreserveUnknownFields(), or Schemaless()"
            )
        if ann is str:
            return {"type": "string"}
        if ann is bool:
            return {"type": "boolean"}
        if ann is int:
            return {"type": "integer"}
        if ann is float:
            return {"type": "number"}
        if origin is Literal:
            values = get_args(ann)
            kinds = {_json_type(v) for v in values}
            if len(kinds) != 1 or None in kinds:
                raise self.error(
                    f"cannot map {_name(ann)}: an enum's values must all be strings, or all integers"
                )
            return {"type": kinds.pop(), "enum": list(values)}
        if origin in (typing.Union, types.UnionType):
            args = get_args(ann)
            rest = [a for a in args if a is not type(None)]
            if len(rest) < len(args):  # T | None: the value may be null
                inner = self.schema(rest[0] if len(rest) == 1 else typing.Union[tuple(rest)])  # noqa: UP007
                inner["nullable"] = True
                return inner
            if all(get_origin(a) is Literal for a in rest):
                return self.schema(Literal[tuple(v for a in rest for v in get_args(a))])
            raise self.error(
                f"cannot map {_name(ann)}: a union of types has no structural schema "
                "(use framework.markers.IntOrString for int | str)"
            )
        if origin in (list, collections.abc.Sequence, collections.abc.MutableSequence):
            (item,) = get_args(ann) or (None,)
            if item is None:
                raise self.error("cannot map a list without its item type: write list[T]")
            return {"type": "array", "items": self.schema(item)}
        if origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping):
            args = get_args(ann)
            if len(args) != 2:
                raise self.error("cannot map a dict without its types: write dict[str, T]")
            if args[0] is not str:
                raise self.error(f"cannot map {_name(ann)}: JSON object keys are strings")
            return {"type": "object", "additionalProperties": self.schema(args[1])}
        if isinstance(ann, type) and is_typeddict(ann):
            return self.type_schema(ann)
        supertype = getattr(ann, "__supertype__", None)  # typing.NewType
        if supertype is not None:
            return self.schema(supertype)
        if ann in (list, dict):
            raise self.error(
                f"cannot map a bare {ann.__name__}: write {ann.__name__}[...] with its item type"
            )
        raise self.error(f"cannot map annotation {_name(ann)}")


def _is_any_json(base: Any) -> bool:
    if base is Any:
        return True
    origin = get_origin(base)
    return origin in (dict, collections.abc.Mapping) and get_args(base)[1:] == (Any,)


def _unwrap_required(ann: Any, required: bool) -> tuple[Any, bool]:
    """Strip ``Required[...]``/``NotRequired[...]`` (also inside ``Annotated``), and say which it was."""
    origin = get_origin(ann)
    if origin is Required:
        return _unwrap_required(get_args(ann)[0], True)[0], True
    if origin is NotRequired:
        return _unwrap_required(get_args(ann)[0], False)[0], False
    if origin is Annotated:
        base, *meta = get_args(ann)
        inner, req = _unwrap_required(base, required)
        if inner is not base:
            return Annotated[(inner, *meta)], req
    return ann, required


def _name(ann: Any) -> str:
    text = repr(ann) if not isinstance(ann, type) else ann.__name__
    return text.replace("typing.", "")
