"""What PersistentVolumes and PersistentVolumeClaims share: access modes, volume modes and the printer
cells for them (``pkg/apis/core/validation``, ``pkg/printers/internalversion``)."""

from __future__ import annotations

from typing import Any

from framework.apiserver.machinery.errors import FieldError
from framework.meta import field

# GetAccessModesAsString's order and abbreviations.
ACCESS_MODES = {
    "ReadWriteOnce": "RWO",
    "ReadOnlyMany": "ROX",
    "ReadWriteMany": "RWX",
    "ReadWriteOncePod": "RWOP",
}
VOLUME_MODES = ("Block", "Filesystem")


def validate_access_modes(modes: Any, path: str) -> list[FieldError]:
    if not modes or not isinstance(modes, list):
        return [field.required(path, "at least 1 access mode is required")]
    errs: list[FieldError] = []
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(field.not_supported(path, mode, sorted(ACCESS_MODES)))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(field.forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def validate_volume_mode(mode: Any, path: str) -> list[FieldError]:
    if mode is not None and mode not in VOLUME_MODES:
        return [field.not_supported(path, mode, list(VOLUME_MODES))]
    return []


def access_modes_text(modes: Any) -> str:
    """``GetAccessModesAsString``: the abbreviations of the modes present, in a fixed order."""
    present = modes if isinstance(modes, list) else []
    return ",".join(short for mode, short in ACCESS_MODES.items() if mode in present)
