"""Registers every gcm controller with the Manager (Gardener's
``pkg/controllermanager/controller/add.go``).

Each controller is added explicitly; whether it runs is a decision of the configuration
(``controllers.event`` absent: the Event controller is off), never of what happens to be importable.
The controllers' cache needs (what the Manager must know before it is constructed) are gathered in
:func:`cache_options`.
"""

from __future__ import annotations

from framework.clock import Clock
from framework.controller import Controller
from framework.manager import CacheOptions, Manager
from gcm.config import ControllerManagerConfiguration
from gcm.controllers import event
from gcm.controllers.project import add as project
from gcm.controllers.project.stale.cache import cache_options as stale_cache_options


def cache_options(cfg: ControllerManagerConfiguration) -> dict[tuple[str, str], CacheOptions]:
    """The Manager's cache options the enabled controllers need (fixed when it is constructed)."""
    options = dict(stale_cache_options())  # Secrets metadata-only: the stale check never holds their data
    if cfg.controllers.event is not None:
        options.update(event.EVENT_CACHE_OPTIONS)  # Events cached slim
    return options


def add_event_controller(mgr: Manager, cfg: ControllerManagerConfiguration) -> list[Controller]:
    """The Event TTL controller, when ``controllers.event`` is configured."""
    controller = event.add_to_manager(mgr, cfg)
    return [] if controller is None else [controller]


def add_to_manager(
    mgr: Manager, cfg: ControllerManagerConfiguration, *, stale_clock: Clock | None = None
) -> list[Controller]:
    """Add every controller the configuration enables; returns them. ``stale_clock`` is the stale
    controller's now (default: the manager's clock; :mod:`gcm.cmd` passes a chaos run's offset clock)."""
    return [*project.add_to_manager(mgr, cfg, stale_clock=stale_clock), *add_event_controller(mgr, cfg)]
