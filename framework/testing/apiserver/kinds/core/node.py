"""core/v1 Node: stored only, status starts empty (no kubelet reports); ``spec.unschedulable`` field
selector (``pkg/registry/core/node/strategy.go``)."""

from __future__ import annotations

from ...catalog.generic import reset_status
from ...patch import BUILTIN_SMP_STRATEGIES as smp
from ..strategy import ResourceType


def fields(obj: dict) -> dict[str, str]:
    return {"spec.unschedulable": "true" if (obj.get("spec") or {}).get("unschedulable") else "false"}


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "nodes",
        "Node",
        False,
        "node",
        short_names=("no",),
        subresources=("status",),
        normalize=reset_status,  # status starts empty: no kubelet reports
        fields=fields,
        field_names=("spec.unschedulable",),
        own_field_labels=True,
        smp=smp["Node"],
        time_fields=(
            "status.conditions[].lastTransitionTime",
            "status.conditions[].lastHeartbeatTime",
        ),
    ),
]
