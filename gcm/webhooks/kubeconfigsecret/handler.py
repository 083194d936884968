"""The kubeconfig-secret validator (gardener/gardener
``pkg/admissioncontroller/webhook/admission/kubeconfigsecret/handler.go``; in GCM until v1.10,
``pkg/controllermanager/server/handlers/webhooks/validate_kubeconfig_secrets.go``).

A kubeconfig stored in the garden is used later by components that trust it, and a kubeconfig can make
its user run a local command or read a local file (kubernetes/kubectl#697). On CREATE and UPDATE of a
Secret with ``data.kubeconfig``:

- bytes that are not a kubeconfig (see :mod:`.kubeconfig`) → 400 BadRequest with the decoding error;
- a user whose auth info has a field outside Gardener's allow-list → 422 Invalid on ``data.kubeconfig``:
  ``secret contains invalid kubeconfig: <Gardener's text>``, logged at info with the user who sent it, and
  counted in ``gardener_admission_controller_rejected_resources_total{operation,kind,namespace,reason}``
  (reason ``Rejected Kubeconfig``; Gardener's metric, so its dashboards and alerts apply);
- anything else, Secrets without ``data.kubeconfig`` and DELETE → allowed.

Deviation: Go prints the refused value as ``[]byte{0x61, ...}``, the whole kubeconfig with its keys in
hexadecimal; gcm prints ``"<redacted>"`` in its place (the client sent it and has it; logs must not).
"""

from __future__ import annotations

import base64
import binascii
import threading
import weakref
from typing import Any

import structlog
from prometheus_client import CollectorRegistry, Counter

from framework.markers.webhook import webhook
from framework.meta import field
from framework.webhook import AdmissionDenied, Invalid, current_request, validator
from framework.webhook.typed import CustomValidator
from gcm.apis.constants import WEBHOOK_KUBECONFIG_SECRETS
from gcm.webhooks.kubeconfigsecret.kubeconfig import KubeconfigError, load_kubeconfig, validate_auth_infos

__all__ = [
    "DATA_KEY",
    "METRIC_REASON",
    "PATH",
    "REDACTED",
    "WEBHOOK_NAME",
    "KubeconfigSecretValidator",
    "rejected_resources",
]

log = structlog.get_logger("gcm.webhooks.kubeconfigsecret")

PATH = "/webhooks/validate-kubeconfig-secrets"
WEBHOOK_NAME = WEBHOOK_KUBECONFIG_SECRETS
DATA_KEY = "kubeconfig"  # Gardener's kubernetes.KubeConfig
METRIC_REASON = "Rejected Kubeconfig"
REDACTED = "<redacted>"

_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, Counter] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def rejected_resources(registry: CollectorRegistry) -> Counter:
    """``gardener_admission_controller_rejected_resources_total`` of ``registry`` (made on first use)."""
    with _lock:
        counter = _by_registry.get(registry)
        if counter is None:
            counter = _by_registry[registry] = Counter(
                "gardener_admission_controller_rejected_resources_total",
                "Total number of resources rejected.",
                ["operation", "kind", "namespace", "reason"],
                registry=registry,
            )
        return counter


def _bad_request(message: str) -> AdmissionDenied:
    """``apierrors.NewBadRequest(message)``."""
    return AdmissionDenied(message, code=400, reason="BadRequest")


# Its rule in manifests/deploy/webhook.yaml (hand-written: docs/webhooks.md; a test keeps them equal).
@webhook(
    path=PATH,
    name=WEBHOOK_NAME,
    groups="",
    versions="v1",
    resources="secrets",
    operations=["CREATE", "UPDATE"],
    scope="*",
    admission_review_versions=["v1", "v1beta1"],
)
class KubeconfigSecretValidator:
    """Validates ``data.kubeconfig`` of Secrets; :attr:`handler` is the typed admission handler."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.rejected = rejected_resources(registry)
        self.handler: CustomValidator = validator(
            "v1", "Secret", on_create=self.validate, on_update=lambda _old, new: self.validate(new)
        )

    def validate(self, secret: dict[str, Any]) -> None:
        data = secret.get("data")
        if not isinstance(data, dict) or DATA_KEY not in data:
            return
        raw = data[DATA_KEY]
        if not isinstance(raw, str):
            raise _bad_request(f"data[{DATA_KEY}]: expected a base64 string, got {type(raw).__name__}")
        try:
            kubeconfig = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError) as e:
            raise _bad_request(f"data[{DATA_KEY}]: illegal base64 data ({e})") from None
        try:
            config = load_kubeconfig(kubeconfig)
        except KubeconfigError as e:
            raise _bad_request(str(e)) from None
        reason = validate_auth_infos(config)
        if reason is None:
            return
        req = current_request()
        meta = secret.get("metadata") or {}
        log.info(
            "rejected secret",
            namespace=req.namespace or meta.get("namespace", ""),
            name=req.name or meta.get("name", ""),
            username=req.username,
            reason=reason,
        )
        self.rejected.labels(req.operation, req.kind.kind, req.namespace, METRIC_REASON).inc()
        raise Invalid(
            field.invalid(f"data.{DATA_KEY}", REDACTED, f"secret contains invalid kubeconfig: {reason}")
        )
