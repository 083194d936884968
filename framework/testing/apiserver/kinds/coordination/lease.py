"""coordination.k8s.io/v1 Lease: MicroTime fields, PUT needs a resourceVersion
(``pkg/registry/coordination/lease``, ``pkg/apis/coordination/validation``)."""

from __future__ import annotations

from ... import validation
from ...patch import BUILTIN_SMP_STRATEGIES as smp
from ..strategy import ResourceType

STRATEGIES = [
    ResourceType(
        "coordination.k8s.io",
        "v1",
        "leases",
        "Lease",
        True,
        "lease",
        put_requires_rv=True,
        put_creates=True,
        validate=lambda o, old: validation.validate_lease(o),
        smp=smp["Lease"],
        microtime_fields=("spec.acquireTime", "spec.renewTime"),
    ),
]
