"""The Project ``spec.namespace`` index the Project controllers look up (added with the others by
:func:`gcm.controllers.indexes.add_all_field_indexes`)."""

from __future__ import annotations

# Index of Projects by ``spec.namespace``: maps a namespace back to its Project.
PROJECT_NAMESPACE_INDEX = "spec.namespace"


def project_namespace(project: dict) -> list[str]:
    ns = (project.get("spec") or {}).get("namespace")
    return [ns] if ns else []
