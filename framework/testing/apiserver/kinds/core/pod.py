"""core/v1 Pod: stored only (no kubelet runs it, it stays Pending); ``SetDefaults_Pod`` and the
container rules (``pkg/registry/core/pod/strategy.go``, ``pkg/apis/core/validation``)."""

from __future__ import annotations

from ...errors import FieldError
from ...jsonvalues import as_dict
from ...patch import BUILTIN_SMP_STRATEGIES as smp
from ..strategy import ResourceType
from .podspec import default_pod_spec
from .podspec_validation import validate_pod_spec


def normalize(obj: dict, old: dict | None) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        default_pod_spec(spec)
        if spec.get("enableServiceLinks") is None:
            spec["enableServiceLinks"] = True  # SetDefaults_Pod: Pods only, not templates
    if old is None:
        containers = (spec or {}).get("containers") or [] if isinstance(spec, dict) else []
        has_resources = any((c.get("resources") or {}) for c in containers if isinstance(c, dict))
        obj["status"] = {"phase": "Pending", "qosClass": "Burstable" if has_resources else "BestEffort"}


def fields(obj: dict) -> dict[str, str]:
    spec = as_dict(obj.get("spec"))
    status = as_dict(obj.get("status"))
    return {
        "spec.nodeName": spec.get("nodeName") or "",
        "spec.restartPolicy": spec.get("restartPolicy") or "",
        "spec.schedulerName": spec.get("schedulerName") or "",
        "spec.serviceAccountName": spec.get("serviceAccountName") or "",
        "spec.hostNetwork": "true" if spec.get("hostNetwork") else "false",
        "status.phase": status.get("phase") or "",
        "status.podIP": status.get("podIP") or "",
        "status.nominatedNodeName": status.get("nominatedNodeName") or "",
    }


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    return validate_pod_spec(obj.get("spec"), "spec")


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "pods",
        "Pod",
        True,
        "pod",
        short_names=("po",),
        categories=("all",),
        subresources=("status",),
        returns_deleted_object=True,
        normalize=normalize,
        validate=validate,
        fields=fields,
        field_names=tuple(fields({})),
        own_field_labels=True,
        smp=smp["Pod"],
        time_fields=("status.conditions[].lastTransitionTime", "status.startTime"),
    ),
]
