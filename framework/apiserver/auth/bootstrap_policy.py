"""The default ClusterRoles and ClusterRoleBindings of a fresh cluster (19-4, 22-2), as kube-apiserver's
``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`` defines them for the client's release
(1.37) with default feature gates: every role a user or an off-cluster component is bound to. Roles of
components this server does not run (``system:controller:*``, ``system:node``,
``system:kube-scheduler``, ``system:kube-controller-manager``) and the namespaced roles of
``kube-system``/``kube-public`` are left out (docs/apiserver.md lists the difference).

The rules are transcribed from policy.go (not generated from its ``testdata/cluster-roles.yaml``);
``tests/.../test_bootstrap_policy.py`` spot-checks them.

Each object carries upstream's label ``kubernetes.io/bootstrapping: rbac-defaults`` and annotation
``rbac.authorization.kubernetes.io/autoupdate: "true"``; each rule's lists are sorted, as upstream's
rule builder sorts them; aggregated roles start with no rules and the aggregation controller fills them.
"""

from __future__ import annotations

import copy
from typing import Any

from framework.apiserver.auth.authenticator import AUTHENTICATED, MASTERS, RBAC_GROUP, UNAUTHENTICATED
from framework.apiserver.auth.rbac_escalation import break_down, rule_covers

READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete", "deletecollection")
READ_WRITE = READ + WRITE
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"
_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_ANNOTATIONS = {"rbac.authorization.kubernetes.io/autoupdate": "true"}

_CERTS = "certificates.k8s.io"
_LEGACY_AND_EVENTS = ("", "events.k8s.io")


def rule(
    verbs: tuple[str, ...] | str, groups: tuple[str, ...] | str, *resources: str, names: tuple = ()
) -> dict:
    """A resource rule, its lists sorted (``rbacv1helpers.NewRule(...).RuleOrDie()``)."""
    out: dict[str, Any] = {
        "apiGroups": sorted([groups] if isinstance(groups, str) else groups),
        "resources": sorted(resources),
        "verbs": sorted([verbs] if isinstance(verbs, str) else verbs),
    }
    if names:
        out["resourceNames"] = sorted(names)
    return out


def urls(*paths: str, verbs: tuple[str, ...] = ("get",)) -> dict:
    """A non-resource rule."""
    return {"nonResourceURLs": sorted(paths), "verbs": sorted(verbs)}


def _events() -> dict:
    """``eventsRule()``: create, update and patch Events of both groups."""
    return rule(("create", "update", "patch"), _LEGACY_AND_EVENTS, "events")


def _approver(signer: str) -> dict:
    return rule("approve", _CERTS, "signers", names=(signer,))


_VIEW = [
    rule(
        READ,
        "",
        "pods",
        "replicationcontrollers",
        "replicationcontrollers/scale",
        "serviceaccounts",
        "services",
        "services/status",
        "endpoints",
        "persistentvolumeclaims",
        "persistentvolumeclaims/status",
        "configmaps",
    ),
    rule(
        READ,
        "",
        "limitranges",
        "resourcequotas",
        "bindings",
        "events",
        "pods/status",
        "resourcequotas/status",
        "namespaces/status",
        "replicationcontrollers/status",
        "pods/log",
    ),
    rule(READ, "", "namespaces"),
    rule(READ, "discovery.k8s.io", "endpointslices"),
    rule(
        READ,
        "apps",
        "controllerrevisions",
        "statefulsets",
        "statefulsets/status",
        "statefulsets/scale",
        "daemonsets",
        "daemonsets/status",
        "deployments",
        "deployments/status",
        "deployments/scale",
        "replicasets",
        "replicasets/status",
        "replicasets/scale",
    ),
    rule(READ, "autoscaling", "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
    rule(READ, "batch", "jobs", "cronjobs", "cronjobs/status", "jobs/status"),
    rule(
        READ,
        "extensions",
        "daemonsets",
        "daemonsets/status",
        "deployments",
        "deployments/scale",
        "deployments/status",
        "ingresses",
        "ingresses/status",
        "replicasets",
        "replicasets/scale",
        "replicasets/status",
        "replicationcontrollers/scale",
        "networkpolicies",
    ),
    rule(READ, "policy", "poddisruptionbudgets", "poddisruptionbudgets/status"),
    rule(READ, "networking.k8s.io", "networkpolicies", "ingresses", "ingresses/status"),
]

_EDIT = [
    # read on escalating resources
    rule(READ, "", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy"),
    rule("impersonate", "", "serviceaccounts"),
    rule(WRITE, "", "pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"),
    rule("create", "", "pods/eviction"),
    rule(
        WRITE,
        "",
        "replicationcontrollers",
        "replicationcontrollers/scale",
        "serviceaccounts",
        "services",
        "services/proxy",
        "persistentvolumeclaims",
        "configmaps",
        "secrets",
        "events",
    ),
    rule("create", "", "serviceaccounts/token"),
    rule(
        WRITE,
        "apps",
        "statefulsets",
        "statefulsets/scale",
        "daemonsets",
        "deployments",
        "deployments/scale",
        "deployments/rollback",
        "replicasets",
        "replicasets/scale",
    ),
    rule(WRITE, "autoscaling", "horizontalpodautoscalers"),
    rule(WRITE, "batch", "jobs", "cronjobs"),
    rule(
        WRITE,
        "extensions",
        "daemonsets",
        "deployments",
        "deployments/scale",
        "deployments/rollback",
        "ingresses",
        "replicasets",
        "replicasets/scale",
        "replicationcontrollers/scale",
        "networkpolicies",
    ),
    rule(WRITE, "policy", "poddisruptionbudgets"),
    rule(WRITE, "networking.k8s.io", "networkpolicies", "ingresses"),
]

_ADMIN = [
    rule("create", "authorization.k8s.io", "localsubjectaccessreviews"),
    rule(READ_WRITE, RBAC_GROUP, "roles", "rolebindings"),
]

# name -> (rules, extra labels, aggregated from "aggregate-to-<x>" or None)
_ROLES: list[tuple[str, list[dict], dict[str, str], str | None]] = [
    ("cluster-admin", [rule("*", "*", "*"), urls("*", verbs=("*",))], {}, None),
    (
        "system:discovery",
        [
            urls(
                "/livez",
                "/readyz",
                "/healthz",
                "/version",
                "/version/",
                "/openapi",
                "/openapi/*",
                "/api",
                "/api/*",
                "/apis",
                "/apis/*",
            )
        ],
        {},
        None,
    ),
    (
        "system:monitoring",
        [
            urls(
                "/metrics",
                "/metrics/slis",
                "/livez",
                "/readyz",
                "/healthz",
                "/livez/*",
                "/readyz/*",
                "/healthz/*",
            )
        ],
        {},
        None,
    ),
    (
        "system:basic-user",
        [
            rule("create", "authorization.k8s.io", "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
            rule("create", "authentication.k8s.io", "selfsubjectreviews"),
        ],
        {},
        None,
    ),
    ("system:public-info-viewer", [urls("/livez", "/readyz", "/healthz", "/version", "/version/")], {}, None),
    ("admin", [], {}, "admin"),
    ("edit", [], {f"{AGGREGATE_TO}admin": "true"}, "edit"),
    ("view", [], {f"{AGGREGATE_TO}edit": "true"}, "view"),
    ("system:aggregate-to-admin", _ADMIN, {f"{AGGREGATE_TO}admin": "true"}, None),
    ("system:aggregate-to-edit", _EDIT, {f"{AGGREGATE_TO}edit": "true"}, None),
    ("system:aggregate-to-view", _VIEW, {f"{AGGREGATE_TO}view": "true"}, None),
    (
        "system:heapster",
        [rule(READ, "", "events", "pods", "nodes", "namespaces"), rule(READ, "extensions", "deployments")],
        {},
        None,
    ),
    (
        "system:node-problem-detector",
        [rule("get", "", "nodes"), rule("patch", "", "nodes/status"), _events()],
        {},
        None,
    ),
    (
        "system:kubelet-api-admin",
        [
            rule(READ, "", "nodes"),
            rule("proxy", "", "nodes"),
            rule(
                "*",
                "",
                "nodes/proxy",
                "nodes/metrics",
                "nodes/stats",
                "nodes/log",
                "nodes/configz",
                "nodes/healthz",
                "nodes/pods",
            ),
        ],
        {},
        None,
    ),
    (
        "system:node-bootstrapper",
        [rule(("create", "get", "list", "watch"), _CERTS, "certificatesigningrequests")],
        {},
        None,
    ),
    (
        "system:auth-delegator",
        [
            rule("create", "authentication.k8s.io", "tokenreviews"),
            rule("create", "authorization.k8s.io", "subjectaccessreviews"),
        ],
        {},
        None,
    ),
    ("system:kube-aggregator", [rule(READ, "", "endpoints", "services")], {}, None),
    (
        "system:node-proxier",
        [
            rule(("list", "watch"), "", "services", "endpoints"),
            rule(READ, "", "nodes"),
            _events(),
            rule(("list", "watch"), "discovery.k8s.io", "endpointslices"),
        ],
        {},
        None,
    ),
    ("system:kube-dns", [rule(("list", "watch"), "", "endpoints", "services")], {}, None),
    (
        "system:persistent-volume-provisioner",
        [
            rule(("get", "list", "watch", "create", "delete"), "", "persistentvolumes"),
            rule(("get", "list", "watch", "update"), "", "persistentvolumeclaims"),
            rule(READ, "storage.k8s.io", "storageclasses"),
            rule("watch", "", "events"),
            _events(),
        ],
        {},
        None,
    ),
    (
        "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
        [rule("create", _CERTS, "certificatesigningrequests/nodeclient")],
        {},
        None,
    ),
    (
        "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
        [rule("create", _CERTS, "certificatesigningrequests/selfnodeclient")],
        {},
        None,
    ),
    (
        "system:certificates.k8s.io:kube-apiserver-client-approver",
        [_approver("kubernetes.io/kube-apiserver-client")],
        {},
        None,
    ),
    (
        "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
        [_approver("kubernetes.io/kube-apiserver-client-kubelet")],
        {},
        None,
    ),
    (
        "system:certificates.k8s.io:kubelet-serving-approver",
        [_approver("kubernetes.io/kubelet-serving")],
        {},
        None,
    ),
    (
        "system:certificates.k8s.io:legacy-unknown-approver",
        [_approver("kubernetes.io/legacy-unknown")],
        {},
        None,
    ),
    (
        "system:service-account-issuer-discovery",
        [
            urls(
                "/.well-known/openid-configuration",
                "/.well-known/openid-configuration/",
                "/openid/v1/jwks",
                "/openid/v1/jwks/",
            )
        ],
        {},
        None,
    ),
    (
        "system:volume-scheduler",
        [
            rule(("get", "list", "watch", "update", "patch"), "", "persistentvolumes"),
            rule(READ, "storage.k8s.io", "storageclasses"),
            rule(("get", "list", "watch", "update", "patch"), "", "persistentvolumeclaims"),
        ],
        {},
        None,
    ),
]


def _group(name: str) -> dict:
    return {"apiGroup": RBAC_GROUP, "kind": "Group", "name": name}


def _user(name: str) -> dict:
    return {"apiGroup": RBAC_GROUP, "kind": "User", "name": name}


# name (also the role's) -> subjects (``clusterRoleBindings()`` of policy.go, for the roles above)
_BINDINGS: list[tuple[str, list[dict]]] = [
    ("cluster-admin", [_group(MASTERS)]),
    ("system:monitoring", [_group("system:monitoring")]),
    ("system:discovery", [_group(AUTHENTICATED)]),
    ("system:basic-user", [_group(AUTHENTICATED)]),
    ("system:public-info-viewer", [_group(AUTHENTICATED), _group(UNAUTHENTICATED)]),
    ("system:node-proxier", [_user("system:kube-proxy")]),
    ("system:kube-dns", [{"kind": "ServiceAccount", "name": "kube-dns", "namespace": "kube-system"}]),
    ("system:volume-scheduler", [_user("system:kube-scheduler")]),
    ("system:service-account-issuer-discovery", [_group("system:serviceaccounts")]),
]


def _meta(name: str, labels: dict[str, str] | None = None) -> dict:
    return {"name": name, "labels": {**(labels or {}), **_LABELS}, "annotations": dict(_ANNOTATIONS)}


def bootstrap_policy() -> tuple[list[dict], list[dict]]:
    """Default ClusterRoles and ClusterRoleBindings of a fresh cluster (new objects on every call)."""
    roles = []
    for name, rules, labels, aggregate in _ROLES:
        obj: dict[str, Any] = {"metadata": _meta(name, labels), "rules": copy.deepcopy(rules)}
        if aggregate:
            selector = {"matchLabels": {f"{AGGREGATE_TO}{aggregate}": "true"}}
            obj["aggregationRule"] = {"clusterRoleSelectors": [selector]}
        roles.append(obj)
    bindings = [
        {
            "metadata": _meta(name),
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
            "subjects": copy.deepcopy(subjects),
        }
        for name, subjects in _BINDINGS
    ]
    return roles, bindings


def reconcile(existing: dict, expected: dict) -> dict | None:
    """kube-apiserver's start-up reconciliation of a default role or binding a store already holds
    (``pkg/registry/rbac/reconciliation``): unless annotated ``autoupdate: "false"``, missing labels,
    annotations, rules (the uncovered pieces), aggregation selectors and subjects are added, nothing is
    removed. The updated object, or None when nothing is missing."""
    meta = existing.get("metadata") or {}
    if (meta.get("annotations") or {}).get("rbac.authorization.kubernetes.io/autoupdate") == "false":
        return None
    out = copy.deepcopy(existing)
    out_meta = out["metadata"]
    for key in ("labels", "annotations"):
        out_meta[key] = {**expected["metadata"].get(key, {}), **(meta.get(key) or {})}
    if "roleRef" in expected:
        subjects = list(out.get("subjects") or [])
        subjects += [s for s in expected["subjects"] if s not in subjects]
        out["subjects"] = subjects
    elif "aggregationRule" in expected:
        rule = out.setdefault("aggregationRule", {})
        selectors = list(rule.get("clusterRoleSelectors") or [])
        selectors += [s for s in expected["aggregationRule"]["clusterRoleSelectors"] if s not in selectors]
        rule["clusterRoleSelectors"] = selectors
    else:
        have = list(out.get("rules") or [])
        missing = [
            piece
            for r in expected["rules"]
            for piece in break_down(r)
            if not any(rule_covers(o, piece) for o in have)
        ]
        out["rules"] = have + missing
    return None if out == existing else out
