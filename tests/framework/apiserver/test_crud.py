"""Create / get / list / update through the official client (spec §5, §6, §7)."""

from __future__ import annotations

import re

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException


def _status(exc: ApiException) -> dict:
    import json

    return json.loads(exc.body)


def cm(name: str, data: dict | None = None, **meta) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **meta},
        "data": data or {"k": "v"},
    }


def test_create_fills_system_metadata(core):
    """6-1, 6-2, 6-3: uid, creationTimestamp and a string resourceVersion are set by the server."""
    created = core.create_namespaced_config_map(
        "default", cm("a", uid="bogus", creationTimestamp="2001-01-01T00:00:00Z")
    )
    assert created.metadata.uid != "bogus" and re.fullmatch(r"[0-9a-f-]{36}", created.metadata.uid)
    assert created.metadata.creation_timestamp.year > 2001
    assert created.metadata.resource_version.isdigit()
    assert created.metadata.generation is None  # 6-4: ConfigMaps do not track generation
    got = core.read_namespaced_config_map("a", "default")
    assert got.metadata.resource_version == created.metadata.resource_version
    assert got.data == {"k": "v"}


def test_one_global_resource_version(core):
    """6-3: one counter shared by all kinds; reads never bump it."""
    a = core.create_namespaced_config_map("default", cm("a"))
    s = core.create_namespaced_secret("default", {"metadata": {"name": "s"}, "stringData": {"x": "y"}})
    assert int(s.metadata.resource_version) == int(a.metadata.resource_version) + 1
    core.read_namespaced_config_map("a", "default")
    lst = core.list_namespaced_config_map("default")
    assert int(lst.metadata.resource_version) == int(s.metadata.resource_version)


def test_create_existing_is_already_exists(core):
    core.create_namespaced_config_map("default", cm("dup"))
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map("default", cm("dup"))
    assert e.value.status == 409
    st = _status(e.value)
    assert st["reason"] == "AlreadyExists"
    assert st["message"] == 'configmaps "dup" already exists'
    assert st["details"] == {"name": "dup", "kind": "configmaps"}


def test_get_missing_is_not_found(core, raw):
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map("nope", "default")
    st = _status(e.value)
    assert (e.value.status, st["reason"], st["message"]) == (404, "NotFound", 'configmaps "nope" not found')
    assert e.value.headers["Content-Type"] == "application/json"
    code, body = raw.json("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/x")
    assert code == 404 and body["message"] == 'leases.coordination.k8s.io "x" not found'
    assert body["details"] == {"name": "x", "group": "coordination.k8s.io", "kind": "leases"}


def test_generate_name(core):
    """6-6: prefix + 5 characters of the real alphabet; generateName is kept."""
    created = core.create_namespaced_config_map("default", {"metadata": {"generateName": "gen-"}, "data": {}})
    assert re.fullmatch(r"gen-[bcdfghjklmnpqrstvwxz2456789]{5}", created.metadata.name)
    assert created.metadata.generate_name == "gen-"


def test_name_required(core):
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map("default", {"metadata": {}, "data": {}})
    st = _status(e.value)
    assert e.value.status == 422
    assert (
        st["message"]
        == 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'
    )


def test_invalid_name(core):
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map("default", cm("Bad_Name"))
    st = _status(e.value)
    assert e.value.status == 422 and st["reason"] == "Invalid"
    assert st["message"].startswith(
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
    )
    assert st["details"]["kind"] == "ConfigMap"
    assert st["details"]["causes"][0]["field"] == "metadata.name"


def test_create_with_resource_version_is_500(raw):
    """5-7: the storage layer's error surfaces unconverted."""
    code, body = raw.json("POST", "/api/v1/namespaces/default/configmaps", cm("x", resourceVersion="5"))
    assert code == 500
    assert body["message"] == "resourceVersion should not be set on objects to be created"
    assert "reason" not in body


def test_missing_namespace_is_404(core):
    """7-1: namespaced create in a namespace that does not exist."""
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map("nowhere", cm("a"))
    st = _status(e.value)
    assert e.value.status == 404 and st["message"] == 'namespaces "nowhere" not found'
    assert st["details"]["kind"] == "namespaces"


def test_list_in_missing_namespace_is_empty(core):
    """7-4."""
    assert core.list_namespaced_config_map("nowhere").items == []


def test_list_is_ordered_and_has_items(core):
    """7-3: items ordered by namespace then name; empty list has items []."""
    core.create_namespace({"metadata": {"name": "a-ns"}})
    for ns, name in (("default", "b"), ("default", "a"), ("a-ns", "z")):
        core.create_namespaced_config_map(ns, cm(name))
    names = [
        (i.metadata.namespace, i.metadata.name)
        for i in core.list_config_map_for_all_namespaces().items
        if i.metadata.name != "kube-root-ca.crt"
    ]
    assert names == [("a-ns", "z"), ("default", "a"), ("default", "b")]


def test_update_conflict_on_stale_rv(core):
    """7-5: a stale resourceVersion is 409 Conflict with the exact message."""
    created = core.create_namespaced_config_map("default", cm("c"))
    created.data = {"k": "2"}
    core.replace_namespaced_config_map("c", "default", created)
    created.data = {"k": "3"}
    with pytest.raises(ApiException) as e:
        core.replace_namespaced_config_map("c", "default", created)
    st = _status(e.value)
    assert e.value.status == 409 and st["reason"] == "Conflict"
    assert st["message"] == (
        'Operation cannot be fulfilled on configmaps "c": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


def test_unconditional_update_allowed_for_configmap(core):
    """7-5: ConfigMap allows PUT without resourceVersion."""
    core.create_namespaced_config_map("default", cm("u"))
    out = core.replace_namespaced_config_map("u", "default", cm("u", {"k": "new"}))
    assert out.data == {"k": "new"}


def test_lease_put_requires_rv_and_put_creates(apiserver, raw):
    """7-5, 7-6, 20-1: Lease PUT without RV is 422; PUT of a missing Lease creates it (201)."""
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "l"},
        "spec": {
            "holderIdentity": "a",
            "leaseDurationSeconds": 15,
            "renewTime": "2024-05-01T10:00:00.123456Z",
        },
    }
    path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/l"
    code, body = raw.json("PUT", path, lease)
    assert code == 201 and body["spec"]["renewTime"] == "2024-05-01T10:00:00.123456Z"
    code, body = raw.json("PUT", path, lease)
    assert code == 422
    assert body["message"] == (
        'leases.coordination.k8s.io "l" is invalid: metadata.resourceVersion: '
        "Invalid value: 0x0: must be specified for an update"
    )
    assert body["details"]["kind"] == "leases"


def test_noop_update_does_not_bump(core, raw):
    """6-3: an identical update changes nothing."""
    created = core.create_namespaced_config_map("default", cm("n"))
    same = core.replace_namespaced_config_map("n", "default", created)
    assert same.metadata.resource_version == created.metadata.resource_version


def test_name_mismatch_is_bad_request(raw):
    """2-7."""
    raw.json("POST", "/api/v1/namespaces/default/configmaps", cm("a"))
    code, body = raw.json("PUT", "/api/v1/namespaces/default/configmaps/a", cm("b"))
    assert code == 400
    assert body["message"] == "the name of the object (b) does not match the name on the URL (a)"
    code, body = raw.json("POST", "/api/v1/namespaces/default/configmaps", cm("c", namespace="other"))
    assert code == 400
    assert (
        body["message"]
        == "the namespace of the provided object does not match the namespace sent on the request"
    )


def test_wrong_api_version_and_kind(raw):
    """2-8: body apiVersion of another group is 400; absent apiVersion/kind are defaulted.

    The kind decodes in the other version (events.k8s.io/v1 Event to core Events), so the version check
    answers; a kind not registered there fails decoding first, as kube-apiserver's codec does."""
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"}}
    code, body = raw.json("POST", "/api/v1/namespaces/default/events", event)
    assert code == 400
    assert (
        body["message"]
        == "the API version in the data (events.k8s.io/v1) does not match the expected API version (v1)"
    )
    code, body = raw.json(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        {"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
    )
    assert code == 400
    assert body["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for '
        'version "apps/v1" in scheme "pkg/api/legacyscheme/scheme.go:30"'
    )
    code, body = raw.json("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "y"}})
    assert code == 201 and body["kind"] == "ConfigMap" and body["apiVersion"] == "v1"


def test_malformed_json_changes_nothing(raw, apiserver):
    before = apiserver.resource_version
    r = raw.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        raw=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert r.status == 400
    assert r.headers["Content-Type"] == "application/json"
    assert apiserver.resource_version == before


def test_oversized_body_is_413(raw):
    big = b'{"metadata":{"name":"x"},"data":{"k":"' + b"a" * (3 * 1024 * 1024 + 10) + b'"}}'
    r = raw.request(
        "POST", "/api/v1/namespaces/default/configmaps", raw=big, headers={"Content-Type": "application/json"}
    )
    assert r.status == 413


def test_unknown_resource_is_404(raw):
    """2-6."""
    code, body = raw.json("GET", "/apis/policy/v1beta1/namespaces/default/poddisruptionbudgets")
    assert code == 404
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "the server could not find the requested resource",
        "reason": "NotFound",
        "details": {},
        "code": 404,
    }


def test_secret_string_data_and_type(core):
    """§17: stringData merged into data, never stored; type defaults to Opaque."""
    s = core.create_namespaced_secret("default", {"metadata": {"name": "s"}, "stringData": {"a": "b"}})
    assert s.data == {"a": "Yg=="} and s.string_data is None and s.type == "Opaque"


def test_all_namespaces_collection_rejects_create(raw):
    """2-3, 5-8."""
    code, body = raw.json("POST", "/api/v1/configmaps", cm("a"))
    assert code == 405 and body["reason"] == "MethodNotAllowed"


def test_webhook_configuration_generation(raw):
    """6-4: webhook configurations bump generation when webhooks change."""
    wh = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "w"},
        "webhooks": [],
    }
    code, body = raw.json("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", wh)
    assert code == 201 and body["metadata"]["generation"] == 1
    body["metadata"]["labels"] = {"a": "b"}
    code, body = raw.json(
        "PUT", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/w", body
    )
    assert code == 200 and body["metadata"]["generation"] == 1


def test_typed_models_parse(core):
    """23-2: the strict models of the client accept what we return."""
    ns = core.read_namespace("default")
    assert isinstance(ns, client.V1Namespace)
    assert ns.metadata.labels["kubernetes.io/metadata.name"] == "default"
    assert ns.status.phase == "Active"
    assert "kubernetes" in ns.spec.finalizers
