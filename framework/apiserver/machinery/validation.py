"""ObjectMeta validation, the pass every kind gets, with kube-apiserver 1.32's rules and message texts.

Rules and texts follow ``k8s.io/apimachinery/pkg/util/validation`` and
``pkg/api/validation/objectmeta.go``; the name rules themselves are :mod:`framework.meta.validation`'s.
Every validator is pure: it takes JSON-shaped dicts and returns a list of :class:`FieldError`; the
caller turns a non-empty list into ``422 Invalid`` (spec 5-3). A kind's own rules live in its strategy
(``registry/<group>/<kind>.py``, the ``validate`` hook).

The caller runs :func:`validate_object_meta` (create) or :func:`validate_object_meta_update` (update)
with the kind's name rule next to the kind's ``validate`` hook. Upstream's generic registry runs the
kind's own validation first and the common metadata pass (path-segment name rule) only if that passed;
Events rely on this, because core/v1 Events do not validate their metadata in the kind strategy at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from framework.apiserver.encoding.gorender import (
    go_bool_ptr,
    go_invalid,
    go_str_field,
    go_struct,
    go_time_string,
)
from framework.apiserver.machinery.errors import (
    FieldError,
    forbidden,
    go_value,
    invalid_value,
    required,
    too_long,
)
from framework.meta.labels import validate_labels
from framework.meta.validation import (
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_path_segment_name,
    is_path_segment_prefix,
    is_qualified_name,
)

FIELD_IMMUTABLE = "field is immutable"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def _go_owner_reference(ref: dict) -> str:
    return go_struct(
        "v1.OwnerReference",
        [
            ("APIVersion", go_str_field(ref, "apiVersion")),
            ("Kind", go_str_field(ref, "kind")),
            ("Name", go_str_field(ref, "name")),
            ("UID", go_str_field(ref, "uid")),
            ("Controller", go_bool_ptr(ref.get("controller"))),
            ("BlockOwnerDeletion", go_bool_ptr(ref.get("blockOwnerDeletion"))),
        ],
    )


# --- name rules (the rules themselves are framework.meta.validation's) ---------------------------------


def _mask_trailing_dash(name: str) -> str:
    """Upstream's ``maskTrailingDash`` (generateName prefixes may end in ``-``), bug included."""
    return name[:-2] + "a" if name.endswith("-") else name


_NAME_RULES = {
    "subdomain": (is_dns1123_subdomain, lambda p: is_dns1123_subdomain(_mask_trailing_dash(p))),
    "label": (is_dns1123_label, lambda p: is_dns1123_label(_mask_trailing_dash(p))),
    "dns1035": (is_dns1035_label, lambda p: is_dns1035_label(_mask_trailing_dash(p))),  # Service
    "path": (is_path_segment_name, is_path_segment_prefix),
}


# --- metadata ----------------------------------------------------------------------------------------


def validate_annotations(annotations: dict | None, field: str) -> list[FieldError]:
    """``ValidateAnnotations``: keys like label keys (case-insensitive), ≤256 KiB in total."""
    errs: list[FieldError] = []
    total = 0
    for key, value in (annotations or {}).items():
        errs.extend(invalid_value(field, key, m) for m in is_qualified_name(key.lower()))
        total += len(key.encode()) + len(str(value or "").encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(field, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def _api_version_has_version(api_version: str) -> bool:
    """Whether ``schema.ParseGroupVersion`` yields a non-empty version."""
    if api_version in ("", "/"):
        return False
    parts = api_version.split("/")
    if len(parts) == 1:
        return True
    return len(parts) == 2 and parts[1] != ""


def validate_owner_references(refs: list | None, field: str) -> list[FieldError]:
    """``ValidateOwnerReferences`` (spec 6-8): required fields, core Events banned, one controller."""
    errs: list[FieldError] = []
    refs = refs or []
    first_controller = ""
    for ref in refs:
        api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
        if not _api_version_has_version(api_version):
            errs.append(invalid_value(f"{field}.apiVersion", api_version, "version must not be empty"))
        for key in ("kind", "name", "uid"):
            if not ref.get(key):
                errs.append(invalid_value(f"{field}.{key}", str(ref.get(key) or ""), "must not be empty"))
        if api_version == "v1" and kind == "Event":
            errs.append(
                go_invalid(
                    field, _go_owner_reference(ref), "/v1, Kind=Event is disallowed from being an owner"
                )
            )
        if ref.get("controller") is True:
            current = f"{kind}/{ref.get('name') or ''}"
            if first_controller:
                rendered = "[]v1.OwnerReference{" + ", ".join(_go_owner_reference(r) for r in refs) + "}"
                errs.append(
                    go_invalid(
                        field,
                        rendered,
                        "Only one reference can have Controller set to true. "
                        f'Found "true" in references for {first_controller} and {current}',
                    )
                )
            else:
                first_controller = current
    return errs


def validate_finalizers(finalizers: list | None, field: str) -> list[FieldError]:
    """``ValidateFinalizers``: qualified names; ``orphan`` and ``foregroundDeletion`` exclude each other.

    Upstream additionally *warns* about names without a domain; warnings are not produced here.
    """
    finalizers = finalizers or []
    errs = [invalid_value(field, f, m) for f in finalizers for m in is_qualified_name(f)]
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(
            invalid_value(field, finalizers, "finalizer orphan and foregroundDeletion cannot be both set")
        )
    return errs


def validate_object_meta(
    meta: Mapping[str, Any], *, namespaced: bool, name_rule: str, generate_name_used: bool
) -> list[FieldError]:
    """``ValidateObjectMeta`` for a create, after name generation.

    ``name_rule`` is ``"subdomain"`` (most kinds), ``"label"`` (Namespace) or ``"path"`` (RBAC,
    and the generic pass every kind gets). ``generate_name_used`` makes ``metadata.generateName``
    checked as a name prefix too; upstream does that whenever generateName is set, so a bad prefix
    is reported on both ``generateName`` and the generated ``name``.
    """
    errs: list[FieldError] = []
    full_rule, prefix_rule = _NAME_RULES[name_rule]
    generate_name = meta.get("generateName") or ""
    if generate_name_used and generate_name:
        errs.extend(
            invalid_value("metadata.generateName", generate_name, m) for m in prefix_rule(generate_name)
        )
    name = meta.get("name") or ""
    if not name:
        errs.append(required("metadata.name", "name or generateName is required"))
    else:
        errs.extend(invalid_value("metadata.name", name, m) for m in full_rule(name))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            errs.append(required("metadata.namespace"))
        else:
            errs.extend(
                invalid_value("metadata.namespace", namespace, m) for m in is_dns1123_label(namespace)
            )
    elif namespace:
        errs.append(forbidden("metadata.namespace", "not allowed on this type"))
    errs.extend(validate_labels(meta.get("labels"), "metadata.labels"))
    errs.extend(validate_annotations(meta.get("annotations"), "metadata.annotations"))
    errs.extend(validate_owner_references(meta.get("ownerReferences"), "metadata.ownerReferences"))
    errs.extend(validate_finalizers(meta.get("finalizers"), "metadata.finalizers"))
    return errs


def validate_object_meta_update(new_meta: Mapping[str, Any], old_meta: Mapping[str, Any]) -> list[FieldError]:
    """The immutability part of ``ValidateObjectMetaUpdate``.

    Checks ``name``, ``namespace``, ``uid``, ``creationTimestamp``, ``deletionTimestamp`` (which a
    client may not set, spec 6-5) and ``deletionGracePeriodSeconds`` and, while the old object is
    being deleted, that no finalizer is added (spec 11-5). The caller copies server-owned fields
    first (6-1, 6-2, 6-5), so only genuine client changes reach these checks.
    """
    errs: list[FieldError] = []
    if old_meta.get("deletionTimestamp"):
        old_finalizers = set(old_meta.get("finalizers") or [])
        added = sorted(set(new_meta.get("finalizers") or []) - old_finalizers)
        if added:
            errs.append(
                forbidden(
                    "metadata.finalizers",
                    "no new finalizers can be added if the object is being deleted, "
                    f"found new finalizers {go_value(added)}",
                )
            )
    for key in ("name", "namespace", "uid"):
        new, old = new_meta.get(key) or "", old_meta.get(key) or ""
        if new != old:
            errs.append(invalid_value(f"metadata.{key}", new, FIELD_IMMUTABLE))
    for key in ("creationTimestamp", "deletionTimestamp"):
        new, old = new_meta.get(key), old_meta.get(key)
        if (new or None) != (old or None):
            # metav1.Time prints through its String() method; a nil *Time prints as null.
            rendered = "null" if not new and key == "deletionTimestamp" else go_time_string(new)
            errs.append(go_invalid(f"metadata.{key}", rendered, FIELD_IMMUTABLE))
    grace = new_meta.get("deletionGracePeriodSeconds")
    if grace != old_meta.get("deletionGracePeriodSeconds"):
        errs.append(invalid_value("metadata.deletionGracePeriodSeconds", grace, FIELD_IMMUTABLE))
    return errs
