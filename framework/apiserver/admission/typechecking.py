"""Type checking of ValidatingAdmissionPolicies, as k8s.io/apiserver's
``pkg/admission/plugin/policy/validating/typechecking.go`` does it for kube-controller-manager's
``validatingadmissionpolicy-status`` controller (``controllers/policy_status.py`` writes the result).

Each ``validations[i].expression`` and ``.messageExpression`` is compiled once per kind the policy's
``matchConstraints.resourceRules`` name (no wildcard group or version; ``*`` and subresources skipped;
at most 10 kinds, sorted by group, version, kind) with ``object`` and ``oldObject`` typed by that kind's
schema and ``params`` by the ``paramKind``'s; a kind without a schema is skipped. What fails to
compile becomes an ``ExpressionWarning`` (``fieldRef``, and per kind ``<group>/<version>, Kind=<kind>:
<cel-go's issues>``). The checks are the engine's on declared objects: ``undefined field`` for a
select of a property the schema does not declare (our objects are ``dyn`` to the checker otherwise, so
cel-go's type mismatches, e.g. ``object.spec.replicas == 'x'``, are not found).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any

from framework.apiserver import cel
from framework.apiserver.admission.expressions import AUTHORIZER_TYPE
from framework.apiserver.cel import types as ct
from framework.apiserver.encoding.typed_decoding import model_types
from framework.apiserver.machinery.jsonvalues import as_dict, as_list
from framework.apiserver.registry.rest.typed import builtin_model

if TYPE_CHECKING:
    from framework.apiserver.registry.served import Registry
    from framework.apiserver.registry.strategy import ResourceType

MAX_TYPES_TO_CHECK = 10
OBJECT_META = "V1ObjectMeta"
_SCALARS = {
    "string": ct.STRING_TYPE,
    "int32": ct.INT_TYPE,
    "int64": ct.INT_TYPE,
    "float64": ct.DOUBLE_TYPE,
    "bool": ct.BOOL_TYPE,
    "bytes": ct.BYTES_TYPE,
    "time": ct.TIMESTAMP_TYPE,
}


def check(registry: Registry, policy: dict) -> list[dict[str, str]]:
    """The policy's ``status.typeChecking.expressionWarnings`` (empty when there are none)."""
    spec = as_dict(policy.get("spec"))
    kinds = [(gvk, decl) for gvk in _types_to_check(registry, spec) if (decl := _decl(registry, gvk))]
    params = _params_decl(registry, spec.get("paramKind"))
    warnings: list[dict[str, str]] = []
    for i, validation in enumerate(as_dict(v) for v in as_list(spec.get("validations"))):
        for key in ("expression", "messageExpression"):
            expression = validation.get(key)
            if not isinstance(expression, str) or not expression:
                continue
            text = "\n".join(
                f"{_gvk_string(gvk)}: {problem}\n"
                for gvk, decl in kinds
                if (problem := _problem(expression, decl, params)) is not None
            )
            if text:
                warnings.append({"fieldRef": f"spec.validations[{i}].{key}", "warning": text})
    return warnings


def _problem(expression: str, object_type: ct.DeclType, params: ct.DeclType | None) -> str | None:
    variables: dict[str, ct.DeclType | None] = {
        "object": object_type,
        "oldObject": object_type,
        "request": None,
        "params": params,
        "namespaceObject": None,
        "variables": None,
        "authorizer": AUTHORIZER_TYPE,
    }
    try:
        cel.compile(expression, variables=variables, cost_limit=None)
    except cel.CompileError as e:
        return e.message
    return None


def _gvk_string(gvk: tuple[str, str, str]) -> str:
    """``schema.GroupVersionKind.String()``."""
    return f"{gvk[0]}/{gvk[1]}, Kind={gvk[2]}"


def _types_to_check(registry: Registry, spec: dict) -> list[tuple[str, str, str]]:
    """``TypeChecker.typesToCheck``: the kinds the resource rules name, sorted."""
    found: set[tuple[str, str, str]] = set()
    count = 0
    for rule in as_list(as_dict(spec.get("matchConstraints")).get("resourceRules")):
        rule = as_dict(rule)
        groups = [g for g in as_list(rule.get("apiGroups")) if isinstance(g, str)]
        versions = [v for v in as_list(rule.get("apiVersions")) if isinstance(v, str)]
        if any("*" in g for g in groups) or any("*" in v for v in versions):
            continue
        resources = sorted(
            r for r in as_list(rule.get("resources")) if isinstance(r, str) and not set(r) & {"*", "/"}
        )
        for group in sorted(groups):
            for version in sorted(versions):
                for resource in resources:
                    rt = registry.get(group, version, resource)
                    if rt is None:
                        continue
                    found.add((group, version, rt.kind))
                    count += 1
                    if count == MAX_TYPES_TO_CHECK:
                        return sorted(found)
    return sorted(found)


def _params_decl(registry: Registry, kind: Any) -> ct.DeclType | None:
    kind = as_dict(kind)
    rt = registry.by_kind(kind.get("apiVersion") or "", kind.get("kind") or "") if kind else None
    return _rt_decl(rt) if rt is not None else None


def _decl(registry: Registry, gvk: tuple[str, str, str]) -> ct.DeclType | None:
    rt = registry.by_kind(f"{gvk[0]}/{gvk[1]}" if gvk[0] else gvk[1], gvk[2])
    return _rt_decl(rt) if rt is not None else None


def _rt_decl(rt: ResourceType) -> ct.DeclType | None:
    """The type of a kind's objects from its schema: a CRD version's, or a built-in model's."""
    if rt.is_custom:
        from framework.apiserver.crd.cel_rules import decl_type
        from framework.apiserver.crd.definition import version_entry

        assert rt.crd is not None
        schema = ((version_entry(rt.crd, rt.version) or {}).get("schema") or {}).get("openAPIV3Schema")
        if not isinstance(schema, dict):
            return None
        decl = decl_type(schema, True)
        # the resolver's schema has the whole ObjectMeta (CRD rules see only name and generateName)
        return dataclasses.replace(decl, fields={**decl.fields, "metadata": _model_decl(OBJECT_META)})
    model = builtin_model(rt)
    return _model_decl(model) if model is not None and model in model_types() else None


@functools.cache
def _model_decl(model: str) -> ct.DeclType:
    """A built-in model as a declared object (a recursive reference is ``dyn``)."""
    return _object_decl(model, frozenset())


def _object_decl(model: str, seen: frozenset[str]) -> ct.DeclType:
    seen = seen | {model}
    fields = model_types().get(model, {}).get("fields", {})
    return ct.DeclType.object_of({name: _field_decl(t, seen) for name, t in fields.items()})


def _field_decl(t: str, seen: frozenset[str]) -> ct.DeclType:
    if t.startswith("#"):
        return ct.DYN_TYPE if t[1:] in seen else _object_decl(t[1:], seen)
    if t.startswith("[]"):
        return ct.DeclType.list_of(_field_decl(t[2:], seen))
    if t.startswith("map:"):
        return ct.DeclType.map_of(_field_decl(t[4:], seen))
    return _SCALARS.get(t, ct.DYN_TYPE)  # int-or-string, quantity, raw JSON
