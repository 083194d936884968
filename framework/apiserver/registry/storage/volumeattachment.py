"""storage.k8s.io/v1 VolumeAttachment: the generic strategy with kubectl's printer columns, and the
status Go always writes (``VolumeAttachmentStatus.Attached`` has no ``omitempty``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import reset_status, strategy
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing


def _cells(va: dict, now: datetime) -> list[Any]:
    spec = as_dict(va.get("spec"))
    attached = as_dict(va.get("status")).get("attached")
    return [
        printing.name(va),
        spec.get("attacher", ""),
        as_dict(spec.get("source")).get("persistentVolumeName") or "",
        spec.get("nodeName", ""),
        attached if isinstance(attached, bool) else False,
        printing.age(va, now),
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Attacher", "Attacher indicates the name of the volume driver.", fmt="name"),
        printing.col("PV", "Name of the persistent volume to attach."),
        printing.col("Node", "The node that the volume should be attached to."),
        printing.col("Attached", "Indicates the volume is successfully attached.", "boolean"),
        printing.AGE,
    ],
    _cells,
)


def _normalize(va: dict, old: dict | None) -> None:
    """PrepareForCreate drops the status sent; either way ``status.attached`` is there, ``false``
    unless set (the official client's model requires it)."""
    reset_status(va, old)
    status = va.get("status")
    if isinstance(status, dict) and "attached" not in status:
        status["attached"] = False


STRATEGIES = [strategy("storage.k8s.io", "v1", "volumeattachments", printer=PRINTER, normalize=_normalize)]
