"""rbac/v1 Role: no rules serialize as ``null``; PolicyRule validation (``pkg/apis/rbac/validation``)."""

from __future__ import annotations

from framework.apiserver.encoding import decoding
from framework.apiserver.registry.rbac.policyrules import validate_role
from framework.apiserver.registry.strategy import ResourceType


def normalize(obj: dict, old: dict | None) -> None:
    """Go's ``[]PolicyRule`` without omitempty: no rules (absent or empty) serialize as ``null`` (19-1)."""
    if not obj.get("rules"):
        obj["rules"] = None


POLICY_RULE_NULLS = {
    **decoding.structs("rules[]"),
    **decoding.strings(
        *(f"rules[].{k}[]" for k in ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs"))
    ),
}


STRATEGIES = [
    ResourceType(
        "rbac.authorization.k8s.io",
        "v1",
        "roles",
        "Role",
        True,
        "role",
        null_shape=decoding.shape(POLICY_RULE_NULLS, keep=("rules",)),
        put_creates=True,
        name_rule="path",
        normalize=normalize,
        validate=lambda o, old: validate_role(o, False),
    ),
]
