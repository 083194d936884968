"""Webhook configurations: ``Mutating/ValidatingWebhookConfiguration`` entries compiled for matching and
calling, and ``rules.Matcher.Matches`` (scope, operation, group, version, resource) of
k8s.io/apiserver ``pkg/admission/plugin/webhook/predicates/rules``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from framework.apiserver.registry.strategy import ResourceType
from framework.meta.labels import Selector, label_selector_as_selector

GROUP = "admissionregistration.k8s.io"
VALIDATING = f"validatingwebhookconfigurations.{GROUP}"
MUTATING = f"mutatingwebhookconfigurations.{GROUP}"
V1 = "admission.k8s.io/v1"
V1BETA1 = "admission.k8s.io/v1beta1"


@dataclass
class Webhook:
    """One ``webhooks[]`` entry of a configuration, compiled for matching and calling."""

    configuration: str
    name: str
    mutating: bool
    rules: list[dict]
    namespace_selector: Selector | None  # None: the selector does not parse
    object_selector: Selector | None
    failure_policy: str
    match_policy: str
    timeout: float
    client_config: dict
    review_version: str
    reinvoke: bool
    match_conditions: list[dict]


def compile_webhooks(config: dict, mutating: bool) -> list[Webhook]:
    """The webhooks of one stored configuration."""
    out = []
    for hook in config.get("webhooks") or []:
        versions = [v for v in hook.get("admissionReviewVersions") or [] if v in ("v1", "v1beta1")]
        out.append(
            Webhook(
                configuration=config["metadata"]["name"],
                name=hook.get("name", ""),
                mutating=mutating,
                rules=list(hook.get("rules") or []),
                namespace_selector=_selector(hook.get("namespaceSelector")),
                object_selector=_selector(hook.get("objectSelector")),
                failure_policy=hook.get("failurePolicy") or "Fail",
                match_policy=hook.get("matchPolicy") or "Equivalent",
                timeout=float(hook.get("timeoutSeconds") or 10),
                client_config=dict(hook.get("clientConfig") or {}),
                review_version=V1BETA1 if versions[:1] == ["v1beta1"] else V1,
                reinvoke=mutating and hook.get("reinvocationPolicy") == "IfNeeded",
                match_conditions=[c for c in hook.get("matchConditions") or [] if isinstance(c, dict)],
            )
        )
    return out


def _selector(raw: Any) -> Selector | None:
    try:
        # Unset is defaulted to {} (everything) before a configuration is stored.
        return label_selector_as_selector({} if raw is None else raw)
    except (ValueError, AttributeError, TypeError):
        return None


def rule_matches(rule: dict, operation: str, rt: ResourceType, sub: str, namespace: str) -> bool:
    """``rules.Matcher.Matches``: scope, operation, group, version and resource(/subresource)."""
    is_namespace = rt.group == "" and rt.resource == "namespaces"
    scope = rule.get("scope") or "*"
    if scope == "Namespaced" and (is_namespace or not namespace):
        return False
    if scope == "Cluster" and not (is_namespace or not namespace):
        return False
    ops = rule.get("operations") or []
    if "*" not in ops and operation not in ops:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and rt.group not in groups:
        return False
    versions = rule.get("apiVersions") or []
    if "*" not in versions and rt.version not in versions:
        return False
    for entry in rule.get("resources") or []:
        res, _, want_sub = entry.partition("/")
        if (res == "*" or res == rt.resource) and (want_sub == "*" or want_sub == sub):
            return True
    return False
