"""scheduling.k8s.io/v1 PriorityClass: stored (no scheduler reads it); upstream's defaults, validation and
printer columns (``pkg/apis/scheduling/validation``); the two system classes a cluster bootstraps are
the only ``system-`` names allowed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.podtemplate import immutable
from framework.meta import field

PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
# pkg/apis/scheduling: SystemPriorityClasses (name → value), never global defaults.
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}


def normalize(obj: dict, old: dict | None) -> None:
    if obj.get("preemptionPolicy") is None:
        obj["preemptionPolicy"] = "PreemptLowerPriority"


def _system_error(name: str, value: Any, global_default: Any) -> str | None:
    """``IsKnownSystemPriorityClass``'s error, or None for one of the system classes as defined."""
    if name not in SYSTEM_PRIORITY_CLASSES:
        return f"{name} is not a known system priority class"
    if value != SYSTEM_PRIORITY_CLASSES[name]:
        return f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASSES[name]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return None


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidatePriorityClass``/``ValidatePriorityClassUpdate``."""
    errs: list[FieldError] = []
    name = as_dict(obj.get("metadata")).get("name") or ""
    value = obj.get("value")
    if name.startswith("system-"):
        problem = _system_error(name, value, obj.get("globalDefault"))
        if problem:
            errs.append(
                field.forbidden(
                    "metadata.name",
                    "priority class names with 'system-' prefix are reserved for system use only. "
                    f"error: {problem}",
                )
            )
    elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(
            field.forbidden(
                "value",
                f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    policy = obj.get("preemptionPolicy")
    if policy not in PREEMPTION_POLICIES:
        errs.append(field.not_supported("preemptionPolicy", policy, list(PREEMPTION_POLICIES)))
    if old is not None:
        if value != old.get("value"):
            errs.append(field.forbidden("value", "may not be changed in an update."))
        errs += immutable(policy, old.get("preemptionPolicy"), "preemptionPolicy")
    return errs


def _cells(pc: dict, now: datetime) -> list[Any]:
    return [
        printing.name(pc),
        pc.get("value", 0),
        bool(pc.get("globalDefault")),
        printing.age(pc, now),
        pc.get("preemptionPolicy") or "",
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Value", "Value is the integer value of this priority class", "integer"),
        printing.col("Global-Default", "Whether this is the default priority of pods without one", "boolean"),
        printing.AGE,
        printing.col("PreemptionPolicy", "The policy for preempting pods with lower priority"),
    ],
    _cells,
)

STRATEGIES = [
    strategy(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        normalize=normalize,
        validate=validate,
        printer=PRINTER,
    )
]
