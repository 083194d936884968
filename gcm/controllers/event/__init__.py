"""The Event TTL controller (``controllers.event``): keeps Shoot events, deletes every other event
``ttlNonShootEvents`` after its last occurrence (Gardener's ``pkg/controllermanager/controller/event``).

Enabled only when the configuration has a ``controllers.event`` section (even ``{}``). Because the
manager's cache options are fixed at construction, a manager that runs it should be created with
``cache_options=EVENT_CACHE_OPTIONS`` (``gcm.controllers.add.cache_options`` has them).
"""

from gcm.controllers.event.add import (
    CONTROLLER_NAME,
    CREATE_ONLY,
    EVENT_CACHE_OPTIONS,
    add_to_manager,
    slim_event,
)
from gcm.controllers.event.reconciler import Reconciler, is_shoot_event, reference_time

__all__ = [
    "CONTROLLER_NAME",
    "CREATE_ONLY",
    "EVENT_CACHE_OPTIONS",
    "Reconciler",
    "add_to_manager",
    "is_shoot_event",
    "reference_time",
    "slim_event",
]
