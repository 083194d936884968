"""The namespace-deletion admission webhook at ``/webhooks/validate-namespace-deletion``.

Served by the manager's webhook server (``server.webhooks`` or legacy ``server.https``) on every replica,
leader or not: the path is registered only once the Namespace and Project caches have synced (until
then the server answers 404, which ``failurePolicy: Fail`` turns into a refused deletion), and the
readiness check ``webhook-namespace-deletion`` fails until then. Without a webhook server, or with
``webhooks.namespaceDeletion.enabled: false``, the webhook is off (logged at info).
"""

from gcm.webhooks.namespacedeletion.add import CONFIG_SWITCH, READYZ_CHECK, WebhookRegistrar, add_to_manager
from gcm.webhooks.namespacedeletion.handler import PATH, WEBHOOK_NAME, NamespaceDeletionHandler

__all__ = [
    "CONFIG_SWITCH",
    "PATH",
    "READYZ_CHECK",
    "WEBHOOK_NAME",
    "NamespaceDeletionHandler",
    "WebhookRegistrar",
    "add_to_manager",
]
