"""Helpers for kubectl's printer columns of the kinds (``pkg/printers/internalversion/printers.go``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..table import _AGE, _NAME_COLUMN, _age, _col, _name, _selector_text, _since, human_duration

Printer = tuple[list[dict], Callable[[dict, datetime], list[Any]]]

__all__ = [
    "AGE",
    "NAME",
    "TEMPLATE_COLUMNS",
    "Printer",
    "age",
    "col",
    "containers_and_images",
    "human_duration",
    "name",
    "selector_text",
    "since",
]

NAME = _NAME_COLUMN
AGE = _AGE
age = _age
col = _col
name = _name
selector_text = _selector_text


# The wide columns of every kind with a pod template (``podTemplateColumns`` plus the selector).
TEMPLATE_COLUMNS = [
    _col("Containers", "Names of each container in the template.", priority=1),
    _col("Images", "Images referenced by each container in the template.", priority=1),
    _col("Selector", "Label selector for pods.", priority=1),
]


def containers_and_images(template: Any) -> tuple[str, str]:
    """The wide ``CONTAINERS`` and ``IMAGES`` cells of a pod template (``layoutContainerCells``)."""
    pod = (template or {}).get("spec") or {} if isinstance(template, dict) else {}
    containers = [c for c in pod.get("containers") or [] if isinstance(c, dict)]
    return ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)


def since(timestamp: Any, now: datetime, never: str = "<none>") -> str:
    """How long ago ``timestamp`` was (``translateTimestampSince``), or ``never`` when unset."""
    return _since(timestamp, now) if isinstance(timestamp, str) and timestamp else never
