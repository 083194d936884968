"""Cache indexes shared by the Project controllers (project, stale, activity)."""

from __future__ import annotations

from typing import Any

PROJECT_API_VERSION = "core.gardener.cloud/v1beta1"
# Index of Projects by ``spec.namespace``: maps a namespace back to its Project.
PROJECT_NAMESPACE_INDEX = "spec.namespace"


def project_namespace(project: dict) -> list[str]:
    ns = (project.get("spec") or {}).get("namespace")
    return [ns] if ns else []


def add_project_namespace_index(mgr: Any) -> None:
    """Register the index; safe to call from every controller (the manager shares it)."""
    mgr.add_field_index(PROJECT_API_VERSION, "Project", PROJECT_NAMESPACE_INDEX, project_namespace)
