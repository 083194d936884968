"""RBAC's escalation prevention on role and binding writes (19-2), as kube-apiserver's policy-based REST
storage does it (``pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased``,
``pkg/registry/rbac/escalation_check.go``, ``pkg/registry/rbac/validation/rule.go``):

- ``system:masters`` may always write (``EscalationAllowed``).
- A Role or ClusterRole write is allowed when the requester may ``escalate`` the role *named in the
  request URL* (``RoleEscalationAuthorized``: a POST names none, so ``escalate`` limited by resourceNames
  only covers updates), else when the requester already holds every rule it grants
  (``ConfirmNoEscalation``). A ClusterRole with an ``aggregationRule`` (new or old) further needs full
  authority (``*`` on everything and on every non-resource URL), since it can gather any rule.
- A binding write is allowed when the requester may ``bind`` the referenced role in the binding's
  namespace (``BindingAuthorized``), else the referenced role must exist (404 otherwise) and the
  requester must hold all its rules.
- Updates that only change ``ownerReferences``/``finalizers`` (the garbage collector's) skip the checks
  (``IsOnlyMutatingGCFields``).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

from framework.apiserver.auth.authenticator import MASTERS, RBAC_GROUP, UserInfo
from framework.apiserver.auth.authorizer import Attributes, RBACAuthorizer, non_resource_matches
from framework.apiserver.machinery import errors
from framework.meta.strconv import quote

if TYPE_CHECKING:
    from collections.abc import Iterable

# The name in the URL of the resource request being served ("" for a POST to a collection): what
# RoleEscalationAuthorized authorizes ``escalate`` against. Set by ``request_auth`` per request.
REQUEST_NAME: ContextVar[str] = ContextVar("rbac_request_name", default="")

FULL_AUTHORITY = [
    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
    {"nonResourceURLs": ["*"], "verbs": ["*"]},
]
AGGREGATION_MESSAGE = "must have cluster-admin privileges to use the aggregationRule"
_GC_FIELDS = ("ownerReferences", "finalizers", "managedFields", "resourceVersion")


def check(
    authorizer: RBACAuthorizer, resource: str, new: dict, old: dict | None, user: UserInfo, url_name: str
) -> None:
    """Raise kube-apiserver's 403 (or 404 for a binding to a missing role) if ``user`` may not write
    ``new`` (replacing ``old``) of ``resource`` (roles, clusterroles, rolebindings, clusterrolebindings)."""
    if MASTERS in user.groups:
        return
    if old is not None and _only_gc_fields(new, old):
        return
    meta = new["metadata"]
    ns = meta.get("namespace", "") if resource in ("roles", "rolebindings") else ""
    name = meta.get("name", "")
    if resource in ("roles", "clusterroles"):
        if authorizer.allowed(
            Attributes(user, "escalate", True, RBAC_GROUP, "*", resource, "", url_name, ns)
        ):
            return
        _confirm(authorizer, resource, name, user, ns, list(new.get("rules") or ()))
        if resource == "clusterroles" and (_aggregates(new) or (old is not None and _aggregates(old))):
            missing, _ = _missing(authorizer, user, ns, FULL_AUTHORITY)
            if missing:
                raise errors.forbidden_error(resource, RBAC_GROUP, name, AGGREGATION_MESSAGE)
        return
    ref = new.get("roleRef") or {}
    role_resource = {"ClusterRole": "clusterroles", "Role": "roles"}.get(ref.get("kind") or "")
    if role_resource and authorizer.allowed(
        Attributes(
            user, "bind", True, ref.get("apiGroup") or "", "", role_resource, "", ref.get("name", ""), ns
        )
    ):
        return
    rules, err = authorizer.resolve(ref, ns)
    if err is not None:
        if role_resource:
            raise errors.not_found(role_resource, RBAC_GROUP, ref.get("name", ""))
        raise errors.bad_request(err)
    _confirm(authorizer, resource, name, user, ns, rules)


def _aggregates(role: dict) -> bool:
    return bool((role.get("aggregationRule") or {}).get("clusterRoleSelectors"))


def _only_gc_fields(new: dict, old: dict) -> bool:
    def strip(obj: dict) -> dict:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _GC_FIELDS}
        return {**obj, "metadata": meta}

    return strip(new) == strip(old)


def _confirm(
    authorizer: RBACAuthorizer, resource: str, name: str, user: UserInfo, ns: str, rules: list[dict]
) -> None:
    """``ConfirmNoEscalation``: 403 listing the rules ``user`` would grant without holding them."""
    missing, resolution_errors = _missing(authorizer, user, ns, rules)
    if not missing:
        return
    groups = " ".join(quote(g) for g in user.groups)
    why = (
        f'user "{user.name}" (groups=[{groups}]) is attempting to grant RBAC permissions '
        "not currently held:\n" + "\n".join(sorted({compact_string(r) for r in compact_rules(missing)}))
    )
    if resolution_errors:
        # RulesFor aggregates its errors (utilerrors: distinct texts; one is itself, several "[a, b]"),
        # printed inside a slice.
        texts = list(dict.fromkeys(resolution_errors))
        agg = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
        why += f"; resolution errors: [{agg}]"
    raise errors.forbidden_error(resource, RBAC_GROUP, name, why)


def _missing(
    authorizer: RBACAuthorizer, user: UserInfo, ns: str, rules: list[dict]
) -> tuple[list[dict], list[str]]:
    """``validation.Covers``: the requested rules, broken into single permissions, ``user`` lacks."""
    owned, resolution_errors = authorizer.rules_for(user, ns)
    missing = [
        piece for rule in rules for piece in break_down(rule) if not any(rule_covers(o, piece) for o in owned)
    ]
    return missing, resolution_errors


def break_down(rule: dict) -> list[dict]:
    """``BreakdownRule``: one rule per group x resource x verb (x resource name), then per URL x verb."""
    out: list[dict] = []
    verbs = rule.get("verbs") or ()
    for group in rule.get("apiGroups") or ():
        for res in rule.get("resources") or ():
            for verb in verbs:
                piece = {"apiGroups": [group], "resources": [res], "verbs": [verb]}
                names = rule.get("resourceNames") or ()
                out += [{**piece, "resourceNames": [n]} for n in names] if names else [piece]
    for url in rule.get("nonResourceURLs") or ():
        out += [{"nonResourceURLs": [url], "verbs": [verb]} for verb in verbs]
    return out


def _has_all(owner: Iterable[str] | None, wanted: Iterable[str] | None) -> bool:
    have = set(owner or ())
    return all(w in have for w in wanted or ())


def _resources_cover(owner: list[str], wanted: list[str]) -> bool:
    if "*" in owner or _has_all(owner, wanted):
        return True
    for path in wanted:
        if path in owner:
            continue
        _, slash, sub = path.partition("/")
        if not slash or f"*/{sub}" not in owner:
            return False
    return True


def rule_covers(owner: dict, sub: dict) -> bool:
    """``ruleCovers``: whether one rule ``owner`` holds grants everything of the single rule ``sub``."""
    if not ("*" in (owner.get("verbs") or ()) or _has_all(owner.get("verbs"), sub.get("verbs"))):
        return False
    if not ("*" in (owner.get("apiGroups") or ()) or _has_all(owner.get("apiGroups"), sub.get("apiGroups"))):
        return False
    if not _resources_cover(list(owner.get("resources") or ()), list(sub.get("resources") or ())):
        return False
    if not all(non_resource_matches(owner, url) for url in sub.get("nonResourceURLs") or ()):
        return False
    owner_names = owner.get("resourceNames") or ()
    return not owner_names or (bool(sub.get("resourceNames")) and _has_all(owner_names, sub["resourceNames"]))


def compact_rules(rules: list[dict]) -> list[dict]:
    """``CompactRules``: single group/resource rules with nothing but verbs merge their verbs."""
    out: list[dict] = []
    simple: dict[tuple[str, str], dict] = {}
    for rule in rules:
        groups, resources = rule.get("apiGroups") or [], rule.get("resources") or []
        if (
            len(groups) == 1
            and len(resources) == 1
            and not rule.get("resourceNames")
            and not rule.get("nonResourceURLs")
        ):
            key = (groups[0], resources[0])
            if key in simple:
                simple[key]["verbs"] = [*simple[key]["verbs"], *(rule.get("verbs") or [])]
            else:
                simple[key] = {
                    "apiGroups": groups,
                    "resources": resources,
                    "verbs": list(rule.get("verbs") or []),
                }
        else:
            out.append(rule)
    return out + list(simple.values())


def compact_string(rule: dict) -> str:
    """``CompactString``: Go's ``{APIGroups:["a"], Resources:["b"], ...}`` of the fields set, in this
    order."""
    parts = []
    for key, go in (
        ("apiGroups", "APIGroups"),
        ("resources", "Resources"),
        ("nonResourceURLs", "NonResourceURLs"),
        ("resourceNames", "ResourceNames"),
        ("verbs", "Verbs"),
    ):
        if rule.get(key):
            parts.append(f"{go}:[" + " ".join(quote(v) for v in rule[key]) + "]")
    return "{" + ", ".join(parts) + "}"
