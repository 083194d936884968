"""Unit tests for the built-in kinds' validation (ObjectMeta and each kind's own rules): upstream rules with
exact messages."""

from __future__ import annotations

import base64

import pytest

from framework.apiserver.encoding import decoding
from framework.apiserver.encoding.gobase64 import go_base64_decode
from framework.apiserver.machinery import validation as v
from framework.apiserver.machinery.errors import FieldError, invalid
from framework.apiserver.registry.admissionregistration.webhooks import (
    WEBHOOK_NULLS,
    default_webhook_configuration,
    validate_webhook_configuration,
)
from framework.apiserver.registry.coordination.lease import validate_lease
from framework.apiserver.registry.core.configmap import validate_configmap
from framework.apiserver.registry.core.event_validation import validate_event
from framework.apiserver.registry.core.namespace import validate_namespace
from framework.apiserver.registry.core.resourcequota import validate_resource_quota
from framework.apiserver.registry.core.secret import normalize_secret, validate_secret
from framework.apiserver.registry.core.serviceaccount import (
    normalize_service_account,
    validate_service_account,
)
from framework.apiserver.registry.rbac.bindings import validate_binding
from framework.apiserver.registry.rbac.policyrules import validate_role
from framework.meta import validation as names

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
    "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)
QUANTITY_MSG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def msgs(errs: list[FieldError]) -> list[str]:
    return [e.message() for e in errs]


def meta_errs(
    meta: dict, namespaced: bool = True, rule: str = "subdomain", generated: bool = False
) -> list[str]:
    return msgs(
        v.validate_object_meta(meta, namespaced=namespaced, name_rule=rule, generate_name_used=generated)
    )


# --- name rules ---------------------------------------------------------------------------------------


def test_name_rule_helpers():
    assert names.is_dns1123_subdomain("example.com") == []
    assert names.is_dns1123_subdomain("Bad_Name") == [SUBDOMAIN_MSG]
    assert names.is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]
    assert names.is_dns1123_label("my-name") == []
    assert names.is_dns1123_label("a.b") == ["must not contain dots"]
    assert names.is_dns1123_label("A") == [LABEL_MSG]
    assert names.is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]
    assert names.is_path_segment_name("Any Thing:ok") == []
    assert names.is_path_segment_name("..") == ["may not be '..'"]
    assert names.is_path_segment_name("a/b%c") == ["may not contain '/'", "may not contain '%'"]


def test_qualified_name_and_label_value_helpers():
    assert names.is_qualified_name("example.com/My.Name-1") == []
    assert names.is_qualified_name("bad name") == [NAME_PART_MSG]
    assert names.is_qualified_name("/x") == ["prefix part must be non-empty"]
    assert names.is_qualified_name("Bad_Prefix/x") == ["prefix part " + SUBDOMAIN_MSG]
    assert names.is_qualified_name("a/b/c")[0].startswith("a qualified name must consist of")
    assert names.is_qualified_name("a/b/c")[0].endswith(
        "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    )
    assert names.is_qualified_name("x" * 64) == ["name part must be no more than 63 characters"]
    assert names.is_valid_label_value("") == []
    assert names.is_valid_label_value("-x") == [LABEL_VALUE_MSG]
    assert names.is_config_map_key("..a") == ["must not start with '..'"]
    assert names.is_config_map_key("a b") == [CONFIG_KEY_MSG]


# --- metadata ----------------------------------------------------------------------------------------


def test_valid_meta_has_no_errors():
    meta = {
        "name": "web-1",
        "namespace": "default",
        "labels": {"app.kubernetes.io/name": "web", "tier": ""},
        "annotations": {"Example.COM/Note": "anything at all"},
        "finalizers": ["example.com/cleanup", "kubernetes"],
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "1", "controller": True}
        ],
    }
    assert meta_errs(meta) == []


def test_meta_name_rules():
    assert meta_errs({"name": "Bad_Name", "namespace": "ns"}) == [
        f'metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN_MSG}'
    ]
    assert meta_errs({"name": "a.b"}, namespaced=False, rule="label") == [
        'metadata.name: Invalid value: "a.b": must not contain dots'
    ]
    assert meta_errs({"name": "a:b Ü"}, namespaced=False, rule="path") == []
    assert meta_errs({"name": ".."}, namespaced=False, rule="path") == [
        "metadata.name: Invalid value: \"..\": may not be '..'"
    ]
    assert meta_errs({"namespace": "ns"}) == [
        "metadata.name: Required value: name or generateName is required"
    ]


def test_meta_generate_name_checked_as_prefix():
    assert meta_errs({"name": "web-abcde", "generateName": "web-", "namespace": "ns"}, generated=True) == []
    assert meta_errs({"name": "Web-abcde", "generateName": "Web-", "namespace": "ns"}, generated=True) == [
        f'metadata.generateName: Invalid value: "Web-": {SUBDOMAIN_MSG}',
        f'metadata.name: Invalid value: "Web-abcde": {SUBDOMAIN_MSG}',
    ]
    assert meta_errs({"name": "ok", "generateName": "Web-", "namespace": "ns"}) == []


def test_meta_namespace_rules():
    assert meta_errs({"name": "x"}) == ["metadata.namespace: Required value"]
    assert meta_errs({"name": "x", "namespace": "a.b"}) == [
        'metadata.namespace: Invalid value: "a.b": must not contain dots'
    ]
    assert meta_errs({"name": "x", "namespace": "ns"}, namespaced=False) == [
        "metadata.namespace: Forbidden: not allowed on this type"
    ]


def test_meta_labels():
    assert meta_errs({"name": "x", "namespace": "ns", "labels": {"bad key": "v", "k": "bad value"}}) == [
        f'metadata.labels: Invalid value: "bad key": {NAME_PART_MSG}',
        f'metadata.labels: Invalid value: "bad value": {LABEL_VALUE_MSG}',
    ]
    assert meta_errs({"name": "x", "namespace": "ns", "labels": {"k": "v" * 64}}) == [
        f'metadata.labels: Invalid value: "{"v" * 64}": must be no more than 63 characters'
    ]


def test_meta_annotations():
    assert meta_errs({"name": "x", "namespace": "ns", "annotations": {"UPPER.example.com/Key": "v"}}) == []
    assert meta_errs({"name": "x", "namespace": "ns", "annotations": {"bad key": ""}}) == [
        f'metadata.annotations: Invalid value: "bad key": {NAME_PART_MSG}'
    ]
    big = {"a": "x" * (262144 - 1)}
    assert meta_errs({"name": "x", "namespace": "ns", "annotations": big}) == []
    big["a"] += "x"
    assert meta_errs({"name": "x", "namespace": "ns", "annotations": big}) == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]


def test_meta_finalizers():
    assert meta_errs({"name": "x", "namespace": "ns", "finalizers": ["bad finalizer"]}) == [
        f'metadata.finalizers: Invalid value: "bad finalizer": {NAME_PART_MSG}'
    ]
    assert meta_errs({"name": "x", "namespace": "ns", "finalizers": ["orphan", "foregroundDeletion"]}) == [
        'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: '
        "finalizer orphan and foregroundDeletion cannot be both set"
    ]


def test_meta_owner_references_required_fields():
    assert meta_errs({"name": "x", "namespace": "ns", "ownerReferences": [{}]}) == [
        'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
    ]
    ref = {"apiVersion": "example.com/", "kind": "K", "name": "n", "uid": "u"}
    assert meta_errs({"name": "x", "namespace": "ns", "ownerReferences": [ref]}) == [
        'metadata.ownerReferences.apiVersion: Invalid value: "example.com/": version must not be empty'
    ]


def test_meta_owner_references_single_controller():
    refs = [
        {"apiVersion": "v1", "kind": "K1", "name": "N1", "uid": "1", "controller": True},
        {
            "apiVersion": "v1",
            "kind": "K2",
            "name": "N2",
            "uid": "2",
            "controller": True,
            "blockOwnerDeletion": False,
        },
    ]
    errs = v.validate_object_meta(
        {"name": "x", "namespace": "ns", "ownerReferences": refs},
        namespaced=True,
        name_rule="subdomain",
        generate_name_used=False,
    )
    assert len(errs) == 1
    assert errs[0].field == "metadata.ownerReferences"
    assert errs[0].detail == (
        'Only one reference can have Controller set to true. Found "true" in references for K1/N1 and K2/N2'
    )
    assert errs[0].message() == (
        "metadata.ownerReferences: Invalid value: []v1.OwnerReference{"
        'v1.OwnerReference{APIVersion:"v1", Kind:"K1", Name:"N1", UID:"1", Controller:(*bool)(true), '
        "BlockOwnerDeletion:(*bool)(nil)}, "
        'v1.OwnerReference{APIVersion:"v1", Kind:"K2", Name:"N2", UID:"2", Controller:(*bool)(true), '
        "BlockOwnerDeletion:(*bool)(false)}}: "
        'Only one reference can have Controller set to true. Found "true" in references for K1/N1 and K2/N2'
    )
    assert errs[0].cause()["message"].startswith("Invalid value: []v1.OwnerReference{v1.OwnerReference{")


def test_meta_core_event_cannot_own():
    ref = {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "1"}
    assert meta_errs({"name": "x", "namespace": "ns", "ownerReferences": [ref]}) == [
        'metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:"v1", Kind:"Event", Name:"e", '
        'UID:"1", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}: '
        "/v1, Kind=Event is disallowed from being an owner"
    ]


def test_invalid_status_message_from_meta_errors():
    errs = v.validate_object_meta(
        {"name": "Bad_Name", "namespace": "ns"},
        namespaced=True,
        name_rule="subdomain",
        generate_name_used=False,
    )
    status = invalid("ConfigMap", "", "Bad_Name", errs).status()
    assert (
        status["message"]
        == f'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN_MSG}'
    )


# --- metadata updates ------------------------------------------------------------------------------------

OLD_META = {
    "name": "x",
    "namespace": "ns",
    "uid": "u1",
    "creationTimestamp": "2024-05-01T10:00:00Z",
    "finalizers": ["a.io/keep"],
}


def test_meta_update_unchanged_is_valid():
    assert msgs(v.validate_object_meta_update(dict(OLD_META), OLD_META)) == []


def test_meta_update_immutable_fields():
    new = dict(OLD_META, name="y", namespace="other", uid="u2", creationTimestamp="2024-05-02T10:00:00Z")
    assert msgs(v.validate_object_meta_update(new, OLD_META)) == [
        'metadata.name: Invalid value: "y": field is immutable',
        'metadata.namespace: Invalid value: "other": field is immutable',
        'metadata.uid: Invalid value: "u2": field is immutable',
        "metadata.creationTimestamp: Invalid value: 2024-05-02 10:00:00 +0000 UTC: field is immutable",
    ]


def test_meta_update_client_may_not_set_deletion_fields():
    new = dict(OLD_META, deletionTimestamp="2024-05-03T10:00:00Z", deletionGracePeriodSeconds=30)
    assert msgs(v.validate_object_meta_update(new, OLD_META)) == [
        "metadata.deletionTimestamp: Invalid value: 2024-05-03 10:00:00 +0000 UTC: field is immutable",
        "metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable",
    ]


def test_meta_update_no_new_finalizers_while_deleting():
    old = dict(OLD_META, deletionTimestamp="2024-05-03T10:00:00Z", deletionGracePeriodSeconds=0)
    removing = dict(old, finalizers=[])
    assert msgs(v.validate_object_meta_update(removing, old)) == []
    adding = dict(old, finalizers=["a.io/keep", "y", "x"])
    assert msgs(v.validate_object_meta_update(adding, old)) == [
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, "
        'found new finalizers []string{"x", "y"}'
    ]
    # Adding is fine while the object is not being deleted.
    assert msgs(v.validate_object_meta_update(dict(OLD_META, finalizers=["x"]), OLD_META)) == []


# --- ConfigMap / Secret ------------------------------------------------------------------------------------


def test_configmap_valid():
    cm = {
        "data": {"key.name": "v", "KEY_NAME": ""},
        "binaryData": {"bin": base64.b64encode(b"\0\1").decode()},
    }
    assert validate_configmap(cm) == []


def test_configmap_keys_and_duplicates():
    cm = {"data": {"a b": "1", "dup": "x"}, "binaryData": {"dup": "eA==", "..": ""}}
    assert msgs(validate_configmap(cm)) == [
        f'data[a b]: Invalid value: "a b": {CONFIG_KEY_MSG}',
        'data[dup]: Invalid value: "dup": duplicate of key present in binaryData',
        "binaryData[..]: Invalid value: \"..\": must not be '..'",
    ]


def test_configmap_binary_data_must_be_base64():
    assert msgs(validate_configmap({"binaryData": {"b": "abc"}})) == [
        'binaryData[b]: Invalid value: "abc": illegal base64 data at input byte 0'
    ]
    assert msgs(validate_configmap({"binaryData": {"b": "ab!d"}})) == [
        'binaryData[b]: Invalid value: "ab!d": illegal base64 data at input byte 2'
    ]


def test_configmap_size_limit():
    assert msgs(validate_configmap({"data": {"a": "x" * (1024 * 1024 + 1)}})) == [
        "Too long: may not be more than 1048576 bytes"
    ]


def test_configmap_immutable():
    old = {"immutable": True, "data": {"a": "1"}}
    assert validate_configmap({"immutable": True, "data": {"a": "1"}}, old) == []
    assert msgs(
        validate_configmap({"immutable": True, "data": {"a": "2"}, "binaryData": {"b": ""}}, old)
    ) == [
        "data: Forbidden: field is immutable when `immutable` is set",
        "binaryData: Forbidden: field is immutable when `immutable` is set",
    ]
    assert msgs(validate_configmap({"data": {"a": "1"}}, old)) == [
        "immutable: Forbidden: field is immutable when `immutable` is set"
    ]
    # Making a mutable ConfigMap immutable (and changing it in the same update) is allowed.
    assert validate_configmap({"immutable": True, "data": {"a": "2"}}, {"data": {"a": "1"}}) == []


def test_go_base64_decoder_matches_go_errors():
    assert go_base64_decode("aGVsbG8=") == b"hello"
    assert go_base64_decode("aGVs\nbG8=") == b"hello"  # CR/LF are skipped
    assert go_base64_decode("") == b""
    for text, offset in [("aGVsbG8", 4), ("a===", 1), ("aGVsbG8=x", 8), ("aGVsbA=", 7), ("aGVs bG8=", 4)]:
        with pytest.raises(ValueError, match=f"^illegal base64 data at input byte {offset}$"):
            go_base64_decode(text)


def test_normalize_secret_merges_string_data_and_defaults_type():
    secret = {"data": {"a": "b2xk", "keep": "aw=="}, "stringData": {"a": "new", "s": "é"}}
    normalize_secret(secret)
    assert secret == {
        "data": {"a": "bmV3", "keep": "aw==", "s": "w6k="},
        "type": "Opaque",
    }
    typed = {"type": "kubernetes.io/tls"}
    normalize_secret(typed)
    assert typed == {"type": "kubernetes.io/tls"}


def test_secret_rules():
    assert validate_secret({"type": "Opaque", "data": {"k": "dmFsdWU="}}) == []
    assert msgs(validate_secret({"type": "Opaque", "data": {"k": "not base64!", "bad key": ""}})) == [
        f'data[bad key]: Invalid value: "bad key": {CONFIG_KEY_MSG}',
        'data[k]: Invalid value: "<secret contents redacted>": illegal base64 data at input byte 3',
    ]
    # Type-specific secret rules are not enforced: a bare service-account-token secret is accepted.
    assert validate_secret({"type": "kubernetes.io/service-account-token"}) == []


def test_secret_update_rules():
    old = {"type": "Opaque", "immutable": True, "data": {"k": "dg=="}}
    assert validate_secret(dict(old), old) == []
    assert msgs(validate_secret({"type": "x", "immutable": True, "data": {}}, old)) == [
        'type: Invalid value: "x": field is immutable',
        "data: Forbidden: field is immutable when `immutable` is set",
    ]
    assert msgs(validate_secret({"type": "Opaque", "immutable": False, "data": {"k": "dg=="}}, old)) == [
        "immutable: Forbidden: field is immutable when `immutable` is set"
    ]


# --- Namespace / ServiceAccount / ResourceQuota -------------------------------------------------------------


def test_namespace_spec_finalizers():
    assert validate_namespace({"spec": {"finalizers": ["kubernetes", "example.com/x"]}}) == []
    assert msgs(validate_namespace({"spec": {"finalizers": ["custom"]}})) == [
        'spec.finalizers: Invalid value: "custom": name is neither a standard finalizer name nor is it fully '
        "qualified"
    ]


def test_service_account():
    assert validate_service_account({"secrets": [{"name": "s"}]}) == []
    sa = {"secrets": [{"name": "s", "namespace": "ns", "uid": "u", "kind": "Secret"}, {"namespace": "x"}]}
    normalize_service_account(sa)
    assert sa == {"secrets": [{"name": "s"}, {}]}


def test_resource_quota_hard():
    ok = {
        "spec": {
            "hard": {
                "configmaps": 10,
                "secrets": "5",
                "requests.memory": "1Gi",
                "requests.cpu": "500m",
                "count/widgets.example.com": "3",
            }
        }
    }
    assert validate_resource_quota(ok) == []
    bad = {"spec": {"hard": {"configmaps": "abc", "pods": "-1", "secrets": "500m", "limits.cpu": "1Mm"}}}
    assert msgs(validate_resource_quota(bad)) == [
        f'spec.hard[configmaps]: Invalid value: "abc": {QUANTITY_MSG}',
        'spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0',
        "spec.hard[secrets]: Invalid value: 500m: must be an integer",
        'spec.hard[limits.cpu]: Invalid value: "1Mm": unable to parse quantity\'s suffix',
    ]


# --- RBAC ------------------------------------------------------------------------------------------------


def test_roles():
    role = {"rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}
    assert validate_role(role, cluster=False) == []
    urls = {"rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]}
    assert validate_role(urls, cluster=True) == []
    assert msgs(validate_role(urls, cluster=False)) == [
        'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to '
        "non-resource URLs"
    ]
    mixed = {"rules": [{"nonResourceURLs": ["/x"], "resources": ["pods"], "verbs": ["get"]}]}
    assert msgs(validate_role(mixed, cluster=True)) == [
        'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular '
        "resources and non-resource URLs"
    ]
    empty = {
        "rules": [{}, {"verbs": ["get"], "apiGroups": [""], "resources": ["a", "b"], "resourceNames": ["n"]}]
    }
    assert msgs(validate_role(empty, cluster=True)) == [
        "rules[0].verbs: Required value: verbs must contain at least one value",
        "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
        "rules[0].resources: Required value: resource rules must supply at least one resource",
        "rules[1].resourceNames: Required value: resource names cannot apply to multiple resources",
    ]


BINDING = {
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
    "subjects": [
        {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
        {"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"},
        {"kind": "ServiceAccount", "name": "default", "namespace": "ns"},
    ],
}


def test_bindings_valid():
    assert validate_binding(BINDING, cluster=False) == []
    assert validate_binding(BINDING, cluster=True) == []
    rolebinding = dict(
        BINDING,
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        subjects=[{"kind": "ServiceAccount", "name": "default"}],
    )
    assert validate_binding(rolebinding, cluster=False) == []


def test_binding_role_ref_rules():
    assert msgs(validate_binding({}, cluster=False)) == [
        'roleRef.apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io"',
        'roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole"',
        "roleRef.name: Required value",
    ]
    role_ref = {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "a/b"}}
    assert msgs(validate_binding(role_ref, cluster=True)) == [
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
        "roleRef.name: Invalid value: \"a/b\": may not contain '/'",
    ]


def test_binding_subjects():
    subjects = [
        {"kind": "ServiceAccount", "name": "Bad_SA", "apiGroup": "x"},
        {"kind": "User", "name": "", "apiGroup": ""},
        {"kind": "Robot", "name": "r"},
    ]
    assert msgs(validate_binding(dict(BINDING, subjects=subjects), cluster=True)) == [
        f'subjects[0].name: Invalid value: "Bad_SA": {SUBDOMAIN_MSG}',
        'subjects[0].apiGroup: Unsupported value: "x": supported values: ""',
        "subjects[0].namespace: Required value",
        "subjects[1].name: Required value",
        'subjects[1].name: Invalid value: "": user name cannot be empty',
        'subjects[1].apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io"',
        'subjects[2].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
    ]


def test_binding_role_ref_immutable():
    assert validate_binding(BINDING, cluster=True, old=BINDING) == []
    changed = dict(
        BINDING, roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"}
    )
    assert msgs(validate_binding(changed, cluster=True, old=BINDING)) == [
        'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", '
        'Name:"edit"}: cannot change roleRef'
    ]


# --- Lease --------------------------------------------------------------------------------------------------


def test_lease():
    spec = {"holderIdentity": "me", "leaseDurationSeconds": 15, "leaseTransitions": 0}
    assert validate_lease({"spec": spec}) == []
    assert validate_lease({}) == []
    assert msgs(validate_lease({"spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1}})) == [
        "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
        "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
    ]
    assert msgs(validate_lease({"spec": {"leaseDurationSeconds": "15"}})) == [
        'spec.leaseDurationSeconds: Invalid value: "15": must be an integer'
    ]


# --- webhook configurations -----------------------------------------------------------------------------


def _hook(**overrides) -> dict:
    hook = {
        "name": "check.example.com",
        "clientConfig": {"url": "https://127.0.0.1:9443/validate", "caBundle": "Zm9v"},
        "rules": [
            {
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps", "pods/status"],
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1", "v1beta1"],
    }
    hook.update(overrides)
    return hook


def test_webhook_defaults():
    cfg = {"webhooks": [_hook(clientConfig={"service": {"namespace": "ns", "name": "svc"}})]}
    default_webhook_configuration(cfg, mutating=True)
    hook = cfg["webhooks"][0]
    assert hook["failurePolicy"] == "Fail"
    assert hook["matchPolicy"] == "Equivalent"
    assert hook["timeoutSeconds"] == 10
    assert hook["namespaceSelector"] == {}
    assert hook["objectSelector"] == {}
    assert hook["reinvocationPolicy"] == "Never"
    assert hook["rules"][0]["scope"] == "*"
    assert hook["clientConfig"]["service"]["port"] == 443
    assert "sideEffects" in hook
    validating = {"webhooks": [_hook(timeoutSeconds=30, failurePolicy="Ignore")]}
    default_webhook_configuration(validating, mutating=False)
    assert "reinvocationPolicy" not in validating["webhooks"][0]
    assert validating["webhooks"][0]["timeoutSeconds"] == 30
    assert validating["webhooks"][0]["failurePolicy"] == "Ignore"


def _decode_and_default(cfg: dict, mutating: bool) -> None:
    decoding.decode(WEBHOOK_NULLS, cfg)
    default_webhook_configuration(cfg, mutating=mutating)


def test_webhook_nulls_are_absent():
    """21-2, 21-8: a JSON null in a webhook field decodes as nil in Go, so it is defaulted and left out
    like an absent key (kopf sends ``"objectSelector": null``); a null entry is a zero-valued webhook."""
    hook = _hook(
        objectSelector=None,
        namespaceSelector={"matchLabels": None, "matchExpressions": [{"key": "a", "operator": "Exists",
                                                                      "values": None}]},
        failurePolicy=None,
        matchPolicy=None,
        timeoutSeconds=None,
        reinvocationPolicy=None,
        matchConditions=None,
        clientConfig={"url": "https://127.0.0.1:9443/v", "service": None, "caBundle": None},
        rules=[{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                "scope": None}],
    )  # fmt: skip
    cfg = {"webhooks": [hook]}
    _decode_and_default(cfg, mutating=True)
    assert hook["objectSelector"] == {}
    assert hook["namespaceSelector"] == {"matchExpressions": [{"key": "a", "operator": "Exists"}]}
    assert (hook["failurePolicy"], hook["matchPolicy"], hook["timeoutSeconds"]) == ("Fail", "Equivalent", 10)
    assert hook["reinvocationPolicy"] == "Never" and "matchConditions" not in hook
    assert hook["clientConfig"] == {"url": "https://127.0.0.1:9443/v"}
    assert hook["rules"][0]["scope"] == "*"
    assert validate_webhook_configuration(cfg, mutating=True) == []

    required = {"webhooks": [_hook(sideEffects=None, admissionReviewVersions=None)]}
    _decode_and_default(required, mutating=False)
    assert "sideEffects" not in required["webhooks"][0]
    assert [e.field for e in validate_webhook_configuration(required, mutating=False)] == [
        "webhooks[0].sideEffects",
        "webhooks[0].admissionReviewVersions",
    ]

    empty = {"webhooks": None}
    _decode_and_default(empty, mutating=False)
    assert empty == {}
    zero = {"webhooks": [None]}
    _decode_and_default(zero, mutating=False)
    assert zero["webhooks"][0]["objectSelector"] == {}


def test_webhook_valid_after_defaults():
    for mutating in (False, True):
        cfg = {
            "webhooks": [
                _hook(),
                _hook(
                    name="other.example.com",
                    clientConfig={"service": {"namespace": "ns", "name": "svc", "path": "/v"}},
                ),
            ]
        }
        default_webhook_configuration(cfg, mutating)
        assert validate_webhook_configuration(cfg, mutating) == []


def test_webhook_names():
    cfg = {
        "webhooks": [
            _hook(name="two.parts"),
            _hook(name="Bad_Name.example.com"),
            _hook(),
            _hook(),
            _hook(name=""),
        ]
    }
    assert msgs(validate_webhook_configuration(cfg, False)) == [
        'webhooks[0].name: Invalid value: "two.parts": should be a domain with at least three segments '
        "separated by dots",
        f'webhooks[1].name: Invalid value: "Bad_Name.example.com": {SUBDOMAIN_MSG}',
        'webhooks[3].name: Duplicate value: "check.example.com"',
        "webhooks[4].name: Required value",
    ]


def test_webhook_enums_and_timeout():
    hook = _hook(
        failurePolicy="Maybe",
        matchPolicy="Fuzzy",
        sideEffects="Some",
        timeoutSeconds=31,
        reinvocationPolicy="Always",
    )
    assert msgs(validate_webhook_configuration({"webhooks": [hook]}, True)) == [
        'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
        'webhooks[0].matchPolicy: Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"',
        'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
        "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
        'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
    ]
    missing = _hook(timeoutSeconds=0)
    del missing["sideEffects"]
    assert msgs(validate_webhook_configuration({"webhooks": [missing]}, False)) == [
        "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
        "webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds",
    ]


def test_webhook_client_config():
    both = _hook(
        name="h0.example.com",
        clientConfig={"url": "https://a.example.com", "service": {"namespace": "n", "name": "s"}},
    )
    neither = _hook(name="h1.example.com", clientConfig={"caBundle": "Zm9v"})
    url = _hook(name="h2.example.com", clientConfig={"url": "http://user:pw@host.example.com/p?q=1#frag"})
    nohost = _hook(name="h3.example.com", clientConfig={"url": "example.com/path"})
    service = _hook(name="h4.example.com", clientConfig={"service": {"port": 0, "path": "no/Slash//"}})
    cfg = {"webhooks": [both, neither, url, nohost, service]}
    assert msgs(validate_webhook_configuration(cfg, False)) == [
        "webhooks[0].clientConfig: Required value: exactly one of url or service is required",
        "webhooks[1].clientConfig: Required value: exactly one of url or service is required",
        "webhooks[2].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; "
        "desired format: https://host[/path]",
        'webhooks[2].clientConfig.url: Invalid value: "user:pw": user information is not permitted in the '
        "URL",
        'webhooks[2].clientConfig.url: Invalid value: "frag": fragments are not permitted in the URL',
        'webhooks[2].clientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL',
        "webhooks[3].clientConfig.url: Invalid value: \"\": 'https' is the only allowed URL scheme; desired "
        "format: https://host[/path]",
        'webhooks[3].clientConfig.url: Invalid value: "": host must be provided; desired format: '
        "https://host[/path]",
        "webhooks[4].clientConfig.service.name: Required value: service name is required",
        "webhooks[4].clientConfig.service.namespace: Required value: service namespace is required",
        "webhooks[4].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and "
        "65535, inclusive",
        "webhooks[4].clientConfig.service.path: Invalid value: \"no/Slash//\": must start with a '/'",
        # Upstream strips the first character even when it is not a '/', so "n" is lost here.
        f'webhooks[4].clientConfig.service.path: Invalid value: "no/Slash//": segment[1]: {SUBDOMAIN_MSG}',
        'webhooks[4].clientConfig.service.path: Invalid value: "no/Slash//": segment[2] may not be empty',
    ]


def test_webhook_review_versions():
    cfg = {
        "webhooks": [
            _hook(admissionReviewVersions=[]),
            _hook(name="b.example.com", admissionReviewVersions=["v2", "v2", "V3"]),
        ]
    }
    assert msgs(validate_webhook_configuration(cfg, False)) == [
        "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1",
        'webhooks[1].admissionReviewVersions[1]: Invalid value: "v2": duplicate version',
        'webhooks[1].admissionReviewVersions[2]: Invalid value: "V3": a DNS-1035 label must consist of lower '
        "case alphanumeric characters or '-', start with an alphabetic character, and end with an "
        "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?')",
        'webhooks[1].admissionReviewVersions: Invalid value: []string{"v2", "v2", "V3"}: must include at '
        "least one of v1, v1beta1",
    ]


def test_webhook_rules():
    rules = [
        {
            "operations": ["*", "CREATE"],
            "apiGroups": ["*", "apps"],
            "apiVersions": ["*", ""],
            "resources": ["*/*", "pods"],
            "scope": "Everywhere",
        },
        {"operations": ["PATCH"], "resources": ["pods/*", "pods/status", "*", "configmaps", ""]},
    ]
    assert msgs(validate_webhook_configuration({"webhooks": [_hook(rules=rules)]}, False)) == [
        "webhooks[0].rules[0].operations: Invalid value: "
        '[]admissionregistration.OperationType{"*", "CREATE"}: '
        "if '*' is present, must not specify other operations",
        'webhooks[0].rules[0].apiGroups: Invalid value: []string{"*", "apps"}: if \'*\' is present, must not '
        "specify other API groups",
        'webhooks[0].rules[0].apiVersions: Invalid value: []string{"*", ""}: if \'*\' is present, must not '
        "specify other API versions",
        "webhooks[0].rules[0].apiVersions[1]: Required value",
        'webhooks[0].rules[0].resources: Invalid value: []string{"*/*", "pods"}: if \'*/*\' is present, must '
        "not specify other resources",
        'webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", '
        '"Namespaced"',
        'webhooks[0].rules[1].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", '
        '"CREATE", "DELETE", "UPDATE"',
        "webhooks[0].rules[1].apiGroups: Required value",
        "webhooks[0].rules[1].apiVersions: Required value",
        "webhooks[0].rules[1].resources[1]: Invalid value: \"pods/status\": if 'pods/*' is present, must not "
        "specify pods/status",
        "webhooks[0].rules[1].resources[4]: Required value",
        "webhooks[0].rules[1].resources: Invalid value: "
        '[]string{"pods/*", "pods/status", "*", "configmaps", ""}: '
        "if '*' is present, must not specify other resources without subresources",
    ]


def test_webhook_selectors():
    hook = _hook(
        namespaceSelector={"matchLabels": {"bad key": "v"}},
        objectSelector={
            "matchExpressions": [
                {"key": "a", "operator": "In"},
                {"key": "b", "operator": "Exists", "values": ["x"]},
                {"key": "c", "operator": "Near", "values": ["-bad"]},
            ]
        },
    )
    assert msgs(validate_webhook_configuration({"webhooks": [hook]}, False)) == [
        f'webhooks[0].namespaceSelector.matchLabels: Invalid value: "bad key": {NAME_PART_MSG}',
        "webhooks[0].objectSelector.matchExpressions[0].values: Required value: must be specified when "
        "`operator` is 'In' or 'NotIn'",
        "webhooks[0].objectSelector.matchExpressions[1].values: Forbidden: may not be specified when "
        "`operator` is 'Exists' or 'DoesNotExist'",
        'webhooks[0].objectSelector.matchExpressions[2].operator: Invalid value: "Near": not a valid '
        "selector operator",
        f'webhooks[0].objectSelector.matchExpressions[2].values[0]: Invalid value: "-bad": {LABEL_VALUE_MSG}',
    ]


# --- Events ------------------------------------------------------------------------------------------------

LEGACY_EVENT = {
    "metadata": {"name": "p.17a", "namespace": "ns"},
    "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "p"},
    "reason": "Started",
    "message": "m",
    "source": {"component": "kubelet"},
    "firstTimestamp": "2024-05-01T10:00:00Z",
    "lastTimestamp": "2024-05-01T10:00:00Z",
    "count": 1,
    "type": "Normal",
}

NEW_EVENT = {
    "metadata": {"name": "p.17b", "namespace": "ns"},
    "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "p"},
    "reason": "Started",
    "message": "m",
    "type": "Normal",
    "eventTime": "2024-05-01T10:00:00.000000Z",
    "action": "Start",
    "reportingComponent": "example.com/ctl",
    "reportingInstance": "ctl-1",
}

KOPF_EVENT = {
    "metadata": {"generateName": "kopf-event-", "name": "kopf-event-abcde", "namespace": "ns"},
    "involvedObject": {"kind": "Widget", "namespace": "ns", "name": "w", "apiVersion": "example.com/v1"},
    "reason": "Logging",
    "message": "x" * 1024,
    "type": "Normal",
    "eventTime": "2024-05-01T10:00:00.000000Z",
    "firstTimestamp": "2024-05-01T10:00:00Z",
    "lastTimestamp": "2024-05-01T10:00:00Z",
    "action": "Action?",
    "reportingComponent": "kopf",
    "reportingInstance": "dev",
    "source": {"component": "kopf"},
}


def test_valid_events():
    assert validate_event(LEGACY_EVENT, created_via_events_v1=False) == []
    assert validate_event(NEW_EVENT, created_via_events_v1=False) == []
    assert validate_event(NEW_EVENT, created_via_events_v1=True) == []
    assert validate_event(KOPF_EVENT, created_via_events_v1=False) == []  # spec 18-5


def test_legacy_event_namespace_must_match():
    ev = dict(LEGACY_EVENT, involvedObject={"kind": "Pod", "namespace": "other", "name": "p"})
    assert msgs(validate_event(ev, created_via_events_v1=False)) == [
        'involvedObject.namespace: Invalid value: "other": does not match event.namespace'
    ]
    cluster_scoped = dict(LEGACY_EVENT, involvedObject={"kind": "Node", "name": "n"})
    assert msgs(validate_event(cluster_scoped, created_via_events_v1=False)) == [
        'involvedObject.namespace: Invalid value: "": does not match event.namespace'
    ]
    in_default = dict(cluster_scoped, metadata={"name": "n.1", "namespace": "default"})
    assert validate_event(in_default, created_via_events_v1=False) == []


def test_event_with_event_time_rules():
    ev = dict(
        NEW_EVENT,
        involvedObject={"kind": "Node", "name": "n"},
        reportingComponent="",
        reportingInstance="",
        action="a" * 129,
        reason="",
        message="m" * 1025,
    )
    assert msgs(validate_event(ev, created_via_events_v1=False)) == [
        'involvedObject.namespace: Invalid value: "": does not match event.namespace',
        "reportingController: Required value",
        'reportingController: Invalid value: "": name part must be non-empty',
        f'reportingController: Invalid value: "": {NAME_PART_MSG}',
        "reportingInstance: Required value",
        'action: Invalid value: "": can have at most 128 characters',
        "reason: Required value",
        'message: Invalid value: "": can have at most 1024 characters',
    ]
    system = dict(
        NEW_EVENT,
        metadata={"name": "n.1", "namespace": "kube-system"},
        involvedObject={"kind": "Node", "name": "n"},
    )
    assert validate_event(system, created_via_events_v1=False) == []


def test_event_strict_create_through_events_v1():
    assert msgs(validate_event(LEGACY_EVENT, created_via_events_v1=True)) == [
        "eventTime: Required value",
        'firstTimestamp: Invalid value: "": needs to be unset',
        'lastTimestamp: Invalid value: "": needs to be unset',
        'count: Invalid value: "": needs to be unset',
        'source: Invalid value: "": needs to be unset',
    ]
    ev = dict(NEW_EVENT, type="Info", series={"count": 1}, metadata={"name": "Bad_Name", "namespace": "ns"})
    assert msgs(validate_event(ev, created_via_events_v1=True)) == [
        f'metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN_MSG}',
        'series.count: Invalid value: "": should be at least 2',
        "series.lastObservedTime: Required value",
        'type: Invalid value: "": has invalid value: Info',
    ]


def test_event_core_update_is_lenient():
    new = dict(NEW_EVENT, reason="Changed", message="changed", metadata=dict(NEW_EVENT["metadata"], uid="u"))
    assert validate_event(new, created_via_events_v1=False, old_core=NEW_EVENT) == []


def test_event_update_through_events_v1():
    old = dict(
        NEW_EVENT, metadata=dict(NEW_EVENT["metadata"], uid="u"), related={"kind": "Node", "name": "n"}
    )
    assert (
        validate_event(dict(old), created_via_events_v1=False, old_core=old, updated_via_events_v1=True) == []
    )
    new = dict(
        old,
        involvedObject={"kind": "Pod", "namespace": "ns", "name": "q"},
        reason="R2",
        message="m2",
        source={"component": "c"},
        firstTimestamp="2024-05-01T11:00:00Z",
        count=2,
        type="Warning",
        eventTime="2024-05-01T10:00:00.500000Z",
        action="A2",
        related=None,
        reportingComponent="example.com/other",
        reportingInstance="i2",
        series={"count": 2, "lastObservedTime": "2024-05-01T10:00:01.000000Z"},
    )
    assert msgs(
        validate_event(new, created_via_events_v1=False, old_core=old, updated_via_events_v1=True)
    ) == [
        'involvedObject: Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"ns", Name:"q", UID:"", '
        'APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable',
        'reason: Invalid value: "R2": field is immutable',
        'message: Invalid value: "m2": field is immutable',
        'source: Invalid value: core.EventSource{Component:"c", Host:""}: field is immutable',
        "firstTimestamp: Invalid value: 2024-05-01 11:00:00 +0000 UTC: field is immutable",
        "count: Invalid value: 2: field is immutable",
        'reason: Invalid value: "R2": field is immutable',
        'type: Invalid value: "Warning": field is immutable',
        "eventTime: Invalid value: 2024-05-01 10:00:00.5 +0000 UTC: field is immutable",
        'action: Invalid value: "A2": field is immutable',
        "related: Invalid value: null: field is immutable",
        'reportingController: Invalid value: "example.com/other": field is immutable',
        'reportingInstance: Invalid value: "i2": field is immutable',
    ]
    renamed = dict(old, metadata=dict(old["metadata"], name="other"), series={"count": 5})
    assert msgs(
        validate_event(renamed, created_via_events_v1=False, old_core=old, updated_via_events_v1=True)
    ) == [
        'metadata.name: Invalid value: "other": field is immutable',
        "series.lastObservedTime: Required value",
    ]


def test_event_namespace_must_be_subdomain():
    ev = dict(
        LEGACY_EVENT,
        metadata={"name": "e", "namespace": "Bad_NS"},
        involvedObject={"kind": "Pod", "namespace": "Bad_NS", "name": "p"},
    )
    assert msgs(validate_event(ev, created_via_events_v1=False)) == [
        f'namespace: Invalid value: "Bad_NS": {SUBDOMAIN_MSG}'
    ]
