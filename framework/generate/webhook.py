"""``config/webhook/manifests.yaml``: the Mutating/ValidatingWebhookConfiguration of the project's
webhooks, as controller-gen writes it from ``+kubebuilder:webhook`` markers (pkg/webhook/parser.go).

The webhooks are the defaulters and validators the project's ``webhooks.setup(mgr)`` registers with
:class:`~framework.webhook.WebhookBuilder`, so the paths are the ones the server serves
(``/mutate-<group with dashes>-<version>-<kind>``). Each webhook: ``clientConfig.service`` the
kustomize-placeholder ``system/webhook-service`` with that path, ``failurePolicy: Fail``,
``sideEffects: None``, ``admissionReviewVersions: [v1]``, one rule with the kind's group, version and
resource and the operations it handles (CREATE and UPDATE for a defaulter; those with a callback for a
validator), named as the manager's own managed configuration names it
(:func:`framework.webhook.configuration.webhook_name`), so both ways of deploying agree.

A plain admission handler names no kind; its webhook comes from its
:func:`~framework.markers.webhook.webhook` marker (controller-gen's ``+kubebuilder:webhook``), with the
same service placeholder. A registered plain handler without one cannot be generated (exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from framework.generate.kinds import Kinds
from framework.generate.project import ProjectError
from framework.markers.webhook import WebhookMarker
from framework.webhook.configuration import ADMISSION_V1, webhook_name
from framework.webhook.typed import CustomDefaulter, CustomValidator

__all__ = ["MUTATING_NAME", "VALIDATING_NAME", "webhook_configurations"]

MUTATING_NAME = "mutating-webhook-configuration"
VALIDATING_NAME = "validating-webhook-configuration"
# kubebuilder's config/webhook/service.yaml, renamed and namespaced by config/default's kustomization.
SERVICE = {"name": "webhook-service", "namespace": "system"}


def webhook_configurations(
    webhooks: Mapping[str, Any], kinds: Kinds, project_name: str, markers: Iterable[WebhookMarker] = ()
) -> list[dict[str, Any]]:
    """The configurations for the handlers by path and the ``markers`` of plain handlers (mutating
    first; one left out when it has none)."""
    hooks: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    described: dict[str, WebhookMarker] = {}
    for marker in markers:
        if marker.path in described and described[marker.path] != marker:
            raise ProjectError(f"webhook {marker.path}: two @webhook markers describe this path")
        described[marker.path] = marker
    for marker in described.values():
        hooks[marker.mutating].append(marker.webhook(dict(SERVICE)))
    for path in sorted(webhooks):
        handler = webhooks[path]
        if not isinstance(handler, CustomDefaulter | CustomValidator):
            if path in described:
                continue
            raise ProjectError(
                f"webhook {path}: a plain admission handler names no kind to write a rule for "
                "(register it with WebhookBuilder(mgr).for_(...), or describe it with "
                "framework.markers.webhook.webhook(path=..., groups=..., resources=..., ...))"
            )
        if path in described:
            raise ProjectError(f"webhook {path}: a @webhook marker describes a WebhookBuilder's path")
        gvk = handler.gvk
        info = kinds.lookup(
            f"{gvk.group}/{gvk.version}" if gvk.group else gvk.version, gvk.kind, f"webhook {path}"
        )
        hooks[handler.mutating].append(
            {
                "admissionReviewVersions": ["v1"],
                "clientConfig": {"service": {**SERVICE, "path": path}},
                "failurePolicy": "Fail",
                "name": webhook_name(handler, project_name),
                "rules": [
                    {
                        "apiGroups": [gvk.group],
                        "apiVersions": [gvk.version],
                        "operations": list(handler.operations),
                        "resources": [info.resource],
                    }
                ],
                "sideEffects": "None",
            }
        )
    out = []
    for mutating, kind, name in (
        (True, "MutatingWebhookConfiguration", MUTATING_NAME),
        (False, "ValidatingWebhookConfiguration", VALIDATING_NAME),
    ):
        if hooks[mutating]:
            hooks[mutating].sort(key=lambda h: h["name"])
            out.append(
                {
                    "apiVersion": ADMISSION_V1,
                    "kind": kind,
                    "metadata": {"name": name},
                    "webhooks": hooks[mutating],
                }
            )
    return out
