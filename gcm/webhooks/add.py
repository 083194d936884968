"""Registers gcm's webhooks with the Manager; each is added explicitly (off without a webhook server)."""

from __future__ import annotations

from framework.manager import Manager
from gcm.config import ControllerManagerConfiguration
from gcm.webhooks import namespacedeletion


def add_to_manager(mgr: Manager, cfg: ControllerManagerConfiguration) -> None:
    """Add the namespace-deletion webhook."""
    namespacedeletion.add_to_manager(mgr, cfg)
