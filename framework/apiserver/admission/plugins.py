"""The admission kube-apiserver (and gardener-apiserver) run in-process on every write: RBAC's escalation
prevention for roles and bindings (19-2), and Gardener's Project and Shoot rules when enabled."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import gardener, rbac_escalation
from .auth import RBAC_GROUP
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
    rbac_escalation.check(server.authorizer, rt.resource, new, old, user, rbac_escalation.REQUEST_NAME.get())
