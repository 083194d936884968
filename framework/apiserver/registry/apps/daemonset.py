"""apps/v1 DaemonSet: stored only (no controller creates Pods); ``SetDefaults_DaemonSet`` and the
template's defaults (``pkg/registry/apps/daemonset/strategy.go``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.core.podspec import template_normalize, template_validate
from framework.apiserver.registry.strategy import ResourceType


def _ds_cells(ds: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(ds.get("spec")), as_dict(ds.get("status"))
    template = as_dict(spec.get("template"))
    containers, images = printing.containers_and_images(template)
    node_selector = as_dict(as_dict(template.get("spec")).get("nodeSelector"))
    return [
        printing.name(ds),
        status.get("desiredNumberScheduled", 0),
        status.get("currentNumberScheduled", 0),
        status.get("numberReady", 0),
        status.get("updatedNumberScheduled", 0),
        status.get("numberAvailable", 0),
        ",".join(f"{k}={v}" for k, v in sorted(node_selector.items())) or "<none>",
        printing.age(ds, now),
        containers,
        images,
        printing.selector_text(spec.get("selector")),
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col(
            "Desired", "The desired number of nodes that should be running the daemon pod", "integer"
        ),
        printing.col("Current", "The number of nodes running at least one daemon pod", "integer"),
        printing.col("Ready", "The number of nodes with a ready daemon pod", "integer"),
        printing.col("Up-to-date", "The number of nodes running the updated daemon pod", "integer"),
        printing.col("Available", "The number of nodes with an available daemon pod", "integer"),
        printing.col("Node Selector", "The node selector of the daemon pod template"),
        printing.AGE,
        *printing.TEMPLATE_COLUMNS,
    ],
    _ds_cells,
)


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
        printer=PRINTER,
        time_fields=("status.conditions[].lastTransitionTime",),
    ),
]
