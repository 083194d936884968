"""core/v1 PodTemplate: the generic strategy with kubectl's printer columns (no age column, as upstream)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing


def _cells(pt: dict, now: datetime) -> list[Any]:
    template = as_dict(pt.get("template"))
    containers, images = printing.containers_and_images(template)
    labels = as_dict(as_dict(template.get("metadata")).get("labels"))
    return [
        printing.name(pt),
        containers,
        images,
        ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>",
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Containers", "Names of each container in the template.", priority=0),
        printing.col("Images", "Images referenced by each container in the template.", priority=0),
        printing.col("Pod Labels", "The labels for the pod template."),
    ],
    _cells,
)

STRATEGIES = [strategy("", "v1", "podtemplates", printer=PRINTER)]
