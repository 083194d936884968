"""Cache indexes shared by the Project controllers (project, stale, activity)."""

from __future__ import annotations

from typing import Any

from gcm.apis.constants import PROJECT

# Index of Projects by ``spec.namespace``: maps a namespace back to its Project.
PROJECT_NAMESPACE_INDEX = "spec.namespace"


def project_namespace(project: dict) -> list[str]:
    ns = (project.get("spec") or {}).get("namespace")
    return [ns] if ns else []


def add_project_namespace_index(mgr: Any) -> None:
    """Register the index; safe to call from every controller (the manager shares it)."""
    mgr.add_field_index(*PROJECT, PROJECT_NAMESPACE_INDEX, project_namespace)
