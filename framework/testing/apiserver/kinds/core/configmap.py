"""core/v1 ConfigMap: keys, size and immutability (``pkg/registry/core/configmap/strategy.go``,
``ValidateConfigMap`` in ``pkg/apis/core/validation``)."""

from __future__ import annotations

from ... import validation
from ...patch import BUILTIN_SMP_STRATEGIES as smp
from ..strategy import ResourceType

STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "configmaps",
        "ConfigMap",
        True,
        "configmap",
        short_names=("cm",),
        validate=validation.validate_configmap,
        smp=smp["ConfigMap"],
    ),
]
