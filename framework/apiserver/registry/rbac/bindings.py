"""``Validate(Cluster)RoleBinding(Update)`` (``pkg/apis/rbac/validation``), shared by RoleBinding and
ClusterRoleBinding (spec 19-1): roleRef, subjects and roleRef immutability."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from framework.apiserver.auth.authenticator import RBAC_GROUP
from framework.apiserver.encoding.gorender import go_invalid, go_str_field, go_struct
from framework.apiserver.machinery.errors import FieldError, invalid_value, not_supported, required
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.meta.validation import is_dns1123_subdomain, is_path_segment_name


def _go_role_ref(ref: dict) -> str:
    return go_struct(
        "rbac.RoleRef",
        [
            ("APIGroup", go_str_field(ref, "apiGroup")),
            ("Kind", go_str_field(ref, "kind")),
            ("Name", go_str_field(ref, "name")),
        ],
    )


def _validate_subject(subject: dict, cluster: bool, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name, kind, api_group = (
        subject.get("name") or "",
        subject.get("kind") or "",
        subject.get("apiGroup") or "",
    )
    if not name:
        errs.append(required(f"{path}.name"))
    if kind == "ServiceAccount":
        if name:
            errs.extend(invalid_value(f"{path}.name", name, m) for m in is_dns1123_subdomain(name))
        if api_group:
            errs.append(not_supported(f"{path}.apiGroup", api_group, [""]))
        if cluster and not subject.get("namespace"):
            errs.append(required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if not name:
            errs.append(invalid_value(f"{path}.name", name, f"{kind.lower()} name cannot be empty"))
        if api_group != RBAC_GROUP:
            errs.append(not_supported(f"{path}.apiGroup", api_group, [RBAC_GROUP]))
    else:
        errs.append(not_supported(f"{path}.kind", kind, ["ServiceAccount", "User", "Group"]))
    return errs


def validate_binding(obj: dict, cluster: bool, old: dict | None = None) -> list[FieldError]:
    """``Validate(Cluster)RoleBinding(Update)`` beyond metadata: roleRef, subjects, roleRef immutability."""
    errs: list[FieldError] = []
    ref = obj.get("roleRef") or {}
    if (ref.get("apiGroup") or "") != RBAC_GROUP:
        errs.append(not_supported("roleRef.apiGroup", ref.get("apiGroup") or "", [RBAC_GROUP]))
    kinds = ["ClusterRole"] if cluster else ["Role", "ClusterRole"]
    if (ref.get("kind") or "") not in kinds:
        errs.append(not_supported("roleRef.kind", ref.get("kind") or "", kinds))
    ref_name = ref.get("name") or ""
    if not ref_name:
        errs.append(required("roleRef.name"))
    else:
        errs.extend(invalid_value("roleRef.name", ref_name, m) for m in is_path_segment_name(ref_name))
    for i, subject in enumerate(obj.get("subjects") or []):
        errs.extend(_validate_subject(subject, cluster, f"subjects[{i}]"))
    if old is not None:
        old_ref = old.get("roleRef") or {}
        keys = ("apiGroup", "kind", "name")
        if any((ref.get(k) or "") != (old_ref.get(k) or "") for k in keys):
            errs.append(go_invalid("roleRef", _go_role_ref(ref), "cannot change roleRef"))
    return errs


def _binding_cells(rb: dict, now: datetime) -> list[Any]:
    """``printRoleBinding`` / ``printClusterRoleBinding``: the role and, wide, the subjects by kind."""
    ref = as_dict(rb.get("roleRef"))
    subjects = [s for s in rb.get("subjects") or [] if isinstance(s, dict)]
    users = ", ".join(s.get("name", "") for s in subjects if s.get("kind") == "User")
    groups = ", ".join(s.get("name", "") for s in subjects if s.get("kind") == "Group")
    sas = ", ".join(
        f"{s.get('namespace', '')}/{s.get('name', '')}" for s in subjects if s.get("kind") == "ServiceAccount"
    )
    role = f"{ref.get('kind', '')}/{ref.get('name', '')}"
    return [printing.name(rb), role, printing.age(rb, now), users, groups, sas]


def binding_printer(noun: str) -> printing.Printer:
    """The columns of a binding kind; ``noun`` (``roleBinding``, ``clusterRoleBinding``) is upstream's
    word in the subject columns' descriptions."""
    return (
        [
            printing.NAME,
            printing.col(
                "Role", "RoleRef can only reference the current namespace and the global namespace."
            ),
            printing.AGE,
            printing.col("Users", f"Users in the {noun}", priority=1),
            printing.col("Groups", f"Groups in the {noun}", priority=1),
            printing.col("ServiceAccounts", f"ServiceAccounts in the {noun}", priority=1),
        ],
        _binding_cells,
    )
