"""What a JSON ``null`` in a built-in kind becomes: the Go decoder's answer, applied on the way in.

kube-apiserver decodes the body of a built-in kind into its Go struct. A ``null`` leaves the field at
its zero value — nil for pointers, slices and maps, the zero struct for struct fields, ``""``/0/false
for scalars — and defaulting then fills it like an absent field; on the way out ``omitempty`` leaves
nil fields out. So for almost every field a ``null`` is exactly an absent field, and is dropped here
before defaulting and validation (``Namespace`` ``spec: null`` is the zero spec, defaulted to
``finalizers: [kubernetes]``; ``RoleBinding`` ``roleRef: null`` is the zero RoleRef, 422).

Two exceptions, declared per kind in its strategy's ``null_shape`` (built with :func:`shape`; paths
are dotted JSON names, ``[]`` marking list items and ``{}`` map values):

- ``keep``: fields whose zero value Go writes as ``null`` itself — slices without ``omitempty``
  (Role/ClusterRole ``rules``, spec 19-1) and non-pointer ``metav1.Time``/``MicroTime`` fields (Event
  ``eventTime``, ``firstTimestamp``, ``lastTimestamp``, ``series.lastObservedTime``; conditions'
  ``lastTransitionTime``); pointers to times (Lease ``spec.renewTime``) are dropped like any pointer;
- ``zeros``: list items and map values, which cannot be left out: a ``null`` there is the element's
  zero value (``""`` for strings and ``[]byte``, ``{}`` for structs, ``"0"`` for quantities).

Subtrees listed as ``opaque`` carry raw JSON (``managedFields[].fieldsV1``) and are left alone; those
listed as ``schemas`` are CRD ``JSONSchemaProps`` (:func:`_walk_schema`). Kinds that declare nothing get
:data:`META`.

Custom resources are not Go structs: their nulls follow the CRD schema (``nullable``, 16-7, in
:mod:`crd`); only their ObjectMeta is decoded here, as the CR handler does through
``metav1.ObjectMeta``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

_ABSENT = object()


@dataclass(frozen=True)
class Shape:
    keep: frozenset[str] = frozenset()
    zeros: dict[str, Any] = field(default_factory=dict)
    opaque: frozenset[str] = frozenset()
    schemas: frozenset[str] = frozenset()
    maps: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        # A path is a map when something is declared about its values (``P{}…``).
        maps = {
            p[:i]
            for p in (*self.keep, *self.zeros, *self.opaque)
            for i in range(len(p))
            if p.startswith("{}", i)
        }
        object.__setattr__(self, "maps", frozenset(maps))


def shape(
    zeros: dict[str, Any] | None = None, keep: tuple[str, ...] = (), schemas: tuple[str, ...] = ()
) -> Shape:
    """A kind's null shape: ObjectMeta's zeros and the kind's own ``zeros``, ``keep`` and ``schemas``."""
    return Shape(
        keep=frozenset(keep),
        zeros={**_META_ZEROS, **(zeros or {})},
        opaque=frozenset({"metadata.managedFields[].fieldsV1"}),
        schemas=frozenset(schemas),
    )


def strings(*paths: str) -> dict[str, Any]:
    """Zeros of string (or ``[]byte``) list items and map values: ``""``."""
    return dict.fromkeys(paths, "")


def structs(*paths: str) -> dict[str, Any]:
    """Zeros of struct list items and map values: ``{}``."""
    return {path: {} for path in paths}


def selector(path: str) -> dict[str, Any]:
    """The zeros inside a ``metav1.LabelSelector`` at ``path``."""
    return {
        **strings(f"{path}.matchLabels{{}}", f"{path}.matchExpressions[].values[]"),
        **structs(f"{path}.matchExpressions[]"),
    }


_META_ZEROS: dict[str, Any] = {
    **strings("metadata.labels{}", "metadata.annotations{}", "metadata.finalizers[]"),
    **structs("metadata.ownerReferences[]", "metadata.managedFields[]"),
}
# Kinds that declare no shape of their own: nulls dropped everywhere but in ObjectMeta's lists and maps.
META = shape()

# What status conditions (``[]metav1.Condition`` and the kinds' own condition types) share.
CONDITIONS = structs("status.conditions[]")
TRANSITION_TIME = ("status.conditions[].lastTransitionTime",)


def decode(shape: Shape, obj: dict, custom: bool = False) -> None:
    """Give ``obj`` (a request body, patched object or webhook-mutated object) the nulls Go's decoder
    would leave in it, in place: ``shape`` is the kind's (its strategy's ``null_shape``). ``custom``: a
    custom resource, whose ObjectMeta alone is decoded."""
    if custom:
        if isinstance(obj.get("metadata"), dict):
            _walk(obj["metadata"], "metadata", META)
        return
    _walk(obj, "", shape)


def _walk(node: Any, path: str, shape: Shape) -> None:
    if path in shape.opaque:
        return
    if path in shape.schemas:
        _walk_schema(node)
        return
    if isinstance(node, dict):
        is_map = path in shape.maps
        for key in list(node):
            child = f"{path}{{}}" if is_map else f"{path}.{key}" if path else key
            value = node[key]
            if value is not None:
                _walk(value, child, shape)
            elif child in shape.keep:
                continue
            elif child in shape.zeros:
                node[key] = copy.deepcopy(shape.zeros[child])
            else:
                del node[key]
    elif isinstance(node, list):
        child = f"{path}[]"
        zero = shape.zeros.get(child, _ABSENT)
        for i, item in enumerate(node):
            if item is not None:
                _walk(item, child, shape)
            elif zero is not _ABSENT:
                node[i] = copy.deepcopy(zero)


# JSONSchemaProps fields by Go type (apiextensions/v1 types_jsonschema.go); every other field is a
# scalar or pointer, whose null is dropped.
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions")  # map[string]JSONSchemaProps
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")  # []JSONSchemaProps
_SCHEMA_ONE = ("not", "additionalProperties", "additionalItems")  # *JSONSchemaProps(OrBool)
_SCHEMA_STRINGS = ("required", "x-kubernetes-list-map-keys")  # []string
_SCHEMA_RAW = ("default", "example", "enum")  # JSON values: nulls inside are data


def _walk_schema(node: Any) -> None:
    """A CRD ``JSONSchemaProps`` node: nested schemas decoded alike, raw JSON values left alone."""
    if not isinstance(node, dict):
        return
    for key in list(node):
        value = node[key]
        if value is None:
            del node[key]
        elif key in _SCHEMA_RAW:
            continue
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                if sub is None:
                    value[name] = {}
                _walk_schema(value[name])
        elif (key in _SCHEMA_LISTS or key == "items") and isinstance(value, list):
            for i, sub in enumerate(value):
                if sub is None:
                    value[i] = {}
                _walk_schema(value[i])
        elif key in ("items", *_SCHEMA_ONE):
            _walk_schema(value)
        elif key in _SCHEMA_STRINGS and isinstance(value, list):
            node[key] = ["" if v is None else v for v in value]
        elif key == "x-kubernetes-validations" and isinstance(value, list):
            node[key] = [{} if v is None else v for v in value]
            for rule in node[key]:
                _walk(rule, "", _NO_ZEROS)
        elif key == "dependencies" and isinstance(value, dict):
            for name, dep in value.items():  # JSONSchemaPropsOrStringArray
                if isinstance(dep, dict):
                    _walk_schema(dep)
                elif isinstance(dep, list):
                    value[name] = ["" if v is None else v for v in dep]
                # a null dependency stays: upstream's UnmarshalJSON leaves both members nil


_NO_ZEROS = Shape()
