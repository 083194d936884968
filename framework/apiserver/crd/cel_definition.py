"""The CRD checks of its ``x-kubernetes-validations`` rules (the rule part of
``ValidateCustomResourceDefinitionOpenAPISchema``, k8s.io/apiextensions-apiserver
``pkg/apis/apiextensions/validation``): malformed rule
entries, rules that do not compile, estimated costs over the limits, transition rules where old values
cannot be correlated."""

from __future__ import annotations

from dataclasses import dataclass

from framework.apiserver import cel
from framework.apiserver.crd.cel_rules import (
    NEWLINES,
    STATIC_ESTIMATED_COST_LIMIT,
    STATIC_ESTIMATED_CRD_COST_LIMIT,
    SUPPORTED_REASONS,
    compile_rule,
    decl_type,
    int_or_none,
    mul_bound,
    valid_field_path,
)
from framework.apiserver.crd.values import EMBEDDED
from framework.apiserver.machinery.errors import FieldError, forbidden, invalid_value, not_supported, required
from framework.meta.field import GoText, go_quote


def rule_go_value(spec: dict) -> GoText:
    """A rule as kube-apiserver prints the bad value (Go's ``%#v`` of the internal ValidationRule)."""

    def s(key: str) -> str:
        v = spec.get(key)
        return go_quote(v if isinstance(v, str) else "")

    reason = spec.get("reason")
    reason_text = (
        "(*apiextensions.FieldValueErrorReason)(nil)"
        if reason is None
        else "(*apiextensions.FieldValueErrorReason)(0xc000010000)"
    )
    oos = spec.get("optionalOldSelf")
    oos_text = "(*bool)(nil)" if oos is None else "(*bool)(0xc000010008)"
    return GoText(
        f"apiextensions.ValidationRule{{Rule:{s('rule')}, Message:{s('message')}, "
        f"MessageExpression:{s('messageExpression')}, Reason:{reason_text}, FieldPath:{s('fieldPath')}, "
        f"OptionalOldSelf:{oos_text}}}"
    )


@dataclass
class _Walk:
    errs: list[FieldError]
    total_cost: int = 0


def validate_rules(schema: dict, path: str) -> list[FieldError]:
    """The CRD errors of the rules in ``schema`` (found at ``path``, e.g.
    ``spec.validation.openAPIV3Schema``): malformed rule entries, then compile errors, costs and
    transition rules where old values cannot be correlated."""
    walk = _Walk([])
    _check_node(schema, path, walk, is_resource_root=True, cardinality=1, uncorrelatable=None)
    if walk.total_cost > STATIC_ESTIMATED_CRD_COST_LIMIT:
        walk.errs.append(
            forbidden(
                path,
                cel.cost_error_message(
                    "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                    walk.total_cost,
                    STATIC_ESTIMATED_CRD_COST_LIMIT,
                ),
            )
        )
    return walk.errs


def _check_node(
    s: dict,
    path: str,
    walk: _Walk,
    *,
    is_resource_root: bool,
    cardinality: int | None,
    uncorrelatable: str | None,
) -> None:
    rules = s.get("x-kubernetes-validations")
    if isinstance(rules, list) and rules:
        _check_rules(s, rules, path, walk, is_resource_root, cardinality, uncorrelatable)
    props = s.get("properties")
    if isinstance(props, dict):
        sub_uncorrelatable = uncorrelatable
        if s.get("x-kubernetes-map-type") == "atomic" and sub_uncorrelatable is None:
            sub_uncorrelatable = path
        for k, v in props.items():
            if isinstance(v, dict):
                _check_node(
                    v,
                    f"{path}.properties[{k}]",
                    walk,
                    is_resource_root=v.get(EMBEDDED) is True,
                    cardinality=cardinality,
                    uncorrelatable=sub_uncorrelatable,
                )
    addl = s.get("additionalProperties")
    if isinstance(addl, dict):
        _check_node(
            addl,
            f"{path}.additionalProperties",
            walk,
            is_resource_root=addl.get(EMBEDDED) is True,
            cardinality=mul_bound(cardinality, int_or_none(s.get("maxProperties"))),
            uncorrelatable=uncorrelatable,
        )
    items = s.get("items")
    if isinstance(items, dict):
        sub_uncorrelatable = uncorrelatable
        if s.get("x-kubernetes-list-type") != "map" and sub_uncorrelatable is None:
            sub_uncorrelatable = path
        _check_node(
            items,
            f"{path}.items",
            walk,
            is_resource_root=items.get(EMBEDDED) is True,
            cardinality=mul_bound(cardinality, int_or_none(s.get("maxItems"))),
            uncorrelatable=sub_uncorrelatable,
        )


def _check_rules(
    s: dict,
    rules: list,
    path: str,
    walk: _Walk,
    is_resource_root: bool,
    cardinality: int | None,
    uncorrelatable: str | None,
) -> None:
    errs = walk.errs
    base = f"{path}.x-kubernetes-validations"
    schema_errs: list[FieldError] = []
    for i, spec in enumerate(rules):
        spec = spec if isinstance(spec, dict) else {}
        p = f"{base}[{i}]"
        rule: str = spec["rule"] if isinstance(spec.get("rule"), str) else ""
        msg: str = spec["message"] if isinstance(spec.get("message"), str) else ""
        if not rule.strip():
            schema_errs.append(required(f"{p}.rule", "rule is not specified"))
        elif msg and not msg.strip():
            schema_errs.append(invalid_value(f"{p}.message", msg, "message must be non-empty if specified"))
        elif NEWLINES.search(msg.strip()):
            schema_errs.append(invalid_value(f"{p}.message", msg, "message must not contain line breaks"))
        elif NEWLINES.search(rule.strip()) and not msg.strip():
            schema_errs.append(
                required(f"{p}.message", "message must be specified if rule contains line breaks")
            )
        mexpr = spec.get("messageExpression")
        if isinstance(mexpr, str) and mexpr and not mexpr.strip():
            schema_errs.append(
                required(f"{p}.messageExpression", "messageExpression must be non-empty if specified")
            )
        reason = spec.get("reason")
        if reason is not None and reason not in SUPPORTED_REASONS:
            schema_errs.append(not_supported(f"{p}.reason", reason, SUPPORTED_REASONS))
        fp = spec.get("fieldPath")
        if isinstance(fp, str) and fp:
            if not fp.strip():
                schema_errs.append(
                    invalid_value(f"{p}.fieldPath", fp, "fieldPath must be non-empty if specified")
                )
            if NEWLINES.search(fp):
                schema_errs.append(
                    invalid_value(f"{p}.fieldPath", fp, "fieldPath must not contain line breaks")
                )
            if valid_field_path(fp, s) is None:
                schema_errs.append(invalid_value(f"{p}.fieldPath", fp, "fieldPath must be a valid path"))
    errs.extend(schema_errs)
    if schema_errs:
        return
    decl = decl_type(s, is_resource_root)
    for i, spec in enumerate(rules):
        p = f"{base}[{i}]"
        cr = compile_rule(i, spec, decl)
        for prog, what, suffix in (
            (cr.program, "estimated rule cost", "rule"),
            (cr.message_program, "estimated messageExpression cost", "messageExpression"),
        ):
            if prog is None:
                continue
            cost = prog.estimated_cost.max
            if cardinality is not None and cost:
                cost *= cardinality
            if cost > STATIC_ESTIMATED_COST_LIMIT:
                errs.append(
                    forbidden(
                        f"{p}.{suffix}", cel.cost_error_message(what, cost, STATIC_ESTIMATED_COST_LIMIT)
                    )
                )
            walk.total_cost += cost
        if cr.error is not None:
            errs.append(invalid_value(f"{p}.rule", rule_go_value(spec), cr.error))
        if cr.message_error is not None:
            errs.append(invalid_value(f"{p}.messageExpression", rule_go_value(spec), cr.message_error))
        if cr.uses_old_self:
            if uncorrelatable is not None:
                errs.append(
                    invalid_value(
                        f"{p}.rule",
                        cr.rule,
                        "oldSelf cannot be used on the uncorrelatable portion of the schema within "
                        + uncorrelatable,
                    )
                )
        elif spec.get("optionalOldSelf") is not None:
            errs.append(
                invalid_value(
                    f"{p}.optionalOldSelf",
                    spec["optionalOldSelf"],
                    "may not be set if oldSelf is not used in rule",
                )
            )
