"""REST mapping from discovery: ``(apiVersion, kind)`` → resource plural, scope, verbs, subresources.

The mapper reads ``/api/v1`` and ``/apis/GROUP/VERSION`` lazily, one group/version at a time, and
caches each document. A lookup that misses refetches that group/version once, so kinds that appear
later (a CRD installed after the client started) are found without restarting, like
controller-runtime's lazy mapper. ``/apis`` is read for :meth:`RESTMapper.preferred_version`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from framework.meta.schema import parse_group_version

from .errors import NotFound

__all__ = ["NoKindMatchError", "NoResourceMatchError", "RESTMapper", "RESTMapping", "split_api_version"]


class NoKindMatchError(LookupError):
    """Discovery does not know ``kind`` in ``api_version`` (unknown group/version or kind)."""

    def __init__(self, api_version: str, kind: str) -> None:
        super().__init__(f'no matches for kind "{kind}" in version "{api_version}"')
        self.api_version = api_version
        self.kind = kind


class NoResourceMatchError(LookupError):
    """Discovery does not know the resource ``resource`` in ``api_version``."""

    def __init__(self, api_version: str, resource: str) -> None:
        super().__init__(f'no matches for resource "{resource}" in version "{api_version}"')
        self.api_version = api_version
        self.resource = resource


def split_api_version(api_version: str) -> tuple[str, str]:
    """``"apps/v1"`` → ``("apps", "v1")``; ``"v1"`` → ``("", "v1")``."""
    try:
        gv = parse_group_version(api_version)
    except ValueError:
        gv = None
    # Stricter than ParseGroupVersion: a request needs a version, and a slash needs a group.
    if gv is None or not gv.version or (not gv.group and "/" in api_version):
        raise ValueError(f"invalid apiVersion {api_version!r}")
    return gv.group, gv.version


@dataclass(frozen=True)
class RESTMapping:
    """How a kind is served: its resource plural, scope, verbs and subresources."""

    group: str
    version: str
    kind: str
    resource: str
    namespaced: bool
    verbs: frozenset[str] = frozenset()
    subresources: frozenset[str] = frozenset()
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified_resource(self) -> str:
        """``configmaps`` for the core group, ``widgets.example.com`` otherwise."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def scoped_namespace(self, namespace: str | None, *, collection: bool) -> str | None:
        r"""``namespace`` checked against the kind's scope (``""`` counts as none): an object of a
        namespaced kind needs one, a cluster-scoped kind takes none; a collection of a namespaced
        kind may omit it (all namespaces). Both clients raise these ``ValueError``\ s alike."""
        namespace = namespace or None
        if self.namespaced:
            if namespace is None and not collection:
                raise ValueError(f"{self.kind} ({self.api_version}) is namespaced: a namespace is required")
        elif namespace is not None:
            raise ValueError(
                f"{self.kind} ({self.api_version}) is cluster-scoped: "
                f"namespace must be None, not {namespace!r}"
            )
        return namespace

    def path(
        self, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        """The URL path of the collection (``name=None``) or an object, optionally of a subresource.

        A namespaced kind without ``namespace`` addresses the all-namespaces collection.
        """
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace is not None and self.namespaced:
            base += f"/namespaces/{quote(namespace, safe='')}"
        path = f"{base}/{self.resource}"
        if name is not None:
            if not name:
                raise ValueError("name must not be empty")
            path += "/" + quote(name, safe=":@")
        if subresource:
            if name is None:
                raise ValueError("a subresource needs an object name")
            path += "/" + subresource
        return path


@dataclass
class _GroupVersion:
    by_kind: dict[str, RESTMapping] = field(default_factory=dict)
    by_resource: dict[str, RESTMapping] = field(default_factory=dict)


def _parse_resource_list(group: str, version: str, doc: dict[str, Any]) -> _GroupVersion:
    out = _GroupVersion()
    subs: dict[str, set[str]] = {}
    entries = doc.get("resources") or []
    for r in entries:
        name = r.get("name", "")
        if "/" in name:
            parent, _, sub = name.partition("/")
            subs.setdefault(parent, set()).add(sub)
    for r in entries:
        name = r.get("name", "")
        if "/" in name or not name:
            continue
        m = RESTMapping(
            group=r.get("group") or group,
            version=r.get("version") or version,
            kind=r.get("kind", ""),
            resource=name,
            namespaced=bool(r.get("namespaced")),
            verbs=frozenset(r.get("verbs") or ()),
            subresources=frozenset(subs.get(name, ())),
            singular=r.get("singularName") or "",
            short_names=tuple(r.get("shortNames") or ()),
            categories=tuple(r.get("categories") or ()),
        )
        out.by_resource[name] = m
        # The first resource of a kind is its primary one (as in the real server's discovery order).
        out.by_kind.setdefault(m.kind, m)
    return out


class RESTMapper:
    """Thread-safe, lazily filled discovery cache.

    Args:
        get_json: fetches a discovery path and returns the decoded document; raises
            :class:`~framework.client.errors.NotFound` for an unknown group/version.
    """

    def __init__(self, get_json: Callable[[str], Any]) -> None:
        self._get_json = get_json
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str], _GroupVersion | None] = {}
        self._groups: dict[str, list[str]] | None = None

    def _fetch(self, group: str, version: str) -> _GroupVersion | None:
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            doc = self._get_json(path)
        except NotFound:
            gv = None
        else:
            gv = _parse_resource_list(group, version, doc or {})
        with self._lock:
            self._cache[(group, version)] = gv
        return gv

    def _lookup(self, group: str, version: str, key: str, by: str) -> RESTMapping | None:
        with self._lock:
            cached = self._cache.get((group, version), False)
        if isinstance(cached, _GroupVersion):
            hit = getattr(cached, by).get(key)
            if hit is not None:
                return hit
        gv = self._fetch(group, version)  # a miss: refresh this group/version once
        return getattr(gv, by).get(key) if gv is not None else None

    def mapping(self, api_version: str, kind: str) -> RESTMapping:
        """The mapping of ``kind`` in ``api_version``; raises :class:`NoKindMatchError` if not served."""
        group, version = split_api_version(api_version)
        m = self._lookup(group, version, kind, "by_kind")
        if m is None:
            raise NoKindMatchError(api_version, kind)
        return m

    def mapping_for_resource(self, api_version: str, resource: str) -> RESTMapping:
        """The mapping of a resource plural; raises :class:`NoResourceMatchError` if not served."""
        group, version = split_api_version(api_version)
        m = self._lookup(group, version, resource, "by_resource")
        if m is None:
            raise NoResourceMatchError(api_version, resource)
        return m

    def resources(self, api_version: str) -> list[RESTMapping]:
        """Every resource served in ``api_version`` (freshly read); ``[]`` if the version is unknown."""
        group, version = split_api_version(api_version)
        gv = self._fetch(group, version)
        return list(gv.by_resource.values()) if gv else []

    def group_versions(self, refresh: bool = False) -> dict[str, list[str]]:
        """Served groups and their versions, preferred first (``""`` is the core group)."""
        with self._lock:
            groups = self._groups
        if groups is None or refresh:
            core = self._get_json("/api") or {}
            groups = {"": list(core.get("versions") or ["v1"])}
            for g in (self._get_json("/apis") or {}).get("groups") or []:
                preferred = (g.get("preferredVersion") or {}).get("version")
                versions = [v["version"] for v in g.get("versions") or []]
                if preferred in versions:
                    versions.remove(preferred)
                    versions.insert(0, preferred)
                groups[g["name"]] = versions
            with self._lock:
                self._groups = groups
        return dict(groups)

    def preferred_version(self, group: str) -> str:
        """The preferred ``apiVersion`` string of ``group`` (refreshing discovery on a miss)."""
        groups = self.group_versions()
        if group not in groups:
            groups = self.group_versions(refresh=True)
        if not groups.get(group):
            raise LookupError(f'API group "{group}" is not served')
        version = groups[group][0]
        return f"{group}/{version}" if group else version

    def invalidate(self, api_version: str | None = None) -> None:
        """Forget one group/version (or everything) so the next lookup rereads discovery."""
        with self._lock:
            if api_version is None:
                self._cache.clear()
                self._groups = None
            else:
                self._cache.pop(split_api_version(api_version), None)
