"""CustomResourceDefinitions and structural schemas (spec §16): pure functions on plain JSON dicts.

Four groups of functions, each mirroring one piece of kube-apiserver 1.32:

* CRD objects (``apiextensions.k8s.io/v1``): :func:`default_crd` (``SetDefaults_*``) and
  :func:`validate_crd` (``ValidateCustomResourceDefinition[Update]`` in apiextensions-apiserver
  ``pkg/apis/apiextensions/validation``), plus small accessors used by the router.
* :func:`validate_structural`: the structural-schema rules (``pkg/apiserver/schema/validation.go``),
  default-value checks and the OpenAPI restrictions CRDs impose on their schemas.
* Custom resources against a schema: :func:`apply_defaults` (``schema/defaulting``), :func:`prune`
  (``schema/pruning``) and :func:`validate_object` (kube-openapi's ``validate`` package as wrapped by
  ``apiserver/validation``, plus the embedded-resource checks of ``schema/objectmeta``).

Error texts are upstream's, including its quirks (a type error reports the JSON type of the bad value,
not the value; ``maximum`` is truncated to an integer when the value is an integer).

Documented deviations (spec §24): CEL ``x-kubernetes-validations`` are ignored; value validations
inside ``anyOf``/``allOf``/``oneOf``/``not`` are not enforced on objects (only checked for
structurality); of the string formats only ``date-time`` and ``date`` are checked; ``metadata`` of
embedded resources is not validated; list-type ``set``/``map`` uniqueness is not enforced; Go regexp
(RE2) patterns are run with Python's ``re`` (ASCII classes).
"""

from __future__ import annotations

import copy
import functools
import math
import re
from typing import Any

import orjson

from framework.meta.field import go_float, too_long, too_many
from framework.meta.validation import is_dns1035_label, is_dns1123_subdomain

from .errors import (
    FieldError,
    duplicate,
    forbidden,
    invalid_value,
    not_supported,
    required,
    type_invalid,
)

PRESERVE = "x-kubernetes-preserve-unknown-fields"
EMBEDDED = "x-kubernetes-embedded-resource"
INT_OR_STRING = "x-kubernetes-int-or-string"
_META_FIELDS = ("apiVersion", "kind", "metadata")


def _dict(x: Any) -> dict:
    return x if isinstance(x, dict) else {}


def _list(x: Any) -> list:
    return x if isinstance(x, list) else []


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --- Go formatting ------------------------------------------------------------------------------


def _json_text(v: Any) -> str:
    """``json.Marshal`` of a decoded JSON value (enum values are float64 in Go, so 1.0 is ``1``)."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    return orjson.dumps(v, option=orjson.OPT_SORT_KEYS).decode()


def _is_json_integer(f: float) -> bool:
    """``swag.IsFloat64AJSONInteger``: integral, or positive and within 1e-9 relative error of one."""
    if not math.isfinite(f) or abs(f) > 2**53 - 1:
        return False
    if f.is_integer():
        return True
    g = math.trunc(f)
    return f > 0 and g != 0 and (f - g) / (f + g) < 1e-9


# --- CRD accessors --------------------------------------------------------------------------------


def _versions(crd: dict) -> list[dict]:
    return [v for v in _list(_dict(crd.get("spec")).get("versions")) if isinstance(v, dict)]


def served_versions(crd: dict) -> list[str]:
    """Names of the versions with ``served: true``, in spec order (16-4)."""
    return [v["name"] for v in _versions(crd) if v.get("served") is True and isinstance(v.get("name"), str)]


def storage_version(crd: dict) -> str:
    """Name of the version with ``storage: true``; a validated CRD has exactly one."""
    for v in _versions(crd):
        if v.get("storage") is True:
            return v["name"]
    raise ValueError(
        f"CustomResourceDefinition {_dict(crd.get('metadata')).get('name')!r} has no storage version"
    )


def version_entry(crd: dict, version: str) -> dict | None:
    """The ``spec.versions[]`` entry called ``version``, if any."""
    return next((v for v in _versions(crd) if v.get("name") == version), None)


def has_status_subresource(crd: dict, version: str) -> bool:
    """Whether ``version`` enables the ``/status`` subresource (``subresources.status`` set)."""
    entry = version_entry(crd, version) or {}
    return _dict(entry.get("subresources")).get("status") is not None


def selectable_fields(crd: dict, version: str) -> list[str]:
    """Field-selector paths of ``version``'s ``selectableFields``, without the leading dot."""
    entry = version_entry(crd, version) or {}
    out = []
    for f in _list(entry.get("selectableFields")):
        path = _dict(f).get("jsonPath")
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
    service = _dict(_dict(_dict(spec.get("conversion")).get("webhook")).get("clientConfig")).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


# --- CRD validation ---------------------------------------------------------------------------------

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
    spec = _dict(crd.get("spec"))
    errs: list[FieldError] = []
    if old is None:
        errs += _validate_crd_name(crd, spec)
    errs += _validate_crd_spec(spec, old)
    if old is not None:
        old_spec = _dict(old.get("spec"))
        if _is_established(old):
            errs += _immutable(spec.get("scope"), old_spec.get("scope"), "spec.scope")
            errs += _immutable(
                _dict(spec.get("names")).get("kind"),
                _dict(old_spec.get("names")).get("kind"),
                "spec.names.kind",
            )
        errs += _immutable(spec.get("group"), old_spec.get("group"), "spec.group")
        errs += _immutable(
            _dict(spec.get("names")).get("plural"),
            _dict(old_spec.get("names")).get("plural"),
            "spec.names.plural",
        )
    errs += _validate_stored_versions(crd)
    errs += _validate_api_approval(crd, old)
    if spec.get("preserveUnknownFields") is True and not (
        old is not None and _dict(old.get("spec")).get("preserveUnknownFields") is True
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
        _dict(c).get("type") == "Established" and _dict(c).get("status") == "True"
        for c in _list(_dict(crd.get("status")).get("conditions"))
    )


def _immutable(new: Any, old: Any, path: str) -> list[FieldError]:
    return [] if new == old else [invalid_value(path, new, "field is immutable")]


def _validate_crd_name(crd: dict, spec: dict) -> list[FieldError]:
    # The DNS-subdomain shape of the name is the server's generic metadata check; this is the CRD rule.
    meta = _dict(crd.get("metadata"))
    want = f"{_dict(spec.get('names')).get('plural') or ''}.{spec.get('group') or ''}"
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

    versions = [_dict(v) for v in _list(spec.get("versions"))]
    hoist_schema = bool(versions) and _identical(versions, "schema")
    hoist_sub = bool(versions) and _identical(versions, "subresources")
    hoist_cols = bool(versions) and _identical(versions, "additionalPrinterColumns")

    def has_schema(v: dict) -> bool:
        return isinstance(_dict(v.get("schema")).get("openAPIV3Schema"), dict)

    # Updates keep accepting CRDs that were stored without schemas on some version (upstream ratchet).
    old_versions = [_dict(v) for v in _list(_dict(_dict(old).get("spec")).get("versions"))] if old else []
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
            status = _dict(v.get("subresources")).get("status") is not None
            errs += _validate_crd_schema(v.get("schema"), status, f"{path}.schema")
        if not hoist_sub:
            errs += _validate_subresources(v.get("subresources"), f"{path}.subresources")
        if not hoist_cols:
            for j, col in enumerate(_list(v.get("additionalPrinterColumns"))):
                errs += _validate_column(_dict(col), f"{path}.additionalPrinterColumns[{j}]")
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

    names = _dict(spec.get("names"))
    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            errs.append(required(f"spec.names.{key}"))
    errs += _validate_names(names, "spec.names")

    if hoist_schema:
        any_status = any(_dict(v.get("subresources")).get("status") is not None for v in versions)
        errs += _validate_crd_schema(versions[0].get("schema"), any_status, "spec.validation")
    if hoist_sub:
        errs += _validate_subresources(versions[0].get("subresources"), "spec.subresources")
    if hoist_cols:
        for j, col in enumerate(_list(versions[0].get("additionalPrinterColumns"))):
            errs += _validate_column(_dict(col), f"spec.additionalPrinterColumns[{j}]")
    errs += _validate_conversion(spec)
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
    for i, short in enumerate(_list(names.get("shortNames"))):
        if msgs := is_dns1035_label(short if isinstance(short, str) else ""):
            errs.append(invalid_value(f"{path}.shortNames[{i}]", short, ",".join(msgs)))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.append(
            invalid_value(f"{path}.listKind", names["listKind"], "kind and listKind may not be the same")
        )
    for i, cat in enumerate(_list(names.get("categories"))):
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
    fields = _list(v.get("selectableFields"))
    if not fields:
        return []
    schema = _dict(v.get("schema")).get("openAPIV3Schema")
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
        json_path = _dict(f).get("jsonPath")
        if not json_path or not isinstance(json_path, str):
            errs.append(required(fpath))
            continue
        node: Any = schema
        parts = json_path[1:].split(".") if json_path.startswith(".") else None
        for part in parts or [""]:
            node = _dict(_dict(node).get("properties")).get(part) if part else None
            if node is None:
                break
        if node is None:
            errs.append(
                invalid_value(fpath, json_path, "is an invalid path: does not refer to a valid field")
            )
            continue
        if parts and parts[0] == "metadata":
            errs.append(invalid_value(fpath, json_path, "must not point to fields in metadata"))
        if _dict(node).get("type") not in ("string", "boolean", "integer"):
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


def _validate_conversion(spec: dict) -> list[FieldError]:
    conversion = spec.get("conversion")
    if not isinstance(conversion, dict):
        return []
    errs = []
    strategy = conversion.get("strategy")
    if strategy not in (None, "None") and spec.get("preserveUnknownFields") is True:
        errs.append(
            invalid_value(
                "spec.conversion.strategy", strategy, "must be None if spec.preserveUnknownFields is true"
            )
        )
    if not strategy:
        errs.append(required("spec.conversion.strategy"))
    elif strategy not in ("None", "Webhook"):
        errs.append(not_supported("spec.conversion.strategy", strategy, ["None", "Webhook"]))
    webhook = _dict(conversion.get("webhook"))
    client = webhook.get("clientConfig")
    review = _list(webhook.get("conversionReviewVersions"))
    if strategy == "Webhook":
        if not isinstance(client, dict):
            errs.append(
                required("spec.conversion.webhookClientConfig", "required when strategy is set to Webhook")
            )
        elif (client.get("url") is None) == (client.get("service") is None):
            errs.append(
                required("spec.conversion.webhookClientConfig", "exactly one of url or service is required")
            )
        errs += _validate_review_versions(review)
    else:
        if client is not None:
            errs.append(
                forbidden(
                    "spec.conversion.webhookClientConfig",
                    "should not be set when strategy is not set to Webhook",
                )
            )
        if review:
            errs.append(
                forbidden(
                    "spec.conversion.conversionReviewVersions",
                    "should not be set when strategy is not set to Webhook",
                )
            )
    return errs


def _validate_review_versions(versions: list) -> list[FieldError]:
    path = "spec.conversion.conversionReviewVersions"
    if not versions:
        return [required(path)]
    errs = []
    seen: set[str] = set()
    for i, v in enumerate(versions):
        if v in seen:
            errs.append(invalid_value(f"{path}[{i}]", v, "duplicate version"))
            continue
        seen.add(v)
        for msg in is_dns1035_label(v if isinstance(v, str) else ""):
            errs.append(invalid_value(f"{path}[{i}]", v, msg))
    if not seen & {"v1", "v1beta1"}:
        errs.append(invalid_value(path, versions, "must include at least one of v1, v1beta1"))
    return errs


def _validate_stored_versions(crd: dict) -> list[FieldError]:
    # The server owns status and may leave storedVersions empty until establishment, so only the
    # "still stored but removed from spec.versions" rule (16-10) is enforced here.
    stored = _list(_dict(crd.get("status")).get("storedVersions"))
    names = {v.get("name") for v in _versions(crd)}
    return [
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
    group = _dict(crd.get("spec")).get("group")
    if not isinstance(group, str) or not (
        group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))
    ):
        return []
    annotations = _dict(_dict(crd.get("metadata")).get("annotations"))
    state, reason = _approval_state(annotations)
    if old is not None and _approval_state(_dict(_dict(old.get("metadata")).get("annotations")))[0] == state:
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
    schema = _dict(validation).get("openAPIV3Schema")
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
    return errs + validate_structural(schema, root)


def _schema_has_default(validation: Any) -> bool:
    def walk(s: Any) -> bool:
        if not isinstance(s, dict):
            return False
        if s.get("default") is not None:
            return True
        children = [*_dict(s.get("properties")).values(), s.get("items"), s.get("additionalProperties")]
        children += [s.get("not"), *_list(s.get("allOf")), *_list(s.get("anyOf")), *_list(s.get("oneOf"))]
        return any(walk(c) for c in children)

    return walk(_dict(validation).get("openAPIV3Schema"))


# --- structural schemas -------------------------------------------------------------------------

_ROOT, _ITEM, _FIELD = "root", "item", "field"
_OPENAPI_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
_JUNCTORS = ("allOf", "anyOf", "oneOf")
_INT_OR_STRING_ANYOF = [{"type": "integer"}, {"type": "string"}]


def validate_structural(schema: dict, path: str) -> list[FieldError]:
    """Check that ``schema`` (found at field path ``path``) is an acceptable structural CRD schema.

    Structural violations come first, sorted by message as upstream does; defaults are validated only
    when the schema is structural; the OpenAPI restrictions of CRD schemas follow.
    """
    errs: list[FieldError] = []
    _structural_invariants(schema, _ROOT, path, errs)
    _structural_completeness(schema, path, errs)
    errs.sort(key=lambda e: e.message())
    if not errs:
        _validate_defaults(schema, path, errs)
    _openapi_checks(schema, path, errs, is_root=True, in_meta=False, defaults_forbidden=None)
    return errs


def _type_of(s: dict) -> str:
    t = s.get("type")
    return t if isinstance(t, str) else ""


def _structural_invariants(s: Any, lvl: str, path: str, errs: list[FieldError]) -> None:
    s = _dict(s)
    stype = _type_of(s)
    if stype == "array" and s.get("items") is None:
        errs.append(required(f"{path}.items", "must be specified"))
    if isinstance(s.get("items"), dict):
        _structural_invariants(s["items"], _ITEM, f"{path}.items", errs)
    props = _dict(s.get("properties"))
    for k, v in props.items():
        _structural_invariants(v, _FIELD, f"{path}.properties[{k}]", errs)
    addl = s.get("additionalProperties")
    if addl is not None:
        if lvl == _ROOT:
            errs.append(forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(addl, dict):
            _structural_invariants(addl, _FIELD, f"{path}.additionalProperties", errs)
    if s.get(INT_OR_STRING) is True and s.get(PRESERVE) is True:
        errs.append(
            invalid_value(f"{path}.{PRESERVE}", True, "must be false if x-kubernetes-int-or-string is true")
        )
    if s.get(INT_OR_STRING) is True and s.get(EMBEDDED) is True:
        errs.append(
            invalid_value(f"{path}.{EMBEDDED}", True, "must be false if x-kubernetes-int-or-string is true")
        )

    skip_any_of = _list(s.get("anyOf")) == _INT_OR_STRING_ANYOF
    all_of = _list(s.get("allOf"))
    skip_first_all_of = bool(all_of) and _list(_dict(all_of[0]).get("anyOf")) == _INT_OR_STRING_ANYOF
    _value_validation(s, skip_any_of, skip_first_all_of, path, errs)

    embedded = s.get(EMBEDDED) is True
    if embedded and stype != "object":
        msg = "must be object if x-kubernetes-embedded-resource is true"
        errs.append(required(f"{path}.type", msg) if not stype else invalid_value(f"{path}.type", stype, msg))
    elif not stype and s.get(INT_OR_STRING) is not True and s.get(PRESERVE) is not True:
        detail = {
            _ROOT: "must not be empty at the root",
            _ITEM: "must not be empty for specified array items",
            _FIELD: "must not be empty for specified object fields",
        }[lvl]
        errs.append(required(f"{path}.type", detail))
    if embedded and "additionalProperties" in s:
        errs.append(
            forbidden(
                f"{path}.additionalProperties", "must not be used if x-kubernetes-embedded-resource is set"
            )
        )
    if lvl == _ROOT and stype and stype != "object":
        errs.append(invalid_value(f"{path}.type", stype, "must be object at the root"))

    check_meta = lvl == _ROOT or embedded
    for key, want in (("kind", "string"), ("apiVersion", "string"), ("metadata", "object")):
        if check_meta and key in props and _type_of(_dict(props[key])) != want:
            errs.append(
                invalid_value(
                    f"{path}.properties[{key}].type", _type_of(_dict(props[key])), f"must be {want}"
                )
            )
    if lvl == _ROOT and "metadata" in props:
        meta = dict(_dict(props["metadata"]))
        meta.pop("type", None)
        meta.pop("default", None)  # checked by the OpenAPI restrictions (no defaults in metadata)
        inner = _dict(meta.get("properties"))
        if set(inner) in ({"name"}, {"generateName"}, {"name", "generateName"}):
            meta.pop("properties")
        if meta:
            errs.append(
                forbidden(
                    f"{path}.properties[metadata]",
                    "must not specify anything other than name and generateName, but metadata is implicitly"
                    " specified",
                )
            )
    if embedded and s.get(PRESERVE) is not True and not props:
        errs.append(
            required(
                f"{path}.properties",
                "must not be empty if x-kubernetes-embedded-resource is true without"
                " x-kubernetes-preserve-unknown-fields",
            )
        )


def _value_validation(
    s: dict, skip_any_of: bool, skip_first_all_of: bool, path: str, errs: list[FieldError]
) -> None:
    """Rules for the logical junctors of one node and its ``pattern`` (``validateValueValidation``)."""
    if not skip_any_of:
        for i, sub in enumerate(_list(s.get("anyOf"))):
            _nested_value_validation(sub, False, f"{path}.anyOf[{i}]", errs)
    for i, sub in enumerate(_list(s.get("allOf"))):
        _nested_value_validation(sub, skip_first_all_of and i == 0, f"{path}.allOf[{i}]", errs)
    for i, sub in enumerate(_list(s.get("oneOf"))):
        _nested_value_validation(sub, False, f"{path}.oneOf[{i}]", errs)
    if s.get("not") is not None:
        _nested_value_validation(s["not"], False, f"{path}.not", errs)
    pattern = s.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            _compile(pattern)
        except re.error as e:
            errs.append(
                invalid_value(
                    f"{path}.pattern", pattern, f"must be a valid regular expression, but isn't: {e}"
                )
            )


_NESTED_FORBIDDEN = (
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    (PRESERVE, "must be false to be structural"),
    (EMBEDDED, "must be false to be structural"),
    (INT_OR_STRING, "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
)


def _nested_value_validation(v: Any, skip_any_of: bool, path: str, errs: list[FieldError]) -> None:
    v = _dict(v)
    _value_validation(v, skip_any_of, False, path, errs)
    if isinstance(v.get("items"), dict):
        _nested_value_validation(v["items"], False, f"{path}.items", errs)
    for k, sub in _dict(v.get("properties")).items():
        _nested_value_validation(sub, False, f"{path}.properties[{k}]", errs)
    for key, msg in _NESTED_FORBIDDEN:
        value = v.get(key)
        present = value is not None if key == "default" else value not in (None, False, "", [])
        if present:
            errs.append(forbidden(f"{path}.{key}", msg))
    if "metadata" in _dict(v.get("properties")):
        errs.append(forbidden(f"{path}.properties[metadata]", "must not be specified in a nested context"))


def _structural_completeness(s: Any, path: str, errs: list[FieldError]) -> None:
    """Every field or array mentioned inside a junctor must also be specified outside of it."""
    s = _dict(s)
    if isinstance(s.get("items"), dict):
        _structural_completeness(s["items"], f"{path}.items", errs)
    for k, v in _dict(s.get("properties")).items():
        _structural_completeness(v, f"{path}.properties[{k}]", errs)
    if isinstance(s.get("additionalProperties"), dict):
        _structural_completeness(s["additionalProperties"], f"{path}.additionalProperties", errs)
    _junctor_completeness(s, s, path, path, errs)


def _junctor_completeness(v: dict, s: dict | None, spath: str, vpath: str, errs: list[FieldError]) -> None:
    if v.get("not") is not None:
        _nested_completeness(_dict(v["not"]), s, spath, f"{vpath}.not", errs)
    for junctor in _JUNCTORS:
        for i, sub in enumerate(_list(v.get(junctor))):
            _nested_completeness(_dict(sub), s, spath, f"{vpath}.{junctor}[{i}]", errs)


def _nested_completeness(v: dict, s: dict | None, spath: str, vpath: str, errs: list[FieldError]) -> None:
    if s is None:
        errs.append(required(spath, f"because it is defined in {vpath}"))
        return
    _junctor_completeness(v, s, spath, vpath, errs)
    if isinstance(v.get("items"), dict):
        items = s.get("items")
        _nested_completeness(
            v["items"], items if isinstance(items, dict) else None, f"{spath}.items", f"{vpath}.items", errs
        )
    props = _dict(s.get("properties"))
    for k, sub in _dict(v.get("properties")).items():
        if k in props:
            _nested_completeness(
                _dict(sub), _dict(props[k]), f"{spath}.properties[{k}]", f"{vpath}.properties[{k}]", errs
            )
        elif isinstance(s.get("additionalProperties"), dict):
            _nested_completeness(
                _dict(sub),
                s["additionalProperties"],
                f"{spath}.additionalProperties",
                f"{vpath}.properties[{k}]",
                errs,
            )
        else:
            errs.append(
                required(f"{spath}.properties[{k}]", f"because it is defined in {vpath}.properties[{k}]")
            )


def _validate_defaults(s: Any, path: str, errs: list[FieldError]) -> None:
    """Defaults must be pruned (no unknown fields) and valid against their own schema (ValidateDefaults)."""
    s = _dict(s)
    default = s.get("default")
    if default is not None:
        pruned = copy.deepcopy(default)
        _prune(pruned, s, "", [], s.get(EMBEDDED) is True)
        if pruned != default:
            errs.append(invalid_value(f"{path}.default", default, "must not have unknown fields"))
        _Validator(f"{path}.default", errs).run(default, s, "")
    # additionalProperties is not followed: defaults there are forbidden inside metadata only, and
    # upstream does not validate them.
    if isinstance(s.get("items"), dict):
        _validate_defaults(s["items"], f"{path}.items", errs)
    for k, v in _dict(s.get("properties")).items():
        _validate_defaults(v, f"{path}.properties[{k}]", errs)


def _openapi_checks(
    s: Any, path: str, errs: list[FieldError], *, is_root: bool, in_meta: bool, defaults_forbidden: str | None
) -> None:
    """The OpenAPI restrictions of ``ValidateCustomResourceDefinitionOpenAPISchema``.

    ``defaults_forbidden`` is None when defaults are allowed, else the reason appended to the message.
    """
    s = _dict(s)
    stype = _type_of(s)
    if stype and stype not in _OPENAPI_TYPES:
        errs.append(not_supported(f"{path}.type", stype, _OPENAPI_TYPES))
    if s.get("default") is not None and defaults_forbidden is not None:
        errs.append(forbidden(f"{path}.default", ("must not be set " + defaults_forbidden).strip()))
    for key, msg in (
        ("id", "id is not supported"),
        ("additionalItems", "additionalItems is not supported"),
        ("patternProperties", "patternProperties is not supported"),
        ("definitions", "definitions is not supported"),
        ("dependencies", "dependencies is not supported"),
        ("$ref", "$ref is not supported"),
    ):
        if s.get(key) not in (None, "", {}):
            errs.append(forbidden(f"{path}.{key}", msg))
    if stype == "null":
        errs.append(forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
    if isinstance(s.get("items"), list):
        errs.append(forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if in_meta and s.get(EMBEDDED) is True:
        errs.append(forbidden(f"{path}.{EMBEDDED}", "must not be used inside of resource meta"))
    if s.get("uniqueItems") is True:
        errs.append(
            forbidden(
                f"{path}.uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )

    props = _dict(s.get("properties"))
    if "additionalProperties" in s and s["additionalProperties"] is not None:
        addl = s["additionalProperties"]
        if props and addl is not True:
            errs.append(
                forbidden(
                    f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"
                )
            )
        if isinstance(addl, dict):
            reason = (
                "inside additionalProperties applying to object metadata" if in_meta else defaults_forbidden
            )
            _openapi_checks(
                addl,
                f"{path}.additionalProperties",
                errs,
                is_root=False,
                in_meta=in_meta,
                defaults_forbidden=reason,
            )
    for k, sub in props.items():
        sub_meta, reason = in_meta, defaults_forbidden
        if (is_root or s.get(EMBEDDED) is True) and k in _META_FIELDS:
            sub_meta = True
            if is_root:
                reason = f"in top-level {k}"
        _openapi_checks(
            sub, f"{path}.properties[{k}]", errs, is_root=False, in_meta=sub_meta, defaults_forbidden=reason
        )
    if s.get("not") is not None:
        _openapi_checks(
            s["not"],
            f"{path}.not",
            errs,
            is_root=False,
            in_meta=in_meta,
            defaults_forbidden=defaults_forbidden,
        )
    for junctor in ("allOf", "oneOf", "anyOf"):
        for i, sub in enumerate(_list(s.get(junctor))):
            _openapi_checks(
                sub,
                f"{path}.{junctor}[{i}]",
                errs,
                is_root=False,
                in_meta=in_meta,
                defaults_forbidden=defaults_forbidden,
            )
    if isinstance(s.get("items"), dict):
        _openapi_checks(
            s["items"],
            f"{path}.items",
            errs,
            is_root=False,
            in_meta=in_meta,
            defaults_forbidden=defaults_forbidden,
        )

    if s.get(PRESERVE) is False:
        errs.append(invalid_value(f"{path}.{PRESERVE}", False, "must be true or undefined"))
    _list_and_map_type_checks(s, stype, path, errs)


def _list_and_map_type_checks(s: dict, stype: str, path: str, errs: list[FieldError]) -> None:
    map_type = s.get("x-kubernetes-map-type")
    if map_type is not None and stype != "object":
        msg = "must be object if x-kubernetes-map-type is specified"
        errs.append(required(f"{path}.type", msg) if not stype else invalid_value(f"{path}.type", stype, msg))
    if map_type is not None and map_type not in ("atomic", "granular"):
        errs.append(not_supported(f"{path}.x-kubernetes-map-type", map_type, ["atomic", "granular"]))
    list_type = s.get("x-kubernetes-list-type")
    if list_type is not None and stype != "array":
        msg = "must be array if x-kubernetes-list-type is specified"
        errs.append(required(f"{path}.type", msg) if not stype else invalid_value(f"{path}.type", stype, msg))
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]))
    keys = _list(s.get("x-kubernetes-list-map-keys"))
    if keys:
        msg = "must be map if x-kubernetes-list-map-keys is non-empty"
        if list_type is None:
            errs.append(required(f"{path}.x-kubernetes-list-type", msg))
        elif list_type != "map":
            errs.append(invalid_value(f"{path}.x-kubernetes-list-type", list_type, msg))
    items = s.get("items")
    if list_type == "map":
        if not keys:
            errs.append(
                required(
                    f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"
                )
            )
        if items is None:
            errs.append(required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"))
        elif isinstance(items, dict) and _type_of(items) != "object":
            errs.append(
                invalid_value(
                    f"{path}.items.type",
                    _type_of(items),
                    "must be object if parent array's x-kubernetes-list-type is map",
                )
            )
        elif isinstance(items, dict):
            item_props = _dict(items.get("properties"))
            seen: set[str] = set()
            for k in keys:
                if k in item_props:
                    if _type_of(_dict(item_props[k])) in ("array", "object"):
                        errs.append(
                            invalid_value(
                                f"{path}.items.properties[{k}].type",
                                "object",
                                "must be a scalar type if parent array's x-kubernetes-list-type is map",
                            )
                        )
                else:
                    errs.append(
                        invalid_value(
                            f"{path}.x-kubernetes-list-map-keys",
                            keys,
                            "entries must all be names of item properties",
                        )
                    )
                if k in seen:
                    errs.append(
                        invalid_value(
                            f"{path}.x-kubernetes-list-map-keys", keys, "must not contain duplicate entries"
                        )
                    )
                seen.add(k)
    if list_type in ("set", "map") and isinstance(items, dict):
        if items.get("nullable") is True:
            errs.append(
                forbidden(
                    f"{path}.items.nullable", f"cannot be nullable when x-kubernetes-list-type is {list_type}"
                )
            )
        if list_type == "map":
            req = set(_list(items.get("required")))
            item_props = _dict(items.get("properties"))
            for k in keys:
                if k not in item_props:
                    continue
                if k not in req and _dict(item_props[k]).get("default") is None:
                    errs.append(
                        required(
                            f"{path}.items.properties[{k}].default",
                            "this property is in x-kubernetes-list-map-keys, so it must have a default or"
                            " be a required property",
                        )
                    )
                if _dict(item_props[k]).get("nullable") is True:
                    errs.append(
                        forbidden(
                            f"{path}.items.properties[{k}].nullable",
                            "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                        )
                    )


# --- custom resources: defaulting ------------------------------------------------------------------


def _has_default(s: Any) -> bool:
    # `default: null` decodes to no default upstream.
    return isinstance(s, dict) and s.get("default") is not None


def _non_nullable(s: Any) -> bool:
    return isinstance(s, dict) and s.get("nullable") is not True


def apply_defaults(obj: Any, schema: dict) -> None:
    """Default ``obj`` in place (16-7): drop non-nullable nulls without a default, then fill defaults.

    Absent fields get their schema ``default`` (deep-copied), also inside array items and
    additionalProperties; a JSON null where the schema is not ``nullable`` counts as absent.
    """
    _prune_nulls(obj, schema)
    _default(obj, schema)


def _prune_nulls(x: Any, s: Any) -> None:
    if not isinstance(s, dict):
        return
    if isinstance(x, dict):
        props = _dict(s.get("properties"))
        addl = s.get("additionalProperties")
        for k in list(x):
            if k in props:
                sub = props[k]
            elif isinstance(addl, dict):
                sub = addl
            else:
                continue
            if x[k] is None and _non_nullable(sub) and not _has_default(sub):
                del x[k]
            else:
                _prune_nulls(x[k], sub)
    elif isinstance(x, list):
        for v in x:
            _prune_nulls(v, s.get("items"))


def _default(x: Any, s: Any) -> None:
    if not isinstance(s, dict):
        return
    if isinstance(x, dict):
        props = _dict(s.get("properties"))
        for k, p in props.items():
            if _has_default(p) and (k not in x or (x[k] is None and _non_nullable(p))):
                x[k] = copy.deepcopy(p["default"])
        addl = s.get("additionalProperties")
        for k in list(x):
            if k in props:
                _default(x[k], props[k])
            elif isinstance(addl, dict):
                if x[k] is None and _non_nullable(addl):
                    x[k] = copy.deepcopy(addl.get("default"))
                _default(x[k], addl)
    elif isinstance(x, list):
        items = s.get("items")
        for i in range(len(x)):
            if x[i] is None and isinstance(items, dict) and _non_nullable(items):
                x[i] = copy.deepcopy(items.get("default"))
            _default(x[i], items)


# --- custom resources: pruning --------------------------------------------------------------------


def prune(obj: Any, schema: dict, path: str = "") -> list[str]:
    """Remove fields the structural schema does not specify, in place (16-6).

    ``path=""`` means ``obj`` is a resource root, whose ``apiVersion``, ``kind`` and ``metadata`` are
    never touched (as for ``x-kubernetes-embedded-resource`` nodes); a non-empty ``path`` prunes a
    nested value and prefixes the reported paths. Fields under ``x-kubernetes-preserve-unknown-fields``
    or matched by ``additionalProperties`` are kept. Returns the removed paths (``spec.foo``,
    ``spec.items[0].foo``) sorted as upstream reports them, for ``fieldValidation`` (4-5).
    """
    removed: list[str] = []
    _prune(obj, schema, path, removed, not path)
    return sorted(removed)


def _addl_schema(s: dict) -> tuple[bool, dict | None]:
    """Whether ``additionalProperties`` is set (even to a bool) and its schema, if it has one."""
    addl = s.get("additionalProperties")
    return addl is not None, addl if isinstance(addl, dict) else None


def _prune(x: Any, s: Any, path: str, out: list[str], embedded: bool = False) -> None:
    if isinstance(s, dict) and s.get(PRESERVE) is True:
        _skip_prune(x, s, path, out, embedded)
        return
    if isinstance(x, dict):
        if not isinstance(s, dict):
            for k in list(x):
                out.append(_join(path, k))
                del x[k]
            return
        embedded = embedded or s.get(EMBEDDED) is True
        props = _dict(s.get("properties"))
        has_addl, addl = _addl_schema(s)
        for k in list(x):
            if embedded and k in _META_FIELDS:
                continue
            if k in props:
                _prune(x[k], props[k], _join(path, k), out)
            elif has_addl:
                _prune(x[k], addl, _join(path, k), out)
            else:
                out.append(_join(path, k))
                del x[k]
    elif isinstance(x, list):
        items = s.get("items") if isinstance(s, dict) else None
        for i, v in enumerate(x):
            _prune(v, items, f"{path}[{i}]", out)


def _skip_prune(x: Any, s: dict, path: str, out: list[str], embedded: bool) -> None:
    """Under preserve-unknown-fields unknown keys stay, but specified ones are still pruned inside."""
    if isinstance(x, dict):
        embedded = embedded or s.get(EMBEDDED) is True
        props = _dict(s.get("properties"))
        has_addl, addl = _addl_schema(s)
        for k in list(x):
            if embedded and k in _META_FIELDS:
                continue
            if k in props:
                _prune(x[k], props[k], _join(path, k), out)
            elif has_addl:
                _prune(x[k], addl, _join(path, k), out)
    elif isinstance(x, list) and isinstance(s.get("items"), dict):
        for i, v in enumerate(x):
            _skip_prune(v, s["items"], f"{path}[{i}]", out, False)


# --- custom resources: validation ------------------------------------------------------------------


def validate_object(obj: Any, schema: dict) -> list[FieldError]:
    """Validate a defaulted, pruned custom resource against its version's schema (16-5).

    Root ``metadata`` is left to the server's ObjectMeta validation. Embedded resources
    (``x-kubernetes-embedded-resource``) additionally need a valid ``apiVersion`` and ``kind``.
    """
    errs: list[FieldError] = []
    _Validator("", errs, skip_root_metadata=True).run(obj, schema, "")
    _validate_embedded(obj, schema, "", errs, root=True)
    return errs


@functools.lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern[str]:
    # Go's RE2 classes (\d, \w, \s) are ASCII-only.
    return re.compile(pattern, re.ASCII)


def _is_date(s: str) -> bool:
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", s)
    if not m:
        return False
    y, mo, d = map(int, m.groups())
    if not 1 <= mo <= 12 or d < 1:
        return False
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    return d <= (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[mo - 1]


_TIME_RE = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")


def _is_date_time(s: str) -> bool:
    """``strfmt.IsDateTime``: RFC 3339, case-insensitive ``T``/``Z``, checked field by field."""
    if len(s) < 4:
        return False
    parts = s.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _TIME_RE.match(parts[1])
    return m is not None and m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


# Formats kept by StripUnsupportedFormatsPostProcess (normalized: lower case, alphanumerics only);
# only the ones with a checker are actually validated.
_SUPPORTED_FORMATS = {
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3", "uuid4",
    "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor", "byte", "password",
    "date", "duration", "datetime",
}  # fmt: skip
_FORMAT_CHECKS = {"date": _is_date, "datetime": _is_date_time}


def _format_of(s: dict) -> str:
    fmt = s.get("format")
    if not isinstance(fmt, str) or not fmt:
        return ""
    return fmt if re.sub(r"[^a-z0-9]", "", fmt.lower()) in _SUPPORTED_FORMATS else ""


def _json_kind(v: Any) -> tuple[str, str]:
    """The JSON type and Go format kube-openapi infers for a decoded value."""
    if isinstance(v, bool):
        return "boolean", ""
    if isinstance(v, str):
        return "string", ""
    if isinstance(v, int):
        return "integer", "int64"
    if isinstance(v, float):
        return "number", "float64"
    if isinstance(v, list):
        return "array", ""
    return "object", ""


def _values_equal(a: Any, b: Any) -> bool:
    """JSON equality where booleans are not numbers and 1 equals 1.0 (enum matching)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_values_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_values_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


class _Validator:
    """kube-openapi's SchemaValidator converted to field errors (``kubeOpenAPIResultToFieldErrors``).

    ``name`` is the go-openapi path used inside messages (``spec.size``); the field path is ``base``
    plus that name, so default values can be validated under ``...properties[x].default``.
    """

    def __init__(self, base: str, errs: list[FieldError], skip_root_metadata: bool = False) -> None:
        self.base = base
        self.errs = errs
        self.skip_root_metadata = skip_root_metadata

    def field(self, name: str) -> str:
        if not name:
            return self.base
        return f"{self.base}.{name}" if self.base else name

    def type_error(self, name: str, type_name: str, got: str) -> None:
        # InvalidType carries the JSON type (or Go format) of the bad value, not the value itself.
        self.errs.append(
            type_invalid(self.field(name), got, f'{name} in body must be of type {type_name}: "{got}"')
        )

    def invalid(self, name: str, value: Any, message: str) -> None:
        self.errs.append(invalid_value(self.field(name), value, f"{name} in body {message}"))

    def run(self, data: Any, s: Any, name: str) -> None:
        if not isinstance(s, dict):
            return
        types = (
            ["integer", "string"] if s.get(INT_OR_STRING) is True else ([_type_of(s)] if _type_of(s) else [])
        )
        if data is None:
            if types and s.get("nullable") is not True:
                self.type_error(name, ",".join(types), "null")
            self.check_enum(data, s, name)
            return
        self.check_type(data, s, types, name)
        if isinstance(data, str):
            self.check_string(data, s, name)
            fmt = _format_of(s)
            check = _FORMAT_CHECKS.get(re.sub(r"[^a-z0-9]", "", fmt.lower()))
            if check is not None and not check(data):
                self.errs.append(
                    type_invalid(
                        self.field(name),
                        data,
                        f"{name} in body must be of type {fmt}: {orjson.dumps(data).decode()}",
                    )
                )
        elif isinstance(data, int | float) and not isinstance(data, bool):
            self.check_number(data, s, name)
        elif isinstance(data, list):
            self.check_array(data, s, name)
        self.check_enum(data, s, name)
        if isinstance(data, dict):
            self.check_object(data, s, name)

    def check_type(self, data: Any, s: dict, types: list[str], name: str) -> None:
        fmt = _format_of(s)
        if not types and not fmt:
            return
        kind, go_format = _json_kind(data)
        float_int = kind == "number" and _is_json_integer(data) and "integer" in types
        int_float = kind == "integer" and "number" in types
        scalar_like = isinstance(data, str | list)
        if not scalar_like and fmt and not (kind in types or go_format == fmt or float_int or int_float):
            self.type_error(name, fmt, go_format)
            return
        # Upstream quirk: a formatted non-numeric type accepts any string or array.
        if fmt and scalar_like and "number" not in types and "integer" not in types:
            return
        if not (kind in types or float_int or int_float):
            self.type_error(name, ",".join(types), kind)

    def check_string(self, data: str, s: dict, name: str) -> None:
        # Only the first failing check is reported (stringValidator returns early).
        max_len, min_len, pattern = s.get("maxLength"), s.get("minLength"), s.get("pattern")
        if isinstance(max_len, int) and len(data) > max_len:
            self.errs.append(too_long(self.field(name), max_len))
        elif isinstance(min_len, int) and len(data) < min_len:
            self.invalid(name, data, f"should be at least {min_len} chars long")
        elif isinstance(pattern, str) and pattern:
            try:
                matched = _compile(pattern).search(data) is not None
            except re.error as e:
                self.invalid(name, data, f"should match '{pattern}, but pattern is invalid: {e}'")
                return
            if not matched:
                self.invalid(name, data, f"should match '{pattern}'")

    def check_number(self, data: float, s: dict, name: str) -> None:
        # Integers are checked against int64(bound): fractional bounds are truncated, as upstream does.
        as_int = isinstance(data, int)
        value = data if as_int else float(data)
        multiple = s.get("multipleOf")
        if isinstance(multiple, int | float) and not isinstance(multiple, bool):
            shown = str(math.trunc(multiple)) if as_int else go_float(float(multiple))
            if multiple < 0:
                self.errs.append(
                    invalid_value(
                        self.field(name),
                        multiple,
                        f"factor MultipleOf declared for {name} must be positive: {shown}",
                    )
                )
            elif as_int and math.trunc(multiple) != 0:
                if data % math.trunc(multiple):
                    self.invalid(name, data, f"should be a multiple of {shown}")
            elif multiple > 0:
                mult = (1 / multiple * value) if multiple < 1 else value / multiple
                if not _is_json_integer(float(mult)):
                    self.invalid(name, data, f"should be a multiple of {shown}")
        for key, excl_key, below in (
            ("minimum", "exclusiveMinimum", True),
            ("maximum", "exclusiveMaximum", False),
        ):
            bound = s.get(key)
            if not isinstance(bound, int | float) or isinstance(bound, bool):
                continue
            excl = s.get(excl_key) is True
            limit = math.trunc(bound) if as_int else float(bound)
            shown = str(limit) if as_int else go_float(limit)
            if below:
                failed = value <= limit if excl else value < limit
                text = (
                    f"should be greater than {shown}"
                    if excl
                    else f"should be greater than or equal to {shown}"
                )
            else:
                failed = value >= limit if excl else value > limit
                text = f"should be less than {shown}" if excl else f"should be less than or equal to {shown}"
            if failed:
                self.invalid(name, data, text)

    def check_array(self, data: list, s: dict, name: str) -> None:
        items = s.get("items")
        if isinstance(items, dict):
            for i, v in enumerate(data):
                self.run(v, items, f"{name}[{i}]")
        min_items, max_items = s.get("minItems"), s.get("maxItems")
        if isinstance(min_items, int) and len(data) < min_items:
            self.invalid(name, len(data), f"should have at least {min_items} items")
        if isinstance(max_items, int) and len(data) > max_items:
            self.errs.append(too_many(self.field(name), len(data), max_items))

    def check_enum(self, data: Any, s: dict, name: str) -> None:
        enum = s.get("enum")
        if not isinstance(enum, list) or not enum:
            return
        if data is not None and any(e is not None and _values_equal(data, e) for e in enum):
            return
        allowed = [e if isinstance(e, str) else _json_text(e) for e in enum]
        self.errs.append(not_supported(self.field(name), data, allowed))

    def check_object(self, data: dict, s: dict, name: str) -> None:
        n = len(data)
        min_props, max_props = s.get("minProperties"), s.get("maxProperties")
        if isinstance(min_props, int) and n < min_props:
            self.invalid(name, n, f"should have at least {min_props} properties")
            return
        if isinstance(max_props, int) and n > max_props:
            self.errs.append(too_many(self.field(name), n, max_props))
            return
        props = _dict(s.get("properties"))
        addl = s.get("additionalProperties")
        if addl is False:
            for k in data:
                if k not in props:
                    self.errs.append(
                        invalid_value(self.field(name), k, f"{name}.{k} in body is a forbidden property")
                    )
        elif isinstance(addl, dict):
            for k, v in data.items():
                if k not in props:
                    self.run(v, addl, _join(name, k))
        for k, sub in props.items():
            if k not in data or (self.skip_root_metadata and not name and k == "metadata"):
                continue
            self.run(data[k], sub, _join(name, k))
        for k in _list(s.get("required")):
            if k not in data:
                self.errs.append(required(self.field(_join(name, k))))


def _validate_embedded(x: Any, s: Any, path: str, errs: list[FieldError], root: bool = False) -> None:
    """apiVersion/kind checks for nested ``x-kubernetes-embedded-resource`` objects (schema/objectmeta)."""
    if not isinstance(s, dict):
        return
    if isinstance(x, dict):
        if s.get(EMBEDDED) is True and not root:
            errs.extend(_embedded_type_meta(x, path))
        props = _dict(s.get("properties"))
        addl = s.get("additionalProperties")
        for k, v in x.items():
            if root and k == "metadata":
                continue
            if k in props:
                _validate_embedded(v, props[k], _join(path, k), errs)
            elif isinstance(addl, dict):
                _validate_embedded(v, addl, f"{path}[{k}]", errs)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            _validate_embedded(v, s.get("items"), f"{path}[{i}]", errs)


def _embedded_type_meta(x: dict, path: str) -> list[FieldError]:
    errs = []
    for key in ("apiVersion", "kind"):
        if key not in x:
            errs.append(required(_join(path, key), "must not be empty"))
    for key, value in x.items():
        if key not in ("apiVersion", "kind"):
            continue
        fpath = _join(path, key)
        if not isinstance(value, str):
            errs.append(invalid_value(fpath, value, "must be a string"))
        elif not value:
            errs.append(invalid_value(fpath, value, "must not be empty"))
        elif key == "apiVersion" and value != "/" and value.count("/") > 1:
            errs.append(invalid_value(fpath, value, f"unexpected GroupVersion string: {value}"))
        elif key == "kind" and (msgs := is_dns1035_label(value.lower())):
            errs.append(
                invalid_value(
                    fpath, value, "may have mixed case, but should otherwise match: " + ",".join(msgs)
                )
            )
    return errs
