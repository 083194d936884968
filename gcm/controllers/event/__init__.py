"""The Event TTL controller (``controllers.event``): keeps Shoot events, deletes every other event
``ttlNonShootEvents`` after its last occurrence (Gardener's ``pkg/controllermanager/controller/event``).

Enabled only when the configuration has a ``controllers.event`` section (even ``{}``). Because the
manager's cache options are fixed at construction, a manager that runs it should be created with
``cache_options=EVENT_CACHE_OPTIONS`` (``gcm.app.build_manager`` does).
"""

from __future__ import annotations

from typing import Any

from framework.controller import Controller
from gcm.controllers.event.controller import (
    CONTROLLER_NAME,
    CREATE_ONLY,
    EVENT_CACHE_OPTIONS,
    add_controller,
    slim_event,
)
from gcm.controllers.event.reconciler import Reconciler, is_shoot_event, reference_time

__all__ = [
    "CONTROLLER_NAME",
    "CREATE_ONLY",
    "EVENT_CACHE_OPTIONS",
    "Reconciler",
    "add_controller",
    "add_to_manager",
    "is_shoot_event",
    "reference_time",
    "slim_event",
]


def add_to_manager(mgr: Any, cfg: Any) -> Controller | None:
    """Add the controller when ``cfg.controllers.event`` is set; otherwise do nothing."""
    event = cfg.controllers.event
    if event is None:
        return None
    return add_controller(mgr, event)
