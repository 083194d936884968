"""core/v1 ServiceAccount with its ``token`` subresource (``pkg/registry/core/serviceaccount``)."""

from __future__ import annotations

from ... import validation
from ...patch import BUILTIN_SMP_STRATEGIES as smp
from ..strategy import ResourceType


def normalize(obj: dict, old: dict | None) -> None:
    validation.normalize_service_account(obj)


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "serviceaccounts",
        "ServiceAccount",
        True,
        "serviceaccount",
        short_names=("sa",),
        subresources=("token",),
        returns_deleted_object=True,
        normalize=normalize,
        validate=lambda o, old: validation.validate_service_account(o),
        smp=smp["ServiceAccount"],
    ),
]
