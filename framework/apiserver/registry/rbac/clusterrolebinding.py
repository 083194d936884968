"""rbac/v1 ClusterRoleBinding: as RoleBinding, cluster-scoped (``pkg/apis/rbac/validation``)."""

from __future__ import annotations

from ... import decoding
from ..strategy import ResourceType
from .bindings import binding_printer, validate_binding

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
