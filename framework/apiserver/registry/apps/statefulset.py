"""apps/v1 StatefulSet: stored only (no StatefulSet controller creates Pods or claims); upstream's
defaults, validation and printer columns (``pkg/apis/apps/v1/defaults.go``,
``pkg/apis/apps/validation``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.core import persistentvolumeclaim
from framework.apiserver.registry.podtemplate import (
    default_template,
    nonnegative,
    validate_selector_and_template,
)
from framework.meta import field

POD_MANAGEMENT_POLICIES = ("OrderedReady", "Parallel")
UPDATE_STRATEGIES = ("OnDelete", "RollingUpdate")
RETENTION_POLICIES = ("Delete", "Retain")
# ValidateStatefulSetUpdate: what an update may change; any other spec change is refused with this text.
MUTABLE_SPEC = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)
_FORBIDDEN_UPDATE = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
    "'minReadySeconds' are forbidden"
)


def normalize(obj: dict, old: dict | None) -> None:
    """``SetDefaults_StatefulSet``, the template's and the claim templates' defaults; status starts at
    zero replicas."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        if not spec.get("podManagementPolicy"):
            spec["podManagementPolicy"] = "OrderedReady"
        update = spec.get("updateStrategy")
        if not isinstance(update, dict):
            update = spec["updateStrategy"] = {}
        if not update.get("type"):
            update["type"] = "RollingUpdate"
        if update["type"] == "RollingUpdate":
            rolling = update.get("rollingUpdate")
            if not isinstance(rolling, dict):
                rolling = update["rollingUpdate"] = {}
            if rolling.get("partition") is None:
                rolling["partition"] = 0
        retention = spec.get("persistentVolumeClaimRetentionPolicy")
        if not isinstance(retention, dict):
            retention = spec["persistentVolumeClaimRetentionPolicy"] = {}
        for key in ("whenDeleted", "whenScaled"):
            if not retention.get(key):
                retention[key] = "Retain"
        for key, default in (("replicas", 1), ("revisionHistoryLimit", 10)):
            if spec.get(key) is None:
                spec[key] = default
        default_template(spec.get("template"))
        for claim in spec.get("volumeClaimTemplates") or []:
            if isinstance(claim, dict):
                claim.setdefault("apiVersion", "v1")
                claim.setdefault("kind", "PersistentVolumeClaim")
                persistentvolumeclaim.default_spec(claim)
                claim["status"] = {"phase": "Pending"}
    if old is None:
        obj["status"] = {"replicas": 0, "availableReplicas": 0}


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidateStatefulSet`` and, on update, which spec fields may change."""
    spec = as_dict(obj.get("spec"))
    errs = nonnegative(spec, "spec", "replicas", "minReadySeconds")
    policy = spec.get("podManagementPolicy")
    if policy not in POD_MANAGEMENT_POLICIES:
        errs.append(field.not_supported("spec.podManagementPolicy", policy, list(POD_MANAGEMENT_POLICIES)))
    update = as_dict(spec.get("updateStrategy"))
    kind = update.get("type")
    if kind not in UPDATE_STRATEGIES:
        errs.append(field.not_supported("spec.updateStrategy.type", kind, list(UPDATE_STRATEGIES)))
    elif kind == "OnDelete" and update.get("rollingUpdate") is not None:
        errs.append(
            field.invalid(
                "spec.updateStrategy.rollingUpdate",
                update["rollingUpdate"],
                "only allowed for updateStrategy 'RollingUpdate'",
            )
        )
    else:
        errs += nonnegative(
            as_dict(update.get("rollingUpdate")), "spec.updateStrategy.rollingUpdate", "partition"
        )
    retention = as_dict(spec.get("persistentVolumeClaimRetentionPolicy"))
    for key in ("whenDeleted", "whenScaled"):
        if retention.get(key) not in RETENTION_POLICIES:
            path = f"spec.persistentVolumeClaimRetentionPolicy.{key}"
            errs.append(field.not_supported(path, retention.get(key), list(RETENTION_POLICIES)))
    errs += validate_selector_and_template(spec, "spec", ("Always",))
    if old is not None:
        old_spec = as_dict(old.get("spec"))
        rest = {k: v for k, v in spec.items() if k not in MUTABLE_SPEC}
        old_rest = {k: v for k, v in old_spec.items() if k not in MUTABLE_SPEC}
        if rest != old_rest:
            errs.append(field.forbidden("spec", _FORBIDDEN_UPDATE))
    return errs


def _cells(sts: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(sts.get("spec")), as_dict(sts.get("status"))
    containers, images = printing.containers_and_images(spec.get("template"))
    return [
        printing.name(sts),
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
        printing.age(sts, now),
        containers,
        images,
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Ready", "Number of the pod with ready state"),
        printing.AGE,
        *printing.TEMPLATE_COLUMNS[:2],
    ],
    _cells,
)

STRATEGIES = [
    strategy(
        "apps",
        "v1",
        "statefulsets",
        normalize=normalize,
        validate=validate,
        printer=PRINTER,
    )
]
