"""apps/v1 Deployment: stored only (no controller creates ReplicaSets); ``SetDefaults_Deployment``
and the parts of ``ValidateDeployment`` a manifest can get wrong
(``pkg/registry/apps/deployment/strategy.go``, ``pkg/apis/apps/validation``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.encoding import decoding
from framework.apiserver.machinery.errors import FieldError, invalid_value, required
from framework.apiserver.machinery.jsonvalues import as_dict, is_int
from framework.apiserver.registry import printing
from framework.apiserver.registry.core.podspec import default_pod_spec
from framework.apiserver.registry.core.podspec_validation import validate_pod_spec
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.labels import label_selector_as_selector, validate_label_selector
from framework.meta.object import get_labels


def normalize(obj: dict, old: dict | None) -> None:
    """apps/v1 ``SetDefaults_Deployment`` (not the pod template's defaults) and the registry strategy:
    status starts empty; annotations are copied to ReplicaSets upstream, so changing them bumps
    ``generation`` like a spec change does (the spec comparison itself is the generic one)."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        strategy = spec.get("strategy")
        if not isinstance(strategy, dict):
            strategy = spec["strategy"] = {}
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.get("rollingUpdate")
            if not isinstance(rolling, dict):
                rolling = strategy["rollingUpdate"] = {}
            for key in ("maxUnavailable", "maxSurge"):
                if rolling.get(key) is None:
                    rolling[key] = "25%"
        for key, default in (("revisionHistoryLimit", 10), ("progressDeadlineSeconds", 600)):
            if spec.get(key) is None:
                spec[key] = default
        template = spec.get("template")
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            default_pod_spec(template["spec"])
    if old is None:
        obj["status"] = {}
        return
    meta, old_meta = obj["metadata"], old.get("metadata", {})
    if obj.get("spec") == old.get("spec") and (meta.get("annotations") or {}) != (
        old_meta.get("annotations") or {}
    ):
        meta["generation"] = old_meta.get("generation", 0) + 1


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """The parts of ``ValidateDeployment`` a manifest can get wrong: replicas, selector, template."""
    spec = as_dict(obj.get("spec"))
    errs: list[FieldError] = []
    for key in ("replicas", "revisionHistoryLimit", "progressDeadlineSeconds", "minReadySeconds"):
        value = spec.get(key)
        if value is not None and (not is_int(value) or value < 0):
            errs.append(invalid_value(f"spec.{key}", value, "must be greater than or equal to 0"))
    template = as_dict(spec.get("template"))
    labels = get_labels(template)
    selector = spec.get("selector")
    if not isinstance(selector, dict) or not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        errs.append(
            required("spec.selector")
            if selector is None
            else invalid_value("spec.selector", selector, "empty selector is invalid for deployment")
        )
    else:
        selector_errs = validate_label_selector(selector, "spec.selector")
        errs += selector_errs
        try:
            matches = label_selector_as_selector(selector).matches(labels)
        except ValueError:
            matches = bool(selector_errs)  # already reported
        if not matches:
            errs.append(
                invalid_value(
                    "spec.template.metadata.labels", labels, "`selector` does not match template `labels`"
                )
            )
    errs += validate_pod_spec(template.get("spec"), "spec.template.spec", ("Always",))
    if old is not None and (old.get("spec") or {}).get("selector") != selector:
        errs.append(invalid_value("spec.selector", selector, "field is immutable"))
    return errs


_POD_TEMPLATE_NULLS = {
    **decoding.strings("spec.template.metadata.labels{}", "spec.template.metadata.annotations{}"),
    **decoding.structs(
        *(
            f"spec.template.spec.{k}[]"
            for k in ("containers", "initContainers", "volumes", "imagePullSecrets")
        ),
        *(f"spec.template.spec.containers[].{k}[]" for k in ("env", "ports", "volumeMounts")),
    ),
    **decoding.strings("spec.template.spec.nodeSelector{}", "spec.template.spec.containers[].args[]"),
    **decoding.strings("spec.template.spec.containers[].command[]"),
}
NULLS = decoding.shape(
    {**decoding.selector("spec.selector"), **_POD_TEMPLATE_NULLS, **decoding.CONDITIONS},
    keep=("status.conditions[].lastUpdateTime", *decoding.TRANSITION_TIME),
)


def _deployment_cells(d: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(d.get("spec")), as_dict(d.get("status"))
    containers, images = printing.containers_and_images(spec.get("template"))
    return [
        printing.name(d),
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
        status.get("updatedReplicas", 0),
        status.get("availableReplicas", 0),
        printing.age(d, now),
        containers,
        images,
        printing.selector_text(spec.get("selector")),
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Ready", "Number of the pod with ready state"),
        printing.col(
            "Up-to-date",
            "Total number of non-terminated pods targeted by this deployment that have the desired "
            "template spec.",
        ),
        printing.col(
            "Available",
            "Total number of available pods (ready for at least minReadySeconds) targeted by this "
            "deployment.",
        ),
        printing.AGE,
        *printing.TEMPLATE_COLUMNS,
    ],
    _deployment_cells,
)


STRATEGIES = [
    ResourceType(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        True,
        "deployment",
        null_shape=NULLS,
        short_names=("deploy",),
        categories=("all",),
        subresources=("status",),
        tracks_generation=True,
        generation_keys=("spec",),
        normalize=normalize,
        validate=validate,
        printer=PRINTER,
        time_fields=("status.conditions[].lastUpdateTime", "status.conditions[].lastTransitionTime"),
    ),
]
