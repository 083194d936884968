"""Structural schemas (16-2): the rules apiextensions-apiserver's ``pkg/apiserver/schema/validation.go``
imposes on a CRD's OpenAPI schema, default-value checks (``ValidateDefaults``) and the OpenAPI
restrictions of CRD schemas (list and map types, formats, ``x-kubernetes-*`` extensions).

Value validations inside ``anyOf``/``allOf``/``oneOf``/``not`` are only checked for structurality
(docs/apiserver.md, deviations).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from framework.apiserver.crd.object_validation import SchemaValidator, compile_pattern
from framework.apiserver.crd.pruning import prune_node
from framework.apiserver.crd.values import EMBEDDED, INT_OR_STRING, META_FIELDS, PRESERVE, schema_type
from framework.apiserver.machinery.errors import FieldError, forbidden, invalid_value, not_supported, required
from framework.apiserver.machinery.jsonvalues import as_dict, as_list

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


def _structural_invariants(s: Any, lvl: str, path: str, errs: list[FieldError]) -> None:
    s = as_dict(s)
    stype = schema_type(s)
    if stype == "array" and s.get("items") is None:
        errs.append(required(f"{path}.items", "must be specified"))
    if isinstance(s.get("items"), dict):
        _structural_invariants(s["items"], _ITEM, f"{path}.items", errs)
    props = as_dict(s.get("properties"))
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

    skip_any_of = as_list(s.get("anyOf")) == _INT_OR_STRING_ANYOF
    all_of = as_list(s.get("allOf"))
    skip_first_all_of = bool(all_of) and as_list(as_dict(all_of[0]).get("anyOf")) == _INT_OR_STRING_ANYOF
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
        if check_meta and key in props and schema_type(as_dict(props[key])) != want:
            errs.append(
                invalid_value(
                    f"{path}.properties[{key}].type", schema_type(as_dict(props[key])), f"must be {want}"
                )
            )
    if lvl == _ROOT and "metadata" in props:
        meta = dict(as_dict(props["metadata"]))
        meta.pop("type", None)
        meta.pop("default", None)  # checked by the OpenAPI restrictions (no defaults in metadata)
        inner = as_dict(meta.get("properties"))
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
        for i, sub in enumerate(as_list(s.get("anyOf"))):
            _nested_value_validation(sub, False, f"{path}.anyOf[{i}]", errs)
    for i, sub in enumerate(as_list(s.get("allOf"))):
        _nested_value_validation(sub, skip_first_all_of and i == 0, f"{path}.allOf[{i}]", errs)
    for i, sub in enumerate(as_list(s.get("oneOf"))):
        _nested_value_validation(sub, False, f"{path}.oneOf[{i}]", errs)
    if s.get("not") is not None:
        _nested_value_validation(s["not"], False, f"{path}.not", errs)
    pattern = s.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            compile_pattern(pattern)
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
    v = as_dict(v)
    _value_validation(v, skip_any_of, False, path, errs)
    if isinstance(v.get("items"), dict):
        _nested_value_validation(v["items"], False, f"{path}.items", errs)
    for k, sub in as_dict(v.get("properties")).items():
        _nested_value_validation(sub, False, f"{path}.properties[{k}]", errs)
    for key, msg in _NESTED_FORBIDDEN:
        value = v.get(key)
        present = value is not None if key == "default" else value not in (None, False, "", [])
        if present:
            errs.append(forbidden(f"{path}.{key}", msg))
    if "metadata" in as_dict(v.get("properties")):
        errs.append(forbidden(f"{path}.properties[metadata]", "must not be specified in a nested context"))


def _structural_completeness(s: Any, path: str, errs: list[FieldError]) -> None:
    """Every field or array mentioned inside a junctor must also be specified outside of it."""
    s = as_dict(s)
    if isinstance(s.get("items"), dict):
        _structural_completeness(s["items"], f"{path}.items", errs)
    for k, v in as_dict(s.get("properties")).items():
        _structural_completeness(v, f"{path}.properties[{k}]", errs)
    if isinstance(s.get("additionalProperties"), dict):
        _structural_completeness(s["additionalProperties"], f"{path}.additionalProperties", errs)
    _junctor_completeness(s, s, path, path, errs)


def _junctor_completeness(v: dict, s: dict | None, spath: str, vpath: str, errs: list[FieldError]) -> None:
    if v.get("not") is not None:
        _nested_completeness(as_dict(v["not"]), s, spath, f"{vpath}.not", errs)
    for junctor in _JUNCTORS:
        for i, sub in enumerate(as_list(v.get(junctor))):
            _nested_completeness(as_dict(sub), s, spath, f"{vpath}.{junctor}[{i}]", errs)


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
    props = as_dict(s.get("properties"))
    for k, sub in as_dict(v.get("properties")).items():
        if k in props:
            _nested_completeness(
                as_dict(sub), as_dict(props[k]), f"{spath}.properties[{k}]", f"{vpath}.properties[{k}]", errs
            )
        elif isinstance(s.get("additionalProperties"), dict):
            _nested_completeness(
                as_dict(sub),
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
    s = as_dict(s)
    default = s.get("default")
    if default is not None:
        pruned = copy.deepcopy(default)
        prune_node(pruned, s, "", [], s.get(EMBEDDED) is True)
        if pruned != default:
            errs.append(invalid_value(f"{path}.default", default, "must not have unknown fields"))
        SchemaValidator(f"{path}.default", errs).run(default, s, "")
    # additionalProperties is not followed: defaults there are forbidden inside metadata only, and
    # upstream does not validate them.
    if isinstance(s.get("items"), dict):
        _validate_defaults(s["items"], f"{path}.items", errs)
    for k, v in as_dict(s.get("properties")).items():
        _validate_defaults(v, f"{path}.properties[{k}]", errs)


def _openapi_checks(
    s: Any, path: str, errs: list[FieldError], *, is_root: bool, in_meta: bool, defaults_forbidden: str | None
) -> None:
    """The OpenAPI restrictions of ``ValidateCustomResourceDefinitionOpenAPISchema``.

    ``defaults_forbidden`` is None when defaults are allowed, else the reason appended to the message.
    """
    s = as_dict(s)
    stype = schema_type(s)
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

    props = as_dict(s.get("properties"))
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
        if (is_root or s.get(EMBEDDED) is True) and k in META_FIELDS:
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
        for i, sub in enumerate(as_list(s.get(junctor))):
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
    keys = as_list(s.get("x-kubernetes-list-map-keys"))
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
        elif isinstance(items, dict) and schema_type(items) != "object":
            errs.append(
                invalid_value(
                    f"{path}.items.type",
                    schema_type(items),
                    "must be object if parent array's x-kubernetes-list-type is map",
                )
            )
        elif isinstance(items, dict):
            item_props = as_dict(items.get("properties"))
            seen: set[str] = set()
            for k in keys:
                if k in item_props:
                    if schema_type(as_dict(item_props[k])) in ("array", "object"):
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
            req = set(as_list(items.get("required")))
            item_props = as_dict(items.get("properties"))
            for k in keys:
                if k not in item_props:
                    continue
                if k not in req and as_dict(item_props[k]).get("default") is None:
                    errs.append(
                        required(
                            f"{path}.items.properties[{k}].default",
                            "this property is in x-kubernetes-list-map-keys, so it must have a default or"
                            " be a required property",
                        )
                    )
                if as_dict(item_props[k]).get("nullable") is True:
                    errs.append(
                        forbidden(
                            f"{path}.items.properties[{k}].nullable",
                            "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                        )
                    )
