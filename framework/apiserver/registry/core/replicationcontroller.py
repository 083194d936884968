"""core/v1 ReplicationController: stored only; ``SetDefaults_ReplicationController`` (the selector
from the template's labels) and the template's defaults (``pkg/registry/core/replicationcontroller``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.core.podspec import template_normalize, template_validate
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.object import get_labels


def fields(obj: dict) -> dict[str, str]:
    return {"status.replicas": str((obj.get("status") or {}).get("replicas") or 0)}


def _default_selector(obj: dict, old: dict | None) -> None:
    """``SetDefaults_ReplicationController``: no selector means the template's labels."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and not spec.get("selector"):
        labels = get_labels(as_dict(spec.get("template")))
        if labels:
            spec["selector"] = dict(labels)


_template_defaults = template_normalize({"replicas": 0}, {"replicas": 1})


def normalize(obj: dict, old: dict | None) -> None:
    _template_defaults(obj, old)
    _default_selector(obj, old)


def _rc_cells(rc: dict, now: datetime) -> list[Any]:
    selector = as_dict(as_dict(rc.get("spec")).get("selector"))  # a plain map, not a LabelSelector
    text = ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>"
    return printing.replica_cells(rc, now, text)


PRINTER: printing.Printer = (printing.REPLICA_COLUMNS, _rc_cells)


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "replicationcontrollers",
        "ReplicationController",
        True,
        "replicationcontroller",
        short_names=("rc",),
        categories=("all",),
        subresources=("status",),
        tracks_generation=True,
        generation_keys=("spec",),
        normalize=normalize,
        validate=template_validate,
        fields=fields,
        field_names=("status.replicas",),
        own_field_labels=True,
        printer=PRINTER,
        time_fields=("status.conditions[].lastTransitionTime",),
    ),
]
