"""storage.k8s.io/v1 StorageClass: stored (no provisioner acts on it); upstream's defaults, validation and
printer columns (``pkg/apis/storage/v1/defaults.go``, ``pkg/apis/storage/validation``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.catalog.generic import strategy
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.podtemplate import immutable
from framework.meta import field
from framework.meta.validation import is_qualified_name

RECLAIM_POLICIES = ("Delete", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"


def normalize(obj: dict, old: dict | None) -> None:
    """``SetDefaults_StorageClass``: Delete, Immediate."""
    if not obj.get("reclaimPolicy"):
        obj["reclaimPolicy"] = "Delete"
    if not obj.get("volumeBindingMode"):
        obj["volumeBindingMode"] = "Immediate"


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidateStorageClass`` and, on update, the fields that are fixed once created."""
    errs: list[FieldError] = []
    provisioner = obj.get("provisioner")
    if not provisioner:
        errs.append(field.required("provisioner"))
    else:
        errs += [
            field.invalid("provisioner", provisioner, m) for m in is_qualified_name(str(provisioner).lower())
        ]
    if obj.get("reclaimPolicy") not in RECLAIM_POLICIES:
        errs.append(field.not_supported("reclaimPolicy", obj.get("reclaimPolicy"), list(RECLAIM_POLICIES)))
    if obj.get("volumeBindingMode") not in BINDING_MODES:
        errs.append(
            field.not_supported("volumeBindingMode", obj.get("volumeBindingMode"), list(BINDING_MODES))
        )
    if old is not None:
        for key in ("parameters", "provisioner", "reclaimPolicy"):
            if obj.get(key) != old.get(key):
                errs.append(field.forbidden(key, f"updates to {key} are forbidden."))
        errs += immutable(obj.get("volumeBindingMode"), old.get("volumeBindingMode"), "volumeBindingMode")
    return errs


def _cells(sc: dict, now: datetime) -> list[Any]:
    annotations = as_dict(as_dict(sc.get("metadata")).get("annotations"))
    name = printing.name(sc)
    if (
        annotations.get(DEFAULT_CLASS) == "true"
        or annotations.get("storageclass.beta.kubernetes.io/is-default-class") == "true"
    ):
        name += " (default)"
    return [
        name,
        sc.get("provisioner", ""),
        sc.get("reclaimPolicy", "Delete"),
        sc.get("volumeBindingMode", "Immediate"),
        bool(sc.get("allowVolumeExpansion")),
        printing.age(sc, now),
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Provisioner", "Indicates the type of the provisioner"),
        printing.col("ReclaimPolicy", "Indicates the type of the reclaim policy"),
        printing.col("VolumeBindingMode", "Indicates how PersistentVolumeClaims should be bound"),
        printing.col(
            "AllowVolumeExpansion", "Indicates whether the storage class allow volume expand", "boolean"
        ),
        printing.AGE,
    ],
    _cells,
)

STRATEGIES = [
    strategy(
        "storage.k8s.io",
        "v1",
        "storageclasses",
        normalize=normalize,
        validate=validate,
        printer=PRINTER,
    )
]
