"""v1 PersistentVolumeClaim: stored only (no binder, no provisioner: claims stay ``Pending``); upstream's
defaults, validation and printer columns."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.core.volumes import (
    access_modes_text,
    validate_access_modes,
    validate_volume_mode,
)
from framework.meta import field
from framework.meta.quantity import quantity_from_json

_IMMUTABLE = (
    "spec is immutable after creation except resources.requests and volumeAttributesClassName "
    "for bound claims"
)


def default_spec(claim: dict) -> None:
    """``SetDefaults_PersistentVolumeClaimSpec``: a filesystem volume."""
    spec = claim.get("spec")
    if isinstance(spec, dict) and spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"


def normalize(obj: dict, old: dict | None) -> None:
    """Spec defaults; a new claim's status is ``Pending`` (``SetDefaults_PersistentVolumeClaim``)."""
    default_spec(obj)
    if old is None:
        obj["status"] = {"phase": "Pending"}
    elif isinstance(obj.get("status"), dict) and not obj["status"].get("phase"):
        obj["status"]["phase"] = "Pending"


def validate_spec(spec: dict, path: str) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimSpec``: access modes, a positive storage request, volume mode."""
    errs = validate_access_modes(spec.get("accessModes"), f"{path}.accessModes")
    requests = as_dict(as_dict(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        errs.append(field.required(f"{path}.resources[storage]"))
    else:
        try:
            quantity = quantity_from_json(requests["storage"])
            if quantity.sign() <= 0:
                errs.append(
                    field.invalid(
                        f"{path}.resources[storage]", requests["storage"], "must be greater than zero"
                    )
                )
        except ValueError as e:
            errs.append(field.invalid(f"{path}.resources[storage]", requests["storage"], str(e)))
    errs += validate_volume_mode(spec.get("volumeMode"), f"{path}.volumeMode")
    return errs


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    spec = as_dict(obj.get("spec"))
    errs = validate_spec(spec, "spec")
    if old is not None:
        old_spec = as_dict(old.get("spec"))
        mutable: tuple[str, ...] = ("resources", "volumeAttributesClassName")
        if not old_spec.get("volumeName"):
            mutable += ("volumeName",)  # the binder sets it once
        if {k: v for k, v in spec.items() if k not in mutable} != {
            k: v for k, v in old_spec.items() if k not in mutable
        }:
            errs.append(field.forbidden("spec", _IMMUTABLE))
    return errs


def _cells(pvc: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(pvc.get("spec")), as_dict(pvc.get("status"))
    bound = bool(spec.get("volumeName"))
    storage_class = spec.get("storageClassName") or as_dict(
        as_dict(pvc.get("metadata")).get("annotations")
    ).get("volume.beta.kubernetes.io/storage-class", "")
    return [
        printing.name(pvc),
        status.get("phase", ""),
        spec.get("volumeName", ""),
        str(as_dict(status.get("capacity")).get("storage", "")) if bound else "",
        access_modes_text(status.get("accessModes")) if bound else "",
        storage_class,
        spec.get("volumeAttributesClassName") or "<unset>",
        printing.age(pvc, now),
        spec.get("volumeMode") or "<unset>",
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Status", "The phase of the claim"),
        printing.col("Volume", "The volume bound to the claim"),
        printing.col("Capacity", "The capacity of the bound volume"),
        printing.col("Access Modes", "The access modes of the bound volume"),
        printing.col("StorageClass", "The storage class of the claim"),
        printing.col("VolumeAttributesClass", "The volume attributes class of the claim"),
        printing.AGE,
        printing.col("VolumeMode", "The volume mode of the claim", priority=1),
    ],
    _cells,
)

STRATEGIES = [
    strategy(
        "",
        "v1",
        "persistentvolumeclaims",
        normalize=normalize,
        validate=validate,
        time_fields=("status.conditions[].lastTransitionTime", "status.conditions[].lastProbeTime"),
        printer=PRINTER,
    )
]
