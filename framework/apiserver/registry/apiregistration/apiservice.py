"""apiregistration.k8s.io/v1 APIService: stored only (no aggregated server behind it), status starts
empty (``kube-aggregator/pkg/registry/apiservice``)."""

from __future__ import annotations

from framework.apiserver.catalog.generic import reset_status
from framework.apiserver.registry.strategy import ResourceType

STRATEGIES = [
    ResourceType(
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        "APIService",
        False,
        "apiservice",
        categories=("api-extensions",),
        subresources=("status",),
        normalize=reset_status,
        time_fields=("status.conditions[].lastTransitionTime",),
    ),
]
