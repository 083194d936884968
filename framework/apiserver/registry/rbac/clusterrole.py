"""rbac/v1 ClusterRole: as Role, cluster-scoped (``pkg/apis/rbac/validation``)."""

from __future__ import annotations

from framework.apiserver.encoding import decoding
from framework.apiserver.registry.rbac.policyrules import validate_role
from framework.apiserver.registry.rbac.role import POLICY_RULE_NULLS, normalize
from framework.apiserver.registry.strategy import ResourceType

NULLS = decoding.shape(
    {
        **POLICY_RULE_NULLS,
        **decoding.structs("aggregationRule.clusterRoleSelectors[]"),
        **decoding.selector("aggregationRule.clusterRoleSelectors[]"),
    },
    keep=("rules",),
)


STRATEGIES = [
    ResourceType(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterroles",
        "ClusterRole",
        False,
        "clusterrole",
        null_shape=NULLS,
        put_creates=True,
        name_rule="path",
        normalize=normalize,
        validate=lambda o, old: validate_role(o, True),
    ),
]
