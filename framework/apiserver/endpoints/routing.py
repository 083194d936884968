"""Resource URLs: what a path under ``/api/v1`` or ``/apis/GROUP/VERSION`` addresses and which verb a
method asks for there (k8s.io/apiserver ``pkg/endpoints/request/requestinfo.go`` and the routes
``pkg/endpoints/installer.go`` installs)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from framework.apiserver.endpoints.responses import method_not_allowed, path_not_found
from framework.apiserver.registry.served import Registry
from framework.apiserver.registry.strategy import ResourceType


@dataclass
class Target:
    """What a resource URL addresses."""

    rt: ResourceType
    namespace: str | None
    name: str | None
    subresource: str | None
    watch_path: bool


def resolve_target(
    registry: Registry,
    group: str,
    version: str,
    parts: list[str],
    extra_subresources: Mapping[str, tuple[str, ...]] | None = None,
) -> Target:
    """The resource, namespace, name and subresource of a path's segments after the group version; 404
    for anything no route serves (``extra_subresources``: served beyond the types' own, by storage key)."""
    watch_path = False
    if parts and parts[0] == "watch":
        watch_path = True
        parts = parts[1:]
    namespace = None
    # namespaces/NAME/status and /finalize are the Namespace's own subresources.
    if (
        len(parts) >= 3
        and parts[0] == "namespaces"
        and not (len(parts) == 3 and parts[2] in ("status", "finalize"))
    ):
        namespace = parts[1]
        parts = parts[2:]
    if not parts or len(parts) > 3:
        raise path_not_found()
    rt = registry.get(group, version, parts[0])
    if rt is None:
        raise path_not_found()
    if namespace is not None and not rt.namespaced:
        raise path_not_found()
    name = parts[1] if len(parts) > 1 else None
    sub = parts[2] if len(parts) > 2 else None
    if sub is not None and sub not in rt.subresources + (extra_subresources or {}).get(rt.storage, ()):
        raise path_not_found()
    return Target(rt, namespace, name, sub, watch_path)


def request_verb(method: str, t: Target, is_watch: bool) -> str:
    """The API verb of ``method`` on ``t``; 405 when no route serves it (a verb the resource lacks)."""
    if t.name is None:
        if t.subresource:
            raise path_not_found()
        verb = {
            "GET": "watch" if is_watch else "list",
            "POST": "create",
            "DELETE": "deletecollection",
        }.get(method)
    else:
        verb = {
            "GET": "watch" if is_watch else "get",
            "PUT": "update",
            "PATCH": "patch",
            "DELETE": "delete",
            "POST": "create" if t.subresource == "token" else None,
        }.get(method)
        if t.subresource and verb in ("delete", "watch"):
            verb = None
    if verb is None:
        raise method_not_allowed()
    if verb not in t.rt.verbs and not t.subresource:
        raise method_not_allowed()
    return verb
