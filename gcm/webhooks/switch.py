"""Whether a webhook is served: a webhook server is configured and ``webhooks.<name>.enabled`` is not
false. Each webhook's ``add_to_manager`` asks here, and says at info level why it is off."""

from __future__ import annotations

from typing import Any

import structlog

from framework.manager import Manager
from gcm.config import ControllerManagerConfiguration

__all__ = ["webhook_server_for"]

log = structlog.get_logger("gcm.webhooks")


def webhook_server_for(mgr: Manager, cfg: ControllerManagerConfiguration, switch: str, webhook: str) -> Any:
    """``mgr.webhook_server`` if the webhook named ``webhook`` is to be served, else None (logged).
    ``switch`` is its attribute in ``cfg.webhooks`` (``kubeconfig_secrets``)."""
    server = getattr(mgr, "webhook_server", None)
    if server is None:
        log.info("webhook server not configured (server.webhooks): the webhook is off", webhook=webhook)
        return None
    if not cfg.webhook_enabled(switch):
        head, *rest = switch.split("_")
        name = head + "".join(part.title() for part in rest)
        log.info(f"webhooks.{name}.enabled is false: the webhook is off", webhook=webhook)
        return None
    return server
