"""Webhook markers on plain admission handlers: controller-gen's ``// +kubebuilder:webhook:path=...,
mutating=...,groups=...,resources=...,verbs=...`` comments (sigs.k8s.io/controller-tools
``pkg/webhook``) as a decorator::

    @webhook(
        path="/validate-namespace-deletion",
        name="validate-namespace-deletion.example.com",
        groups=[""], versions=["v1"], resources=["namespaces"], operations=["DELETE"],
    )
    class NamespaceDeletionHandler:
        def __call__(self, request): ...

A handler registered with :class:`~framework.webhook.WebhookBuilder` (a defaulter or validator of one
kind) needs none: its kind and operations are known. A plain handler (``server.register(path,
handler)``, any admission request) names no kind, so ``python -m framework generate`` reads its rules
here, from the project's ``controllers`` and ``webhooks`` packages (as controller-gen reads the
comments), whether or not the setup registers the handler at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from framework.markers.attached import attach, attached

__all__ = ["OPERATIONS", "WebhookMarker", "webhook", "webhooks_of"]

T = TypeVar("T")

_ATTRIBUTE = "__framework_webhook__"

# admissionregistration.k8s.io/v1 RuleWithOperations.operations.
OPERATIONS = frozenset({"CREATE", "UPDATE", "DELETE", "CONNECT", "*"})
_FAILURE_POLICIES = frozenset({"Fail", "Ignore"})
_SIDE_EFFECTS = frozenset({"None", "NoneOnDryRun"})
_SCOPES = frozenset({"Cluster", "Namespaced", "*"})


@dataclass(frozen=True)
class WebhookMarker:
    """One webhook of a Mutating/ValidatingWebhookConfiguration, as a ``+kubebuilder:webhook`` marker."""

    path: str
    name: str
    mutating: bool
    groups: tuple[str, ...]
    versions: tuple[str, ...]
    resources: tuple[str, ...]
    operations: tuple[str, ...]
    scope: str | None = None
    failure_policy: str = "Fail"
    side_effects: str = "None"
    admission_review_versions: tuple[str, ...] = ("v1",)

    def webhook(self, service: dict[str, Any]) -> dict[str, Any]:
        """The configuration's webhook entry, served by ``service`` (name, namespace) at the path."""
        rule: dict[str, Any] = {
            "apiGroups": list(self.groups),
            "apiVersions": list(self.versions),
            "operations": list(self.operations),
            "resources": list(self.resources),
        }
        if self.scope is not None:
            rule["scope"] = self.scope
        return {
            "admissionReviewVersions": list(self.admission_review_versions),
            "clientConfig": {"service": {**service, "path": self.path}},
            "failurePolicy": self.failure_policy,
            "name": self.name,
            "rules": [rule],
            "sideEffects": self.side_effects,
        }


def _strings(name: str, value: str | Iterable[str]) -> tuple[str, ...]:
    items = (value,) if isinstance(value, str) else tuple(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(
                f"webhook({name}=...): items must be strings, got {type(item).__name__}: {item!r}"
            )
    return items


def webhook(
    *,
    path: str,
    name: str,
    groups: str | Iterable[str],
    versions: str | Iterable[str],
    resources: str | Iterable[str],
    operations: str | Iterable[str],
    mutating: bool = False,
    scope: str | None = None,
    failure_policy: str = "Fail",
    side_effects: str = "None",
    admission_review_versions: str | Iterable[str] = ("v1",),
) -> Callable[[T], T]:
    """Declare the webhook the decorated handler (class or function) serves at ``path``.

    ``name`` is the webhook's name in its configuration (a DNS name with at least three segments, as
    the API server requires); ``groups`` (``""`` for the core group), ``versions``, ``resources`` and
    ``operations`` (upper case: CREATE, UPDATE, DELETE, CONNECT or ``*``) make its one rule. What the API
    server would refuse raises at import.
    """
    marker = WebhookMarker(
        path=path,
        name=name,
        mutating=mutating,
        groups=tuple("" if g == "core" else g for g in _strings("groups", groups)),
        versions=_strings("versions", versions),
        resources=_strings("resources", resources),
        operations=_strings("operations", operations),
        scope=scope,
        failure_policy=failure_policy,
        side_effects=side_effects,
        admission_review_versions=_strings("admission_review_versions", admission_review_versions),
    )
    if not path.startswith("/"):
        raise ValueError(f"webhook(): path must start with '/', got {path!r}")
    if name.count(".") < 2:
        raise ValueError(f"webhook(): name must be a DNS name with at least three segments, got {name!r}")
    for field in ("groups", "versions", "resources", "operations", "admission_review_versions"):
        if not getattr(marker, field):
            raise ValueError(f"webhook(): {field} must name at least one")
    unknown = sorted(set(marker.operations) - OPERATIONS)
    if unknown:
        raise ValueError(f"webhook(): unknown operations {unknown} (expected {sorted(OPERATIONS)})")
    if failure_policy not in _FAILURE_POLICIES:
        raise ValueError(f"webhook(): failure_policy must be Fail or Ignore, got {failure_policy!r}")
    if side_effects not in _SIDE_EFFECTS:
        raise ValueError(f"webhook(): side_effects must be None or NoneOnDryRun, got {side_effects!r}")
    if scope is not None and scope not in _SCOPES:
        raise ValueError(f"webhook(): scope must be Cluster, Namespaced or '*', got {scope!r}")

    return attach(_ATTRIBUTE, marker, "webhook")


def webhooks_of(target: Any) -> tuple[WebhookMarker, ...]:
    """The webhooks declared on ``target`` itself (in source order), not those of its base classes."""
    return attached(target, _ATTRIBUTE)
