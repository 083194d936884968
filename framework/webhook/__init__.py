"""Admission webhooks: an HTTPS server that answers AdmissionReviews with your handlers' verdicts.

For a kind of your own, use the typed layer (controller-runtime's ``CustomDefaulter`` /
``CustomValidator`` and ``WebhookManagedBy``): ``WebhookBuilder(mgr).for_(api_version, kind)
.with_defaulter(fn).with_validator(on_create=..., on_update=..., on_delete=...).complete()``; the
defaulter changes a copy of the object and the framework computes the JSON patch, validators return
warnings and raise ``AdmissionDenied`` or ``Invalid`` (field errors from ``framework.meta.field``) to
refuse (see ``framework.webhook.typed`` and docs/extension-guide.md). With
``Manager(webhook_configuration=WebhookConfiguration(...))`` the manager also writes the
Mutating/ValidatingWebhookConfiguration and can serve a self-signed certificate it rotates
(``framework.webhook.configuration``).

Below that, a handler takes an ``AdmissionRequest`` and returns ``allowed()``, ``denied(message)``,
``patched(ops)`` or ``errored(code, message)``::

    from prometheus_client import CollectorRegistry

    from framework.webhook import AdmissionRequest, WebhookServer, allowed, denied, self_signed_cert

    def validate_namespace_deletion(req: AdmissionRequest):
        if req.operation != "DELETE":
            return allowed()
        if is_project_namespace(req.name):  # your code
            return denied(
                f'Namespace "{req.name}" is forbidden: direct deletion of namespace "{req.name}" is '
                "not permitted (you must delete the corresponding project)",
                details={"name": req.name, "kind": "Namespace"},
            )
        return allowed()

    cert_path, key_path, ca_pem = self_signed_cert("/tmp/certs")  # development: tls.crt, tls.key
    registry = CollectorRegistry()  # or the manager's registry
    server = WebhookServer(port=9443, cert_dir="/tmp/certs", registry=registry)
    server.register("/webhooks/validate-namespace-deletion", validate_namespace_deletion)
    server.start()  # binds (raises if the port is taken or the certificate is unreadable)
    ...
    server.stop()  # in-flight reviews finish (30 s bound), every thread is joined

What the server guarantees (as controller-runtime's pkg/webhook/server.go and admission/http.go):

- every call to a registered path is answered HTTP 200 with an AdmissionReview of the request's
  apiVersion (``admission.k8s.io/v1`` or ``v1beta1``) whose ``response.uid`` is the request's uid;
- empty, non-JSON or non-AdmissionReview bodies, a ``Content-Type`` other than ``application/json`` and
  reviews without a ``request`` get ``allowed: false`` with ``status.code`` 400 (413 over 7 MiB);
- a handler that raises gets ``allowed: false`` with ``status.code`` 500, and the exception is logged;
- a new connection after the certificate files change is served the new certificate (no restart);
- unknown paths are 404.

CRD conversion webhooks (hub and spokes, served at ``/convert``) are ``framework.webhook.conversion``;
``WebhookBuilder(...).with_conversion(hub, spokes)`` registers them.

Metrics (on ``registry``): ``controller_runtime_webhook_requests_total{webhook,code}``,
``controller_runtime_webhook_latency_seconds{webhook}``,
``controller_runtime_webhook_requests_in_flight{webhook}``, ``certwatcher_read_certificate_total``,
``certwatcher_read_certificate_errors_total``.
"""

from framework.certs import self_signed_cert
from framework.webhook.admission import (
    MAX_REQUEST_SIZE,
    AdmissionHandler,
    AdmissionRequest,
    AdmissionResponse,
    GroupVersionKind,
    GroupVersionResource,
    allowed,
    denied,
    errored,
    patched,
    review,
)
from framework.webhook.builder import WebhookBuilder, mutate_path, validate_path
from framework.webhook.certwatcher import CertWatcher
from framework.webhook.configuration import (
    SelfSigned,
    ServiceReference,
    WebhookConfiguration,
    WebhookConfigurator,
)
from framework.webhook.conversion import (
    CONVERT_PATH,
    ConversionError,
    ConversionScheme,
    Convertible,
    Spoke,
    review_conversion,
)
from framework.webhook.jsonpatch import create_patch
from framework.webhook.server import DEFAULT_CERT_DIR, WebhookServer
from framework.webhook.typed import (
    AdmissionDenied,
    CustomDefaulter,
    CustomValidator,
    Invalid,
    current_request,
    defaulter,
    validator,
)

__all__ = [
    "CONVERT_PATH",
    "DEFAULT_CERT_DIR",
    "MAX_REQUEST_SIZE",
    "AdmissionDenied",
    "AdmissionHandler",
    "AdmissionRequest",
    "AdmissionResponse",
    "CertWatcher",
    "ConversionError",
    "ConversionScheme",
    "Convertible",
    "CustomDefaulter",
    "CustomValidator",
    "GroupVersionKind",
    "GroupVersionResource",
    "Invalid",
    "SelfSigned",
    "ServiceReference",
    "Spoke",
    "WebhookBuilder",
    "WebhookConfiguration",
    "WebhookConfigurator",
    "WebhookServer",
    "allowed",
    "create_patch",
    "current_request",
    "defaulter",
    "denied",
    "errored",
    "mutate_path",
    "patched",
    "review",
    "review_conversion",
    "self_signed_cert",
    "validate_path",
    "validator",
]
