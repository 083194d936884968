"""``ValidateRole`` / ``ValidateClusterRole`` beyond metadata (``pkg/apis/rbac/validation``), shared by
Role and ClusterRole (spec 19-1): each PolicyRule of ``rules[]``."""

from __future__ import annotations

from framework.apiserver.machinery.errors import FieldError, invalid_value, required


def validate_role(obj: dict, cluster: bool) -> list[FieldError]:
    """``ValidateRole`` / ``ValidateClusterRole`` beyond metadata: each rule of ``rules[]``."""
    errs: list[FieldError] = []
    for i, rule in enumerate(obj.get("rules") or []):
        path = f"rules[{i}]"
        if not rule.get("verbs"):
            errs.append(required(f"{path}.verbs", "verbs must contain at least one value"))
        urls = rule.get("nonResourceURLs") or []
        if urls:
            if not cluster:
                errs.append(
                    invalid_value(
                        f"{path}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs"
                    )
                )
            if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                errs.append(
                    invalid_value(
                        f"{path}.nonResourceURLs",
                        urls,
                        "rules cannot apply to both regular resources and non-resource URLs",
                    )
                )
            continue
        if not rule.get("apiGroups"):
            errs.append(required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
        if not rule.get("resources"):
            errs.append(required(f"{path}.resources", "resource rules must supply at least one resource"))
        if rule.get("resourceNames") and len(rule.get("resources") or []) > 1:
            errs.append(
                required(f"{path}.resourceNames", "resource names cannot apply to multiple resources")
            )
    return errs
