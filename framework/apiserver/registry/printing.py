"""Helpers for kubectl's printer columns of the kinds (``pkg/printers/internalversion/printers.go``):
each kind module declares its :data:`~..table.Printer` on its strategy with these."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.endpoints.table import (
    CREATED_DESCRIPTION,
    NAME_COLUMN,
    Printer,
    human_duration,
    parse_printed_time,
)
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.meta.labels import label_selector_as_selector
from framework.meta.object import get_creation_timestamp, get_name

__all__ = [
    "AGE",
    "NAME",
    "REPLICA_COLUMNS",
    "TEMPLATE_COLUMNS",
    "Printer",
    "age",
    "col",
    "containers_and_images",
    "count_printer",
    "human_duration",
    "name",
    "parse_printed_time",
    "selector_text",
    "since",
]


def col(name: str, description: str, col_type: str = "string", priority: int = 0, fmt: str = "") -> dict:
    """One ``metav1.TableColumnDefinition``."""
    return {"name": name, "type": col_type, "format": fmt, "description": description, "priority": priority}


NAME = NAME_COLUMN
AGE = col("Age", CREATED_DESCRIPTION)


# The wide columns of every kind with a pod template (``podTemplateColumns`` plus the selector).
TEMPLATE_COLUMNS = [
    col("Containers", "Names of each container in the template.", priority=1),
    col("Images", "Images referenced by each container in the template.", priority=1),
    col("Selector", "Label selector for pods.", priority=1),
]


# ReplicaSet's and ReplicationController's columns (kubectl's two definitions are the same).
REPLICA_COLUMNS = [
    NAME,
    col("Desired", "Number of desired pods", "integer"),
    col("Current", "Number of actively running pods", "integer"),
    col("Ready", "Number of ready pods", "integer"),
    AGE,
    *TEMPLATE_COLUMNS,
]


def replica_cells(obj: dict, now: datetime, selector: str) -> list[Any]:
    """The cells of :data:`REPLICA_COLUMNS`; ``selector`` as the kind's selector prints."""
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    containers, images = containers_and_images(spec.get("template"))
    return [
        name(obj),
        spec.get("replicas", 0),
        status.get("replicas", 0),
        status.get("readyReplicas", 0),
        age(obj, now),
        containers,
        images,
        selector,
    ]


def name(obj: dict) -> str:
    return get_name(obj)


def since(timestamp: Any, now: datetime, never: str = "<none>") -> str:
    """How long ago ``timestamp`` was (``translateTimestampSince``), or ``never`` when unset."""
    when = parse_printed_time(timestamp) if isinstance(timestamp, str) and timestamp else None
    return never if when is None else human_duration((now - when).total_seconds())


def age(obj: dict, now: datetime) -> str:
    """The ``Age`` cell: how long ago the object was created."""
    return since(get_creation_timestamp(obj), now, "<unknown>")


def selector_text(selector: Any) -> str:
    """``metav1.LabelSelectorAsSelector(...).String()``: requirements sorted by key."""
    try:
        return str(label_selector_as_selector(selector if isinstance(selector, dict) else None))
    except (ValueError, AttributeError, TypeError):
        return "<invalid>"


def containers_and_images(template: Any) -> tuple[str, str]:
    """The wide ``CONTAINERS`` and ``IMAGES`` cells of a pod template (``layoutContainerCells``)."""
    pod = (template or {}).get("spec") or {} if isinstance(template, dict) else {}
    containers = [c for c in pod.get("containers") or [] if isinstance(c, dict)]
    return ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)


def count_printer(column: str, description: str, field: str) -> Printer:
    """``Name``, the number of items of the list ``field``, ``Age`` (the webhook configurations)."""
    return (
        [NAME, col(column, description, "integer"), AGE],
        lambda o, now: [name(o), len(o.get(field) or []), age(o, now)],
    )
