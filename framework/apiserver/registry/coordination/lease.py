"""coordination.k8s.io/v1 Lease: MicroTime fields, PUT needs a resourceVersion
(``pkg/registry/coordination/lease``, ``pkg/apis/coordination/validation``)."""

from __future__ import annotations

from framework.apiserver.machinery.errors import FieldError, invalid_value, type_invalid
from framework.apiserver.machinery.jsonvalues import as_dict, is_int
from framework.apiserver.registry import printing
from framework.apiserver.registry.strategy import ResourceType


def validate_lease(obj: dict) -> list[FieldError]:
    """``ValidateLeaseSpec``: positive duration, non-negative transitions."""
    spec = obj.get("spec") or {}
    errs: list[FieldError] = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and not is_int(duration):
        errs.append(type_invalid("spec.leaseDurationSeconds", duration, "must be an integer"))
    elif duration is not None and duration <= 0:
        errs.append(invalid_value("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and not is_int(transitions):
        errs.append(type_invalid("spec.leaseTransitions", transitions, "must be an integer"))
    elif transitions is not None and transitions < 0:
        errs.append(invalid_value("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    return errs


PRINTER: printing.Printer = (
    [printing.NAME, printing.col("Holder", "The holder of the lease"), printing.AGE],
    lambda o, now: [
        printing.name(o),
        as_dict(o.get("spec")).get("holderIdentity") or "",
        printing.age(o, now),
    ],
)


STRATEGIES = [
    ResourceType(
        "coordination.k8s.io",
        "v1",
        "leases",
        "Lease",
        True,
        "lease",
        put_requires_rv=True,
        put_creates=True,
        validate=lambda o, old: validate_lease(o),
        printer=PRINTER,
        microtime_fields=("spec.acquireTime", "spec.renewTime"),
    ),
]
