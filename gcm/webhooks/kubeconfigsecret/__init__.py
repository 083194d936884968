"""The kubeconfig-secret admission webhook at ``/webhooks/validate-kubeconfig-secrets``.

Served by the manager's webhook server (``server.webhooks`` or legacy ``server.https``) on every replica,
leader or not, from the start: it reads nothing from the cluster, so it waits for no cache. Off without a
webhook server, or with ``webhooks.kubeconfigSecrets.enabled: false`` (logged at info); then also take
its entry out of the ValidatingWebhookConfiguration (``failurePolicy: Fail`` refuses every Secret
write in project namespaces while nobody answers). The rule is in :mod:`.handler` and
:mod:`.kubeconfig`.
"""

from __future__ import annotations

from typing import Any

import structlog

from gcm.webhooks.kubeconfigsecret.handler import (
    METRIC_REASON,
    PATH,
    WEBHOOK_NAME,
    KubeconfigSecretValidator,
    rejected_resources,
)
from gcm.webhooks.switch import webhook_server_for

__all__ = [
    "CONFIG_SWITCH",
    "METRIC_REASON",
    "PATH",
    "WEBHOOK_NAME",
    "KubeconfigSecretValidator",
    "add_to_manager",
    "rejected_resources",
]

log = structlog.get_logger("gcm.webhooks.kubeconfigsecret")

CONFIG_SWITCH = "kubeconfig_secrets"  # webhooks.kubeconfigSecrets.enabled


def add_to_manager(mgr: Any, cfg: Any) -> KubeconfigSecretValidator | None:
    """Register the validator on ``mgr.webhook_server``; None (and a log line) when it is off."""
    server = webhook_server_for(mgr, cfg, CONFIG_SWITCH, WEBHOOK_NAME)
    if server is None:
        return None
    validator = KubeconfigSecretValidator(mgr.registry)
    server.register(PATH, validator.handler)
    log.info("serving webhook", path=PATH)
    return validator
