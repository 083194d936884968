"""Event handlers turn informer events into reconcile requests (controller-runtime's ``pkg/handler``).

- :class:`EnqueueRequestForObject`: the object itself (what ``Builder.for_`` uses);
- :class:`EnqueueRequestForOwner`: the object's owner of a given group and kind (``Builder.owns``),
  only the controller owner by default, cluster-scoped owners included;
- :class:`EnqueueRequestsFromMapFunc`: whatever a function maps the object to (``Builder.watches``).

Deleted objects may arrive as ``DeletedFinalStateUnknown`` tombstones; handlers unwrap them.
"""

from framework.handler.handlers import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    EventHandler,
)

__all__ = ["EnqueueRequestForObject", "EnqueueRequestForOwner", "EnqueueRequestsFromMapFunc", "EventHandler"]
