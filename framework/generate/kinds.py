"""Kind → resource for the generators, without a cluster: the built-in kinds of the client's release
(the catalog the test API server serves) and the project's own CRDs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from framework.apiserver.catalog import builtin_resources
from framework.generate.project import ProjectError
from framework.meta.schema import GroupVersionKind, parse_group_version

__all__ = ["KindInfo", "Kinds"]


@dataclass(frozen=True)
class KindInfo:
    group: str
    version: str
    kind: str
    resource: str
    namespaced: bool


class Kinds:
    """Looks kinds up among the built-in resources and ``crds`` (CustomResourceDefinition dicts)."""

    def __init__(self, crds: Iterable[dict[str, Any]] = ()) -> None:
        self._index: dict[GroupVersionKind, KindInfo] = {}
        for crd in crds:
            spec = crd.get("spec") or {}
            names = spec.get("names") or {}
            for version in spec.get("versions") or []:
                gvk = GroupVersionKind(spec.get("group", ""), version.get("name", ""), names.get("kind", ""))
                self._index[gvk] = KindInfo(
                    *gvk, resource=names.get("plural", ""), namespaced=spec.get("scope") == "Namespaced"
                )
        for entry in builtin_resources():
            gvk = GroupVersionKind(entry.group, entry.version, entry.kind)
            self._index.setdefault(gvk, KindInfo(*gvk, resource=entry.resource, namespaced=entry.namespaced))

    def lookup(self, api_version: str, kind: str, used_by: str) -> KindInfo:
        """The kind's resource; ProjectError naming ``used_by`` when neither built in nor the project's."""
        try:
            gv = parse_group_version(api_version)
        except ValueError:
            raise ProjectError(f"{used_by}: invalid apiVersion {api_version!r}") from None
        info = self._index.get(gv.with_kind(kind))
        if info is None:
            raise ProjectError(
                f"{used_by}: kind {kind} of {api_version} is neither a built-in kind nor declared in the "
                "project's api package, so its resource name is unknown"
            )
        return info
