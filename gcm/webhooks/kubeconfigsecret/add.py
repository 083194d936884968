"""Wiring of the kubeconfig-secret webhook: registered on the manager's webhook server at once (it
waits for no cache)."""

from __future__ import annotations

import structlog

from framework.manager import Manager
from gcm.config import ControllerManagerConfiguration
from gcm.webhooks.kubeconfigsecret.handler import PATH, WEBHOOK_NAME, KubeconfigSecretValidator
from gcm.webhooks.metrics import counted
from gcm.webhooks.switch import webhook_server_for

log = structlog.get_logger("gcm.webhooks.kubeconfigsecret")

CONFIG_SWITCH = "kubeconfig_secrets"  # webhooks.kubeconfigSecrets.enabled


def add_to_manager(mgr: Manager, cfg: ControllerManagerConfiguration) -> KubeconfigSecretValidator | None:
    """Register the validator on ``mgr.webhook_server``; None (and a log line) when it is off."""
    server = webhook_server_for(mgr, cfg, CONFIG_SWITCH, WEBHOOK_NAME)
    if server is None:
        return None
    validator = KubeconfigSecretValidator(mgr.registry)
    server.register(PATH, counted(validator.handler, PATH, mgr.registry))
    log.info("serving webhook", path=PATH)
    return validator
