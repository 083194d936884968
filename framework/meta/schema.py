"""Group, version, kind and resource names: ``k8s.io/apimachinery/pkg/runtime/schema``.

Immutable tuples whose ``str()`` is Go's ``String()``: ``GroupVersion("apps", "v1")`` → ``apps/v1``
(``v1`` for the core group), ``GroupKind`` → ``Deployment.apps``, ``GroupResource`` →
``deployments.apps``, ``GroupVersionKind`` → ``apps/v1, Kind=Deployment``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = [
    "GroupKind",
    "GroupResource",
    "GroupVersion",
    "GroupVersionKind",
    "GroupVersionResource",
    "from_api_version_and_kind",
    "parse_group_kind",
    "parse_group_resource",
    "parse_group_version",
    "version_priority",
]


class GroupVersion(NamedTuple):
    """``schema.GroupVersion``; ``str()`` is the ``apiVersion`` string."""

    group: str
    version: str

    def __str__(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def empty(self) -> bool:
        return not self.group and not self.version

    def with_kind(self, kind: str) -> GroupVersionKind:
        return GroupVersionKind(self.group, self.version, kind)

    def with_resource(self, resource: str) -> GroupVersionResource:
        return GroupVersionResource(self.group, self.version, resource)


class GroupKind(NamedTuple):
    """``schema.GroupKind``; ``str()`` is ``Kind.group`` (``Kind`` for the core group)."""

    group: str
    kind: str

    def __str__(self) -> str:
        return f"{self.kind}.{self.group}" if self.group else self.kind

    def with_version(self, version: str) -> GroupVersionKind:
        return GroupVersionKind(self.group, version, self.kind)


class GroupResource(NamedTuple):
    """``schema.GroupResource``; ``str()`` is ``resource.group`` (as in ``"x" not found`` messages)."""

    group: str
    resource: str

    def __str__(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def with_version(self, version: str) -> GroupVersionResource:
        return GroupVersionResource(self.group, version, self.resource)


class GroupVersionKind(NamedTuple):
    """``schema.GroupVersionKind``; ``str()`` is ``group/version, Kind=Kind``."""

    group: str
    version: str
    kind: str

    def __str__(self) -> str:
        return f"{self.group}/{self.version}, Kind={self.kind}"

    def empty(self) -> bool:
        return not self.group and not self.version and not self.kind

    @property
    def api_version(self) -> str:
        """The ``apiVersion`` of objects of this kind."""
        return str(GroupVersion(self.group, self.version))

    def group_version(self) -> GroupVersion:
        return GroupVersion(self.group, self.version)

    def group_kind(self) -> GroupKind:
        return GroupKind(self.group, self.kind)

    def to_api_version_and_kind(self) -> tuple[str, str]:
        """``ToAPIVersionAndKind``; ``("", "")`` for the empty GVK."""
        return ("", "") if self.empty() else (self.api_version, self.kind)


class GroupVersionResource(NamedTuple):
    """``schema.GroupVersionResource``; ``str()`` is ``group/version, Resource=resource``."""

    group: str
    version: str
    resource: str

    def __str__(self) -> str:
        return f"{self.group}/{self.version}, Resource={self.resource}"

    def group_version(self) -> GroupVersion:
        return GroupVersion(self.group, self.version)

    def group_resource(self) -> GroupResource:
        return GroupResource(self.group, self.resource)


def parse_group_version(gv: str) -> GroupVersion:
    """``ParseGroupVersion``: ``"apps/v1"``, ``"v1"`` (core), ``""``/``"/"`` (empty).

    More than one ``/`` raises ``ValueError("unexpected GroupVersion string: ...")``.
    """
    if gv in ("", "/"):
        return GroupVersion("", "")
    slashes = gv.count("/")
    if slashes == 0:
        return GroupVersion("", gv)
    if slashes == 1:
        group, _, version = gv.partition("/")
        return GroupVersion(group, version)
    raise ValueError(f"unexpected GroupVersion string: {gv}")


def from_api_version_and_kind(api_version: str, kind: str) -> GroupVersionKind:
    """``FromAPIVersionAndKind``: an unparsable ``api_version`` gives a GVK with only the kind."""
    try:
        return parse_group_version(api_version).with_kind(kind)
    except ValueError:
        return GroupVersionKind("", "", kind)


def parse_group_kind(text: str) -> GroupKind:
    """``ParseGroupKind``: ``"Deployment.apps"`` → ``GroupKind("apps", "Deployment")``."""
    kind, dot, group = text.partition(".")
    return GroupKind(group if dot else "", kind)


def parse_group_resource(text: str) -> GroupResource:
    """``ParseGroupResource``: ``"deployments.apps"`` → ``GroupResource("apps", "deployments")``."""
    resource, dot, group = text.partition(".")
    return GroupResource(group if dot else "", resource)


_KUBE_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")


def version_priority(version: str) -> tuple:
    """Sort key of apimachinery's ``version.CompareKubeAwareVersionStrings``: GA before beta before
    alpha, higher numbers first, versions not of that form last (by name)."""
    m = _KUBE_VERSION.fullmatch(version)
    if not m:
        return (3, version)
    major, stage, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    return ({None: 0, "beta": 1, "alpha": 2}[stage], -major, -minor)
