"""rbac/v1 ClusterRoleBinding: as RoleBinding, cluster-scoped (``pkg/apis/rbac/validation``)."""

from __future__ import annotations

from framework.apiserver.encoding import decoding
from framework.apiserver.registry.rbac.bindings import binding_printer, validate_binding
from framework.apiserver.registry.strategy import ResourceType

PRINTER = binding_printer("clusterRoleBinding")


STRATEGIES = [
    ResourceType(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        False,
        "clusterrolebinding",
        null_shape=decoding.shape(decoding.structs("subjects[]")),
        put_creates=True,
        name_rule="path",
        validate=lambda o, old: validate_binding(o, True, old),
        printer=PRINTER,
    ),
]
