"""The Gardener API server's rules for ``core.gardener.cloud`` Projects and Shoots, as admission plugins.

A garden's gardener-apiserver serves Projects with rules a CRD cannot express; ``gcm --embedded``
builds its API server with these plugins (``APIServer(admission_plugins=plugins())``; on the command
line ``python -m framework.apiserver --admission-plugin gcm.embedded.admission:plugins``) so its garden
behaves like a real one:

- the ProjectMutator admission plugin (gardener ``plugin/pkg/project/mutator``): on create
  ``spec.createdBy`` is the requesting user and a missing ``spec.owner`` becomes the first member
  with the ``owner`` role, else the creator; on create and update the owner is made a member (roles
  ``admin`` and ``owner``) when it is not one;
- the Project strategy's validation (gardener ``pkg/api/core/validation/project.go``): the name (at
  most 10 characters, no ``--``), ``spec.namespace`` (``garden`` or ``garden-…``, a DNS label, not a
  namespace reserved by Gardener, immutable once set), ``spec.createdBy`` immutable once set, the
  owner cannot be reset, members (subjects, no duplicates, known or ``extension:`` roles, one
  owner at most), description and purpose not empty;
- the canonicalisation: exactly the member that is the owner carries the ``owner`` role, applied when
  the request is decoded, before the mutator and validation, as gardener-apiserver did up to v1.148
  (gardener ``pkg/apis/core/v1beta1/conversions.go``, ``Convert_v1beta1_ProjectSpec_To_core_ProjectSpec``):
  a new ``spec.owner`` takes the role from the previous owner, so handing a Project to someone who is
  not a member yet succeeds (the mutator adds them with ``admin`` and ``owner``). Gardener v1.149 moved
  it into the strategy's ``Canonicalize`` (gardener/gardener#15410), which runs after validation: there
  that edit is refused (two members with the owner role) unless it also takes the role from the old
  owner. Applied once more after the mutator, as the strategy does;
- the DeletionConfirmation plugin (gardener ``plugin/pkg/global/deletionconfirmation``): DELETE of a
  Project or Shoot without the annotation ``confirmation.gardener.cloud/deletion=true`` is
  forbidden, and Shoots carry ``deletion.gardener.cloud/confirmed-by`` (who confirmed).

v1beta1 members carry ``role`` plus ``roles``; the rules work on Gardener's internal list (``role``
first), as its conversion does, and write back ``role`` = the first, ``roles`` = the rest.
Not modelled: tolerations, dual approval for deletion, free-form text checks of description/purpose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from framework.apiserver.admission.plugins import AdmissionPlugin
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.strconv import is_true
from framework.meta.validation import is_dns1123_label, is_dns1123_subdomain, is_path_segment_name
from gcm.apis.constants import (
    ANNOTATION_CONFIRMATION_DELETION,
    ANNOTATION_DELETION_CONFIRMED_BY,
    GROUP_CORE,
    KIND_PROJECT,
    KIND_SHOOT,
    PROJECT_MEMBER_ADMIN,
    PROJECT_MEMBER_EXTENSION_PREFIX,
    PROJECT_MEMBER_OWNER,
    PROJECT_MEMBER_SERVICEACCOUNTMANAGER,
    PROJECT_MEMBER_UAM,
    PROJECT_MEMBER_VIEWER,
    PROJECT_NAMESPACE_PREFIX,
)

if TYPE_CHECKING:
    from framework.apiserver.registry.rest.options import WriteOptions
    from framework.apiserver.server import APIServer

RBAC_GROUP = "rbac.authorization.k8s.io"
OWNER = PROJECT_MEMBER_OWNER
ROLES = tuple(  # sorted, as Gardener lists them
    sorted(
        (
            PROJECT_MEMBER_ADMIN,
            PROJECT_MEMBER_OWNER,
            PROJECT_MEMBER_SERVICEACCOUNTMANAGER,
            PROJECT_MEMBER_UAM,
            PROJECT_MEMBER_VIEWER,
        )
    )
)
EXTENSION_PREFIX = PROJECT_MEMBER_EXTENSION_PREFIX
EXTENSION_ROLE_MAX = 20
PROJECT_NAME_MAX = 10
RESERVED_NAMESPACES = ("gardener-system-seed-lease", "gardener-system-shoot-issuer", "gardener-system-public")
SA_PREFIX = "system:serviceaccount:"
CONFIRMATION_REQUIRED = f'must have a "{ANNOTATION_CONFIRMATION_DELETION}" annotation to delete'
SUBJECT_KEYS = ("apiGroup", "kind", "name", "namespace")


class ProjectRules(AdmissionPlugin):
    """gardener-apiserver's ProjectMutator plugin, the Project strategy's canonicalisation and validation."""

    name = "ProjectValidator"

    def admit(
        self, server: APIServer, rt: ResourceType, new: dict, old: dict | None, opts: WriteOptions
    ) -> None:
        if rt.group == GROUP_CORE and rt.kind == KIND_PROJECT:
            admit_project(rt, new, old, opts.user)


class DeletionConfirmation(AdmissionPlugin):
    """gardener's DeletionConfirmation plugin: Projects and Shoots are deleted only once confirmed;
    a Shoot records who confirmed."""

    name = "DeletionConfirmation"

    def admit(
        self, server: APIServer, rt: ResourceType, new: dict, old: dict | None, opts: WriteOptions
    ) -> None:
        if rt.group == GROUP_CORE and rt.kind == KIND_SHOOT:
            _maintain_confirmed_by(new, old, opts.user)

    def admit_delete(self, server: APIServer, rt: ResourceType, obj: dict) -> None:
        if rt.group == GROUP_CORE and rt.kind in (KIND_PROJECT, KIND_SHOOT) and not _confirmed(obj):
            raise errors.forbidden_error(
                rt.resource, rt.group, obj["metadata"]["name"], CONFIRMATION_REQUIRED
            )


def plugins() -> list[AdmissionPlugin]:
    """The plugins of a garden's gardener-apiserver that gcm's embedded garden runs."""
    return [ProjectRules(), DeletionConfirmation()]


def admit_project(rt: ResourceType, new: dict, old: dict | None, user: Any) -> None:
    """Mutate and validate a Project write (create: ``old`` is None); raises 422."""
    if old is not None and (new.get("spec") == old.get("spec") or old["metadata"].get("deletionTimestamp")):
        # A status or metadata-only write, or one to a Project being deleted (the mutator skips those).
        return
    spec = new.setdefault("spec", {})
    members = [_internal(m) for m in spec.get("members") or []]
    _canonicalize(members, spec.get("owner"))  # at decoding (see the module docstring)
    if old is None and user is not None:
        spec["createdBy"] = {"apiGroup": RBAC_GROUP, "kind": "User", "name": user.name}
        if not spec.get("owner"):
            owner = next((m for m in members if OWNER in m["roles"]), None)
            spec["owner"] = _subject_fields(owner) if owner else dict(spec["createdBy"])
    owner = spec.get("owner")
    if owner and not any(_subject(m) == _subject(owner) for m in members):
        members.append({**_subject_fields(owner), "roles": [PROJECT_MEMBER_ADMIN, OWNER]})
    errs = _validate(new, members) + (_validate_update(new, old) if old is not None else [])
    if errs:
        raise errors.invalid(rt.kind, rt.group, new["metadata"].get("name", ""), errs)
    _canonicalize(members, owner)
    if members or "members" in spec:
        spec["members"] = [_external(m) for m in members]


# -- helpers -----------------------------------------------------------------------------------------


def _confirmed(obj: dict) -> bool:
    return is_true((obj["metadata"].get("annotations") or {}).get(ANNOTATION_CONFIRMATION_DELETION))


def _maintain_confirmed_by(new: dict, old: dict | None, user: Any) -> None:
    annotations = new["metadata"].get("annotations") or {}
    was = old is not None and _confirmed(old)
    if _confirmed(new):
        if not was and user is not None:
            annotations[ANNOTATION_DELETION_CONFIRMED_BY] = user.name
        elif was and old is not None:
            by = (old["metadata"].get("annotations") or {}).get(ANNOTATION_DELETION_CONFIRMED_BY)
            if by is not None:
                annotations[ANNOTATION_DELETION_CONFIRMED_BY] = by
    else:
        annotations.pop(ANNOTATION_DELETION_CONFIRMED_BY, None)
    if annotations:
        new["metadata"]["annotations"] = annotations


def _subject(m: dict) -> dict:
    """The rbacv1.Subject of a member or owner, for comparison (absent = "")."""
    return {k: m.get(k, "") for k in SUBJECT_KEYS}


def _subject_fields(m: dict) -> dict:
    """The subject's fields as served (empty ones omitted, as Go's omitempty)."""
    return {k: m[k] for k in SUBJECT_KEYS if m.get(k)}


def _internal(member: dict) -> dict:
    """v1beta1 member -> Gardener's internal form: one ``roles`` list with ``role`` first."""
    roles = list(member.get("roles") or [])
    if member.get("role"):
        roles = [member["role"], *(r for r in roles if r != member["role"])]
    out = {k: v for k, v in member.items() if k not in ("role", "roles")}
    out["roles"] = roles
    return out


def _external(member: dict) -> dict:
    out = {k: v for k, v in member.items() if k != "roles"}
    roles = member["roles"]
    if roles:
        out["role"] = roles[0]
        if roles[1:]:
            out["roles"] = roles[1:]
    return out


def _canonicalize(members: list[dict], owner: dict | None) -> None:
    if not owner:
        return
    for m in members:
        is_owner = all(m.get(k, "") == owner.get(k, "") for k in ("name", "apiGroup", "kind"))
        if is_owner and OWNER not in m["roles"]:
            m["roles"].append(OWNER)
        elif not is_owner:
            m["roles"] = [r for r in m["roles"] if r != OWNER]


def _validate(project: dict, members: list[dict]) -> list[FieldError]:
    meta, spec = project["metadata"], project.get("spec") or {}
    name = meta.get("name", "")
    errs: list[FieldError] = []
    if len(name) > PROJECT_NAME_MAX:
        errs.append(errors.too_long("metadata.name", PROJECT_NAME_MAX))
    if "--" in name:
        errs.append(
            errors.invalid_value("metadata.name", name, "name may not contain two consecutive hyphens")
        )
    namespace = spec.get("namespace")
    if namespace is not None:
        if namespace in RESERVED_NAMESPACES:
            reserved = ", ".join(RESERVED_NAMESPACES)
            return [
                *errs,
                errors.invalid_value(
                    "spec.namespace", namespace, f"Project namespaces [{reserved}] are reserved by Gardener"
                ),
            ]
        if namespace != "garden" and not namespace.startswith(PROJECT_NAMESPACE_PREFIX):
            errs.append(errors.invalid_value("spec.namespace", namespace, "must start with garden-"))
        errs += [errors.invalid_value("spec.namespace", namespace, m) for m in is_dns1123_label(namespace)]
    seen: set[tuple[str, str, str, str]] = set()
    owner_found = False
    for i, member in enumerate(members):
        path = f"spec.members[{i}]"
        ident = _member_id(member)
        if ident is None:
            errs.append(
                errors.invalid_value(
                    f"{path}.name",
                    member.get("name"),
                    f'unsupported service account user name: "{member.get("name")}"',
                )
            )
            continue
        if ident in seen:
            errs.append(errors.duplicate(path, _external(member)))
        seen.add(ident)
        errs += _validate_subject(member, path)
        found: set[str] = set()
        for j, role in enumerate(member["roles"]):
            rpath = f"{path}.roles[{j}]"
            if role in found:
                errs.append(errors.duplicate(rpath, role))
            found.add(role)
            if role not in ROLES and not role.startswith(EXTENSION_PREFIX):
                errs.append(errors.not_supported(rpath, role, [*ROLES, EXTENSION_PREFIX + "*"]))
            if role.startswith(EXTENSION_PREFIX):
                ext = role[len(EXTENSION_PREFIX) :]
                if len(ext) > EXTENSION_ROLE_MAX:
                    errs.append(errors.too_long(rpath, EXTENSION_ROLE_MAX))
                problems = is_path_segment_name(ext)
                if problems:
                    errs.append(errors.invalid_value(rpath, role, ", ".join(problems)))
            if role == OWNER:
                if owner_found:
                    errs.append(
                        errors.forbidden(rpath, "cannot have more than one member having the owner role")
                    )
                owner_found = True
    for key in ("createdBy", "owner"):
        if spec.get(key):
            errs += _validate_subject(spec[key], f"spec.{key}")
    for key in ("description", "purpose"):
        if key in spec and spec[key] is not None and spec[key] == "":
            errs.append(errors.required(f"spec.{key}", f"must provide a {key} when key is present"))
    return errs


def _validate_update(new: dict, old: dict) -> list[FieldError]:
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errs = []
    for key in ("createdBy", "namespace"):
        if old_spec.get(key) is not None and spec.get(key) != old_spec[key]:
            errs.append(errors.invalid_value(f"spec.{key}", spec.get(key), "field is immutable"))
    if old_spec.get("owner") and not spec.get("owner"):
        # Go prints a nil value as the string "null".
        errs.append(errors.invalid_value("spec.owner", "null", "owner cannot be reset"))
    return errs


def _member_id(member: dict) -> tuple[str, str, str, str] | None:
    group, kind, name, ns = (member.get(k, "") for k in SUBJECT_KEYS)
    if kind == "User" and name.startswith(SA_PREFIX):
        parts = name.split(":")
        if len(parts) < 4:
            return None
        group, kind, ns, name = "", "ServiceAccount", parts[2], parts[3]
    return group, kind, ns, name


def _validate_subject(subject: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    name, kind = subject.get("name", ""), subject.get("kind", "")
    group, ns = subject.get("apiGroup", ""), subject.get("namespace", "")
    if not name:
        errs.append(errors.required(f"{path}.name"))
    if kind == "ServiceAccount":
        if name:
            errs += [errors.invalid_value(f"{path}.name", name, m) for m in is_dns1123_subdomain(name)]
        if group:
            errs.append(errors.not_supported(f"{path}.apiGroup", group, [""]))
        if not ns:
            errs.append(errors.required(f"{path}.namespace"))
        else:
            errs += [errors.invalid_value(f"{path}.namespace", ns, m) for m in is_dns1123_label(ns)]
    elif kind in ("User", "Group"):
        if group != RBAC_GROUP:
            errs.append(errors.not_supported(f"{path}.apiGroup", group, [RBAC_GROUP]))
        if ns:
            errs.append(errors.forbidden(f"{path}.namespace", "must not be set when kind is User or Group"))
    else:
        errs.append(errors.not_supported(f"{path}.kind", kind, ["ServiceAccount", "User", "Group"]))
    return errs


__all__ = ["DeletionConfirmation", "ProjectRules", "admit_project", "plugins"]
