"""rbac/v1 RoleBinding: roleRef and subjects (``pkg/apis/rbac/validation``), roleRef immutable."""

from __future__ import annotations

from framework.apiserver.encoding import decoding
from framework.apiserver.registry.rbac.bindings import binding_printer, validate_binding
from framework.apiserver.registry.strategy import ResourceType

PRINTER = binding_printer("roleBinding")


STRATEGIES = [
    ResourceType(
        "rbac.authorization.k8s.io",
        "v1",
        "rolebindings",
        "RoleBinding",
        True,
        "rolebinding",
        null_shape=decoding.shape(decoding.structs("subjects[]")),
        put_creates=True,
        name_rule="path",
        validate=lambda o, old: validate_binding(o, False, old),
        printer=PRINTER,
    ),
]
