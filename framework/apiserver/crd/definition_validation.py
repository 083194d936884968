"""Validation of CustomResourceDefinition objects (16-2): ``ValidateCustomResourceDefinition[Update]`` of
apiextensions-apiserver's ``pkg/apis/apiextensions/validation``, with upstream's messages (names,
versions, printer columns, subresources, selectable fields, conversion, stored versions, API approval
and the schema's root).
"""

from __future__ import annotations

import re
from typing import Any

from framework.apiserver.crd.conversion_validation import validate_conversion
from framework.apiserver.crd.definition import version_entries
from framework.apiserver.crd.structural import validate_structural
from framework.apiserver.crd.values import EMBEDDED, INT_OR_STRING, PRESERVE, has_rules
from framework.apiserver.machinery.errors import (
    FieldError,
    duplicate,
    forbidden,
    invalid_value,
    not_supported,
    required,
)
from framework.apiserver.machinery.jsonvalues import as_dict, as_list
from framework.meta.field import too_many
from framework.meta.validation import is_dns1035_label, is_dns1123_subdomain

_SCOPES = ["Cluster", "Namespaced"]
_COLUMN_TYPES = "boolean,date,integer,number,string"
_COLUMN_FORMATS = "byte,date,date-time,double,float,int32,int64,password"
_APPROVAL = "api-approved.kubernetes.io"
_MAX_SELECTABLE_FIELDS = 8


def _versions_value(versions: list) -> Any:
    # Upstream prints the Go struct slice (with pointers); JSON is the readable stand-in. A tuple keeps
    # errors.go_value from rendering an empty list as ``[]string{}``.
    return versions if versions else ()


def _identical(versions: list[dict], key: str) -> bool:
    # The v1 -> internal conversion moves per-version fields to spec when all versions agree, and
    # upstream then reports errors under spec.validation / spec.subresources / spec.additionalPrinterColumns.
    # apiequality.Semantic treats nil and empty slices alike (printer columns), not nil and {} pointers.
    def norm(v: dict) -> Any:
        return (v.get(key) or None) if key == "additionalPrinterColumns" else v.get(key)

    return all(norm(v) == norm(versions[0]) for v in versions)


def validate_crd(crd: dict, old: dict | None = None) -> list[FieldError]:
    """Validate a (defaulted) CRD on create, or on update when ``old`` is given (16-1)."""
    spec = as_dict(crd.get("spec"))
    errs: list[FieldError] = []
    if old is None:
        errs += _validate_crd_name(crd, spec)
    errs += _validate_crd_spec(spec, old)
    if old is not None:
        old_spec = as_dict(old.get("spec"))
        if _is_established(old):
            errs += _immutable(spec.get("scope"), old_spec.get("scope"), "spec.scope")
            errs += _immutable(
                as_dict(spec.get("names")).get("kind"),
                as_dict(old_spec.get("names")).get("kind"),
                "spec.names.kind",
            )
        errs += _immutable(spec.get("group"), old_spec.get("group"), "spec.group")
        errs += _immutable(
            as_dict(spec.get("names")).get("plural"),
            as_dict(old_spec.get("names")).get("plural"),
            "spec.names.plural",
        )
    errs += _validate_stored_versions(crd)
    errs += _validate_api_approval(crd, old)
    if spec.get("preserveUnknownFields") is True and not (
        old is not None and as_dict(old.get("spec")).get("preserveUnknownFields") is True
    ):
        errs.append(
            invalid_value(
                "spec.preserveUnknownFields",
                True,
                "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in"
                " spec.versions[*].schema instead",
            )
        )
    return errs


def _is_established(crd: dict) -> bool:
    return any(
        as_dict(c).get("type") == "Established" and as_dict(c).get("status") == "True"
        for c in as_list(as_dict(crd.get("status")).get("conditions"))
    )


def _immutable(new: Any, old: Any, path: str) -> list[FieldError]:
    return [] if new == old else [invalid_value(path, new, "field is immutable")]


def _validate_crd_name(crd: dict, spec: dict) -> list[FieldError]:
    # The DNS-subdomain shape of the name is the server's generic metadata check; this is the CRD rule.
    meta = as_dict(crd.get("metadata"))
    want = f"{as_dict(spec.get('names')).get('plural') or ''}.{spec.get('group') or ''}"
    msg = 'must be spec.names.plural+"."+spec.group'
    errs = []
    for key in ("generateName", "name"):
        value = meta.get(key)
        if isinstance(value, str) and value and value != want:
            errs.append(invalid_value(f"metadata.{key}", value, msg))
    return errs


def _validate_crd_spec(spec: dict, old: dict | None) -> list[FieldError]:
    errs: list[FieldError] = []
    group = spec.get("group")
    if not group:
        errs.append(required("spec.group"))
    elif not isinstance(group, str):
        errs.append(invalid_value("spec.group", group, "must be a string"))
    elif msgs := is_dns1123_subdomain(group):
        errs.append(invalid_value("spec.group", group, ",".join(msgs)))
    elif "." not in group:
        errs.append(invalid_value("spec.group", group, "should be a domain with at least one dot"))

    scope = spec.get("scope")
    if not scope:
        errs.append(required("spec.scope"))
    elif scope not in _SCOPES:
        errs.append(not_supported("spec.scope", scope, _SCOPES))

    versions = [as_dict(v) for v in as_list(spec.get("versions"))]
    hoist_schema = bool(versions) and _identical(versions, "schema")
    hoist_sub = bool(versions) and _identical(versions, "subresources")
    hoist_cols = bool(versions) and _identical(versions, "additionalPrinterColumns")

    def has_schema(v: dict) -> bool:
        return isinstance(as_dict(v.get("schema")).get("openAPIV3Schema"), dict)

    # Updates keep accepting CRDs that were stored without schemas on some version (upstream ratchet).
    old_versions = (
        [as_dict(v) for v in as_list(as_dict(as_dict(old).get("spec")).get("versions"))] if old else []
    )
    if old is None or all(has_schema(v) for v in old_versions):
        for i, v in enumerate(versions):
            if not has_schema(v):
                errs.append(required(f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required"))
    else:
        for i, v in enumerate(versions):
            if v.get("served") is True and not has_schema(v):
                errs.append(
                    required(
                        f"spec.versions[{i}].schema.openAPIV3Schema",
                        "because otherwise all fields are pruned",
                    )
                )
    if spec.get("preserveUnknownFields") is True and any(
        _schema_has_default(v.get("schema")) for v in versions
    ):
        errs.append(
            invalid_value(
                "spec.preserveUnknownFields", True, "must be false in order to use defaults in the schema"
            )
        )

    names_seen: set[str] = set()
    unique = True
    storage_count = 0
    for i, v in enumerate(versions):
        path = f"spec.versions[{i}]"
        storage_count += v.get("storage") is True
        raw_name = v.get("name")
        name = raw_name if isinstance(raw_name, str) else ""
        unique = unique and name not in names_seen
        names_seen.add(name)
        if msgs := is_dns1035_label(name):
            errs.append(invalid_value(f"{path}.name", name, ",".join(msgs)))
        errs += _validate_deprecation(v, path)
        if not hoist_schema:
            status = as_dict(v.get("subresources")).get("status") is not None
            errs += _validate_crd_schema(v.get("schema"), status, f"{path}.schema")
        if not hoist_sub:
            errs += _validate_subresources(v.get("subresources"), f"{path}.subresources")
        if not hoist_cols:
            for j, col in enumerate(as_list(v.get("additionalPrinterColumns"))):
                errs += _validate_column(as_dict(col), f"{path}.additionalPrinterColumns[{j}]")
        errs += _validate_selectable_fields(v, path)
    if not unique:
        errs.append(
            invalid_value("spec.versions", _versions_value(versions), "must contain unique version names")
        )
    if storage_count != 1:
        errs.append(
            invalid_value(
                "spec.versions",
                _versions_value(versions),
                "must have exactly one version marked as storage version",
            )
        )
    # The internal type carries spec.version = versions[0].name, validated once more.
    first = versions[0].get("name") if versions else None
    if isinstance(first, str) and first and (msgs := is_dns1035_label(first)):
        errs.append(invalid_value("spec.version", first, ",".join(msgs)))

    names = as_dict(spec.get("names"))
    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            errs.append(required(f"spec.names.{key}"))
    errs += _validate_names(names, "spec.names")

    if hoist_schema:
        any_status = any(as_dict(v.get("subresources")).get("status") is not None for v in versions)
        errs += _validate_crd_schema(versions[0].get("schema"), any_status, "spec.validation")
    if hoist_sub:
        errs += _validate_subresources(versions[0].get("subresources"), "spec.subresources")
    if hoist_cols:
        for j, col in enumerate(as_list(versions[0].get("additionalPrinterColumns"))):
            errs += _validate_column(as_dict(col), f"spec.additionalPrinterColumns[{j}]")
    errs += validate_conversion(spec)
    return errs


def _validate_deprecation(v: dict, path: str) -> list[FieldError]:
    warning = v.get("deprecationWarning")
    if warning is None:
        return []
    if v.get("deprecated") is not True:
        return [
            invalid_value(f"{path}.deprecationWarning", warning, "can only be set for deprecated versions")
        ]
    errs = []
    if isinstance(warning, str) and len(warning) > 256:
        errs.append(invalid_value(f"{path}.deprecationWarning", warning, "must be <= 256 characters long"))
    if warning == "":
        errs.append(invalid_value(f"{path}.deprecationWarning", warning, "must not be an empty string"))
    return errs


def _validate_names(names: dict, path: str) -> list[FieldError]:
    errs = []
    for key, mixed in (("plural", False), ("singular", False), ("kind", True), ("listKind", True)):
        value = names.get(key)
        if not isinstance(value, str) or not value:
            continue
        if msgs := is_dns1035_label(value.lower() if mixed else value):
            detail = ",".join(msgs)
            errs.append(
                invalid_value(
                    f"{path}.{key}", value, "may have mixed case, but should otherwise match: " + detail
                )
                if mixed
                else invalid_value(f"{path}.{key}", value, detail)
            )
    for i, short in enumerate(as_list(names.get("shortNames"))):
        if msgs := is_dns1035_label(short if isinstance(short, str) else ""):
            errs.append(invalid_value(f"{path}.shortNames[{i}]", short, ",".join(msgs)))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.append(
            invalid_value(f"{path}.listKind", names["listKind"], "kind and listKind may not be the same")
        )
    for i, cat in enumerate(as_list(names.get("categories"))):
        if msgs := is_dns1035_label(cat if isinstance(cat, str) else ""):
            errs.append(invalid_value(f"{path}.categories[{i}]", cat, ",".join(msgs)))
    return errs


def _simple_json_path(value: str, path: str) -> list[FieldError]:
    if not value:
        return [invalid_value(path, value, "must not be empty")]
    if not value.startswith("."):
        return [invalid_value(path, value, "must be a simple json path starting with .")]
    return []


def _validate_column(col: dict, path: str) -> list[FieldError]:
    errs = []
    if not col.get("name"):
        errs.append(required(f"{path}.name"))
    ctype = col.get("type")
    if not ctype:
        errs.append(required(f"{path}.type", f"must be one of {_COLUMN_TYPES}"))
    elif ctype not in _COLUMN_TYPES.split(","):
        errs.append(invalid_value(f"{path}.type", ctype, f"must be one of {_COLUMN_TYPES}"))
    fmt = col.get("format")
    if fmt and fmt not in _COLUMN_FORMATS.split(","):
        errs.append(invalid_value(f"{path}.format", fmt, f"must be one of {_COLUMN_FORMATS}"))
    json_path = col.get("jsonPath")
    # The internal type's field is JSONPath, and upstream reports that name.
    if not json_path:
        errs.append(required(f"{path}.JSONPath"))
    elif isinstance(json_path, str):
        errs += _simple_json_path(json_path, f"{path}.JSONPath")
    return errs


def _validate_subresources(sub: Any, path: str) -> list[FieldError]:
    if not isinstance(sub, dict):
        return []
    errs = []
    status = sub.get("status")
    if status is not None and status != {}:
        errs.append(invalid_value(f"{path}.status", status, "must be an empty object"))
    scale = sub.get("scale")
    if isinstance(scale, dict):
        for key, prefix, where in (
            ("specReplicasPath", ".spec.", "should be a json path under .spec"),
            ("statusReplicasPath", ".status.", "should be a json path under .status"),
        ):
            value = scale.get(key)
            if not value:
                errs.append(required(f"{path}.scale.{key}"))
            elif e := _simple_json_path(str(value), f"{path}.scale.{key}"):
                errs += e
            elif not str(value).startswith(prefix):
                errs.append(invalid_value(f"{path}.scale.{key}", value, where))
        selector = scale.get("labelSelectorPath")
        if isinstance(selector, str) and selector:
            if e := _simple_json_path(selector, f"{path}.scale.labelSelectorPath"):
                errs += e
            elif not selector.startswith((".spec.", ".status.")):
                errs.append(
                    invalid_value(
                        f"{path}.scale.labelSelectorPath",
                        selector,
                        "should be a json path under either .spec or .status",
                    )
                )
    return errs


def _validate_selectable_fields(v: dict, path: str) -> list[FieldError]:
    fields = as_list(v.get("selectableFields"))
    if not fields:
        return []
    schema = as_dict(v.get("schema")).get("openAPIV3Schema")
    if not isinstance(schema, dict):
        return [
            invalid_value(
                f"{path}.selectableFields",
                "",
                "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
            )
        ]
    errs = []
    seen: set[str] = set()
    for i, f in enumerate(fields):
        fpath = f"{path}.selectableFields[{i}].jsonPath"
        json_path = as_dict(f).get("jsonPath")
        if not json_path or not isinstance(json_path, str):
            errs.append(required(fpath))
            continue
        node: Any = schema
        parts = json_path[1:].split(".") if json_path.startswith(".") else None
        for part in parts or [""]:
            node = as_dict(as_dict(node).get("properties")).get(part) if part else None
            if node is None:
                break
        if node is None:
            errs.append(
                invalid_value(fpath, json_path, "is an invalid path: does not refer to a valid field")
            )
            continue
        if parts and parts[0] == "metadata":
            errs.append(invalid_value(fpath, json_path, "must not point to fields in metadata"))
        if as_dict(node).get("type") not in ("string", "boolean", "integer"):
            errs.append(
                invalid_value(
                    fpath,
                    json_path,
                    "must point to a field of type string, boolean or integer. Enum string fields and strings"
                    " with formats are allowed.",
                )
            )
        if json_path in seen:
            errs.append(duplicate(fpath, json_path))
        seen.add(json_path)
    if len(seen) > _MAX_SELECTABLE_FIELDS:
        errs.append(too_many(f"{path}.selectableFields", len(seen), _MAX_SELECTABLE_FIELDS))
    return errs


def _validate_stored_versions(crd: dict) -> list[FieldError]:
    # The server owns status and may leave storedVersions empty until establishment, so only the
    # "still stored but removed from spec.versions" rule (16-10) is enforced here.
    stored = as_list(as_dict(crd.get("status")).get("storedVersions"))
    names = {v.get("name") for v in version_entries(crd)}
    # A status write (a storage migration) may drop old versions, never the storage version.
    missing = [
        invalid_value("status.storedVersions", v, "must have the storage version " + str(v.get("name")))
        for v in version_entries(crd)
        if stored and v.get("storage") is True and v.get("name") not in stored
    ]
    return missing + [
        invalid_value(
            f"status.storedVersions[{i}]",
            v,
            f"missing from spec.versions; {v} was previously a storage version, and must remain in"
            f" spec.versions until a storage migration ensures no data remains persisted in {v} and removes"
            f" {v} from status.storedVersions",
        )
        for i, v in enumerate(stored)
        if v not in names
    ]


def _approval_state(annotations: dict) -> tuple[str, str]:
    value = annotations.get(_APPROVAL)
    see = "see https://github.com/kubernetes/enhancements/pull/1111"
    if not value:
        return "missing", f'protected groups must have approval annotation "{_APPROVAL}", {see}'
    if isinstance(value, str) and value.startswith("unapproved"):
        return "bypassed", ""
    # url.ParseRequestURI accepts an absolute URI or an absolute path.
    if isinstance(value, str) and re.fullmatch(r"[a-zA-Z][a-zA-Z0-9+.-]*:\S+|/\S*", value):
        return "approved", ""
    return "invalid", (
        f'protected groups must have approval annotation "{_APPROVAL}" with either a URL or a reason'
        f' starting with "unapproved", {see}'
    )


def _validate_api_approval(crd: dict, old: dict | None) -> list[FieldError]:
    group = as_dict(crd.get("spec")).get("group")
    if not isinstance(group, str) or not (
        group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))
    ):
        return []
    annotations = as_dict(as_dict(crd.get("metadata")).get("annotations"))
    state, reason = _approval_state(annotations)
    if (
        old is not None
        and _approval_state(as_dict(as_dict(old.get("metadata")).get("annotations")))[0] == state
    ):
        return []
    path = f"metadata.annotations[{_APPROVAL}]"
    if state == "missing":
        return [required(path, reason)]
    if state == "invalid":
        return [invalid_value(path, annotations.get(_APPROVAL), reason)]
    return []


# JSONSchemaProps fields in Go struct order: with the status subresource, upstream walks the root
# schema in this order and reports only the first disallowed field.
_SCHEMA_FIELD_ORDER = (
    "id", "$schema", "$ref", "description", "type", "format", "title", "default", "maximum",
    "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems",
    "minItems", "uniqueItems", "multipleOf", "enum", "maxProperties", "minProperties", "required", "items",
    "allOf", "oneOf", "anyOf", "not", "properties", "additionalProperties", "patternProperties",
    "dependencies", "additionalItems", "definitions", "externalDocs", "example", "nullable", PRESERVE,
    EMBEDDED, INT_OR_STRING, "x-kubernetes-list-map-keys", "x-kubernetes-list-type", "x-kubernetes-map-type",
    "x-kubernetes-validations",
)  # fmt: skip
# Root fields allowed with the status subresource: JSON name -> Go field name used in the message.
_ROOT_ALLOWED_WITH_STATUS = {
    "description": "Description", "type": "Type", "format": "Format", "title": "Title", "maximum": "Maximum",
    "exclusiveMaximum": "ExclusiveMaximum", "minimum": "Minimum", "exclusiveMinimum": "ExclusiveMinimum",
    "maxLength": "MaxLength", "minLength": "MinLength", "pattern": "Pattern", "maxItems": "MaxItems",
    "minItems": "MinItems", "uniqueItems": "UniqueItems", "multipleOf": "MultipleOf", "required": "Required",
    "items": "Items", "properties": "Properties", "externalDocs": "ExternalDocs", "example": "Example",
    PRESERVE: "XPreserveUnknownFields", "x-kubernetes-validations": "XValidations",
}  # fmt: skip


def _validate_crd_schema(validation: Any, status_enabled: bool, path: str) -> list[FieldError]:
    schema = as_dict(validation).get("openAPIV3Schema")
    if not isinstance(schema, dict):
        return []
    root = f"{path}.openAPIV3Schema"
    errs: list[FieldError] = []
    if status_enabled:
        for key in _SCHEMA_FIELD_ORDER:
            if key not in schema or schema[key] in (None, False, "", 0, [], {}):
                continue
            if key == "type":
                if schema["type"] != "object":
                    errs.append(
                        invalid_value(
                            f"{root}.type",
                            schema["type"],
                            'only "object" is allowed as the type at the root of the schema if the status'
                            " subresource is enabled",
                        )
                    )
                    break
                continue
            if key not in _ROOT_ALLOWED_WITH_STATUS:
                allowed = " ".join(_ROOT_ALLOWED_WITH_STATUS.values())
                errs.append(
                    invalid_value(
                        root,
                        schema,
                        f"only [{allowed}] fields are allowed at the root of the schema if the status"
                        " subresource is enabled",
                    )
                )
                break
    if schema.get("nullable") is True:
        errs.append(forbidden(f"{root}.nullable", "nullable cannot be true at the root"))
    errs += validate_structural(schema, root)
    if not errs and has_rules(schema):
        # Rules are compiled only against a valid schema (their types come from it); CEL is loaded
        # by the first schema with rules.
        from framework.apiserver.crd.cel_definition import validate_rules

        errs += validate_rules(schema, root)
    return errs


def _schema_has_default(validation: Any) -> bool:
    def walk(s: Any) -> bool:
        if not isinstance(s, dict):
            return False
        if s.get("default") is not None:
            return True
        children = [*as_dict(s.get("properties")).values(), s.get("items"), s.get("additionalProperties")]
        children += [
            s.get("not"),
            *as_list(s.get("allOf")),
            *as_list(s.get("anyOf")),
            *as_list(s.get("oneOf")),
        ]
        return any(walk(c) for c in children)

    return walk(as_dict(validation).get("openAPIV3Schema"))
