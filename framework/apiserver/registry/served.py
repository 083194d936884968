"""Which resources are served right now: the built-in ones plus those of Established CRDs (16-3)."""

from __future__ import annotations

import functools

from framework.apiserver.catalog.generic import served_types
from framework.apiserver.crd.resources import custom_resource_types
from framework.apiserver.registry import builtin_strategies
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.schema import parse_group_version, version_priority


@functools.cache
def builtin_types() -> tuple[ResourceType, ...]:
    """Every built-in resource: the kinds with their own strategy, the rest of the catalog generic."""
    return tuple(served_types(builtin_strategies()))


class Registry:
    def __init__(self, disabled_groups: tuple[str, ...] = ()) -> None:
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._custom: dict[str, list[ResourceType]] = {}  # CRD name -> its served types
        # Derived views, rebuilt only when the served set changes (every request to /apis/G reads them).
        self._group_versions: dict[str, list[str]] | None = None
        self._storage_types: list[ResourceType] | None = None
        self._builtin = builtin_types()
        for rt in self._builtin:
            if rt.group not in disabled_groups:
                self._by_gvr[(rt.group, rt.version, rt.resource)] = rt

    def get(self, group: str, version: str, resource: str) -> ResourceType | None:
        return self._by_gvr.get((group, version, resource))

    def all(self) -> list[ResourceType]:
        return list(self._by_gvr.values())

    def group_versions(self) -> dict[str, list[str]]:
        """Served groups with their versions, preferred (first) version first."""
        if self._group_versions is None:
            self._group_versions = self._compute_group_versions()
        return self._group_versions

    def _compute_group_versions(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for rt in self._by_gvr.values():
            versions = out.setdefault(rt.group, [])
            if rt.version not in versions:
                versions.append(rt.version)
        for versions in out.values():
            # Kube-aware version order, the first preferred: built-in groups and CRD groups alike
            # (apiextensions-apiserver's sortGroupDiscoveryByKubeAwareVersion, not spec.versions order).
            versions.sort(key=version_priority)
        return out

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        try:
            group, version = parse_group_version(api_version)
        except ValueError:
            return None
        for rt in self._by_gvr.values():
            if rt.group == group and rt.version == version and rt.kind == kind:
                return rt
        # Owner references may name another version of the same group/kind.
        for rt in self._by_gvr.values():
            if rt.group == group and rt.kind == kind:
                return rt
        return None

    def storage_types(self) -> list[ResourceType]:
        """One type per storage table (the events.k8s.io view shares the core Event table)."""
        if self._storage_types is None:
            seen: dict[str, ResourceType] = {}
            for rt in self._by_gvr.values():
                seen.setdefault(rt.storage, rt)
            self._storage_types = list(seen.values())
        return self._storage_types

    def custom_types(self, crd_name: str) -> list[ResourceType]:
        return self._custom.get(crd_name, [])

    def set_crd(self, crd: dict) -> None:
        """Serve (or re-serve, after an update) the versions of an Established CRD."""
        self.remove_crd(crd["metadata"]["name"])
        types = custom_resource_types(crd)
        self._custom[crd["metadata"]["name"]] = types
        for rt in types:
            self._by_gvr[(rt.group, rt.version, rt.resource)] = rt
        self._group_versions = self._storage_types = None

    def remove_crd(self, name: str) -> None:
        for rt in self._custom.pop(name, []):
            self._by_gvr.pop((rt.group, rt.version, rt.resource), None)
        self._group_versions = self._storage_types = None

    def builtin_conflict(self, group: str, plural: str) -> bool:
        return any(rt.group == group and rt.resource == plural for rt in self._builtin)
