"""Registers gcm's webhooks with the Manager; each is added explicitly (off without a webhook server,
or when its ``webhooks.<name>.enabled`` is false)."""

from __future__ import annotations

from framework.manager import Manager
from gcm.config import ControllerManagerConfiguration
from gcm.webhooks import kubeconfigsecret, namespacedeletion


def add_to_manager(mgr: Manager, cfg: ControllerManagerConfiguration) -> None:
    """Add the namespace-deletion and the kubeconfig-secret webhooks."""
    namespacedeletion.add_to_manager(mgr, cfg)
    kubeconfigsecret.add_to_manager(mgr, cfg)
