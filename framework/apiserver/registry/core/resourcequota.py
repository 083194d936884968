"""core/v1 ResourceQuota: status dropped on create (``pkg/registry/core/resourcequota/strategy.go``),
``ValidateResourceQuota``'s resource names and quantities."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.encoding import decoding
from framework.apiserver.encoding.gorender import go_invalid
from framework.apiserver.machinery.errors import FieldError, invalid_value
from framework.apiserver.registry import printing
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.quantity import ERR_FORMAT_WRONG, parse_quantity

# helper.IsIntegerResourceName: object counts and the standard integer resources.
_INTEGER_RESOURCES = {
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
}


def validate_resource_quota(obj: dict) -> list[FieldError]:
    """``ValidateResourceQuotaSpec`` for ``spec.hard``: valid, non-negative, integral counts."""
    errs: list[FieldError] = []
    for name, raw in ((obj.get("spec") or {}).get("hard") or {}).items():
        path = f"spec.hard[{name}]"
        if isinstance(raw, bool) or not isinstance(raw, str | int | float):
            errs.append(invalid_value(path, raw, ERR_FORMAT_WRONG))
            continue
        text = raw.strip() if isinstance(raw, str) else str(raw)
        try:
            value = parse_quantity(text)
        except ValueError as exc:
            errs.append(invalid_value(path, raw, str(exc)))
            continue
        if value.sign() < 0:
            errs.append(invalid_value(path, text, "must be greater than or equal to 0"))
        integer = name in _INTEGER_RESOURCES or name.startswith("count/")
        # MilliValue rounds up, so anything not a whole number of units is rejected.
        if integer and value.milli_value() % 1000 != 0:
            errs.append(go_invalid(path, text, "must be an integer"))
    return errs


def normalize(obj: dict, old: dict | None) -> None:
    if old is None:
        obj.pop("status", None)


NULLS = decoding.shape(
    {
        **dict.fromkeys(("spec.hard{}", "status.hard{}", "status.used{}"), "0"),
        **decoding.strings("spec.scopes[]", "spec.scopeSelector.matchExpressions[].values[]"),
        **decoding.structs("spec.scopeSelector.matchExpressions[]"),
    }
)


def _quota_cells(rq: dict, now: datetime) -> list[Any]:
    """``printResourceQuota``: ``used/hard`` of each ``status.hard`` resource, sorted, ``limits.*`` apart."""
    status = rq.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        text = f"{resource}: {used.get(resource, '0')}/{hard[resource]}"
        (limits if resource.startswith("limits.") else requests).append(text)
    return [printing.name(rq), ", ".join(requests), ", ".join(limits), printing.age(rq, now)]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col(
            "Request", "Request represents a minimum amount of cpu/memory that a container may consume."
        ),
        printing.col(
            "Limit",
            "Limits control the maximum amount of cpu/memory that a container may use independent of "
            "contention on the node.",
        ),
        printing.AGE,
    ],
    _quota_cells,
)


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "resourcequotas",
        "ResourceQuota",
        True,
        "resourcequota",
        null_shape=NULLS,
        apply_maps=frozenset({"spec.hard", "status.hard", "status.used"}),
        short_names=("quota",),
        subresources=("status",),
        returns_deleted_object=True,
        normalize=normalize,
        validate=lambda o, old: validate_resource_quota(o),
        printer=PRINTER,
    ),
]
