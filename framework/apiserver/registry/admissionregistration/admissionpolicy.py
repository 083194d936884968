"""admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding:
defaults and validation (``pkg/apis/admissionregistration/v1/defaults.go``,
``pkg/apis/admissionregistration/validation``), expressions compiled as kube-apiserver compiles them
on create and update (an expression that does not compile is refused, ``compilation failed: ...``).
The ``ValidatingAdmissionPolicy`` admission plugin (``admission/validating_policy.py``) evaluates them.
"""

from __future__ import annotations

import re
from typing import Any

from framework.apiserver.admission.expressions import MESSAGE_VARIABLES, POLICY_VARIABLES
from framework.apiserver.catalog.generic import reset_status, strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict, as_list
from framework.apiserver.registry.admissionregistration.conditions import (
    expression_errors,
    validate_match_conditions,
)
from framework.apiserver.registry.admissionregistration.webhooks import validate_rule
from framework.meta import field
from framework.meta.labels import validate_label_selector

GROUP = "admissionregistration.k8s.io"
FAILURE_POLICIES = ["Fail", "Ignore"]
MATCH_POLICIES = ["Equivalent", "Exact"]
REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"]
ACTIONS = ["Audit", "Deny", "Warn"]
NOT_FOUND_ACTIONS = ["Allow", "Deny"]
CEL_IDENTIFIER = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")


def default_match_resources(resources: Any) -> None:
    """``SetDefaults_MatchResources`` and the rules' ``scope``."""
    if not isinstance(resources, dict):
        return
    resources.setdefault("matchPolicy", "Equivalent")
    resources.setdefault("namespaceSelector", {})
    resources.setdefault("objectSelector", {})
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in as_list(resources.get(key)):
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")


def normalize_policy(obj: dict, old: dict | None) -> None:
    reset_status(obj, old)
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec.setdefault("failurePolicy", "Fail")
        default_match_resources(spec.get("matchConstraints"))


def normalize_binding(obj: dict, old: dict | None) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        default_match_resources(spec.get("matchResources"))


def _validate_match_resources(resources: Any, path: str) -> list[FieldError]:
    resources = as_dict(resources)
    errs = list(validate_label_selector(resources.get("namespaceSelector"), f"{path}.namespaceSelector"))
    errs += validate_label_selector(resources.get("objectSelector"), f"{path}.objectSelector")
    policy = resources.get("matchPolicy")
    if policy is not None and policy not in MATCH_POLICIES:
        errs.append(field.not_supported(f"{path}.matchPolicy", policy, MATCH_POLICIES))
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(as_list(resources.get(key))):
            errs += validate_rule(as_dict(rule), f"{path}.{key}[{i}]")
    return errs


def _validate_validation(v: dict, path: str) -> list[FieldError]:
    errs = expression_errors(v.get("expression"), f"{path}.expression", POLICY_VARIABLES)
    message_expression = v.get("messageExpression")
    if isinstance(message_expression, str) and message_expression:
        if not message_expression.strip():
            errs.append(
                field.invalid(
                    f"{path}.messageExpression", message_expression, "must be non-empty if specified"
                )
            )
        else:
            errs += expression_errors(message_expression, f"{path}.messageExpression", MESSAGE_VARIABLES)
    message = v.get("message")
    if isinstance(message, str) and message:
        if not message.strip():
            errs.append(field.invalid(f"{path}.message", message, "message must be non-empty if specified"))
        elif "\n" in message.strip():
            errs.append(field.invalid(f"{path}.message", message, "message must not contain line breaks"))
    reason = v.get("reason")
    if reason is not None and reason not in REASONS:
        errs.append(field.not_supported(f"{path}.reason", reason, REASONS))
    return errs


def validate_policy(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidateValidatingAdmissionPolicy`` (and ``...Update``: the same rules)."""
    spec = as_dict(obj.get("spec"))
    errs: list[FieldError] = []
    failure = spec.get("failurePolicy")
    if failure is None:
        errs.append(field.required("spec.failurePolicy"))
    elif failure not in FAILURE_POLICIES:
        errs.append(field.not_supported("spec.failurePolicy", failure, FAILURE_POLICIES))
    kind = spec.get("paramKind")
    if isinstance(kind, dict):
        for key in ("apiVersion", "kind"):
            if not kind.get(key):
                errs.append(field.required(f"spec.paramKind.{key}"))
    constraints = spec.get("matchConstraints")
    if not isinstance(constraints, dict):
        errs.append(field.required("spec.matchConstraints"))
    else:
        errs += _validate_match_resources(constraints, "spec.matchConstraints")
        if not as_list(constraints.get("resourceRules")):
            errs.append(field.required("spec.matchConstraints.resourceRules"))
    errs += validate_match_conditions(spec.get("matchConditions"), "spec.matchConditions", POLICY_VARIABLES)
    validations, annotations = as_list(spec.get("validations")), as_list(spec.get("auditAnnotations"))
    if not validations and not annotations:
        errs.append(
            field.required(
                "spec.validations", "validations or auditAnnotations must contain at least one item"
            )
        )
    for i, v in enumerate(validations):
        errs += _validate_validation(as_dict(v), f"spec.validations[{i}]")
    for i, annotation in enumerate(as_dict(a) for a in annotations):
        path = f"spec.auditAnnotations[{i}]"
        if not annotation.get("key"):
            errs.append(field.required(f"{path}.key", "key is not specified"))
        errs += expression_errors(
            annotation.get("valueExpression"), f"{path}.valueExpression", POLICY_VARIABLES
        )
    for i, var in enumerate(as_dict(v) for v in as_list(spec.get("variables"))):
        path = f"spec.variables[{i}]"
        name = var.get("name") or ""
        if not name:
            errs.append(field.required(f"{path}.name", "name is not specified"))
        elif not CEL_IDENTIFIER.fullmatch(name):
            errs.append(field.invalid(f"{path}.name", name, "name is not a valid CEL identifier"))
        errs += expression_errors(var.get("expression"), f"{path}.expression", POLICY_VARIABLES)
    return errs


def validate_binding(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidateValidatingAdmissionPolicyBinding``."""
    spec = as_dict(obj.get("spec"))
    errs: list[FieldError] = []
    if not spec.get("policyName"):
        errs.append(field.required("spec.policyName"))
    ref = spec.get("paramRef")
    if isinstance(ref, dict):
        if ref.get("name") and ref.get("selector") is not None:
            errs.append(field.forbidden("spec.paramRef.name", "name and selector are mutually exclusive"))
        if ref.get("selector") is not None:
            errs += validate_label_selector(ref.get("selector"), "spec.paramRef.selector")
        if not ref.get("name") and ref.get("selector") is None:
            errs.append(field.required("spec.paramRef", "one of name or selector must be specified"))
        action = ref.get("parameterNotFoundAction")
        if not action:
            errs.append(field.required("spec.paramRef.parameterNotFoundAction"))
        elif action not in NOT_FOUND_ACTIONS:
            errs.append(
                field.not_supported("spec.paramRef.parameterNotFoundAction", action, NOT_FOUND_ACTIONS)
            )
    if isinstance(spec.get("matchResources"), dict):
        errs += _validate_match_resources(spec["matchResources"], "spec.matchResources")
    actions = as_list(spec.get("validationActions"))
    seen: set[Any] = set()
    for i, action in enumerate(actions):
        if action not in ACTIONS:
            errs.append(field.not_supported(f"spec.validationActions[{i}]", action, ACTIONS))
        if action in seen:
            errs.append(field.duplicate(f"spec.validationActions[{i}]", action))
        seen.add(action)
    if "Deny" in seen and "Warn" in seen:
        errs.append(
            field.invalid(
                "spec.validationActions",
                field.GoText("[" + " ".join(str(a) for a in actions) + "]"),
                "must not contain both Deny and Warn (repeating the same validation failure information in "
                "the API response and headers serves no purpose)",
            )
        )
    if not seen:
        errs.append(field.required("spec.validationActions", "at least one validation action is required"))
    return errs


STRATEGIES = [
    strategy(
        GROUP,
        "v1",
        "validatingadmissionpolicies",
        normalize=normalize_policy,
        validate=validate_policy,
    ),
    strategy(
        GROUP,
        "v1",
        "validatingadmissionpolicybindings",
        normalize=normalize_binding,
        validate=validate_binding,
        tracks_generation=True,
    ),
]
