"""v1 PersistentVolume: stored only (nothing binds or provisions; volumes stay ``Pending`` until a client
writes their status); upstream's defaults, validation and printer columns."""

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

# PersistentVolumeSource's members: exactly one is set.
VOLUME_SOURCES = (
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cephfs",
    "cinder",
    "csi",
    "fc",
    "flexVolume",
    "flocker",
    "gcePersistentDisk",
    "glusterfs",
    "hostPath",
    "iscsi",
    "local",
    "nfs",
    "photonPersistentDisk",
    "portworxVolume",
    "quobyte",
    "rbd",
    "scaleIO",
    "storageos",
    "vsphereVolume",
)
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")


def normalize(obj: dict, old: dict | None) -> None:
    """``SetDefaults_PersistentVolume``: Retain, Filesystem, and ``Pending`` until bound."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        if spec.get("volumeMode") is None:
            spec["volumeMode"] = "Filesystem"
    if old is None:
        obj["status"] = {"phase": "Pending"}
    elif isinstance(obj.get("status"), dict) and not obj["status"].get("phase"):
        obj["status"]["phase"] = "Pending"


def validate(obj: dict, old: dict | None) -> list[FieldError]:
    """``ValidatePersistentVolumeSpec``: access modes, a storage capacity, one volume type, policy."""
    spec = as_dict(obj.get("spec"))
    errs = validate_access_modes(spec.get("accessModes"), "spec.accessModes")
    capacity = spec.get("capacity")
    if not capacity:
        errs.append(field.required("spec.capacity"))
    elif not isinstance(capacity, dict) or "storage" not in capacity or len(capacity) > 1:
        errs.append(field.not_supported("spec.capacity", capacity, ["storage"]))
    sources = [s for s in VOLUME_SOURCES if spec.get(s) is not None]
    if not sources:
        errs.append(field.required("spec", "must specify a volume type"))
    for extra in sources[1:]:
        errs.append(field.forbidden(f"spec.{extra}", "may not specify more than 1 volume type"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy not in RECLAIM_POLICIES:
        errs.append(field.not_supported("spec.persistentVolumeReclaimPolicy", policy, list(RECLAIM_POLICIES)))
    errs += validate_volume_mode(spec.get("volumeMode"), "spec.volumeMode")
    if old is not None:
        old_sources = [s for s in VOLUME_SOURCES if as_dict(old.get("spec")).get(s) is not None]
        if (
            old_sources == sources
            and sources
            and spec.get(sources[0]) != as_dict(old.get("spec")).get(sources[0])
        ):
            errs.append(
                field.forbidden(
                    "spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation"
                )
            )
    return errs


def _cells(pv: dict, now: datetime) -> list[Any]:
    spec, status = as_dict(pv.get("spec")), as_dict(pv.get("status"))
    claim = as_dict(spec.get("claimRef"))
    claim_text = f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else ""
    return [
        printing.name(pv),
        str(as_dict(spec.get("capacity")).get("storage", "")),
        access_modes_text(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy", ""),
        status.get("phase", ""),
        claim_text,
        spec.get("storageClassName", ""),
        spec.get("volumeAttributesClassName") or "<unset>",
        status.get("reason", ""),
        printing.age(pv, now),
        spec.get("volumeMode") or "<unset>",
    ]


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Capacity", "The storage capacity of the volume"),
        printing.col("Access Modes", "The access modes of the volume"),
        printing.col("Reclaim Policy", "What happens to the volume when its claim is released"),
        printing.col("Status", "The phase of the volume"),
        printing.col("Claim", "The claim bound to the volume"),
        printing.col("StorageClass", "The storage class of the volume"),
        printing.col("VolumeAttributesClass", "The volume attributes class of the volume"),
        printing.col("Reason", "Why the volume is in its phase"),
        printing.AGE,
        printing.col("VolumeMode", "The volume mode of the volume", priority=1),
    ],
    _cells,
)

STRATEGIES = [
    strategy(
        "",
        "v1",
        "persistentvolumes",
        normalize=normalize,
        validate=validate,
        time_fields=("status.lastPhaseTransitionTime",),
        printer=PRINTER,
    )
]
