"""Authorization: RBAC and the access review APIs (the RBAC authorizer of kubernetes/kubernetes
``plugin/pkg/auth/authorizer/rbac``).

Authorization is ``AlwaysAllow`` or ``RBAC``; RBAC evaluates the Roles, ClusterRoles and bindings in
storage exactly as kube-apiserver's RBAC authorizer does, including escalation prevention for roles and
bindings (19-2, ``rbac_escalation.py``); the default roles are in ``bootstrap_policy.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from framework.apiserver.auth.authenticator import (
    MASTERS,
    RBAC_GROUP,
    UserInfo,
)
from framework.apiserver.machinery import errors
from framework.apiserver.storage.store import Storage
from framework.meta.object import get_metadata


@dataclass(frozen=True)
class Attributes:
    """What a request asks to do (k8s.io/apiserver authorizer.Attributes)."""

    user: UserInfo
    verb: str
    resource_request: bool = True
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""
    path: str = ""


# --- RBAC ------------------------------------------------------------------------------------------


def _matches(values: Iterable[str] | None, value: str) -> bool:
    values = values or ()
    return "*" in values or value in values


def _resource_matches(rule: dict, resource: str, subresource: str) -> bool:
    """``ResourceMatches``: ``*``, the exact ``resource[/subresource]`` or ``*/subresource``; a rule's
    ``pods/*`` matches nothing, as upstream."""
    combined = f"{resource}/{subresource}" if subresource else resource
    for r in rule.get("resources") or ():
        if r in ("*", combined):
            return True
        if subresource and r == f"*/{subresource}":
            return True
    return False


def non_resource_matches(rule: dict, path: str) -> bool:
    """``NonResourceURLMatches`` (and ``nonResourceURLCovers``): ``*``, the exact path, or a prefix
    ending in ``*``."""
    for url in rule.get("nonResourceURLs") or ():
        if url == "*" or url == path or (url.endswith("*") and path.startswith(url.rstrip("*"))):
            return True
    return False


def rule_allows(rule: dict, a: Attributes) -> bool:
    if not _matches(rule.get("verbs"), a.verb):
        return False
    if not a.resource_request:
        return non_resource_matches(rule, a.path)
    if not rule.get("resources"):
        return False
    if not _matches(rule.get("apiGroups"), a.api_group):
        return False
    if not _resource_matches(rule, a.resource, a.subresource):
        return False
    names = rule.get("resourceNames")
    return not names or a.name in names


def _subject_matches(subject: dict, user: UserInfo, binding_ns: str) -> bool:
    kind = subject.get("kind")
    if kind == "User":
        return subject.get("name") == user.name
    if kind == "Group":
        return subject.get("name") in user.groups
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_ns
        return user.name == f"system:serviceaccount:{ns}:{subject.get('name')}"
    return False


class RBACAuthorizer:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[dict], list[str]]:
        """Every rule that applies to ``user`` in ``namespace`` (cluster-wide ones included) and the
        errors resolving them: bindings whose role does not exist (``DefaultRuleResolver.RulesFor``)."""
        rules: list[dict] = []
        errs: list[str] = []
        for found, err in self._bound_rules(user, namespace):
            rules.extend(found)
            if err:
                errs.append(err)
        return rules, errs

    def _bound_rules(self, user: UserInfo, namespace: str) -> Iterator[tuple[list[dict], str | None]]:
        """The rules of each binding of ``user``, ClusterRoleBindings first, produced lazily, each with
        the error resolving its role (None when it exists)."""
        for crb in self.storage.table(f"clusterrolebindings.{RBAC_GROUP}").objects.values():
            if any(_subject_matches(s, user, "") for s in crb.get("subjects") or ()):
                yield self.resolve(crb.get("roleRef") or {}, "")
        if namespace:
            for (ns, _), rb in self.storage.table(f"rolebindings.{RBAC_GROUP}").objects.items():
                if ns == namespace and any(_subject_matches(s, user, ns) for s in rb.get("subjects") or ()):
                    yield self.resolve(rb.get("roleRef") or {}, ns)

    def resolve(self, ref: dict, namespace: str) -> tuple[list[dict], str | None]:
        """``GetRoleReferenceRules``: the referenced role's rules, or no rules and the NotFound text."""
        kind, name = ref.get("kind"), ref.get("name", "")
        if kind == "ClusterRole":
            resource, role = "clusterroles", self.storage.get(f"clusterroles.{RBAC_GROUP}", ("", name))
        elif kind == "Role" and namespace:
            resource, role = "roles", self.storage.get(f"roles.{RBAC_GROUP}", (namespace, name))
        else:
            return [], f'unsupported role reference kind: "{kind}"'
        if role is None:
            return [], f'{resource}.{RBAC_GROUP} "{name}" not found'
        return list(role.get("rules") or ()), None

    def allowed(self, a: Attributes) -> bool:
        if MASTERS in a.user.groups:
            return True
        # Stop at the first binding that allows, as kube-apiserver's VisitRulesFor does: collecting every
        # rule first costs O(all bindings) per request, which dominates once there are thousands.
        return any(
            any(rule_allows(r, a) for r in rules) for rules, _ in self._bound_rules(a.user, a.namespace)
        )

    def allowed_by(self, a: Attributes) -> str | None:
        """What allows ``a``, as kube-apiserver's RBAC authorizer words it in a review's ``reason``
        (``ClusterRoleBinding "b" of ClusterRole "r" to ServiceAccount "sa/ns"``), or None."""
        for crb in self.storage.table(f"clusterrolebindings.{RBAC_GROUP}").objects.values():
            found = self._allowing_subject(crb, a, "")
            if found is not None:
                return _describe_binding(get_metadata(crb).get("name", ""), crb, found, "")
        if a.namespace:
            for (ns, name), rb in self.storage.table(f"rolebindings.{RBAC_GROUP}").objects.items():
                found = self._allowing_subject(rb, a, ns) if ns == a.namespace else None
                if found is not None:
                    return _describe_binding(f"{name}/{ns}", rb, found, ns)
        return None

    def _allowing_subject(self, binding: dict, a: Attributes, namespace: str) -> dict | None:
        subject = next(
            (s for s in binding.get("subjects") or () if _subject_matches(s, a.user, namespace)), None
        )
        if subject is None:
            return None
        rules, _ = self.resolve(binding.get("roleRef") or {}, namespace)
        return subject if any(rule_allows(r, a) for r in rules) else None


def _describe_binding(name: str, binding: dict, subject: dict, namespace: str) -> str:
    """``rbac/validation``'s binding describers: ``<Kind> "name" of <RoleKind> "role" to <subject>``."""
    kind = binding.get("kind", "")
    ref = binding.get("roleRef") or {}
    who = subject.get("name", "")
    if subject.get("kind") == "ServiceAccount":
        who = f"{who}/{subject.get('namespace') or namespace}"
    role = f'{ref.get("kind", "")} "{ref.get("name", "")}"'
    return f'{kind} "{name}" of {role} to {subject.get("kind", "")} "{who}"'


def forbidden_message(a: Attributes) -> str:
    if not a.resource_request:
        return f'User "{a.user.name}" cannot {a.verb} path "{a.path}"'
    res = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
    where = f'in the namespace "{a.namespace}"' if a.namespace else "at the cluster scope"
    return f'User "{a.user.name}" cannot {a.verb} resource "{res}" in API group "{a.api_group}" {where}'


# --- review APIs (22-3) ---------------------------------------------------------------------------


def _review_user(spec: dict) -> UserInfo:
    return UserInfo(
        spec.get("user") or "",
        spec.get("uid") or "",
        tuple(spec.get("groups") or ()),
        dict(spec.get("extra") or {}),
    )


def attributes_of(user: UserInfo, res: dict | None, nonres: dict | None) -> Attributes:
    """What a review's ``resourceAttributes`` (when set) or ``nonResourceAttributes`` ask (also the
    admission ``authorizer``'s checks, which use the same keys)."""
    if res:
        return Attributes(
            user,
            res.get("verb") or "",
            True,
            res.get("group") or "",
            res.get("version") or "",
            res.get("resource") or "",
            res.get("subresource") or "",
            res.get("name") or "",
            res.get("namespace") or "",
        )
    nonres = nonres or {}
    return Attributes(user, nonres.get("verb") or "", False, path=nonres.get("path") or "")


def access_review(
    kind: str,
    body: dict,
    requester: UserInfo,
    url_namespace: str | None,
    decide: Any,
    *,
    self_subject: bool = False,
    local: bool = False,
    explain: Any = None,
) -> dict:
    """Evaluate an access review of ``kind``; ``decide(Attributes) -> bool``, ``explain(Attributes)``
    the binding that allows it (for the ``reason``). ``self_subject``: about the
    requester (SelfSubjectAccessReview), not ``spec.user``/``spec.groups``; ``local``: namespaced, the
    resource's namespace must be the URL's (LocalSubjectAccessReview)."""
    spec = body.get("spec")
    if not isinstance(spec, dict):
        spec = {}
    res, nonres = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    errs = []
    if bool(res) == bool(nonres):
        errs.append(
            errors.invalid_value(
                "spec.resourceAttributes",
                res,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        )
    if self_subject:
        user = requester
    else:
        user = _review_user(spec)
        if not user.name and not user.groups:
            errs.append(
                errors.invalid_value("spec.user", "", "at least one of user or group must be specified")
            )
    if local and res and (res.get("namespace") or "") != (url_namespace or ""):
        raise errors.bad_request(
            f"spec.resourceAttributes.namespace must match namespace: {url_namespace or ''}"
        )
    if errs:
        raise errors.invalid(kind, "authorization.k8s.io", "", errs)
    a = attributes_of(user, res, nonres)
    allowed = bool(decide(a))
    meta = dict(get_metadata(body))
    if url_namespace:
        meta["namespace"] = url_namespace
    status: dict[str, Any] = {"allowed": allowed}
    if allowed:
        status["reason"] = "system:masters" if MASTERS in user.groups else "RBAC: allowed"
        source = explain(a) if explain is not None and MASTERS not in user.groups else None
        if source:
            status["reason"] = f"RBAC: allowed by {source}"
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta,
        "spec": spec,
        "status": status,
    }
