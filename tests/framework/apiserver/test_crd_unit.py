"""Unit tests for framework.apiserver.crd (spec §16, fieldValidation of §4-5)."""

from __future__ import annotations

import copy
import string
from datetime import UTC
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from framework.apiserver.crd.defaulting import apply_defaults
from framework.apiserver.crd.definition import (
    default_crd,
    has_status_subresource,
    selectable_fields,
    served_versions,
    storage_version,
    version_entry,
)
from framework.apiserver.crd.definition_validation import validate_crd
from framework.apiserver.crd.object_validation import validate_object
from framework.apiserver.crd.pruning import prune
from framework.apiserver.crd.structural import validate_structural
from framework.apiserver.machinery.errors import (
    FORBIDDEN,
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    TOO_LONG,
    TOO_MANY,
    TYPE_INVALID,
    FieldError,
)

DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic"
    " character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for"
    " validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer", "minimum": 1, "default": 3},
                "color": {"type": "string", "enum": ["red", "blue"]},
            },
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


def make_crd(**spec_overrides: Any) -> dict:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": copy.deepcopy(SCHEMA)},
                    "subresources": {"status": {}},
                }
            ],
        },
    }
    crd["spec"].update(spec_overrides)
    default_crd(crd)
    return crd


def msgs(errs: list[FieldError]) -> list[str]:
    return [e.message() for e in errs]


def version(name: str, storage: bool = False, served: bool = True, schema: dict | None = None) -> dict:
    return {
        "name": name,
        "served": served,
        "storage": storage,
        "schema": {"openAPIV3Schema": schema or SCHEMA},
    }


# --- CRD defaulting and accessors ----------------------------------------------------------------


def test_default_crd_fills_names_and_conversion_only():
    crd = {"spec": {"names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1"}]}}
    default_crd(crd)
    assert crd["spec"]["names"] == {
        "plural": "widgets",
        "kind": "Widget",
        "singular": "widget",
        "listKind": "WidgetList",
    }
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["spec"]["versions"] == [{"name": "v1"}]


def test_default_crd_keeps_given_values_and_defaults_webhook_port():
    conversion = {
        "strategy": "Webhook",
        "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n"}}},
    }
    crd = {"spec": {"names": {"kind": "Widget", "singular": "w", "listKind": "Ws"}, "conversion": conversion}}
    default_crd(crd)
    assert crd["spec"]["names"] == {"kind": "Widget", "singular": "w", "listKind": "Ws"}
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] == 443


def test_accessors():
    v2 = version("v2", storage=True)
    v2["subresources"] = {"status": {}}
    v2["selectableFields"] = [{"jsonPath": ".spec.color"}, {"jsonPath": ".spec.size"}]
    crd = make_crd(versions=[version("v1alpha1", served=False), version("v1"), v2])
    assert served_versions(crd) == ["v1", "v2"]
    assert storage_version(crd) == "v2"
    assert version_entry(crd, "v1")["name"] == "v1"
    assert version_entry(crd, "v9") is None
    assert has_status_subresource(crd, "v2")
    assert not has_status_subresource(crd, "v1")
    assert not has_status_subresource(crd, "v9")
    assert selectable_fields(crd, "v2") == ["spec.color", "spec.size"]
    assert selectable_fields(crd, "v1") == []


def test_storage_version_missing_fails_loudly():
    with pytest.raises(ValueError, match="no storage version"):
        storage_version(make_crd(versions=[version("v1")]))


# --- CRD validation -------------------------------------------------------------------------------


def test_valid_crd():
    crd = make_crd()
    assert validate_crd(crd) == []
    assert validate_crd(copy.deepcopy(crd), crd) == []


def test_valid_multi_version_crd_with_columns_and_scale():
    v1 = version("v1", storage=True)
    v1["additionalPrinterColumns"] = [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]
    v1["subresources"] = {
        "status": {},
        "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.n"},
    }
    v1["selectableFields"] = [{"jsonPath": ".spec.color"}]
    crd = make_crd(versions=[version("v1beta1"), v1], scope="Cluster")
    assert validate_crd(crd) == []


def test_name_must_be_plural_dot_group():
    crd = make_crd()
    crd["metadata"]["name"] = "widget.example.com"
    errs = validate_crd(crd)
    assert msgs(errs) == [
        'metadata.name: Invalid value: "widget.example.com": must be spec.names.plural+"."+spec.group'
    ]
    assert errs[0].type == INVALID and errs[0].field == "metadata.name"


def test_name_rule_not_checked_on_update():
    crd = make_crd()
    crd["metadata"]["name"] = "other.example.com"
    assert validate_crd(crd, copy.deepcopy(crd)) == []


def test_group_required_and_domain():
    crd = make_crd(group="")
    assert msgs(validate_crd(crd)) == [
        'metadata.name: Invalid value: "widgets.example.com": must be spec.names.plural+"."+spec.group',
        "spec.group: Required value",
    ]
    crd = make_crd(group="example")
    crd["metadata"]["name"] = "widgets.example"
    assert msgs(validate_crd(crd)) == [
        'spec.group: Invalid value: "example": should be a domain with at least one dot'
    ]
    crd = make_crd(group="Example.com")
    crd["metadata"]["name"] = "widgets.Example.com"
    assert msgs(validate_crd(crd)) == [
        'spec.group: Invalid value: "Example.com": a lowercase RFC 1123 subdomain must consist of lower case'
        " alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g."
        " 'example.com', regex used for validation is"
        " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]


def test_scope():
    errs = validate_crd(make_crd(scope="Global"))
    assert msgs(errs) == [
        'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'
    ]
    assert errs[0].type == NOT_SUPPORTED
    assert msgs(validate_crd(make_crd(scope=""))) == ["spec.scope: Required value"]


def test_names():
    crd = make_crd(names={"plural": "Widgets", "singular": "w_x", "kind": "Wid.get", "listKind": "Wid.get"})
    crd["metadata"]["name"] = "Widgets.example.com"
    assert msgs(validate_crd(crd)) == [
        f'spec.names.plural: Invalid value: "Widgets": {DNS1035}',
        f'spec.names.singular: Invalid value: "w_x": {DNS1035}',
        'spec.names.kind: Invalid value: "Wid.get": may have mixed case, but should otherwise'
        f" match: {DNS1035}",
        'spec.names.listKind: Invalid value: "Wid.get": may have mixed case, but should otherwise'
        f" match: {DNS1035}",
        'spec.names.listKind: Invalid value: "Wid.get": kind and listKind may not be the same',
    ]


def test_names_required():
    crd = make_crd(names={"plural": "widgets"})
    assert msgs(validate_crd(crd)) == [
        "spec.names.singular: Required value",
        "spec.names.kind: Required value",
        "spec.names.listKind: Required value",
    ]


def test_short_names_and_categories():
    crd = make_crd(
        names={"plural": "widgets", "kind": "Widget", "shortNames": ["wd", "W"], "categories": ["all"]}
    )
    assert msgs(validate_crd(crd)) == [f'spec.names.shortNames[1]: Invalid value: "W": {DNS1035}']


def test_versions_empty():
    assert msgs(validate_crd(make_crd(versions=[]))) == [
        "spec.versions: Invalid value: []: must have exactly one version marked as storage version"
    ]


def test_versions_storage_and_uniqueness():
    errs = validate_crd(make_crd(versions=[version("v1", storage=True), version("v1", storage=True)]))
    assert [e.field for e in errs] == ["spec.versions", "spec.versions"]
    assert errs[0].message().endswith(": must contain unique version names")
    assert errs[1].message().startswith('spec.versions: Invalid value: [{"name":"v1"')
    assert errs[1].message().endswith(": must have exactly one version marked as storage version")
    errs = validate_crd(make_crd(versions=[version("v1"), version("v2")]))
    assert [e.detail for e in errs] == ["must have exactly one version marked as storage version"]


def test_version_name_must_be_dns1035():
    crd = make_crd(versions=[version("V1", storage=True)])
    assert msgs(validate_crd(crd)) == [
        f'spec.versions[0].name: Invalid value: "V1": {DNS1035}',
        f'spec.version: Invalid value: "V1": {DNS1035}',
    ]


def test_schema_required():
    v = version("v1", storage=True)
    del v["schema"]
    errs = validate_crd(make_crd(versions=[v]))
    assert msgs(errs) == ["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]
    assert errs[0].type == REQUIRED


def test_schema_ratchet_on_update_only_requires_served_versions():
    old = make_crd(versions=[version("v1", storage=True), {"name": "v0", "served": False, "storage": False}])
    new = copy.deepcopy(old)
    assert validate_crd(new, old) == []
    new["spec"]["versions"][1]["served"] = True
    assert msgs(validate_crd(new, old)) == [
        "spec.versions[1].schema.openAPIV3Schema: Required value: because otherwise all fields are pruned"
    ]


def test_structural_errors_are_reported_under_spec_validation_when_schemas_are_identical():
    schema = {"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}}
    crd = make_crd(versions=[version("v1", storage=True, schema=schema)])
    assert msgs(validate_crd(crd)) == [
        "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty"
        " for specified"
        " object fields"
    ]


def test_structural_errors_are_reported_per_version_when_schemas_differ():
    bad = {"type": "object", "properties": {"spec": {"type": "object"}, "tags": {"type": "array"}}}
    crd = make_crd(versions=[version("v1", storage=True), version("v2", schema=bad)])
    assert msgs(validate_crd(crd)) == [
        "spec.versions[1].schema.openAPIV3Schema.properties[tags].items: Required value: must be specified"
    ]


def test_root_must_be_object_and_not_nullable():
    v = version("v1", storage=True, schema={"type": "string", "nullable": True})
    assert msgs(validate_crd(make_crd(versions=[v]))) == [
        "spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root",
        'spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root',
    ]


def test_status_subresource_restricts_root_schema():
    v = version("v1", storage=True, schema={"type": "object", "enum": [{}], "properties": {}})
    v["subresources"] = {"status": {}}
    errs = validate_crd(make_crd(versions=[v]))
    assert len(errs) == 1
    assert errs[0].field == "spec.validation.openAPIV3Schema"
    assert errs[0].detail == (
        "only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength"
        " MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs"
        " Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the"
        " status subresource is enabled"
    )


def test_status_subresource_must_be_empty_object():
    crd = make_crd()
    crd["spec"]["versions"][0]["subresources"] = {"status": {"x": 1}}
    assert msgs(validate_crd(crd)) == [
        'spec.subresources.status: Invalid value: {"x":1}: must be an empty object'
    ]


def test_scale_subresource_paths():
    crd = make_crd()
    crd["spec"]["versions"][0]["subresources"] = {"scale": {"specReplicasPath": ".status.n"}}
    assert msgs(validate_crd(crd)) == [
        'spec.subresources.scale.specReplicasPath: Invalid value: ".status.n": should be a json'
        " path under .spec",
        "spec.subresources.scale.statusReplicasPath: Required value",
    ]


def test_printer_columns():
    crd = make_crd()
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {},
        {"name": "A", "type": "float", "format": "hex", "jsonPath": "spec.a"},
    ]
    assert msgs(validate_crd(crd)) == [
        "spec.additionalPrinterColumns[0].name: Required value",
        "spec.additionalPrinterColumns[0].type: Required value: must be one of"
        " boolean,date,integer,number,string",
        "spec.additionalPrinterColumns[0].JSONPath: Required value",
        'spec.additionalPrinterColumns[1].type: Invalid value: "float": must be one of'
        " boolean,date,integer,number,string",
        'spec.additionalPrinterColumns[1].format: Invalid value: "hex": must be one of'
        " byte,date,date-time,double,float,int32,int64,password",
        'spec.additionalPrinterColumns[1].JSONPath: Invalid value: "spec.a": must be a simple json'
        " path starting"
        " with .",
    ]


def test_selectable_fields():
    v = version("v1", storage=True)
    v["selectableFields"] = [
        {"jsonPath": ".spec.nope"},
        {"jsonPath": ".spec"},
        {"jsonPath": ".spec.color"},
        {},
    ]
    v["selectableFields"].append({"jsonPath": ".spec.color"})
    assert msgs(validate_crd(make_crd(versions=[v]))) == [
        'spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec.nope": is an invalid'
        " path: does not"
        " refer to a valid field",
        'spec.versions[0].selectableFields[1].jsonPath: Invalid value: ".spec": must point to a field of type'
        " string, boolean or integer. Enum string fields and strings with formats are allowed.",
        "spec.versions[0].selectableFields[3].jsonPath: Required value",
        'spec.versions[0].selectableFields[4].jsonPath: Duplicate value: ".spec.color"',
    ]


def test_conversion_strategy():
    assert msgs(validate_crd(make_crd(conversion={"strategy": "Magic"}))) == [
        'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"'
    ]
    assert msgs(validate_crd(make_crd(conversion={"strategy": "Webhook"}))) == [
        "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
        "spec.conversion.conversionReviewVersions: Required value",
    ]
    webhook = {"clientConfig": {"url": "https://x"}, "conversionReviewVersions": ["v1"]}
    assert validate_crd(make_crd(conversion={"strategy": "Webhook", "webhook": webhook})) == []


def test_deprecation_warning():
    v = version("v1", storage=True)
    v["deprecationWarning"] = "old"
    assert msgs(validate_crd(make_crd(versions=[v]))) == [
        'spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions'
    ]


def test_protected_group_needs_approval_annotation():
    crd = make_crd(group="widgets.k8s.io")
    crd["metadata"]["name"] = "widgets.widgets.k8s.io"
    assert msgs(validate_crd(crd)) == [
        "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must"
        " have approval"
        ' annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111'
    ]
    crd["metadata"]["annotations"] = {
        "api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/1"
    }
    assert validate_crd(crd) == []
    crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": "unapproved, experimental"}
    assert validate_crd(crd) == []


def test_preserve_unknown_fields_true_rejected():
    assert msgs(validate_crd(make_crd(preserveUnknownFields=True))) == [
        "spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in"
        " the schema",
        "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set"
        " x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
    ]


def test_update_group_and_plural_are_immutable():
    old = make_crd()
    new = make_crd(group="other.com", names={"plural": "gadgets", "kind": "Widget"})
    assert msgs(validate_crd(new, old)) == [
        'spec.group: Invalid value: "other.com": field is immutable',
        'spec.names.plural: Invalid value: "gadgets": field is immutable',
    ]


def test_update_scope_and_kind_immutable_once_established():
    old = make_crd()
    new = make_crd(scope="Cluster", names={"plural": "widgets", "kind": "Gadget"})
    assert validate_crd(new, old) == []
    old["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
    assert msgs(validate_crd(new, old)) == [
        'spec.scope: Invalid value: "Cluster": field is immutable',
        'spec.names.kind: Invalid value: "Gadget": field is immutable',
    ]


def test_stored_version_cannot_be_dropped_from_spec():
    crd = make_crd()
    crd["status"] = {"storedVersions": ["v1beta1", "v1"]}
    assert msgs(validate_crd(crd, copy.deepcopy(crd))) == [
        'status.storedVersions[0]: Invalid value: "v1beta1": missing from spec.versions; v1beta1'
        " was previously"
        " a storage version, and must remain in spec.versions until a storage migration ensures no"
        " data remains"
        " persisted in v1beta1 and removes v1beta1 from status.storedVersions"
    ]
    crd["status"]["storedVersions"] = []
    assert validate_crd(crd) == []


# --- structural schemas -----------------------------------------------------------------------------


def structural(schema: dict) -> list[str]:
    return msgs(validate_structural(schema, "s"))


def test_structural_ok_with_preserve_unknown_and_int_or_string():
    assert (
        structural(
            {
                "type": "object",
                "properties": {
                    "any": {"x-kubernetes-preserve-unknown-fields": True},
                    "port": {
                        "x-kubernetes-int-or-string": True,
                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                    },
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "items": {"type": "array", "items": {"type": "string"}},
                    "metadata": {
                        "type": "object",
                        "properties": {"name": {"type": "string", "maxLength": 20}},
                    },
                },
            }
        )
        == []
    )


def test_structural_type_rules_are_sorted_by_message():
    schema = {
        "properties": {
            "b": {"type": "array", "items": {}},
            "a": {},
        }
    }
    assert structural(schema) == [
        "s.properties[a].type: Required value: must not be empty for specified object fields",
        "s.properties[b].items.type: Required value: must not be empty for specified array items",
        "s.type: Required value: must not be empty at the root",
    ]


def test_structural_root_and_additional_properties():
    assert structural({"type": "array", "items": {"type": "string"}}) == [
        's.type: Invalid value: "array": must be object at the root'
    ]
    assert structural({"type": "object", "additionalProperties": {"type": "string"}}) == [
        "s.additionalProperties: Forbidden: must not be used at the root"
    ]
    schema = {
        "type": "object",
        "properties": {
            "m": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": False}
        },
    }
    assert structural(schema) == [
        "s.properties[m].additionalProperties: Forbidden: additionalProperties and properties are"
        " mutual exclusive"
    ]


def test_structural_junctors():
    schema = {
        "type": "object",
        "properties": {
            "a": {
                "type": "object",
                "properties": {"x": {"type": "string"}},
                "anyOf": [{"type": "object", "required": ["x"]}, {"properties": {"y": {"minLength": 1}}}],
            }
        },
    }
    assert structural(schema) == [
        "s.properties[a].anyOf[0].type: Forbidden: must be empty to be structural",
        "s.properties[a].properties[y]: Required value: because it is defined in"
        " s.properties[a].anyOf[1].properties[y]",
    ]


def test_structural_metadata_restrictions():
    schema = {"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {}}}}}
    assert structural(schema) == [
        "s.properties[metadata].properties[labels].type: Required value: must not be empty for"
        " specified object fields",
        "s.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but"
        " metadata is implicitly specified",
    ]
    schema = {
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"default": "x", "type": "string"}}}
        },
    }
    assert structural(schema) == [
        "s.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata"
    ]


def test_structural_embedded_resource():
    schema = {
        "type": "object",
        "properties": {"t": {"type": "object", "x-kubernetes-embedded-resource": True}},
    }
    assert structural(schema) == [
        "s.properties[t].properties: Required value: must not be empty if"
        " x-kubernetes-embedded-resource is true"
        " without x-kubernetes-preserve-unknown-fields"
    ]
    schema["properties"]["t"]["x-kubernetes-preserve-unknown-fields"] = True
    assert structural(schema) == []


def test_structural_openapi_restrictions():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "str"},
            "b": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "c": {"type": "string", "x-kubernetes-preserve-unknown-fields": False},
            "d": {"type": "string", "$ref": "#/definitions/x"},
            "e": {"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "map"},
        },
    }
    assert structural(schema) == [
        's.properties[a].type: Unsupported value: "str": supported values: "array", "boolean", "integer",'
        ' "number", "object", "string"',
        "s.properties[b].uniqueItems: Forbidden: uniqueItems cannot be set to true since the"
        " runtime complexity"
        " becomes quadratic",
        "s.properties[c].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true"
        " or undefined",
        "s.properties[d].$ref: Forbidden: $ref is not supported",
        "s.properties[e].x-kubernetes-list-map-keys: Required value: must not be empty if"
        " x-kubernetes-list-type"
        " is map",
    ]


def test_structural_invalid_pattern():
    errs = validate_structural(
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}, "s"
    )
    assert len(errs) == 1
    assert errs[0].field == "s.properties[a].pattern"
    assert errs[0].detail.startswith("must be a valid regular expression, but isn't: ")


def test_structural_defaults_are_validated_and_pruned():
    schema = {
        "type": "object",
        "properties": {
            "size": {"type": "integer", "default": "big"},
            "obj": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}},
        },
    }
    assert structural(schema) == [
        's.properties[size].default: Invalid value: "string":  in body must be of type integer: "string"',
        's.properties[obj].default: Invalid value: {"a":"x","b":1}: must not have unknown fields',
    ]


# --- defaulting -----------------------------------------------------------------------------------


DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "default": {},
            "properties": {
                "size": {"type": "integer", "default": 3},
                "mode": {"type": "string"},
                "opt": {"type": "string", "nullable": True},
                "conf": {
                    "type": "object",
                    "default": {"a": 1},
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}},
                },
                "ports": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "default": {},
                        "properties": {"proto": {"type": "string", "default": "TCP"}},
                    },
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string", "default": "on"}},
            },
        }
    },
}


def test_defaults_fill_absent_fields_recursively():
    obj: dict[str, Any] = {"metadata": {"name": "w"}}
    apply_defaults(obj, DEFAULTS_SCHEMA)
    assert obj == {"metadata": {"name": "w"}, "spec": {"size": 3, "conf": {"a": 1, "b": 2}}}


def test_defaults_in_items_and_additional_properties():
    obj = {"spec": {"size": 5, "ports": [{}, {"proto": "UDP"}, None], "labels": {"x": None, "y": "off"}}}
    apply_defaults(obj, DEFAULTS_SCHEMA)
    assert obj["spec"]["ports"] == [{"proto": "TCP"}, {"proto": "UDP"}, {"proto": "TCP"}]
    assert obj["spec"]["labels"] == {"x": "on", "y": "off"}
    assert obj["spec"]["size"] == 5


def test_defaults_nulls():
    obj = {"spec": {"size": None, "mode": None, "opt": None}}
    apply_defaults(obj, DEFAULTS_SCHEMA)
    assert obj["spec"] == {"size": 3, "opt": None, "conf": {"a": 1, "b": 2}}


def test_defaults_are_copies():
    schema = copy.deepcopy(DEFAULTS_SCHEMA)
    a: dict[str, Any] = {}
    apply_defaults(a, schema)
    a["spec"]["conf"]["a"] = 99
    assert schema == DEFAULTS_SCHEMA


# --- pruning --------------------------------------------------------------------------------------


PRUNE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer"},
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
                "labels": {
                    "type": "object",
                    "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}},
                },
                "free": {"type": "object", "additionalProperties": True},
                "raw": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {"known": {"type": "object", "properties": {"a": {"type": "integer"}}}},
                },
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {
                        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}
                    },
                },
            },
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


def test_prune_unknown_fields_sorted_with_paths():
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "whatever": {"kept": True}},
        "zeta": 1,
        "spec": {"size": 1, "foo": "x", "items": [{"name": "a"}, {"name": "b", "extra": 1}]},
        "alpha": 2,
        "status": {"anything": {"goes": [1]}},
    }
    removed = prune(obj, PRUNE_SCHEMA)
    assert removed == ["alpha", "spec.foo", "spec.items[1].extra", "zeta"]
    assert obj == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "whatever": {"kept": True}},
        "spec": {"size": 1, "items": [{"name": "a"}, {"name": "b"}]},
        "status": {"anything": {"goes": [1]}},
    }


def test_prune_additional_properties_and_preserve_unknown():
    obj = {
        "spec": {
            "labels": {"k": {"v": "1", "w": "2"}},
            "free": {"n": 1, "o": {"deep": 1}},
            "raw": {"unknown": {"z": 1}, "known": {"a": 1, "b": 2}},
        }
    }
    removed = prune(obj, PRUNE_SCHEMA)
    # additionalProperties: true has no schema, so nested objects under it are pruned (upstream behavior).
    assert removed == ["spec.free.o.deep", "spec.labels.k.w", "spec.raw.known.b"]
    assert obj["spec"] == {
        "labels": {"k": {"v": "1"}},
        "free": {"n": 1, "o": {}},
        "raw": {"unknown": {"z": 1}, "known": {"a": 1}},
    }


def test_prune_embedded_resource_keeps_type_and_object_meta():
    template = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}, "bogus": 1},
        "spec": {"replicas": 1, "containers": []},
        "other": 1,
    }
    obj = {"spec": {"template": template}}
    assert prune(obj, PRUNE_SCHEMA) == ["spec.template.other", "spec.template.spec.containers"]
    assert obj["spec"]["template"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}, "bogus": 1},
        "spec": {"replicas": 1},
    }


def test_prune_nested_value_with_prefix_is_not_a_resource_root():
    spec = {"size": 1, "kind": "x", "foo": 2}
    assert prune(spec, PRUNE_SCHEMA["properties"]["spec"], "spec") == ["spec.foo", "spec.kind"]
    assert spec == {"size": 1}


# --- object validation ------------------------------------------------------------------------------


def obj_schema(props: dict, **extra: Any) -> dict:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props, **extra}}}


def check(props: dict, spec: Any, **extra: Any) -> list[FieldError]:
    return validate_object(
        {"apiVersion": "example.com/v1", "kind": "Widget", "spec": spec}, obj_schema(props, **extra)
    )


def test_type_error_exact_upstream_text():
    errs = check({"size": {"type": "integer"}}, {"size": "string"})
    assert len(errs) == 1
    e = errs[0]
    assert (e.type, e.field) == (TYPE_INVALID, "spec.size")
    assert (
        e.message()
        == 'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"'
    )
    assert e.detail == 'spec.size in body must be of type integer: "string"'


@pytest.mark.parametrize(
    ("schema", "value", "got"),
    [
        ({"type": "integer"}, True, "boolean"),
        ({"type": "integer"}, 1.5, "number"),
        ({"type": "number"}, False, "boolean"),
        ({"type": "string"}, 3, "integer"),
        ({"type": "string"}, {}, "object"),
        ({"type": "object"}, [], "array"),
        ({"type": "array", "items": {"type": "string"}}, "x", "string"),
        ({"type": "boolean"}, "true", "string"),
        ({"type": "string"}, None, "null"),
    ],
)
def test_type_mismatches_report_json_type(schema: dict, value: Any, got: str):
    errs = check({"f": schema}, {"f": value})
    assert msgs(errs) == [
        f'spec.f: Invalid value: "{got}": spec.f in body must be of type {schema["type"]}: "{got}"'
    ]


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "integer"}, 1.0),
        ({"type": "integer"}, -7),
        ({"type": "number"}, 2),
        ({"type": "number"}, 2.5),
        ({"type": "string", "nullable": True}, None),
        ({"x-kubernetes-int-or-string": True}, 80),
        ({"x-kubernetes-int-or-string": True}, "80%"),
        ({"x-kubernetes-preserve-unknown-fields": True}, {"any": [1, "x"]}),
        ({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, {"any": 1}),
    ],
)
def test_type_accepts(schema: dict, value: Any):
    assert check({"f": schema}, {"f": value}) == []


def test_int_or_string_rejects_other_types():
    assert msgs(check({"port": {"x-kubernetes-int-or-string": True}}, {"port": True})) == [
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"'
    ]


def test_required():
    errs = check({"size": {"type": "integer"}, "name": {"type": "string"}}, {}, required=["size", "name"])
    assert msgs(errs) == ["spec.size: Required value", "spec.name: Required value"]
    assert {e.type for e in errs} == {REQUIRED}


def test_enum():
    errs = check({"color": {"type": "string", "enum": ["red", "blue"]}}, {"color": "pink"})
    assert msgs(errs) == ['spec.color: Unsupported value: "pink": supported values: "red", "blue"']
    assert errs[0].type == NOT_SUPPORTED
    assert msgs(check({"n": {"type": "number", "enum": [1, 2.5, True]}}, {"n": 3})) == [
        'spec.n: Unsupported value: 3: supported values: "1", "2.5", "true"'
    ]
    assert check({"n": {"type": "number", "enum": [1, 2.5]}}, {"n": 1.0}) == []
    assert check({"b": {"type": "boolean", "enum": [1]}}, {"b": True}) != []


def test_minimum_maximum():
    props = {"size": {"type": "integer", "minimum": 1, "maximum": 10}}
    assert msgs(check(props, {"size": 0})) == [
        "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"
    ]
    assert msgs(check(props, {"size": 11})) == [
        "spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10"
    ]
    assert check(props, {"size": 10}) == []
    props = {
        "size": {
            "type": "integer",
            "minimum": 1,
            "exclusiveMinimum": True,
            "maximum": 10,
            "exclusiveMaximum": True,
        }
    }
    assert msgs(check(props, {"size": 1})) == [
        "spec.size: Invalid value: 1: spec.size in body should be greater than 1"
    ]
    assert msgs(check(props, {"size": 10})) == [
        "spec.size: Invalid value: 10: spec.size in body should be less than 10"
    ]


def test_minimum_for_floats_and_integer_truncation_quirk():
    assert msgs(check({"r": {"type": "number", "minimum": 1}}, {"r": 0.5})) == [
        "spec.r: Invalid value: 0.5: spec.r in body should be greater than or equal to 1"
    ]
    assert msgs(check({"r": {"type": "number", "maximum": 1000000}}, {"r": 2e6})) == [
        "spec.r: Invalid value: 2e+06: spec.r in body should be less than or equal to 1e+06"
    ]
    # Integers are compared with int64(minimum): 1 >= int64(1.5) passes upstream.
    assert check({"n": {"type": "integer", "minimum": 1.5}}, {"n": 1}) == []


def test_multiple_of():
    assert msgs(check({"n": {"type": "integer", "multipleOf": 5}}, {"n": 12})) == [
        "spec.n: Invalid value: 12: spec.n in body should be a multiple of 5"
    ]
    assert check({"n": {"type": "number", "multipleOf": 0.5}}, {"n": 2.5}) == []


def test_string_lengths_and_pattern():
    props = {"name": {"type": "string", "minLength": 3, "maxLength": 5, "pattern": "^a"}}
    assert msgs(check(props, {"name": "ab"})) == [
        'spec.name: Invalid value: "ab": spec.name in body should be at least 3 chars long'
    ]
    errs = check(props, {"name": "abcdef"})
    assert msgs(errs) == ["spec.name: Too long: may not be more than 5 bytes"]
    assert errs[0].type == TOO_LONG
    assert msgs(check(props, {"name": "xyz"})) == [
        "spec.name: Invalid value: \"xyz\": spec.name in body should match '^a'"
    ]
    assert check(props, {"name": "aéç"}) == []  # lengths count characters
    assert msgs(check({"n": {"type": "string", "maxLength": 1}}, {"n": "ab"})) == [
        "spec.n: Too long: may not be more than 1 byte"
    ]


def test_items_and_item_counts():
    props = {
        "tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}},
        "rules": {
            "type": "array",
            "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        },
    }
    assert msgs(check(props, {"tags": []})) == [
        "spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"
    ]
    errs = check(props, {"tags": ["a", "b", 3]})
    assert msgs(errs) == [
        'spec.tags[2]: Invalid value: "integer": spec.tags[2] in body must be of type string: "integer"',
        "spec.tags: Too many: 3: must have at most 2 items",
    ]
    assert errs[1].type == TOO_MANY
    assert msgs(check(props, {"rules": [{"name": "a"}, {}]})) == ["spec.rules[1].name: Required value"]


def test_date_time_format():
    props = {"when": {"type": "string", "format": "date-time"}}
    for good in ("2024-05-01T10:00:00Z", "2024-05-01t10:00:00.5+02:00", "2024-02-29T23:59:59-01:30"):
        assert check(props, {"when": good}) == [], good
    for bad in ("yesterday", "2024-02-30T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01 10:00:00Z"):
        errs = check(props, {"when": bad})
        assert msgs(errs) == [
            f'spec.when: Invalid value: "{bad}": spec.when in body must be of type date-time: "{bad}"'
        ], bad
        assert errs[0].type == TYPE_INVALID
    # A non-string reports the Go format of the value (upstream typeValidator).
    assert msgs(check(props, {"when": 5})) == [
        'spec.when: Invalid value: "int64": spec.when in body must be of type date-time: "int64"'
    ]


def test_additional_properties():
    props = {
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "closed": {"type": "object", "additionalProperties": False},
    }
    assert msgs(check(props, {"labels": {"a": "x", "b": 1}})) == [
        'spec.labels.b: Invalid value: "integer": spec.labels.b in body must be of type string: "integer"'
    ]
    assert msgs(check(props, {"closed": {"x": 1}})) == [
        'spec.closed: Invalid value: "x": spec.closed.x in body is a forbidden property'
    ]


def test_min_max_properties():
    props = {
        "m": {
            "type": "object",
            "minProperties": 1,
            "maxProperties": 2,
            "additionalProperties": {"type": "string"},
        }
    }
    assert msgs(check(props, {"m": {}})) == [
        "spec.m: Invalid value: 0: spec.m in body should have at least 1 properties"
    ]
    assert msgs(check(props, {"m": {"a": "1", "b": "2", "c": "3"}})) == [
        "spec.m: Too many: 3: must have at most 2 items"
    ]


def test_metadata_is_not_validated_and_cel_is_ignored():
    schema = {
        "type": "object",
        "x-kubernetes-validations": [{"rule": "false"}],
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 2}}}
        },
    }
    assert validate_object({"metadata": {"name": "too-long"}}, schema) == []


def test_embedded_resource_needs_api_version_and_kind():
    props = {
        "template": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        }
    }
    assert msgs(check(props, {"template": {"metadata": {}}})) == [
        "spec.template.apiVersion: Required value: must not be empty",
        "spec.template.kind: Required value: must not be empty",
    ]
    assert msgs(check(props, {"template": {"apiVersion": "a/b/c", "kind": "My_Kind"}})) == [
        'spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
        'spec.template.kind: Invalid value: "My_Kind": may have mixed case, but should otherwise'
        f" match: {DNS1035}",
    ]
    assert check(props, {"template": {"apiVersion": "apps/v1", "kind": "Deployment"}}) == []


def test_all_errors_collected_in_schema_order():
    props = {"a": {"type": "integer"}, "b": {"type": "string", "enum": ["x"]}}
    assert [e.field for e in check(props, {"b": 1, "a": "1"})] == ["spec.a", "spec.b", "spec.b"]
    assert [e.type for e in check(props, {"b": 1})] == [TYPE_INVALID, NOT_SUPPORTED]
    assert FORBIDDEN not in {e.type for e in check(props, {"b": 1})}


# --- property: conforming objects validate and prune to themselves ------------------------------------

_keys = st.text(alphabet=string.ascii_letters, min_size=1, max_size=6)


@st.composite
def _string_schema(draw: st.DrawFn) -> dict:
    s: dict[str, Any] = {"type": "string"}
    lo = draw(st.one_of(st.none(), st.integers(0, 4)))
    hi = draw(st.one_of(st.none(), st.integers(lo or 0, 8)))
    if lo is not None:
        s["minLength"] = lo
    if hi is not None:
        s["maxLength"] = hi
    return s


@st.composite
def _int_schema(draw: st.DrawFn) -> dict:
    s: dict[str, Any] = {"type": "integer"}
    lo = draw(st.one_of(st.none(), st.integers(-100, 100)))
    hi = draw(st.one_of(st.none(), st.integers(lo if lo is not None else -100, 200)))
    if lo is not None:
        s["minimum"] = lo
    if hi is not None:
        s["maximum"] = hi
    return s


_leaf_schemas = st.one_of(
    _string_schema(),
    _int_schema(),
    st.just({"type": "number"}),
    st.just({"type": "boolean"}),
    st.just({"x-kubernetes-int-or-string": True}),
    st.just({"type": "string", "format": "date-time"}),
    st.lists(st.text(max_size=5), min_size=1, max_size=4, unique=True).map(
        lambda e: {"type": "string", "enum": e}
    ),
)


def _containers(children: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    def obj(props: dict, req: list[str]) -> dict:
        return {"type": "object", "properties": props, "required": sorted(set(req) & set(props))}

    return st.one_of(
        st.builds(
            lambda items, n: {"type": "array", "items": items, "maxItems": n}, children, st.integers(0, 3)
        ),
        st.builds(obj, st.dictionaries(_keys, children, max_size=4), st.lists(_keys, max_size=3)),
        st.builds(lambda v: {"type": "object", "additionalProperties": v}, children),
        st.builds(
            lambda p: {"type": "object", "properties": p, "x-kubernetes-preserve-unknown-fields": True},
            st.dictionaries(_keys, children, max_size=2),
        ),
    )


_schemas = st.recursive(_leaf_schemas, _containers, max_leaves=8)


def _values(s: dict) -> st.SearchStrategy[Any]:
    if "enum" in s:
        return st.sampled_from(s["enum"])
    if s.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(), st.text(max_size=5))
    t = s.get("type")
    if t == "string" and s.get("format") == "date-time":
        return st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat())
    if t == "string":
        return st.text(min_size=s.get("minLength", 0), max_size=s.get("maxLength", 8))
    if t == "integer":
        return st.integers(s.get("minimum"), s.get("maximum"))
    if t == "number":
        return st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False))
    if t == "boolean":
        return st.booleans()
    if t == "array":
        return st.lists(_values(s["items"]), max_size=s["maxItems"])
    if "additionalProperties" in s:
        return st.dictionaries(_keys, _values(s["additionalProperties"]), max_size=3)
    props = s["properties"]
    req = {k: _values(props[k]) for k in s.get("required", [])}
    opt = {k: _values(v) for k, v in props.items() if k not in req}
    return st.fixed_dictionaries(req, optional=opt)


@st.composite
def _conforming(draw: st.DrawFn) -> tuple[dict, dict]:
    spec_schema = draw(_schemas)
    schema = {"type": "object", "properties": {"spec": spec_schema}}
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": draw(_values(spec_schema)),
    }
    return schema, obj


@settings(deadline=None, max_examples=200)
@given(_conforming())
def test_property_conforming_objects_validate_and_prune_to_themselves(case: tuple[dict, dict]):
    schema, obj = case
    assert validate_structural(schema, "s") == []
    assert validate_object(obj, schema) == []
    pruned = copy.deepcopy(obj)
    assert prune(pruned, schema) == []
    assert pruned == obj
    apply_defaults(pruned, schema)
    assert pruned == obj
