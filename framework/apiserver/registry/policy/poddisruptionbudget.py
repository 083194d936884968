"""policy/v1 PodDisruptionBudget: stored only (no disruption controller computes its status);
upstream's validation and printer columns (``pkg/apis/policy/validation``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.intorpercent import validate_positive_int_or_percent
from framework.meta import field
from framework.meta.labels import validate_label_selector

EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")


def normalize(obj: dict, old: dict | None) -> None:
    """Status starts with zero counts (PodDisruptionBudgetStatus's counters have no omitempty)."""
    if old is None:
        obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidatePodDisruptionBudgetSpec``: one of minAvailable/maxUnavailable, valid counts or
    percentages, a valid selector and eviction policy."""
    spec = as_dict(obj.get("spec"))
    errs: list[FieldError] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(field.invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set"))
    for key in ("minAvailable", "maxUnavailable"):
        errs += validate_positive_int_or_percent(spec.get(key), f"spec.{key}")
    if spec.get("selector") is not None:
        errs += list(validate_label_selector(as_dict(spec["selector"]), "spec.selector"))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in EVICTION_POLICIES:
        errs.append(field.not_supported("spec.unhealthyPodEvictionPolicy", policy, list(EVICTION_POLICIES)))
    return errs


def _cells(pdb: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(pdb.get("spec")), as_dict(pdb.get("status"))
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    return [
        printing.name(pdb),
        "N/A" if low is None else str(low),
        "N/A" if high is None else str(high),
        status.get("disruptionsAllowed", 0),
        printing.age(pdb, now),
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Min Available", "The minimum number of pods that must be available"),
        printing.col("Max Unavailable", "The maximum number of pods that may be unavailable"),
        printing.col(
            "Allowed Disruptions", "Calculated number of pods that may be disrupted at this time", "integer"
        ),
        printing.AGE,
    ],
    _cells,
)

STRATEGIES = [
    strategy(
        "policy",
        "v1",
        "poddisruptionbudgets",
        normalize=normalize,
        validate=validate,
        printer=PRINTER,
    )
]
