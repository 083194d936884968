"""Validation markers: controller-gen's ``+kubebuilder:validation:*`` set as ``Annotated`` metadata.

A field of a ``TypedDict`` carries its markers in ``Annotated[T, Marker(...), ...]``; the CRD generator
(``framework.generate.crd``) maps ``T`` to a schema and applies each marker to it as controller-gen's
``ApplyToSchema`` does (sigs.k8s.io/controller-tools ``pkg/crd/markers/validation.go``, ``topology.go``),
including its checks: ``Minimum`` on a string, ``MinItems`` on an object and the like are refused, not
ignored. The rest comes from Python's own typing:

- required/optional: ``Required[...]``/``NotRequired[...]`` and the class's ``total=`` (controller-gen's
  ``+required``/``+optional``, or ``omitempty``);
- enum: ``Literal["A", "B"]`` (``+kubebuilder:validation:Enum=A;B``), or ``Enum("A", "B")``;
- nullable: ``T | None`` (``+nullable``), or ``Nullable()``;
- descriptions: the string literal right after a field is its description, the class docstring the
  type's, as controller-gen takes Go doc comments.

Markers are plain frozen dataclasses: at run time an ``Annotated`` field costs nothing, and objects stay
the plain JSON dicts the cache and workqueue hold.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, TypeAlias, TypeVar

__all__ = [
    "JSON",
    "Default",
    "EmbeddedResource",
    "Enum",
    "Example",
    "ExclusiveMaximum",
    "ExclusiveMinimum",
    "Format",
    "Int32",
    "Int64",
    "IntOrString",
    "KnownSchema",
    "ListMapKeys",
    "ListType",
    "MapType",
    "Marker",
    "MarkerError",
    "MaxItems",
    "MaxLength",
    "MaxProperties",
    "Maximum",
    "MinItems",
    "MinLength",
    "MinProperties",
    "Minimum",
    "MultipleOf",
    "Nullable",
    "Pattern",
    "PreserveUnknownFields",
    "Quantity",
    "Schemaless",
    "StructType",
    "Title",
    "Type",
    "UniqueItems",
    "XIntOrString",
    "XValidation",
    "type_markers",
]

Schema = dict[str, Any]


class MarkerError(ValueError):
    """A marker does not fit the schema it is applied to (the generator names the class and field)."""


class Marker:
    """Base of every marker: ``apply`` edits the field's schema in place.

    ``priority`` orders markers on one field as controller-gen's ``ApplyPriority`` does: type-shaping
    markers first (so later ones check the final type), defaults last."""

    priority: ClassVar[int] = 0

    def apply(self, schema: Schema) -> None:
        raise NotImplementedError


def _number(value: float) -> int | float:
    """A numeric bound as Go's JSON encoder writes a float64: ``1.0`` as ``1``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MarkerError(f"expected a number, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _numeric(schema: Schema, name: str, value: float | None = None) -> None:
    if schema.get("type") not in ("integer", "number"):
        raise MarkerError(f"must apply {name} to a numeric value, found {schema.get('type', 'no type')}")
    if value is not None and schema.get("type") == "integer" and not _integral(value):
        raise MarkerError(f"cannot apply non-integral {name} validation ({value}) to integer value")


def _integral(value: float) -> bool:
    return not math.isnan(value) and not math.isinf(value) and value == math.trunc(value)


def _textual(schema: Schema, name: str) -> None:
    if schema.get("type") != "string" and not schema.get("x-kubernetes-int-or-string"):
        raise MarkerError(f"must apply {name} to a textual value, found type {schema.get('type', '')!r}")


def _of_type(schema: Schema, want: str, name: str) -> None:
    if schema.get("type") != want:
        raise MarkerError(f"must apply {name} to an {want}")


def _count(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MarkerError(f"{name} takes a non-negative integer, got {value!r}")
    return value


@dataclass(frozen=True)
class Minimum(Marker):
    """``+kubebuilder:validation:Minimum``: the inclusive lower bound of a number."""

    value: float

    def apply(self, schema: Schema) -> None:
        _numeric(schema, "minimum", self.value)
        schema["minimum"] = _number(self.value)


@dataclass(frozen=True)
class Maximum(Marker):
    """``+kubebuilder:validation:Maximum``: the inclusive upper bound of a number."""

    value: float

    def apply(self, schema: Schema) -> None:
        _numeric(schema, "maximum", self.value)
        schema["maximum"] = _number(self.value)


@dataclass(frozen=True)
class ExclusiveMinimum(Marker):
    """``+kubebuilder:validation:ExclusiveMinimum``: ``Minimum`` excludes its value."""

    value: bool = True

    def apply(self, schema: Schema) -> None:
        _numeric(schema, "exclusiveminimum")
        if self.value:
            schema["exclusiveMinimum"] = True


@dataclass(frozen=True)
class ExclusiveMaximum(Marker):
    """``+kubebuilder:validation:ExclusiveMaximum``: ``Maximum`` excludes its value."""

    value: bool = True

    def apply(self, schema: Schema) -> None:
        _numeric(schema, "exclusivemaximum")
        if self.value:
            schema["exclusiveMaximum"] = True


@dataclass(frozen=True)
class MultipleOf(Marker):
    """``+kubebuilder:validation:MultipleOf``."""

    value: float

    def apply(self, schema: Schema) -> None:
        _numeric(schema, "multipleof", self.value)
        schema["multipleOf"] = _number(self.value)


@dataclass(frozen=True)
class MinLength(Marker):
    """``+kubebuilder:validation:MinLength``: the least number of characters of a string."""

    value: int

    def apply(self, schema: Schema) -> None:
        _textual(schema, "minlength")
        schema["minLength"] = _count(self.value, "MinLength")


@dataclass(frozen=True)
class MaxLength(Marker):
    """``+kubebuilder:validation:MaxLength``: the most characters of a string."""

    value: int

    def apply(self, schema: Schema) -> None:
        _textual(schema, "maxlength")
        schema["maxLength"] = _count(self.value, "MaxLength")


@dataclass(frozen=True)
class Pattern(Marker):
    """``+kubebuilder:validation:Pattern``: an ECMA 262 regular expression a string must match."""

    value: str

    def apply(self, schema: Schema) -> None:
        _textual(schema, "pattern")
        schema["pattern"] = self.value


@dataclass(frozen=True)
class MinItems(Marker):
    """``+kubebuilder:validation:MinItems``."""

    value: int

    def apply(self, schema: Schema) -> None:
        _of_type(schema, "array", "minitems")
        schema["minItems"] = _count(self.value, "MinItems")


@dataclass(frozen=True)
class MaxItems(Marker):
    """``+kubebuilder:validation:MaxItems``."""

    value: int

    def apply(self, schema: Schema) -> None:
        _of_type(schema, "array", "maxitem")
        schema["maxItems"] = _count(self.value, "MaxItems")


@dataclass(frozen=True)
class UniqueItems(Marker):
    """``+kubebuilder:validation:UniqueItems`` (structural schemas refuse it; prefer
    ``ListType("set")``, as the API server does)."""

    value: bool = True

    def apply(self, schema: Schema) -> None:
        _of_type(schema, "array", "uniqueitems")
        if self.value:
            schema["uniqueItems"] = True


@dataclass(frozen=True)
class MinProperties(Marker):
    """``+kubebuilder:validation:MinProperties``."""

    value: int

    def apply(self, schema: Schema) -> None:
        _of_type(schema, "object", "minproperties")
        schema["minProperties"] = _count(self.value, "MinProperties")


@dataclass(frozen=True)
class MaxProperties(Marker):
    """``+kubebuilder:validation:MaxProperties``."""

    value: int

    def apply(self, schema: Schema) -> None:
        _of_type(schema, "object", "maxproperties")
        schema["maxProperties"] = _count(self.value, "MaxProperties")


class Enum(Marker):
    """``+kubebuilder:validation:Enum``: the allowed values (``Literal[...]`` says the same and also
    narrows the static type)."""

    def __init__(self, *values: Any) -> None:
        self.values = values

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Enum) and other.values == self.values

    def __hash__(self) -> int:
        return hash(("Enum", self.values))

    def __repr__(self) -> str:
        return f"Enum{self.values!r}"

    def apply(self, schema: Schema) -> None:
        schema["enum"] = list(self.values)


@dataclass(frozen=True)
class Format(Marker):
    """``+kubebuilder:validation:Format``: an OpenAPI format (``date-time``, ``int32``, ``uri``, ...)."""

    value: str

    def apply(self, schema: Schema) -> None:
        schema["format"] = self.value


@dataclass(frozen=True)
class Type(Marker):
    """``+kubebuilder:validation:Type``: overrides the type the annotation maps to."""

    priority: ClassVar[int] = -1
    value: str

    def apply(self, schema: Schema) -> None:
        schema["type"] = self.value


@dataclass(frozen=True)
class Nullable(Marker):
    """``+nullable``: the field may be JSON ``null`` (``T | None`` says the same)."""

    def apply(self, schema: Schema) -> None:
        schema["nullable"] = True


@dataclass(frozen=True)
class Default(Marker):
    """``+kubebuilder:default``: the value the API server fills in when the field is absent."""

    priority: ClassVar[int] = 10
    value: Any

    def apply(self, schema: Schema) -> None:
        value = self.value
        if schema.get("type") == "array" and value == {}:  # as controller-gen: {} on a list means []
            value = []
        schema["default"] = value


@dataclass(frozen=True)
class Example(Marker):
    """``+kubebuilder:example``."""

    value: Any

    def apply(self, schema: Schema) -> None:
        schema["example"] = self.value


@dataclass(frozen=True)
class Title(Marker):
    """``+kubebuilder:title``."""

    value: str

    def apply(self, schema: Schema) -> None:
        schema["title"] = self.value


@dataclass(frozen=True)
class EmbeddedResource(Marker):
    """``+kubebuilder:validation:EmbeddedResource``: the value is a whole object (apiVersion, kind,
    metadata), validated and pruned as one."""

    def apply(self, schema: Schema) -> None:
        schema["x-kubernetes-embedded-resource"] = True


@dataclass(frozen=True)
class PreserveUnknownFields(Marker):
    """``+kubebuilder:pruning:PreserveUnknownFields``: the API server keeps fields the schema does not
    name. Also how ``Any`` and ``dict[str, Any]`` fields are allowed (``JSON`` below)."""

    def apply(self, schema: Schema) -> None:
        schema["x-kubernetes-preserve-unknown-fields"] = True


@dataclass(frozen=True)
class XIntOrString(Marker):
    """``+kubebuilder:validation:XIntOrString``: the value is an integer or a string."""

    priority: ClassVar[int] = -1

    def apply(self, schema: Schema) -> None:
        schema["x-kubernetes-int-or-string"] = True


@dataclass(frozen=True)
class Schemaless(Marker):
    """``+kubebuilder:validation:Schemaless``: the field gets an empty schema (only its description);
    what its annotation says is not mapped. Pair with ``PreserveUnknownFields`` for a structural CRD."""

    priority: ClassVar[int] = -3

    def apply(self, schema: Schema) -> None:
        pass


@dataclass(frozen=True)
class ListType(Marker):
    """``+listType``: ``atomic`` (replaced whole), ``set`` (unique scalars) or ``map`` (items keyed by
    ``ListMapKeys``) — how server-side apply merges the list."""

    priority: ClassVar[int] = -1
    value: Literal["atomic", "set", "map"]

    def apply(self, schema: Schema) -> None:
        if schema.get("type") != "array":
            raise MarkerError(f"must apply listType to an array, found {schema.get('type', 'no type')}")
        if self.value not in ("atomic", "set", "map"):
            raise MarkerError('ListType must be either "map", "set" or "atomic"')
        schema["x-kubernetes-list-type"] = self.value


class ListMapKeys(Marker):
    """``+listMapKey`` (one per key): the keys of a ``ListType("map")`` list's items."""

    def __init__(self, *keys: str) -> None:
        self.keys = keys

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ListMapKeys) and other.keys == self.keys

    def __hash__(self) -> int:
        return hash(("ListMapKeys", self.keys))

    def __repr__(self) -> str:
        return f"ListMapKeys{self.keys!r}"

    def apply(self, schema: Schema) -> None:
        if schema.get("type") != "array":
            raise MarkerError(f"must apply listMapKey to an array, found {schema.get('type', 'no type')}")
        if schema.get("x-kubernetes-list-type") != "map":
            raise MarkerError("must apply listMapKey to an associative-list")
        if not self.keys:
            raise MarkerError("ListMapKeys needs at least one key")
        schema["x-kubernetes-list-map-keys"] = [*schema.get("x-kubernetes-list-map-keys", ()), *self.keys]


@dataclass(frozen=True)
class MapType(Marker):
    """``+mapType``: ``atomic`` or ``granular`` for a map."""

    value: Literal["atomic", "granular"]

    def apply(self, schema: Schema) -> None:
        _of_type(schema, "object", "mapType")
        if self.value not in ("atomic", "granular"):
            raise MarkerError('MapType must be either "granular" or "atomic"')
        schema["x-kubernetes-map-type"] = self.value


@dataclass(frozen=True)
class StructType(Marker):
    """``+structType``: ``atomic`` or ``granular`` for a struct (written as ``x-kubernetes-map-type``,
    as controller-gen does)."""

    value: Literal["atomic", "granular"]

    def apply(self, schema: Schema) -> None:
        if schema.get("type", "object") != "object":
            raise MarkerError("must apply structType to an object")
        if self.value not in ("atomic", "granular"):
            raise MarkerError('StructType must be either "granular" or "atomic"')
        schema["x-kubernetes-map-type"] = self.value


_REASONS = ("FieldValueRequired", "FieldValueInvalid", "FieldValueForbidden", "FieldValueDuplicate")


@dataclass(frozen=True)
class XValidation(Marker):
    """``+kubebuilder:validation:XValidation``: a CEL rule the value must satisfy (``self`` is the
    value, ``oldSelf`` the previous one on update). Several may be given; they apply in order."""

    rule: str
    message: str | None = None
    message_expression: str | None = None
    reason: str | None = None
    field_path: str | None = None
    optional_old_self: bool | None = None

    def apply(self, schema: Schema) -> None:
        if self.reason is not None and self.reason not in _REASONS:
            raise MarkerError(f"invalid reason {self.reason}, valid values are {', '.join(_REASONS)}")
        rule: Schema = {"rule": self.rule}
        if self.message:
            rule["message"] = self.message
        if self.message_expression:
            rule["messageExpression"] = self.message_expression
        if self.reason:
            rule["reason"] = self.reason
        if self.field_path:
            rule["fieldPath"] = self.field_path
        if self.optional_old_self is not None:
            rule["optionalOldSelf"] = self.optional_old_self
        schema["x-kubernetes-validations"] = [*schema.get("x-kubernetes-validations", ()), rule]


class KnownSchema(Marker):
    """A schema used as is, in place of the annotation's (the known types below, as controller-gen's
    ``KnownPackages``). Not a controller-gen marker."""

    priority: ClassVar[int] = -2

    def __init__(self, schema: Schema) -> None:
        self._json = json.dumps(schema, sort_keys=True)  # hashable and immutable, as Annotated wants

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KnownSchema) and other._json == self._json

    def __hash__(self) -> int:
        return hash(self._json)

    def __repr__(self) -> str:
        return f"KnownSchema({self._json})"

    def apply(self, schema: Schema) -> None:
        schema.update(json.loads(self._json))


_INT_OR_STRING: Schema = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "x-kubernetes-int-or-string": True,
}
# resource.Quantity's schema as controller-gen writes it (pkg/crd/known_types.go).
_QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)"
    r"|(\.[0-9]+))))?$"
)

IntOrString: TypeAlias = Annotated[int | str, KnownSchema(_INT_OR_STRING)]
"""``intstr.IntOrString``: an integer or a string (``x-kubernetes-int-or-string``)."""

Quantity: TypeAlias = Annotated[str, KnownSchema({**_INT_OR_STRING, "pattern": _QUANTITY_PATTERN})]
"""``resource.Quantity`` (``"500m"``, ``"1Gi"``): written as a string by the API server, accepted as a
number too; parse with ``framework.meta.quantity``."""

Int32: TypeAlias = Annotated[int, Format("int32")]
"""Go's ``int32``: ``type: integer, format: int32``. A plain ``int`` maps to ``type: integer``."""

Int64: TypeAlias = Annotated[int, Format("int64")]
"""Go's ``int64``: ``type: integer, format: int64``."""

JSON: TypeAlias = Annotated[Any, PreserveUnknownFields()]
"""``apiextensionsv1.JSON``: any JSON value, kept as sent (``x-kubernetes-preserve-unknown-fields``)."""

_T = TypeVar("_T")


def type_markers(*markers: Marker) -> Any:
    """Markers on a ``TypedDict`` type itself (controller-gen's type-level markers, e.g. an
    ``XValidation`` comparing two fields, or ``PreserveUnknownFields``)::

        @type_markers(XValidation("self.min <= self.max", message="min must not exceed max"))
        class Range(TypedDict): ...
    """
    for m in markers:
        if not isinstance(m, Marker):
            raise TypeError(f"type_markers takes markers, got {m!r}")

    def decorate(cls: _T) -> _T:
        setattr(cls, "__k8s_markers__", (*getattr(cls, "__k8s_markers__", ()), *markers))  # noqa: B010
        return cls

    return decorate
