"""CustomResourceDefinition objects (``apiextensions.k8s.io/v1``): their versions, subresources and
selectable fields as the router needs them, and ``SetDefaults_*`` of the CRD itself (16-2).

Mirrors apiextensions-apiserver's ``pkg/apis/apiextensions/v1/defaults.go`` and ``helpers.go``.
"""

from __future__ import annotations

from framework.apiserver.machinery.jsonvalues import as_dict, as_list


def version_entries(crd: dict) -> list[dict]:
    return [v for v in as_list(as_dict(crd.get("spec")).get("versions")) if isinstance(v, dict)]


def served_versions(crd: dict) -> list[str]:
    """Names of the versions with ``served: true``, in spec order (16-4)."""
    return [
        v["name"] for v in version_entries(crd) if v.get("served") is True and isinstance(v.get("name"), str)
    ]


def storage_version(crd: dict) -> str:
    """Name of the version with ``storage: true``; a validated CRD has exactly one."""
    for v in version_entries(crd):
        if v.get("storage") is True:
            return v["name"]
    raise ValueError(
        f"CustomResourceDefinition {as_dict(crd.get('metadata')).get('name')!r} has no storage version"
    )


def add_stored_version(crd: dict) -> None:
    """Append the storage version to ``status.storedVersions`` unless listed (apiextensions-apiserver's
    CRD strategy, on every create and update of the spec)."""
    storage = next((v.get("name") for v in version_entries(crd) if v.get("storage") is True), None)
    status = crd.setdefault("status", {})
    if not isinstance(status, dict) or not isinstance(storage, str):
        return
    stored = status.get("storedVersions")
    if not isinstance(stored, list):
        stored = status["storedVersions"] = []
    if storage not in stored:
        stored.append(storage)


def version_entry(crd: dict, version: str) -> dict | None:
    """The ``spec.versions[]`` entry called ``version``, if any."""
    return next((v for v in version_entries(crd) if v.get("name") == version), None)


def has_status_subresource(crd: dict, version: str) -> bool:
    """Whether ``version`` enables the ``/status`` subresource (``subresources.status`` set)."""
    entry = version_entry(crd, version) or {}
    return as_dict(entry.get("subresources")).get("status") is not None


def selectable_fields(crd: dict, version: str) -> list[str]:
    """Field-selector paths of ``version``'s ``selectableFields``, without the leading dot."""
    entry = version_entry(crd, version) or {}
    out = []
    for f in as_list(entry.get("selectableFields")):
        path = as_dict(f).get("jsonPath")
        if isinstance(path, str) and path:
            out.append(path[1:] if path.startswith(".") else path)
    return out


# --- CRD defaulting ---------------------------------------------------------------------------------


def default_crd(crd: dict) -> None:
    """Apply ``apiextensions.k8s.io/v1`` defaults in place (16-2); ``served``/``storage`` are left alone."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict):
        kind = names.get("kind")
        if isinstance(kind, str):
            if not names.get("singular"):
                names["singular"] = kind.lower()
            if not names.get("listKind") and kind:
                names["listKind"] = kind + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    service = as_dict(as_dict(as_dict(spec.get("conversion")).get("webhook")).get("clientConfig")).get(
        "service"
    )
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443
