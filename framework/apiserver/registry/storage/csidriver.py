"""storage.k8s.io/v1 CSIDriver: the generic strategy with kubectl's printer columns."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing


def _cells(driver: dict, now: datetime) -> list[Any]:
    """``printCSIDriver``: unset booleans print their defaults (attachRequired true, the rest false)."""
    spec = as_dict(driver.get("spec"))

    def flag(key: str, default: bool = False) -> bool:
        value = spec.get(key)
        return value if isinstance(value, bool) else default

    requests = spec.get("tokenRequests")
    audiences = (
        "<unset>"
        if requests is None
        else ",".join(str(as_dict(t).get("audience", "")) for t in requests if isinstance(t, dict))
    )
    modes = ",".join(m for m in spec.get("volumeLifecycleModes") or [] if isinstance(m, str))
    return [
        printing.name(driver),
        flag("attachRequired", True),
        flag("podInfoOnMount"),
        flag("storageCapacity"),
        audiences,
        flag("requiresRepublish"),
        modes or "<none>",
        printing.age(driver, now),
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("AttachRequired", "Whether the driver requires an attach operation.", "boolean"),
        printing.col("PodInfoOnMount", "Whether the driver wants pod information on mount.", "boolean"),
        printing.col("StorageCapacity", "Whether the driver reports storage capacity.", "boolean"),
        printing.col("TokenRequests", "The audiences of the tokens the driver receives."),
        printing.col("RequiresRepublish", "Whether NodePublishVolume is called periodically.", "boolean"),
        printing.col("Modes", "The volume lifecycle modes the driver supports."),
        printing.AGE,
    ],
    _cells,
)

STRATEGIES = [strategy("storage.k8s.io", "v1", "csidrivers", printer=PRINTER)]
