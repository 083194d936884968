"""The kinds the server knows more about than the catalog's generic strategy: one module per kind."""

from __future__ import annotations

from ..resources import BUILTIN, ResourceType


def builtin_strategies() -> list[ResourceType]:
    """Every kind with its own strategy, in registration order (the generic catalog fills in the rest)."""
    from .apps import replicaset, statefulset
    from .autoscaling import horizontalpodautoscaler
    from .batch import cronjob
    from .core import endpoints, limitrange, persistentvolume, persistentvolumeclaim
    from .discovery import endpointslice
    from .networking import ingress, networkpolicy
    from .policy import poddisruptionbudget
    from .scheduling import priorityclass
    from .storage import storageclass

    return [
        *BUILTIN,
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
