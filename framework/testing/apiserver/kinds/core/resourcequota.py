"""core/v1 ResourceQuota: status dropped on create (``pkg/registry/core/resourcequota/strategy.go``),
``ValidateResourceQuota``'s resource names and quantities."""

from __future__ import annotations

from ... import validation
from ...patch import BUILTIN_SMP_STRATEGIES as smp
from ..strategy import ResourceType


def normalize(obj: dict, old: dict | None) -> None:
    if old is None:
        obj.pop("status", None)


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "resourcequotas",
        "ResourceQuota",
        True,
        "resourcequota",
        short_names=("quota",),
        subresources=("status",),
        returns_deleted_object=True,
        normalize=normalize,
        validate=lambda o, old: validation.validate_resource_quota(o),
        smp=smp["ResourceQuota"],
    ),
]
