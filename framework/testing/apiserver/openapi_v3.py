"""``/openapi/v3``: per group-version OpenAPI 3 documents for ``kubectl explain`` and field validation.

The root lists one document per served group-version (``{"paths": {"api/v1": {"serverRelativeURL":
"/openapi/v3/api/v1?hash=H"}, ...}}``, kube-openapi's ``handler3``). Each document holds
``components.schemas`` for the group-version's kinds and every type they reference, the kinds tagged
``x-kubernetes-group-version-kind`` (what ``kubectl explain`` looks a kind up by), and one PATCH
operation per resource with the ``fieldValidation`` query parameter, by which kubectl decides that the
server validates fields itself (kubernetes/cli-runtime ``pkg/resource/query_param_verifier_v3.go``).

Built-in schemas come from the client's models (``catalog/types.json``); schema names are the client's
model class names rather than kube-openapi's ``io.k8s.api.core.v1.Pod`` (kubectl follows ``$ref``s and
matches kinds by their GVK tag, not by name). The catalog carries no descriptions, so ``explain``
shows fields and types without their documentation. Custom resources get their CRD version's
structural schema, with ``apiVersion``, ``kind`` and ``metadata`` (ObjectMeta) added.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from .kinds.strategy import ResourceType
from .registry import Registry
from .rest import builtin_model
from .typed_decoding import model_types

_SCALARS: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "float64": {"type": "number", "format": "double"},
    "bool": {"type": "boolean"},
    "bytes": {"type": "string", "format": "byte"},
    "time": {"type": "string", "format": "date-time"},
    "intstr": {"x-kubernetes-int-or-string": True},
    "quantity": {"x-kubernetes-int-or-string": True},
    "any": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
}
_REF = "#/components/schemas/"
OBJECT_META = "V1ObjectMeta"


def schema_name(model: str) -> str:
    """``V1Container`` → ``V1Container.Container``: kubectl shows the part after the last dot as the
    field's type (``<[]Container>``), as for kube-openapi's ``io.k8s.api.core.v1.Container``."""
    go = model_types().get(model, {}).get("go", model)
    return f"{model}.{str(go).rpartition('.')[2]}"


def gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _schema(t: str, wanted: list[str]) -> dict[str, Any]:
    if t.startswith("#"):
        wanted.append(t[1:])
        return {"allOf": [{"$ref": _REF + schema_name(t[1:])}]}
    if t.startswith("[]"):
        return {"type": "array", "items": _schema(t[2:], wanted)}
    if t.startswith("map:"):
        return {"type": "object", "additionalProperties": _schema(t[4:], wanted)}
    return dict(_SCALARS.get(t, _SCALARS["any"]))


def _add_models(schemas: dict[str, Any], wanted: list[str]) -> None:
    """The schemas of ``wanted`` and of everything they reference."""
    types = model_types()
    while wanted:
        name = wanted.pop()
        key = schema_name(name)
        if key in schemas or name not in types:
            continue
        props = {k: _schema(t, wanted) for k, t in types[name]["fields"].items()}
        schemas[key] = {"type": "object", "properties": props}


def _gvk(rt: ResourceType) -> list[dict[str, str]]:
    return [{"group": rt.group, "version": rt.version, "kind": rt.kind}]


def _patch_path(rt: ResourceType) -> tuple[str, dict[str, Any]]:
    base = "/" + gv_path(rt.group, rt.version)
    ns = "/namespaces/{namespace}" if rt.namespaced else ""
    op = {
        "operationId": f"patch{rt.kind}",
        "x-kubernetes-group-version-kind": _gvk(rt)[0],
        "x-kubernetes-action": "patch",
        "parameters": [
            {"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
            for name in ("dryRun", "fieldManager", "fieldValidation", "force")
        ],
        "responses": {"200": {"description": "OK"}},
    }
    return f"{base}{ns}/{rt.resource}/{{name}}", {"patch": op}


def document(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    """The OpenAPI 3 document of one served group-version; None if it is not served."""
    types = [rt for rt in registry.all() if rt.group == group and rt.version == version]
    if not types:
        return None
    schemas: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    for rt in types:
        if "patch" in rt.verbs:
            path, item = _patch_path(rt)
            paths[path] = item
        if rt.is_custom:
            schema = _custom_schema(rt)
            if schema is not None:
                schemas[f"{rt.group}.{rt.version}.{rt.kind}"] = schema
                _add_models(schemas, [OBJECT_META])
            continue
        model = builtin_model(rt)
        if model is None:
            continue
        _add_models(schemas, [model])
        key = schema_name(model)
        if key in schemas:
            schemas[key] = {**schemas[key], "x-kubernetes-group-version-kind": _gvk(rt)}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "unversioned"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def _custom_schema(rt: ResourceType) -> dict[str, Any] | None:
    from .crd.definition import version_entry

    assert rt.crd is not None
    entry = version_entry(rt.crd, rt.version) or {}
    schema = (entry.get("schema") or {}).get("openAPIV3Schema")
    if not isinstance(schema, dict):
        return None
    props = dict(schema.get("properties") or {})
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    props["metadata"] = {"allOf": [{"$ref": _REF + schema_name(OBJECT_META)}]}
    return {**schema, "properties": props, "x-kubernetes-group-version-kind": _gvk(rt)}


def root(registry: Registry) -> dict[str, Any]:
    """``/openapi/v3``: each served group-version's document URL, with its content's hash."""
    paths: dict[str, Any] = {}
    for group, versions in sorted(registry.group_versions().items()):
        for version in versions:
            doc = document(registry, group, version)
            digest = hashlib.sha512(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()[:128]
            path = gv_path(group, version)
            paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest.upper()}"}
    return {"paths": paths}
