"""Registers the four Project controllers (Gardener's ``pkg/controllermanager/controller/project/add.go``).

All of them read ``controllers.project`` (always defaulted); each is added explicitly.
"""

from __future__ import annotations

from framework.clock import Clock
from framework.controller import Controller
from framework.manager import Manager
from gcm.config import ControllerManagerConfiguration
from gcm.controllers.project import activity, project, resourcequota, stale


def add_to_manager(
    mgr: Manager, cfg: ControllerManagerConfiguration, *, stale_clock: Clock | None = None
) -> list[Controller]:
    """Add ``project-activity``, ``project``, ``project-stale`` (its now: ``stale_clock``, default the
    manager's clock) and ``project-resourcequota``."""
    if cfg.controllers.project is None:
        return []
    controllers = [
        project.add_to_manager(mgr, cfg),
        resourcequota.add_to_manager(mgr, cfg),
        stale.add_to_manager(mgr, cfg, clock=stale_clock),
        activity.add_to_manager(mgr, cfg),
    ]
    return [c for c in controllers if c is not None]
