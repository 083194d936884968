"""admissionregistration.k8s.io/v1 MutatingWebhookConfiguration: defaults (incl. reinvocationPolicy)
and validation (``pkg/apis/admissionregistration/v1/defaults.go``,
``pkg/apis/admissionregistration/validation``)."""

from __future__ import annotations

from framework.apiserver.registry.admissionregistration.webhooks import (
    WEBHOOK_ATOMIC,
    WEBHOOK_NULLS,
    WEBHOOKS_PRINTER,
    default_webhook_configuration,
    validate_webhook_configuration,
)
from framework.apiserver.registry.strategy import ResourceType


def normalize(obj: dict, old: dict | None) -> None:
    default_webhook_configuration(obj, True)


STRATEGIES = [
    ResourceType(
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        False,
        "mutatingwebhookconfiguration",
        null_shape=WEBHOOK_NULLS,
        apply_atomic=WEBHOOK_ATOMIC,
        tracks_generation=True,
        generation_keys=("webhooks",),
        put_requires_rv=True,
        normalize=normalize,
        validate=lambda o, old: validate_webhook_configuration(o, True),
        printer=WEBHOOKS_PRINTER,
    ),
]
