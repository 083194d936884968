"""``config/rbac/role.yaml``: the ClusterRole ``manager-role`` (and a Role per namespace) from the
project's :func:`~framework.markers.rbac.rbac` markers, plus what its code shows it needs.

Beyond controller-gen, which only reads markers, three kinds of rules are derived:

- ``get``, ``list`` and ``watch`` on every kind the manager's cache holds after the controllers' setup
  ran (each ``for_``/``owns``/``watches`` of a Builder starts an informer; so does a field index);
- ``create`` and ``patch`` on ``events.k8s.io`` Events when the setup asked for an event recorder;
- ``get``, ``create`` and ``update`` on Mutating/ValidatingWebhookConfigurations when the project
  registers webhooks and its manager writes their configuration itself
  (``managed-webhook-configuration``, :mod:`framework.webhook.configuration`).

Rules merge as controller-tools' ``NormalizeRules`` (pkg/rbac/parser.go) merges them: one rule per
resource first, verbs of rules with the same groups, resources, names and URLs united; then rules
differing only in resources, then only in groups, then only in URLs, are folded into one; each field
de-duplicated and sorted, rules sorted by their key, and a rule with ``*`` among its verbs keeps only
``*``. Unlike controller-gen, the folds run in sorted order, so the output never depends on hashing.

The leader-election Role (:func:`leader_election_role`) is kubebuilder's
``config/rbac/leader_election_role.yaml``, narrowed to what :mod:`framework.leaderelection`'s Lease lock
does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from framework.markers.rbac import Rule

__all__ = [
    "EVENT_RULE",
    "LEADER_ELECTION_VERBS",
    "ROLE_NAME",
    "WEBHOOK_CONFIGURATION_RULE",
    "leader_election_role",
    "normalize_rules",
    "read_rule",
    "roles",
]

ROLE_NAME = "manager-role"
RBAC_V1 = "rbac.authorization.k8s.io/v1"

READ_VERBS = ("get", "list", "watch")
# What framework.leaderelection.LeaseLock sends (resourcelock.py): get, create, update.
LEADER_ELECTION_VERBS = ("create", "get", "update")
# What framework.record's broadcaster sends: create, and patch for an event series.
EVENT_RULE = Rule(verbs=("create", "patch"), groups=("events.k8s.io",), resources=("events",))
# What framework.webhook.configuration.WebhookConfigurator sends: get, create, update.
WEBHOOK_CONFIGURATION_RULE = Rule(
    verbs=("create", "get", "update"),
    groups=("admissionregistration.k8s.io",),
    resources=("mutatingwebhookconfigurations", "validatingwebhookconfigurations"),
)


def read_rule(group: str, resource: str) -> Rule:
    """``get``, ``list`` and ``watch`` on one resource: what an informer of its kind needs."""
    return Rule(verbs=READ_VERBS, groups=(group,), resources=(resource,))


@dataclass
class _Rule:
    groups: list[str]
    resources: list[str]
    resource_names: list[str]
    urls: list[str]
    verbs: list[str] = field(default_factory=list)

    def normalize(self) -> None:
        for name in ("groups", "resources", "resource_names", "urls", "verbs"):
            setattr(self, name, sorted(set(getattr(self, name))))

    def key(self) -> tuple[str, str, str, str]:
        self.normalize()
        return (
            "&".join(self.groups),
            "&".join(self.resources),
            "&".join(self.resource_names),
            "&".join(self.urls),
        )

    def policy_rule(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.groups or self.resources:
            out["apiGroups"] = list(self.groups)
        if self.urls:
            out["nonResourceURLs"] = list(self.urls)
        if self.resource_names:
            out["resourceNames"] = list(self.resource_names)
        if self.resources:
            out["resources"] = list(self.resources)
        out["verbs"] = ["*"] if "*" in self.verbs else list(self.verbs)
        return out


def _fold(rules: list[_Rule], without: Callable[[_Rule], tuple[str, ...]], attr: str) -> list[_Rule]:
    """Merge rules whose keys differ only in ``attr`` (groups, resources or URLs)."""
    buckets: dict[tuple[str, ...], list[_Rule]] = {}
    for rule in sorted(rules, key=lambda r: r.key()):
        buckets.setdefault(without(rule), []).append(rule)
    out = []
    for bucket in buckets.values():
        first = bucket[0]
        for other in bucket[1:]:
            getattr(first, attr).extend(getattr(other, attr))
        first.normalize()
        out.append(first)
    return out


def normalize_rules(rules: Iterable[Rule]) -> list[dict[str, Any]]:
    """controller-tools' ``NormalizeRules``: the merged, sorted ``PolicyRule`` dicts of ``rules``."""
    split: list[_Rule] = []
    for rule in rules:
        groups = ["" if g == "core" else g for g in rule.groups]
        for resources in [[r] for r in rule.resources] or [[]]:
            split.append(
                _Rule(groups, resources, list(rule.resource_names), list(rule.urls), list(rule.verbs))
            )
    by_key: dict[tuple[str, ...], _Rule] = {}
    for one in split:
        key = one.key()
        if key in by_key:
            by_key[key].verbs = sorted({*by_key[key].verbs, *one.verbs})
        else:
            by_key[key] = one
    merged = list(by_key.values())
    merged = _fold(merged, lambda r: (r.key()[0], r.key()[2], r.key()[3], "&".join(r.verbs)), "resources")
    merged = _fold(merged, lambda r: (r.key()[1], r.key()[2], r.key()[3], "&".join(r.verbs)), "groups")
    merged = _fold(merged, lambda r: (r.key()[0], r.key()[1], r.key()[2], "&".join(r.verbs)), "urls")
    merged.sort(key=lambda r: " + ".join(r.key()))
    return [r.policy_rule() for r in merged]


def roles(
    rules: Iterable[Rule], name: str = ROLE_NAME, labels: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """The ClusterRole ``name`` (always, so the scaffold's binding has a role to bind) and one Role
    ``name`` per namespace that namespaced rules name, sorted by namespace; each with ``labels``."""
    by_namespace: dict[str, list[Rule]] = {"": []}
    for rule in rules:
        by_namespace.setdefault(rule.namespace or "", []).append(replace(rule, namespace=None))
    out: list[dict[str, Any]] = []
    for namespace in sorted(by_namespace):
        metadata: dict[str, Any] = {"name": name, **({"namespace": namespace} if namespace else {})}
        if labels:
            metadata["labels"] = dict(labels)
        out.append(
            {
                "apiVersion": RBAC_V1,
                "kind": "Role" if namespace else "ClusterRole",
                "metadata": metadata,
                "rules": normalize_rules(by_namespace[namespace]),
            }
        )
    return out


def leader_election_role(name: str = "leader-election-role") -> dict[str, Any]:
    """The Role for leader election, in the namespace kustomize gives it (the manager's own)."""
    return {
        "apiVersion": RBAC_V1,
        "kind": "Role",
        "metadata": {"name": name},
        "rules": normalize_rules(
            [Rule(verbs=LEADER_ELECTION_VERBS, groups=("coordination.k8s.io",), resources=("leases",))]
        ),
    }
