"""apps/v1 DaemonSet: stored only (no controller creates Pods); ``SetDefaults_DaemonSet`` and the
template's defaults (``pkg/registry/apps/daemonset/strategy.go``)."""

from __future__ import annotations

from ...patch import BUILTIN_SMP_STRATEGIES as smp
from ..core.podspec import template_normalize, template_validate
from ..strategy import ResourceType

STRATEGIES = [
    ResourceType(
        "apps",
        "v1",
        "daemonsets",
        "DaemonSet",
        True,
        "daemonset",
        short_names=("ds",),
        categories=("all",),
        subresources=("status",),
        tracks_generation=True,
        generation_keys=("spec",),
        normalize=template_normalize(
            {
                "currentNumberScheduled": 0,
                "desiredNumberScheduled": 0,
                "numberMisscheduled": 0,
                "numberReady": 0,
            },
            {
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
                },
                "revisionHistoryLimit": 10,
            },
        ),
        validate=template_validate,
        smp=smp["DaemonSet"],
        time_fields=("status.conditions[].lastTransitionTime",),
    ),
]
