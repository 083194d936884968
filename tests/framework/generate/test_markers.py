"""Each marker of ``framework.markers`` maps to the schema controller-gen writes for its ``+kubebuilder``
marker (sigs.k8s.io/controller-tools ``pkg/crd/markers``), misuse is refused with the class and field
named, and declarations map to the CRD's names, versions and subresources."""

# No ``from __future__ import annotations``: the classes declared inside tests annotate with local names.

import json
import types
from typing import Annotated, Any, Literal, NotRequired, Required, TypedDict

import pytest
import yaml

from framework.generate.crd import GenerateError, crd_objects, generate_crds, plural_of
from framework.markers import (
    JSON,
    Default,
    EmbeddedResource,
    Enum,
    Example,
    ExclusiveMaximum,
    ExclusiveMinimum,
    Format,
    Int32,
    Int64,
    IntOrString,
    ListMapKeys,
    ListType,
    MapType,
    Maximum,
    MaxItems,
    MaxLength,
    MaxProperties,
    Minimum,
    MinItems,
    MinLength,
    MinProperties,
    MultipleOf,
    Nullable,
    Pattern,
    PreserveUnknownFields,
    PrinterColumn,
    Quantity,
    Scale,
    Schemaless,
    StructType,
    Title,
    Type,
    UniqueItems,
    XIntOrString,
    XValidation,
    resource,
    type_markers,
)
from framework.types import core_v1, meta_v1

QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)"
    r"|(\.[0-9]+))))?$"
)


def _module(*classes: type) -> types.ModuleType:
    module = types.ModuleType("declarations")
    for cls in classes:
        setattr(module, cls.__name__, cls)
    return module


def _spec_schema(spec_type: Any) -> dict:
    """The schema generated for a ``spec`` field of the given annotation, on a throwaway kind."""

    Thing = resource(group="test.example.com", version="v1", kind="Thing")(
        TypedDict("Thing", {"spec": spec_type})
    )

    (crd,) = crd_objects([_module(Thing)]).values()
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]


@pytest.mark.parametrize(
    ("annotation", "schema"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (Int32, {"type": "integer", "format": "int32"}),
        (Int64, {"type": "integer", "format": "int64"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (list[str], {"type": "array", "items": {"type": "string"}}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (Literal["A", "B"], {"type": "string", "enum": ["A", "B"]}),
        (Literal[1, 2], {"type": "integer", "enum": [1, 2]}),
        (Annotated[str, Enum("x", "y")], {"type": "string", "enum": ["x", "y"]}),
        (str | None, {"type": "string", "nullable": True}),
        (Annotated[str, Nullable()], {"type": "string", "nullable": True}),
        (Annotated[int, Minimum(1)], {"type": "integer", "minimum": 1}),
        (Annotated[float, Minimum(0.5)], {"type": "number", "minimum": 0.5}),
        (Annotated[int, Maximum(10.0)], {"type": "integer", "maximum": 10}),
        (
            Annotated[int, Minimum(0), ExclusiveMinimum(), Maximum(9), ExclusiveMaximum()],
            {
                "type": "integer",
                "minimum": 0,
                "exclusiveMinimum": True,
                "maximum": 9,
                "exclusiveMaximum": True,
            },
        ),
        (Annotated[int, MultipleOf(5)], {"type": "integer", "multipleOf": 5}),
        (Annotated[str, MinLength(1), MaxLength(63)], {"type": "string", "minLength": 1, "maxLength": 63}),
        (Annotated[str, Pattern("^[a-z]+$")], {"type": "string", "pattern": "^[a-z]+$"}),
        (Annotated[str, Format("uri")], {"type": "string", "format": "uri"}),
        (
            Annotated[list[int], MinItems(1), MaxItems(3), UniqueItems()],
            {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": 1,
                "maxItems": 3,
                "uniqueItems": True,
            },
        ),
        (
            Annotated[dict[str, str], MinProperties(1), MaxProperties(2)],
            {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "minProperties": 1,
                "maxProperties": 2,
            },
        ),
        (
            Annotated[Literal["Allow", "Forbid"], Default("Allow")],
            {"type": "string", "enum": ["Allow", "Forbid"], "default": "Allow"},
        ),
        # controller-gen turns a {} default on a list into [].
        (Annotated[list[str], Default({})], {"type": "array", "items": {"type": "string"}, "default": []}),
        (Annotated[str, Example("x"), Title("T")], {"type": "string", "example": "x", "title": "T"}),
        (
            IntOrString,
            {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True},
        ),
        (
            Annotated[IntOrString, Pattern("^[0-9]+%?$")],
            {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
                "pattern": "^[0-9]+%?$",
            },
        ),
        (
            Quantity,
            {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
                "pattern": QUANTITY_PATTERN,
            },
        ),
        (
            Annotated[str, Type("string"), XIntOrString()],
            {"type": "string", "x-kubernetes-int-or-string": True},
        ),
        (meta_v1.Time, {"type": "string", "format": "date-time"}),
        (meta_v1.ObjectMeta, {"type": "object"}),
        (JSON, {"x-kubernetes-preserve-unknown-fields": True}),
        (
            Annotated[dict[str, Any], PreserveUnknownFields()],
            {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        ),
        (
            Annotated[dict[str, Any], PreserveUnknownFields(), EmbeddedResource()],
            {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "x-kubernetes-embedded-resource": True,
            },
        ),
        (Annotated[Any, Schemaless()], {}),
        (
            Annotated[list[str], ListType("set")],
            {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        ),
        (
            Annotated[list[core_v1.ContainerPort], ListType("map"), ListMapKeys("containerPort", "protocol")],
            {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["containerPort", "protocol"]},
        ),
        (
            Annotated[dict[str, str], MapType("atomic")],
            {"type": "object", "additionalProperties": {"type": "string"}, "x-kubernetes-map-type": "atomic"},
        ),
        (Annotated[core_v1.LocalObjectReference, StructType("atomic")], {"x-kubernetes-map-type": "atomic"}),
        (
            Annotated[
                str,
                XValidation(
                    "self == oldSelf", message="immutable", reason="FieldValueForbidden", field_path=".x"
                ),
                XValidation(
                    "size(self) > 1", message_expression="'too short: ' + self", optional_old_self=True
                ),
            ],
            {
                "type": "string",
                "x-kubernetes-validations": [
                    {
                        "rule": "self == oldSelf",
                        "message": "immutable",
                        "reason": "FieldValueForbidden",
                        "fieldPath": ".x",
                    },
                    {
                        "rule": "size(self) > 1",
                        "messageExpression": "'too short: ' + self",
                        "optionalOldSelf": True,
                    },
                ],
            },
        ),
    ],
)
def test_marker_maps_as_controller_gen(annotation: Any, schema: dict) -> None:
    got = _spec_schema(annotation)
    assert {k: got[k] for k in schema if k in got} == schema
    if annotation not in (
        Annotated[list[core_v1.ContainerPort], ListType("map"), ListMapKeys("containerPort", "protocol")],
    ):
        extra = set(got) - set(schema) - {"description", "items", "properties", "required", "type"}
        assert not extra, extra


def test_descriptions_required_and_inheritance() -> None:
    class Base(TypedDict, total=False):
        inherited: str
        """From the base class."""

    class Spec(Base):
        """Spec of a thing.

        Second paragraph."""

        name: str
        """The name.

        With a second paragraph."""
        replicas: NotRequired[int]
        undocumented: int

    class Partial(TypedDict, total=False):
        a: int
        b: Required[str]

    got = _spec_schema(Spec)
    assert got["description"] == "Spec of a thing.\n\nSecond paragraph."
    assert got["properties"]["name"]["description"] == "The name.\n\nWith a second paragraph."
    assert got["properties"]["inherited"] == {"type": "string", "description": "From the base class."}
    assert "description" not in got["properties"]["undocumented"]
    assert got["required"] == ["name", "undocumented"]  # sorted, as controller-gen lists them
    assert _spec_schema(Partial)["required"] == ["b"]


def test_type_markers_apply_to_the_type() -> None:
    @type_markers(XValidation("self.min <= self.max", message="min must not exceed max"), MinProperties(1))
    class Range(TypedDict, total=False):
        min: int
        max: int

    got = _spec_schema(Range)
    assert got["x-kubernetes-validations"] == [
        {"rule": "self.min <= self.max", "message": "min must not exceed max"}
    ]
    assert got["minProperties"] == 1


def test_field_description_wins_over_the_types() -> None:
    class Inner(TypedDict):
        """The inner type."""

        x: int

    class Outer(TypedDict):
        documented: Inner
        """The field's own words."""
        plain: Inner

    got = _spec_schema(Outer)
    assert got["properties"]["documented"]["description"] == "The field's own words."
    assert got["properties"]["plain"]["description"] == "The inner type."


class _Recursive(TypedDict):
    children: list["_Recursive"]


@pytest.mark.parametrize(
    ("annotation", "field", "words"),
    [
        (Any, "spec", "cannot map Any"),
        (int | str, "spec", "a union of types has no structural schema"),
        (dict[int, str], "spec", "JSON object keys are strings"),
        (list, "spec", "bare list"),
        (Literal["a", 1], "spec", "an enum's values must all be strings, or all integers"),
        (set[str], "spec", "cannot map annotation"),
        (Annotated[str, Minimum(1)], "spec", "Minimum: must apply minimum to a numeric value, found string"),
        (
            Annotated[int, Minimum(0.5)],
            "spec",
            "cannot apply non-integral minimum validation (0.5) to integer value",
        ),
        (Annotated[int, MaxLength(3)], "spec", "MaxLength: must apply maxlength to a textual value"),
        (Annotated[str, MinItems(1)], "spec", "MinItems: must apply minitems to an array"),
        (Annotated[list[str], MapType("atomic")], "spec", "MapType: must apply mapType to an object"),
        (Annotated[list[str], ListMapKeys("name")], "spec", "must apply listMapKey to an associative-list"),
        (Annotated[str, ListType("set")], "spec", "must apply listType to an array"),
        (Annotated[str, XValidation("true", reason="Bad")], "spec", "invalid reason Bad"),
        (Annotated[int, MinLength(-1)], "spec", "must apply minlength"),
    ],
)
def test_unmappable_annotation_names_class_and_field(annotation: Any, field: str, words: str) -> None:
    with pytest.raises(GenerateError) as e:
        _spec_schema(annotation)
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(f"Thing.{field}: "), message
    assert words in message, message
    assert (e.value.cls_name, e.value.field) == ("Thing", field)


def test_nested_error_names_the_inner_class_and_field() -> None:
    class Inner(TypedDict):
        ok: str
        broken: dict[str, Any]

    class Outer(TypedDict):
        inner: Inner

    with pytest.raises(GenerateError, match=r"^Inner\.broken: cannot map Any"):
        _spec_schema(Outer)


def test_recursive_type_is_refused() -> None:
    with pytest.raises(GenerateError, match=r"^_Recursive\.children: recursive type _Recursive"):
        _spec_schema(_Recursive)


def test_unresolvable_annotation_is_refused() -> None:
    class Dangling(TypedDict):
        x: "NoSuchType"  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(GenerateError, match=r"^Dangling: cannot resolve its annotations \(NameError"):
        _spec_schema(Dangling)


# --- declarations ------------------------------------------------------------------------------------


class _Spec(TypedDict, total=False):
    replicas: Int32


class _Status(TypedDict, total=False):
    replicas: Int32
    selector: str


@resource(
    group="fleet.example.com",
    version="v1",
    kind="Policy",
    scope="Cluster",
    short_names=("pol",),
    categories=("all", "fleet"),
    printer_columns=(
        PrinterColumn("Replicas", "integer", ".spec.replicas", description="wanted", priority=1),
        PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
    ),
    scale=Scale(".spec.replicas", ".status.replicas", ".status.selector"),
    labels={"app.kubernetes.io/part-of": "fleet"},
)
class PolicyV1(TypedDict):
    """Policy, the served and stored version."""

    spec: NotRequired[_Spec]
    status: NotRequired[_Status]


@resource(
    group="fleet.example.com",
    version="v1beta1",
    kind="Policy",
    scope="Cluster",
    short_names=("pol",),
    categories=("all", "fleet"),
    storage=False,
    status=False,
    deprecated=True,
    deprecation_warning="fleet.example.com/v1beta1 Policy is deprecated; use v1",
    labels={"app.kubernetes.io/part-of": "fleet"},
)
class PolicyV1beta1(TypedDict):
    spec: NotRequired[_Spec]


def test_versions_of_one_kind_make_one_crd(apiserver) -> None:
    out = generate_crds([_module(PolicyV1beta1, PolicyV1)])
    assert list(out) == ["config/crd/bases/fleet.example.com_policies.yaml"]
    crd = yaml.safe_load(out["config/crd/bases/fleet.example.com_policies.yaml"])
    assert crd["metadata"] == {
        "name": "policies.fleet.example.com",
        "labels": {"app.kubernetes.io/part-of": "fleet"},
    }
    assert crd["spec"]["scope"] == "Cluster"
    assert crd["spec"]["names"] == {
        "categories": ["all", "fleet"],
        "kind": "Policy",
        "listKind": "PolicyList",
        "plural": "policies",
        "shortNames": ["pol"],
        "singular": "policy",
    }
    v1, v1beta1 = crd["spec"]["versions"]  # controller-gen's order: by version priority
    assert (v1["name"], v1["served"], v1["storage"]) == ("v1", True, True)
    assert v1["additionalPrinterColumns"] == [
        {
            "description": "wanted",
            "jsonPath": ".spec.replicas",
            "name": "Replicas",
            "priority": 1,
            "type": "integer",
        },
        {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
    ]
    assert v1["subresources"] == {
        "scale": {
            "labelSelectorPath": ".status.selector",
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
        },
        "status": {},
    }
    assert (v1beta1["name"], v1beta1["storage"], v1beta1["deprecated"]) == ("v1beta1", False, True)
    assert v1beta1["deprecationWarning"] == "fleet.example.com/v1beta1 Policy is deprecated; use v1"
    assert "subresources" not in v1beta1
    apiserver.install_crds([crd])  # the API server takes it as written


def _declare(**overrides: Any) -> type:
    args: dict[str, Any] = {"group": "fleet.example.com", "version": "v1", "kind": "Policy", **overrides}

    @resource(**args)
    class Declared(TypedDict):
        spec: NotRequired[_Spec]

    return Declared


@pytest.mark.parametrize(
    ("classes", "words"),
    [
        (
            lambda: [_declare(), _declare(version="v2")],
            "exactly one version must be the storage version, found 2 (v1, v2)",
        ),
        (lambda: [_declare(storage=False)], "exactly one version must be the storage version, found 0"),
        (lambda: [_declare(), _declare()], "version v1 is declared twice"),
        (
            lambda: [_declare(), _declare(version="v2", storage=False, scope="Cluster")],
            "its versions disagree on scope",
        ),
        (lambda: [_declare(version="1")], "is not a Kubernetes version"),
        (
            lambda: [_declare(), _declare(version="v2", storage=False, labels={"a": "b"})],
            "disagree on labels",
        ),
        (lambda: [_declare(group="fleet")], "must be a domain name with a dot"),
        (lambda: [_declare(kind="policy")], "must be CamelCase"),
        (lambda: [_declare(plural="Policies")], "must be a lower-case DNS label"),
    ],
)
def test_inconsistent_declarations_are_refused(classes: Any, words: str) -> None:
    decls = classes()
    module = types.ModuleType("declarations")
    for i, cls in enumerate(decls):
        setattr(module, f"Declared{i}", cls)
    with pytest.raises(GenerateError) as e:
        generate_crds([module])
    assert "\n" not in str(e.value) and "olicy" in str(e.value)
    assert words in str(e.value)


def test_resource_must_decorate_a_typeddict() -> None:
    @resource(group="fleet.example.com", version="v1", kind="Widget")
    class NotTyped:
        pass

    with pytest.raises(GenerateError, match=r"NotTyped \(Widget\): @resource must decorate a TypedDict"):
        generate_crds([_module(NotTyped)])


def test_scope_is_checked_at_declaration() -> None:
    with pytest.raises(ValueError, match="scope must be Namespaced or Cluster"):
        resource(group="fleet.example.com", version="v1", kind="Widget", scope="Global")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("CronJob", "cronjobs"),
        ("Policy", "policies"),
        ("Ingress", "ingresses"),
        ("Gateway", "gateways"),
        ("Box", "boxes"),
    ],
)
def test_default_plural(kind: str, plural: str) -> None:
    assert plural_of(kind) == plural


def test_cel_rules_install_with_the_crd(apiserver) -> None:
    """The rules reach the API server as written (issue 25's CEL evaluation enforces them)."""

    @type_markers(
        XValidation("self.min <= self.max", message="min must not exceed max", reason="FieldValueInvalid")
    )
    class RangeSpec(TypedDict, total=False):
        min: Int32
        # Not `'max is ' + string(self)`: string() of a number has no size bound in cel-go's cost
        # estimate, so kube-apiserver refuses that CRD (kubernetes/kubernetes#124234), as this one does.
        max: Annotated[
            Int32, XValidation("self >= 0", message_expression="'max is ' + (self < 0 ? 'negative' : 'bad')")
        ]

    @resource(group="x.example.com", version="v1", kind="Range")
    class Range(TypedDict):
        spec: NotRequired[RangeSpec]

    (crd,) = crd_objects([_module(Range)]).values()
    apiserver.install_crds([crd])
    from kubernetes import client

    stored = client.ApiextensionsV1Api(apiserver.api_client()).read_custom_resource_definition(
        "ranges.x.example.com"
    )
    spec = stored.spec.versions[0].schema.open_apiv3_schema.properties["spec"]
    assert [(r.rule, r.message, r.reason) for r in spec.x_kubernetes_validations] == [
        ("self.min <= self.max", "min must not exceed max", "FieldValueInvalid")
    ]
    (rule,) = spec.properties["max"].x_kubernetes_validations
    assert (rule.rule, rule.message_expression) == (
        "self >= 0",
        "'max is ' + (self < 0 ? 'negative' : 'bad')",
    )

    # ... and the server enforces them: a good object is stored, each bad one refused with kube's text.
    objects = client.CustomObjectsApi(apiserver.api_client())

    def create(name: str, spec: dict) -> None:
        body = {"apiVersion": "x.example.com/v1", "kind": "Range", "metadata": {"name": name}, "spec": spec}
        objects.create_namespaced_custom_object("x.example.com", "v1", "default", "ranges", body)

    create("good", {"min": 1, "max": 2})
    for name, spec, message in [
        ("crossed", {"min": 3, "max": 2}, 'spec: Invalid value: "object": min must not exceed max'),
        ("negative", {"min": -5, "max": -1}, 'spec.max: Invalid value: "integer": max is negative'),
    ]:
        with pytest.raises(client.ApiException) as refused:
            create(name, spec)
        assert refused.value.status == 422
        assert message in json.loads(refused.value.body)["message"]


def test_typing_extensions_typeddict_maps_too() -> None:
    te = pytest.importorskip("typing_extensions")

    class Spec(te.TypedDict):
        a: te.NotRequired[int]
        b: str

    assert _spec_schema(Spec) == {
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["b"],
        "type": "object",
    }


def test_an_edited_and_reloaded_module_is_read_anew(tmp_path, monkeypatch) -> None:
    """``generate --check`` after an edit in one process: the new field and its docstring are seen."""
    import importlib
    import sys

    source = (
        "from typing import NotRequired, TypedDict\n"
        "from framework.markers import resource\n\n\n"
        "class GadgetSpec(TypedDict, total=False):\n"
        "    size: int\n"
        '    """How big."""\n\n\n'
        '@resource(group="gadgets.example.com", version="v1", kind="Gadget")\n'
        "class Gadget(TypedDict):\n"
        "    spec: NotRequired[GadgetSpec]\n"
    )
    path = tmp_path / "gadget_types.py"
    path.write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("gadget_types")
    try:
        first = yaml.safe_load(next(iter(generate_crds([module]).values())))
        spec = first["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        assert spec["properties"] == {"size": {"description": "How big.", "type": "integer"}}
        path.write_text(
            source.replace(
                '    """How big."""\n', '    """How big."""\n    color: str\n    """Which colour."""\n'
            )
        )
        module = importlib.reload(module)
        second = yaml.safe_load(next(iter(generate_crds([module]).values())))
        spec = second["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        assert spec["properties"]["color"] == {"description": "Which colour.", "type": "string"}
    finally:
        sys.modules.pop("gadget_types", None)
