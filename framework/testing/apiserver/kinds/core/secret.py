"""core/v1 Secret: type defaulting, data keys, size, per-type rules, immutability
(``pkg/registry/core/secret/strategy.go``, ``ValidateSecret`` in ``pkg/apis/core/validation``)."""

from __future__ import annotations

from ... import validation
from ...patch import BUILTIN_SMP_STRATEGIES as smp
from ..strategy import ResourceType


def fields(obj: dict) -> dict[str, str]:
    return {"type": obj.get("type", "")}


def normalize(obj: dict, old: dict | None) -> None:
    validation.normalize_secret(obj)


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "secrets",
        "Secret",
        True,
        "secret",
        normalize=normalize,
        validate=validation.validate_secret,
        fields=fields,
        field_names=("type",),
        own_field_labels=True,
        smp=smp["Secret"],
    ),
]
