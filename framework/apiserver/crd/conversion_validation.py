"""Validation of a CustomResourceDefinition's ``spec.conversion`` (16-2): the strategy, the webhook's
client config and ``conversionReviewVersions``, as apiextensions-apiserver's
``pkg/apis/apiextensions/validation`` checks them, with upstream's messages.
"""

from __future__ import annotations

from framework.apiserver.machinery.errors import FieldError, forbidden, invalid_value, not_supported, required
from framework.apiserver.machinery.jsonvalues import as_dict, as_list
from framework.apiserver.registry.admissionregistration.webhooks import (
    _validate_webhook_service as validate_webhook_service,
)
from framework.apiserver.registry.admissionregistration.webhooks import (
    _validate_webhook_url as validate_webhook_url,
)
from framework.meta.validation import is_dns1035_label

__all__ = ["validate_conversion"]


def validate_conversion(spec: dict) -> list[FieldError]:
    """``spec.conversion`` of a CRD, with upstream's paths and messages."""
    conversion = spec.get("conversion")
    if not isinstance(conversion, dict):
        return []
    errs = []
    strategy = conversion.get("strategy")
    if strategy not in (None, "None") and spec.get("preserveUnknownFields") is True:
        errs.append(
            invalid_value(
                "spec.conversion.strategy", strategy, "must be None if spec.preserveUnknownFields is true"
            )
        )
    if not strategy:
        errs.append(required("spec.conversion.strategy"))
    elif strategy not in ("None", "Webhook"):
        errs.append(not_supported("spec.conversion.strategy", strategy, ["None", "Webhook"]))
    webhook = as_dict(conversion.get("webhook"))
    client = webhook.get("clientConfig")
    review = as_list(webhook.get("conversionReviewVersions"))
    if strategy == "Webhook":
        if not isinstance(client, dict):
            errs.append(
                required("spec.conversion.webhookClientConfig", "required when strategy is set to Webhook")
            )
        elif (client.get("url") is None) == (client.get("service") is None):
            errs.append(
                required("spec.conversion.webhookClientConfig", "exactly one of url or service is required")
            )
        elif client.get("url") is not None:
            errs += validate_webhook_url(str(client["url"]), "spec.conversion.webhookClientConfig.url")
        else:
            errs += validate_webhook_service(
                as_dict(client["service"]), "spec.conversion.webhookClientConfig.service"
            )
        errs += _validate_review_versions(review)
    else:
        if client is not None:
            errs.append(
                forbidden(
                    "spec.conversion.webhookClientConfig",
                    "should not be set when strategy is not set to Webhook",
                )
            )
        if review:
            errs.append(
                forbidden(
                    "spec.conversion.conversionReviewVersions",
                    "should not be set when strategy is not set to Webhook",
                )
            )
    return errs


def _validate_review_versions(versions: list) -> list[FieldError]:
    path = "spec.conversion.conversionReviewVersions"
    if not versions:
        return [required(path)]
    errs = []
    seen: set[str] = set()
    for i, v in enumerate(versions):
        if v in seen:
            errs.append(invalid_value(f"{path}[{i}]", v, "duplicate version"))
            continue
        seen.add(v)
        for msg in is_dns1035_label(v if isinstance(v, str) else ""):
            errs.append(invalid_value(f"{path}[{i}]", v, msg))
    if not seen & {"v1", "v1beta1"}:
        errs.append(invalid_value(path, versions, "must include at least one of v1, v1beta1"))
    return errs
