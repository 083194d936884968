"""autoscaling/v2 HorizontalPodAutoscaler (and its autoscaling/v1 view): stored only (no HPA controller
scales anything); upstream's defaults, validation, printer columns and the v1 ↔ v2 conversion of the CPU
target (``pkg/apis/autoscaling/v2/defaults.go``, ``pkg/apis/autoscaling/validation``,
``pkg/apis/autoscaling/v1/conversion.go``)."""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict, is_int
from framework.apiserver.registry import printing
from framework.meta import field

DEFAULT_CPU_UTILIZATION = 80
METRIC_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
SELECT_POLICIES = ("Disabled", "Max", "Min")
_SCALE_UP = {
    "stabilizationWindowSeconds": 0,
    "selectPolicy": "Max",
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ],
}
_SCALE_DOWN = {
    "stabilizationWindowSeconds": 300,
    "selectPolicy": "Max",
    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}


def _cpu_metric(utilization: int) -> dict:
    return {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}},
    }


def normalize(obj: dict, old: dict | None) -> None:
    """``SetDefaults_HorizontalPodAutoscaler``: one replica at least, a CPU target of 80% when no metric
    is given, and a given ``behavior``'s missing rules from the default ones."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        if spec.get("minReplicas") is None:
            spec["minReplicas"] = 1
        if not spec.get("metrics"):
            spec["metrics"] = [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
        behavior = spec.get("behavior")
        if isinstance(behavior, dict):
            for key, default in (("scaleUp", _SCALE_UP), ("scaleDown", _SCALE_DOWN)):
                rules = behavior.get(key)
                if not isinstance(rules, dict):
                    behavior[key] = copy.deepcopy(default)
                    continue
                for k, v in default.items():
                    if rules.get(k) is None:
                        rules[k] = copy.deepcopy(v)
    if old is None:
        obj["status"] = {"desiredReplicas": 0}


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidateHorizontalPodAutoscalerSpec``: target reference, replica bounds, metric types."""
    spec = as_dict(obj.get("spec"))
    errs: list[FieldError] = []
    ref = as_dict(spec.get("scaleTargetRef"))
    for key in ("kind", "name"):
        if not ref.get(key):
            errs.append(field.required(f"spec.scaleTargetRef.{key}"))
    low, high = spec.get("minReplicas"), spec.get("maxReplicas")
    if low is not None and (not is_int(low) or low < 1):
        errs.append(field.invalid("spec.minReplicas", low, "must be greater than or equal to 1"))
    if not is_int(high) or high < 1:
        errs.append(field.invalid("spec.maxReplicas", high, "must be greater than 0"))
    elif is_int(low) and high < low:
        errs.append(field.invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`"))
    for i, metric in enumerate(spec.get("metrics") or []):
        kind = as_dict(metric).get("type")
        if kind not in METRIC_TYPES:
            errs.append(field.not_supported(f"spec.metrics[{i}].type", kind, list(METRIC_TYPES)))
    behavior = as_dict(spec.get("behavior"))
    for key in ("scaleUp", "scaleDown"):
        policy = as_dict(behavior.get(key)).get("selectPolicy")
        if policy is not None and policy not in SELECT_POLICIES:
            errs.append(
                field.not_supported(f"spec.behavior.{key}.selectPolicy", policy, list(SELECT_POLICIES))
            )
    return errs


def _cpu_utilization(spec: dict) -> int | None:
    for metric in spec.get("metrics") or []:
        resource = as_dict(as_dict(metric).get("resource"))
        target = as_dict(resource.get("target"))
        if resource.get("name") == "cpu" and target.get("type") == "Utilization":
            return target.get("averageUtilization")
    return None


def v2_to_v1(obj: dict) -> dict:
    """The autoscaling/v1 view: the CPU utilization target is the only metric v1 has."""
    out = {k: v for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"] = "autoscaling/v1"
    spec = as_dict(obj.get("spec"))
    v1_spec = {k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    cpu = _cpu_utilization(spec)
    if cpu is not None:
        v1_spec["targetCPUUtilizationPercentage"] = cpu
    out["spec"] = v1_spec
    status = as_dict(obj.get("status"))
    v1_status = {
        k: status[k]
        for k in ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas")
        if k in status
    }
    for current in status.get("currentMetrics") or []:
        resource = as_dict(as_dict(current).get("resource"))
        if resource.get("name") == "cpu":
            value = as_dict(resource.get("current")).get("averageUtilization")
            if value is not None:
                v1_status["currentCPUUtilizationPercentage"] = value
    v1_status.setdefault("currentReplicas", 0)
    v1_status.setdefault("desiredReplicas", 0)
    out["status"] = v1_status
    return out


def v1_to_v2(obj: dict) -> dict:
    """A v1 write stored as v2: ``targetCPUUtilizationPercentage`` becomes the CPU metric."""
    out = {k: v for k, v in obj.items() if k not in ("spec", "status", "apiVersion")}
    out["apiVersion"] = "autoscaling/v2"
    spec = dict(as_dict(obj.get("spec")))
    cpu = spec.pop("targetCPUUtilizationPercentage", None)
    if cpu is not None:
        spec["metrics"] = [_cpu_metric(cpu)]
    out["spec"] = spec
    status = dict(as_dict(obj.get("status")))
    current = status.pop("currentCPUUtilizationPercentage", None)
    if current is not None:
        resource = {"name": "cpu", "current": {"averageUtilization": current}}
        status["currentMetrics"] = [{"type": "Resource", "resource": resource}]
    if "status" in obj:
        out["status"] = status
    return out


def _targets(hpa: dict) -> str:
    spec, status = as_dict(hpa.get("spec")), as_dict(hpa.get("status"))
    current = status.get("currentMetrics") or []
    parts = []
    for i, metric in enumerate(spec.get("metrics") or []):
        metric = as_dict(metric)
        source = as_dict(metric.get(_source_key(metric.get("type"))))
        target = as_dict(source.get("target"))
        now = (
            as_dict(as_dict(current[i]).get(_source_key(metric.get("type")))).get("current")
            if i < len(current)
            else None
        )
        if target.get("type") == "Utilization":
            have = as_dict(now).get("averageUtilization")
            shown = "<unknown>" if have is None else f"{have}%"
            value = f"{shown}/{target.get('averageUtilization')}%"
        else:
            want = target.get("averageValue") or target.get("value")
            have = as_dict(now).get("averageValue") or as_dict(now).get("value")
            value = f"{have if have is not None else '<unknown>'}/{want}"
        name = source.get("name") or as_dict(source.get("metric")).get("name") or ""
        parts.append(f"{name}: {value}" if metric.get("type") in ("Resource", "ContainerResource") else value)
    if not parts:
        return "<none>"
    text = ", ".join(parts[:2])
    return text + (f" + {len(parts) - 2} more..." if len(parts) > 2 else "")


def _source_key(kind: Any) -> str:
    return {
        "Resource": "resource",
        "ContainerResource": "containerResource",
        "Pods": "pods",
        "Object": "object",
        "External": "external",
    }.get(kind, "resource")


def _cells(hpa: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(hpa.get("spec")), as_dict(hpa.get("status"))
    ref = as_dict(spec.get("scaleTargetRef"))
    low = spec.get("minReplicas")
    return [
        printing.name(hpa),
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        _targets(hpa),
        "<unset>" if low is None else str(low),
        spec.get("maxReplicas", 0),
        status.get("currentReplicas", 0),
        printing.age(hpa, now),
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Reference", "The kind and name of the scaled object"),
        printing.col("Targets", "The current and target values of the metrics"),
        printing.col("MinPods", "The lower limit for the number of replicas"),
        printing.col("MaxPods", "The upper limit for the number of replicas", "integer"),
        printing.col("Replicas", "Current number of replicas", "integer"),
        printing.AGE,
    ],
    _cells,
)


# Hooks run on the stored (v2) form, so the v1 view shares the v2 defaults and validation.
_COMMON: dict[str, Any] = {
    "normalize": normalize,
    "validate": validate,
    "time_fields": ("status.conditions[].lastTransitionTime", "status.lastScaleTime"),
    "printer": PRINTER,
}

STRATEGIES = [
    strategy("autoscaling", "v2", "horizontalpodautoscalers", **_COMMON),
    strategy(
        "autoscaling",
        "v1",
        "horizontalpodautoscalers",
        storage="horizontalpodautoscalers.autoscaling",
        to_storage=v1_to_v2,
        from_storage=v2_to_v1,
        **_COMMON,
    ),
]
