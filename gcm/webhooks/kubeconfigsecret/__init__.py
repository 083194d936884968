"""The kubeconfig-secret admission webhook at ``/webhooks/validate-kubeconfig-secrets``.

Served by the manager's webhook server (``server.webhooks`` or legacy ``server.https``) on every replica,
leader or not, from the start: it reads nothing from the cluster, so it waits for no cache. Off without a
webhook server, or with ``webhooks.kubeconfigSecrets.enabled: false`` (logged at info); then also take
its entry out of the ValidatingWebhookConfiguration (``failurePolicy: Fail`` refuses every Secret
write in project namespaces while nobody answers). The rule is in :mod:`.handler` and
:mod:`.kubeconfig`.
"""

from gcm.webhooks.kubeconfigsecret.add import CONFIG_SWITCH, add_to_manager
from gcm.webhooks.kubeconfigsecret.handler import (
    METRIC_REASON,
    PATH,
    WEBHOOK_NAME,
    KubeconfigSecretValidator,
    rejected_resources,
)

__all__ = [
    "CONFIG_SWITCH",
    "METRIC_REASON",
    "PATH",
    "WEBHOOK_NAME",
    "KubeconfigSecretValidator",
    "add_to_manager",
    "rejected_resources",
]
