"""rbac/v1 ClusterRole: as Role, cluster-scoped (``pkg/apis/rbac/validation``)."""

from __future__ import annotations

from ...patch import BUILTIN_SMP_STRATEGIES as smp
from ..strategy import ResourceType
from .policyrules import validate_role
from .role import normalize

STRATEGIES = [
    ResourceType(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterroles",
        "ClusterRole",
        False,
        "clusterrole",
        put_creates=True,
        name_rule="path",
        normalize=normalize,
        validate=lambda o, old: validate_role(o, True),
        smp=smp["ClusterRole"],
    ),
]
