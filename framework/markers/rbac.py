"""RBAC markers on reconcilers: the ``// +kubebuilder:rbac:groups=...,resources=...,verbs=...`` comments
of controller-gen (sigs.k8s.io/controller-tools ``pkg/rbac``) as a decorator::

    @rbac(groups=["cache.example.com"], resources=["memcacheds"], verbs=["get", "list", "watch", "update"])
    @rbac(groups=["cache.example.com"], resources=["memcacheds/status"], verbs=["get", "update", "patch"])
    @rbac(groups=[""], resources=["secrets"], verbs=["get"], namespace="memcached-system")
    class MemcachedReconciler: ...

Decorate the reconciler class or the function that sets it up; the decorators stack. ``python -m
framework generate`` collects them from the project's ``controllers`` and ``webhooks`` packages into
``config/rbac/role.yaml``: rules without ``namespace`` go to the ClusterRole ``manager-role``, the others
to a Role ``manager-role`` in their namespace (see :mod:`framework.generate.rbac` for how rules merge).
The core group is ``""`` (``"core"`` is accepted, as controller-gen does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from framework.markers.attached import attach, attached

__all__ = ["Rule", "rbac", "rules_of"]

T = TypeVar("T")

_ATTRIBUTE = "__framework_rbac__"


@dataclass(frozen=True)
class Rule:
    """One RBAC marker: a policy rule and the namespace of its Role (None: the ClusterRole)."""

    verbs: tuple[str, ...]
    groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    namespace: str | None = None


def _strings(name: str, value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)  # one item, as ``groups=apps`` in a Go marker
    items = tuple(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"rbac({name}=...): items must be strings, got {type(item).__name__}: {item!r}")
    return items


def rbac(
    *,
    verbs: str | Iterable[str],
    groups: str | Iterable[str] | None = None,
    resources: str | Iterable[str] | None = None,
    resource_names: str | Iterable[str] | None = None,
    urls: str | Iterable[str] | None = None,
    namespace: str | None = None,
) -> Callable[[T], T]:
    """Declare that the decorated reconciler (class or setup function) needs this rule.

    ``verbs`` are lower-case API verbs (``"*"`` for all); ``resources`` may name subresources
    (``"deployments/status"``); ``urls`` are non-resource URLs (ClusterRole only). What RBAC would
    refuse raises at import: no verbs, neither resources nor urls, urls with a namespace or with
    resources, a verb in upper case.
    """
    rule = Rule(
        verbs=_strings("verbs", verbs),
        groups=tuple("" if g == "core" else g for g in _strings("groups", groups)),
        resources=_strings("resources", resources),
        resource_names=_strings("resource_names", resource_names),
        urls=_strings("urls", urls),
        namespace=namespace,
    )
    if not rule.verbs or any(not v for v in rule.verbs):
        raise ValueError("rbac(): verbs must name at least one verb")
    if any(v != v.lower() for v in rule.verbs):
        raise ValueError(f"rbac(): verbs are lower case, got {list(rule.verbs)}")
    if not rule.resources and not rule.urls:
        raise ValueError("rbac(): give resources (with groups) or urls")
    if rule.urls and (rule.resources or rule.groups or rule.resource_names):
        raise ValueError("rbac(): urls is a non-resource rule; give it without groups and resources")
    if rule.urls and namespace is not None:
        raise ValueError("rbac(): non-resource urls can only be granted cluster-wide (no namespace)")
    if rule.resources and not rule.groups:
        raise ValueError('rbac(): resources need groups (use [""] for the core group)')
    if namespace is not None and (not isinstance(namespace, str) or not namespace):
        raise ValueError(f"rbac(): namespace must be a non-empty string, got {namespace!r}")

    return attach(_ATTRIBUTE, rule, "rbac")


def rules_of(target: Any) -> tuple[Rule, ...]:
    """The rules declared on ``target`` itself (in source order), not those of its base classes."""
    return attached(target, _ATTRIBUTE)
