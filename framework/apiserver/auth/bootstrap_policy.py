"""The default ClusterRoles and ClusterRoleBindings of a fresh cluster (19-4, 22-2), as kube-apiserver's
bootstrap policy (``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``) creates them with default
feature gates, including the roles and bindings of components this server does not run
(``system:controller:*``, ``system:node``, ``system:kube-scheduler``, ...): ``kubectl get clusterroles``
lists what a real cluster's does.

The objects are upstream's rendered policy (``testdata/cluster-roles.yaml``, ``controller-roles.yaml``
and their bindings), kept as data in ``bootstrap_policy.json`` (its ``source`` names the upstream
commits): names, rules in upstream's order, aggregation rules, labels and the annotation
``rbac.authorization.kubernetes.io/autoupdate: "true"``. Aggregated roles start with no rules and the
aggregation controller fills them. The namespaced roles of ``kube-system``/``kube-public`` are not
created (docs/apiserver.md lists the difference).
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

from framework.apiserver.auth.authenticator import RBAC_GROUP
from framework.apiserver.auth.rbac_escalation import break_down, rule_covers

_DATA = Path(__file__).with_name("bootstrap_policy.json")
_AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"


@functools.cache
def policy_data() -> dict[str, Any]:
    """The checked-in upstream policy (read once; callers copy what they hand out)."""
    data: dict[str, Any] = json.loads(_DATA.read_text(encoding="utf-8"))
    return data


def _meta(entry: dict) -> dict:
    common = policy_data()["metadata"]
    return {
        "name": entry["name"],
        "labels": {**entry.get("labels", {}), **common["labels"]},
        "annotations": dict(common["annotations"]),
    }


def bootstrap_policy() -> tuple[list[dict], list[dict]]:
    """Default ClusterRoles and ClusterRoleBindings of a fresh cluster (new objects on every call)."""
    data = policy_data()
    roles = []
    for entry in data["clusterRoles"]:
        obj: dict[str, Any] = {"metadata": _meta(entry), "rules": copy.deepcopy(entry.get("rules", []))}
        if "aggregationRule" in entry:
            obj["aggregationRule"] = copy.deepcopy(entry["aggregationRule"])
        roles.append(obj)
    bindings = []
    for entry in data["clusterRoleBindings"]:
        # Every default binding is named after the ClusterRole it grants; system:node's has no subjects
        # (the Node authorizer grants kubelets their access).
        obj = {
            "metadata": _meta(entry),
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": entry["name"]},
        }
        if "subjects" in entry:
            obj["subjects"] = copy.deepcopy(entry["subjects"])
        bindings.append(obj)
    return roles, bindings


def reconcile(existing: dict, expected: dict) -> dict | None:
    """kube-apiserver's start-up reconciliation of a default role or binding a store already holds
    (``pkg/registry/rbac/reconciliation``): unless annotated ``autoupdate: "false"``, missing labels,
    annotations, rules (the uncovered pieces), aggregation selectors and subjects are added, nothing is
    removed. The updated object, or None when nothing is missing."""
    meta = existing.get("metadata") or {}
    if (meta.get("annotations") or {}).get(_AUTOUPDATE) == "false":
        return None
    out = copy.deepcopy(existing)
    out_meta = out["metadata"]
    for key in ("labels", "annotations"):
        out_meta[key] = {**expected["metadata"].get(key, {}), **(meta.get(key) or {})}
    if "roleRef" in expected:
        subjects = list(out.get("subjects") or [])
        subjects += [s for s in expected.get("subjects", []) if s not in subjects]
        if subjects:
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
