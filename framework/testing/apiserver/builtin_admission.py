"""The admission kube-apiserver (and gardener-apiserver) run in-process on every write: RBAC's escalation
prevention for roles and bindings (19-2), and Gardener's Project and Shoot rules when enabled."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import gardener
from .auth import RBAC_GROUP, Attributes, escalation_error
from .kinds.strategy import ResourceType
from .rest.options import WriteOptions

if TYPE_CHECKING:
    from .server import APIServer


def admit(server: APIServer, rt: ResourceType, new: dict, old: dict | None, opts: WriteOptions) -> None:
    """RBAC escalation prevention for roles and bindings (19-2); Gardener's rules when enabled."""
    user = opts.user
    if server.gardener_admission and rt.group == gardener.GROUP:
        gardener.admit(rt, new, old, user)
        return
    if server.authorization != "RBAC" or user is None or rt.group != RBAC_GROUP:
        return
    meta = new["metadata"]
    ns = meta.get("namespace", "")
    if rt.resource in ("roles", "clusterroles"):
        if server.authorizer.allowed(
            Attributes(user, "escalate", True, RBAC_GROUP, "v1", rt.resource, "", meta["name"], ns)
        ):
            return
        missing = server.authorizer.covers(user, ns, list(new.get("rules") or ()))
    else:
        ref = new.get("roleRef") or {}
        role_resource = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
        if server.authorizer.allowed(
            Attributes(user, "bind", True, RBAC_GROUP, "v1", role_resource, "", ref.get("name", ""), ns)
        ):
            return
        missing = server.authorizer.covers(user, ns, server.authorizer.role_rules(ref, ns))
    if missing:
        raise escalation_error(rt.resource, meta["name"], user, missing)
