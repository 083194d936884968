#!/usr/bin/env python3
"""Generate framework/apiserver/catalog/types.json (and descriptions.json) from the client's models.

The ``kubernetes`` client's models are pydantic models whose field annotations are the Go types of the
Kubernetes API in Python terms (``Optional[StrictStr]``, ``List[V1Container]``, ``StrictInt | StrictStr``
for ``intstr.IntOrString``, ``datetime`` for ``metav1.Time``). The test API server decodes built-in
kinds against this data as kube-apiserver's Go decoder does (``catalog/types.py``, ``typed_decoding.py``).

Every model reachable from a resource in ``catalog/resources.json`` is written as
``{"V1Pod": {"go": "v1.Pod", "fields": {"spec": "#V1PodSpec", ...}}}``, a field's type being one of
``string int32 int64 float64 bool time intstr quantity bytes any``, ``#Model``, ``[]T`` or ``map:T``.

Three things the annotations do not say are declared here: ``resource.Quantity`` fields (strings to the
client, but Go's decoder also takes numbers), which integers are int64 (for the error texts only), and
the subtrees that stay raw JSON (CRD schemas, ``fieldsV1``, RawExtension).

``descriptions.json`` holds the same models' documentation for ``/openapi`` (``kubectl explain``): the
class docstring's first part as the type's description, each field's pydantic ``description``, as
``{"V1Pod": {"": "Pod is a collection ...", "spec": "Specification of ..."}}``. It is a file of its own
so that decoding a request never reads it.

Run: ``.venv/bin/python hack/gen-builtin-types.py`` (``--check`` exits 1 if the file is stale).
"""

from __future__ import annotations

import datetime
import inspect
import json
import re
import sys
import typing
from pathlib import Path

import kubernetes.client as client
import pydantic

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "framework" / "apiserver" / "catalog"
OUT = CATALOG / "types.json"
DESCRIPTIONS = CATALOG / "descriptions.json"

# resource.Quantity fields, by model and JSON name (k8s.io/api: every `resource.Quantity` or
# `ResourceList` field of the served kinds).
QUANTITY_FIELDS = {
    "V1ResourceRequirements": ("limits", "requests"),
    "V1VolumeResourceRequirements": ("limits", "requests"),
    "V1ResourceQuotaSpec": ("hard",),
    "V1ResourceQuotaStatus": ("hard", "used"),
    "V1LimitRangeItem": ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"),
    "V1NodeStatus": ("capacity", "allocatable"),
    "V1PersistentVolumeSpec": ("capacity",),
    "V1PersistentVolumeClaimStatus": ("capacity", "allocatedResources"),
    "V1PodSpec": ("overhead",),
    "V1Overhead": ("podFixed",),
    "V1EmptyDirVolumeSource": ("sizeLimit",),
    "V1ContainerStatus": ("allocatedResources",),
    "V1CSIStorageCapacity": ("capacity", "maximumVolumeSize"),
    "V2MetricTarget": ("value", "averageValue"),
    "V2MetricValueStatus": ("value", "averageValue"),
}
# Models whose JSON is not decoded field by field: CRD schemas (JSONSchemaProps, validated by the CRD
# code), and the raw-JSON holders.
OPAQUE_MODELS = {"V1JSONSchemaProps"}
_INT64_NAME = re.compile(r"(Seconds|generation|Generation|Bytes|Nanos|Count|Revision)$")
_PREFIX = re.compile(r"^(?:[A-Z][a-z]+)*?V\d+(?:(?:alpha|beta)\d+)?(?=[A-Z])")


def go_name(model: str) -> str:
    """``V1PodSpec`` → ``v1.PodSpec``; ``CoreV1Event`` → ``v1.Event``; ``V1beta1X`` → ``v1beta1.X``."""
    match = _PREFIX.match(model)
    if not match:
        return model
    version = re.search(r"V\d+(?:(?:alpha|beta)\d+)?$", match.group(0))
    assert version is not None
    return f"{version.group(0).lower()}.{model[match.end() :]}"


def _strip(annotation: typing.Any) -> typing.Any:
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin is typing.Union:
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(args) != 1:
                return annotation
            annotation = args[0]
        else:
            return annotation


def type_of(annotation: typing.Any, model: str, name: str, todo: list[str]) -> str:
    a = _strip(annotation)
    origin = typing.get_origin(a)
    if origin is typing.Union:
        parts = {_strip(x) for x in typing.get_args(a) if x is not type(None)}
        if parts == {int, str}:
            return "intstr"
        if parts == {bytes, str}:
            return "bytes"
        if parts == {int, float}:
            return "float64"
        return "any"
    if origin is list:
        return "[]" + type_of(typing.get_args(a)[0], model, name, todo)
    if origin is dict:
        return "map:" + type_of(typing.get_args(a)[1], model, name, todo)
    if isinstance(a, type) and issubclass(a, pydantic.BaseModel):
        if a.__name__ in OPAQUE_MODELS:
            return "any"
        todo.append(a.__name__)
        return "#" + a.__name__
    if a is str:
        return "quantity" if name in QUANTITY_FIELDS.get(model, ()) else "string"
    if a is bool:
        return "bool"
    if a is int:
        return "int64" if _INT64_NAME.search(name) else "int32"
    if a is float:
        return "float64"
    if a is datetime.datetime:
        return "time"
    if a is bytes:
        return "bytes"
    return "any"


def json_name(field: str, info: typing.Any) -> str:
    return info.serialization_alias or info.alias or field


def generate() -> dict[str, typing.Any]:
    resources = json.loads((CATALOG / "resources.json").read_text())
    todo = sorted({e["model"] for e in resources if e.get("model")})
    todo += sorted({s["model"] for e in resources for s in e.get("subresources", ()) if s.get("model")})
    out: dict[str, typing.Any] = {}
    while todo:
        name = todo.pop()
        if name in out:
            continue
        cls = getattr(client, name)
        fields: dict[str, str] = {}
        for field, info in cls.model_fields.items():
            key = json_name(field, info)
            fields[key] = type_of(info.annotation, name, key, todo)
        out[name] = {"go": go_name(name), "fields": fields}
    for model, names in QUANTITY_FIELDS.items():  # the declarations above must name real fields
        assert model in out, f"QUANTITY_FIELDS names {model}, which no served kind reaches"
        for n in names:
            assert out[model]["fields"].get(n, "").endswith("quantity"), f"{model}.{n} is not a string field"
    return dict(sorted(out.items()))


def _type_description(cls: type) -> str:
    """The class docstring without the generator's ``Attributes:`` boilerplate."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    return doc.split("\n\nAttributes:", 1)[0].strip() if not doc.startswith("Attributes:") else ""


def generate_descriptions(types: dict[str, typing.Any]) -> dict[str, typing.Any]:
    """The documentation of every model in ``types``: ``""`` the type's, then each field's by JSON name."""
    out: dict[str, typing.Any] = {}
    for name in types:
        cls = getattr(client, name)
        entry = {"": _type_description(cls)} if _type_description(cls) else {}
        for field, info in cls.model_fields.items():
            if info.description:
                entry[json_name(field, info)] = info.description
        if entry:
            out[name] = entry
    return dict(sorted(out.items()))


def render(data: dict[str, typing.Any]) -> str:
    return json.dumps(data, indent=0, sort_keys=True, separators=(",", ":")) + "\n"


def main() -> int:
    types = generate()
    outputs = {OUT: render(types), DESCRIPTIONS: render(generate_descriptions(types))}
    if "--check" in sys.argv:
        return 0 if all(path.read_text() == text for path, text in outputs.items()) else 1
    for path, text in outputs.items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")  # a build script's lines of output
    return 0


if __name__ == "__main__":
    sys.exit(main())
