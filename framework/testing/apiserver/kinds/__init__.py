"""The kinds the server knows more about than the catalog's generic strategy: one module per kind."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..resources import ResourceType


def builtin_strategies() -> list[ResourceType]:
    """Every kind with its own strategy, in registration order (the generic catalog fills in the rest)."""
    # Imported here: resources.py itself uses kinds.core.podspec, so the package may not import it first.
    from ..resources import BUILTIN
    from .apps import replicaset, statefulset
    from .autoscaling import horizontalpodautoscaler
    from .batch import cronjob, job
    from .core import endpoints, limitrange, persistentvolume, persistentvolumeclaim, printers
    from .discovery import endpointslice
    from .networking import ingress, networkpolicy
    from .policy import poddisruptionbudget
    from .scheduling import priorityclass
    from .storage import storageclass

    for rt in BUILTIN:  # kubectl's columns for the kinds whose strategy is still in resources.py
        if (rt.group, rt.kind) in printers.PRINTERS:
            rt.extra.setdefault("printer", printers.PRINTERS[(rt.group, rt.kind)])
    return [
        *BUILTIN,
        *job.STRATEGIES,
        *replicaset.STRATEGIES,
        *statefulset.STRATEGIES,
        *cronjob.STRATEGIES,
        *persistentvolumeclaim.STRATEGIES,
        *persistentvolume.STRATEGIES,
        *endpoints.STRATEGIES,
        *limitrange.STRATEGIES,
        *ingress.STRATEGIES,
        *networkpolicy.STRATEGIES,
        *poddisruptionbudget.STRATEGIES,
        *horizontalpodautoscaler.STRATEGIES,
        *endpointslice.STRATEGIES,
        *storageclass.STRATEGIES,
        *priorityclass.STRATEGIES,
    ]
