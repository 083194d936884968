"""v1 LimitRange: stored, defaulted and validated as upstream (``SetDefaults_LimitRangeItem``,
``ValidateLimitRange``); the LimitRanger admission plugin that applies it to Pods is not run."""

from __future__ import annotations

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.meta import field
from framework.meta.quantity import Quantity, quantity_from_json

LIMIT_TYPES = ("Container", "PersistentVolumeClaim", "Pod")


def normalize(obj: dict, old: dict | None) -> None:
    """A container item's default limit falls back to its max, its default request to the default
    limit and then to its min."""
    for item in as_dict(obj.get("spec")).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = dict(as_dict(item.get("default")))
        request = dict(as_dict(item.get("defaultRequest")))
        for key, value in as_dict(item.get("max")).items():
            default.setdefault(key, value)
        for key, value in default.items():
            request.setdefault(key, value)
        for key, value in as_dict(item.get("min")).items():
            request.setdefault(key, value)
        if default:
            item["default"] = default
        if request:
            item["defaultRequest"] = request


def _quantities(item: dict, key: str, path: str, errs: list[FieldError]) -> dict[str, Quantity]:
    out = {}
    for resource, value in as_dict(item.get(key)).items():
        try:
            out[resource] = quantity_from_json(value)
        except ValueError as e:
            errs.append(field.invalid(f"{path}.{key}[{resource}]", value, str(e)))
    return out


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """Types are unique and known, Pods have no defaults, and min ≤ default request ≤ default ≤ max."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, item in enumerate(as_dict(obj.get("spec")).get("limits") or []):
        path = f"spec.limits[{i}]"
        item = as_dict(item)
        kind = item.get("type")
        if str(kind) in seen:
            errs.append(field.duplicate(f"{path}.type", kind))
        seen.add(str(kind))
        if kind not in LIMIT_TYPES:
            errs.append(field.not_supported(f"{path}.type", kind, list(LIMIT_TYPES)))
        if kind == "Pod":
            for key in ("default", "defaultRequest"):
                if item.get(key):
                    errs.append(field.forbidden(f"{path}.{key}", "may not be specified when `type` is 'Pod'"))
        low, high = _quantities(item, "min", path, errs), _quantities(item, "max", path, errs)
        default = _quantities(item, "default", path, errs)
        request = _quantities(item, "defaultRequest", path, errs)
        for resource, q in low.items():
            if resource in high and q > high[resource]:
                detail = f"min value {q} is greater than max value {high[resource]}"
                errs.append(field.invalid(f"{path}.min[{resource}]", str(q), detail))
        for resource, q in default.items():
            if resource in high and q > high[resource]:
                detail = f"default value {q} is greater than max value {high[resource]}"
                errs.append(field.invalid(f"{path}.default[{resource}]", str(q), detail))
        for resource, q in request.items():
            if resource in default and q > default[resource]:
                detail = f"default request value {q} is greater than default limit value {default[resource]}"
                errs.append(field.invalid(f"{path}.defaultRequest[{resource}]", str(q), detail))
            if resource in low and low[resource] > q:
                detail = f"min value {low[resource]} is greater than default request value {q}"
                errs.append(field.invalid(f"{path}.defaultRequest[{resource}]", str(q), detail))
    return errs


PRINTER: printing.Printer = (
    [printing.NAME, printing.col("Created At", "The time the limit range was created", "date")],
    lambda lr, now: [printing.name(lr), as_dict(lr.get("metadata")).get("creationTimestamp")],
)


STRATEGIES = [strategy("", "v1", "limitranges", normalize=normalize, validate=validate, printer=PRINTER)]
