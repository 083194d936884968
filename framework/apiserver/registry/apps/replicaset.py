"""apps/v1 ReplicaSet: stored only (no ReplicaSet controller creates Pods); upstream's defaults,
validation and printer columns, and ``status.replicas`` as a field selector."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.podtemplate import (
    default_template,
    nonnegative,
    validate_selector_and_template,
)
from framework.meta import field


def normalize(obj: dict, old: dict | None) -> None:
    """``SetDefaults_ReplicaSet`` (one replica) and the template's; status starts at zero replicas
    (``ReplicaSetStatus.replicas`` has no omitempty)."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        default_template(spec.get("template"))
    if old is None:
        obj["status"] = {"replicas": 0}


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidateReplicaSet``: replicas, selector matching the template, restart policy Always; the
    selector may not change (apps/v1 ``ValidateReplicaSetUpdate``)."""
    spec = as_dict(obj.get("spec"))
    errs = nonnegative(spec, "spec", "replicas", "minReadySeconds")
    errs += validate_selector_and_template(spec, "spec", ("Always",))
    if old is not None and as_dict(old.get("spec")).get("selector") != spec.get("selector"):
        errs.append(field.invalid("spec.selector", spec.get("selector"), "field is immutable"))
    return errs


def fields(obj: dict) -> dict[str, str]:
    return {"status.replicas": str(as_dict(obj.get("status")).get("replicas") or 0)}


def _cells(rs: dict, now: datetime) -> list[Any]:
    return printing.replica_cells(rs, now, printing.selector_text(as_dict(rs.get("spec")).get("selector")))


PRINTER: printing.Printer = (printing.REPLICA_COLUMNS, _cells)

STRATEGIES = [
    strategy(
        "apps",
        "v1",
        "replicasets",
        normalize=normalize,
        validate=validate,
        fields=fields,
        field_names=("status.replicas",),
        own_field_labels=True,
        printer=PRINTER,
    )
]
