"""CustomResourceDefinitions and custom resources (spec §16, §10, 6-4, 8-1)."""

from __future__ import annotations

import json
import time

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

GROUP = "example.com"


def widget_crd(status: bool = True, scope: str = "Namespaced") -> dict:
    version = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object",
                        "required": ["size"],
                        "properties": {
                            "size": {"type": "integer", "minimum": 1},
                            "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    },
                    "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                },
            }
        },
        "selectableFields": [{"jsonPath": ".spec.color"}],
    }
    if status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": scope,
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [version],
        },
    }


def widget(name: str, size=3, **spec) -> dict:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"size": size, **spec},
    }


@pytest.fixture
def crds(apiserver) -> client.CustomObjectsApi:
    apiserver.install_crds([widget_crd()])
    return client.CustomObjectsApi(apiserver.api_client())


def create(co, body, ns="default"):
    return co.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", body)


def test_crd_defaults_and_conditions(apiserver, raw):
    """16-2, 16-3: defaults, acceptedNames, storedVersions and both conditions."""
    code, created = raw.json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd())
    assert code == 201 and created["metadata"]["generation"] == 1
    assert (
        created["spec"]["names"]["singular"] == "widget"
        and created["spec"]["names"]["listKind"] == "WidgetList"
    )
    deadline = time.monotonic() + 5
    while True:
        _, crd = raw.json("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{GROUP}")
        conds = {c["type"]: c for c in crd["status"].get("conditions", [])}
        if conds.get("Established", {}).get("status") == "True":
            break
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert conds["NamesAccepted"]["reason"] == "NoConflicts"
    assert conds["Established"]["message"] == "the initial names have been accepted"
    assert crd["status"]["storedVersions"] == ["v1"]
    assert crd["status"]["acceptedNames"]["kind"] == "Widget"
    _, disc = raw.json("GET", f"/apis/{GROUP}/v1")
    names = {r["name"]: r for r in disc["resources"]}
    assert names["widgets"]["shortNames"] == ["wd"] and names["widgets"]["namespaced"] is True
    assert "widgets/status" in names
    _, groups = raw.json("GET", "/apis")
    assert GROUP in [g["name"] for g in groups["groups"]]


def test_crd_invalid_name(raw):
    """16-1."""
    bad = widget_crd()
    bad["metadata"]["name"] = "wrong.example.com"
    code, body = raw.json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", bad)
    assert code == 422
    assert (
        'metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group'
        in body["message"]
    )


def test_custom_resource_crud_and_generation(crds):
    """6-4: CRs start at generation 1; spec changes bump it, metadata changes do not."""
    w = create(crds, widget("w1"))
    assert w["metadata"]["generation"] == 1 and w["spec"]["color"] == "red"  # 16-7 default applied
    w = crds.patch_namespaced_custom_object(
        GROUP, "v1", "default", "widgets", "w1", {"metadata": {"labels": {"a": "b"}}}
    )
    assert w["metadata"]["generation"] == 1
    w = crds.patch_namespaced_custom_object(GROUP, "v1", "default", "widgets", "w1", {"spec": {"size": 4}})
    assert w["metadata"]["generation"] == 2
    lst = crds.list_namespaced_custom_object(GROUP, "v1", "default", "widgets")
    assert lst["kind"] == "WidgetList" and [i["metadata"]["name"] for i in lst["items"]] == ["w1"]
    assert lst["items"][0]["apiVersion"] == f"{GROUP}/v1"


def test_schema_validation_error(crds):
    """16-5: exact type error text and cause field."""
    with pytest.raises(ApiException) as e:
        create(crds, widget("bad", size="string"))
    st = json.loads(e.value.body)
    assert e.value.status == 422
    assert st["message"] == (
        'Widget.example.com "bad" is invalid: spec.size: Invalid value: "string": '
        'spec.size in body must be of type integer: "string"'
    )
    assert st["details"]["causes"][0]["field"] == "spec.size"
    assert st["details"]["kind"] == "Widget" and st["details"]["group"] == GROUP


def test_pruning_and_field_validation(apiserver, crds, raw):
    """16-6, 4-5: unknown fields are pruned; Strict rejects, Warn warns."""
    body = widget("p1", unknown=1, free={"anything": {"goes": True}})
    r = raw.request("POST", f"/apis/{GROUP}/v1/namespaces/default/widgets", body)
    assert r.status == 201
    out = json.loads(r.data)
    assert "unknown" not in out["spec"] and out["spec"]["free"] == {"anything": {"goes": True}}
    assert (
        r.headers["Warning"] == '299 - "unknown field \\"spec.unknown\\""'
        or "unknown field" in r.headers["Warning"]
    )
    code, st = raw.json(
        "POST", f"/apis/{GROUP}/v1/namespaces/default/widgets?fieldValidation=Strict", widget("p2", unknown=1)
    )
    assert code == 400 and st["message"] == 'strict decoding error: unknown field "spec.unknown"'


def test_status_subresource(crds, raw):
    """10-1, 10-2: the main resource ignores status; /status changes only status, no generation bump."""
    w = create(crds, {**widget("s1"), "status": {"phase": "ignored"}})
    assert "status" not in w
    w["status"] = {"phase": "Ready"}
    w["spec"]["size"] = 9
    out = crds.replace_namespaced_custom_object_status(GROUP, "v1", "default", "widgets", "s1", w)
    assert (
        out["status"] == {"phase": "Ready"}
        and out["spec"]["size"] == 3
        and out["metadata"]["generation"] == 1
    )
    out["status"] = {"phase": "Changed"}
    same = crds.replace_namespaced_custom_object(GROUP, "v1", "default", "widgets", "s1", out)
    assert same["status"] == {"phase": "Ready"}
    assert same["metadata"]["resourceVersion"] == out["metadata"]["resourceVersion"]  # 7-7 no-op


def test_cr_put_requires_rv_and_smp_is_415(crds, raw):
    """7-5, 8-1."""
    create(crds, widget("r1"))
    code, st = raw.json("PUT", f"/apis/{GROUP}/v1/namespaces/default/widgets/r1", widget("r1"))
    assert code == 422
    assert st["message"] == (
        'widgets.example.com "r1" is invalid: metadata.resourceVersion: Invalid value: 0x0: '
        "must be specified for an update"
    )
    r = raw.request(
        "PATCH",
        f"/apis/{GROUP}/v1/namespaces/default/widgets/r1",
        raw=b'{"spec":{"size":2}}',
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert r.status == 415
    assert json.loads(r.data)["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )


def test_cr_field_selector_from_selectable_fields(crds):
    create(crds, widget("red1"))
    create(crds, widget("blue1", color="blue"))
    lst = crds.list_namespaced_custom_object(
        GROUP, "v1", "default", "widgets", field_selector="spec.color=blue"
    )
    assert [i["metadata"]["name"] for i in lst["items"]] == ["blue1"]


def test_crd_deletion_removes_objects_and_endpoints(apiserver, crds, raw):
    """16-9: finalizer, Terminating condition, CRs deleted, endpoints 404 afterwards."""
    create(crds, widget("d1"))
    held = widget("d2")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    create(crds, held)
    code, crd = raw.json("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{GROUP}")
    assert code == 200 and "customresourcecleanup.apiextensions.k8s.io" in crd["metadata"]["finalizers"]
    deadline = time.monotonic() + 5
    while raw.json("GET", f"/apis/{GROUP}/v1/namespaces/default/widgets/d1")[0] != 404:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    code, st = raw.json("POST", f"/apis/{GROUP}/v1/namespaces/default/widgets", widget("d3"))
    assert (
        code == 403 and "create not allowed while custom resource definition is terminating" in st["message"]
    )
    crds.patch_namespaced_custom_object(
        GROUP, "v1", "default", "widgets", "d2", {"metadata": {"finalizers": None}}
    )
    while (
        raw.json("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{GROUP}")[0] != 404
    ):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert raw.json("GET", f"/apis/{GROUP}/v1/namespaces/default/widgets")[0] == 404
    _, groups = raw.json("GET", "/apis")
    assert GROUP not in [g["name"] for g in groups["groups"]]


def test_cr_without_status_subresource(apiserver, raw):
    """10-3: status is an ordinary field counted in generation; /status is 404."""
    apiserver.install_crds([widget_crd(status=False)])
    code, w = raw.json(
        "POST", f"/apis/{GROUP}/v1/namespaces/default/widgets", {**widget("n1"), "status": {"phase": "x"}}
    )
    assert code == 201 and w["status"] == {"phase": "x"}
    w["status"] = {"phase": "y"}
    code, w = raw.json("PUT", f"/apis/{GROUP}/v1/namespaces/default/widgets/n1", w)
    assert code == 200 and w["metadata"]["generation"] == 2
    assert raw.json("GET", f"/apis/{GROUP}/v1/namespaces/default/widgets/n1/status")[0] == 404


def test_cluster_scoped_cr(apiserver, raw):
    apiserver.install_crds([widget_crd(scope="Cluster")])
    code, w = raw.json("POST", f"/apis/{GROUP}/v1/widgets", widget("c1"))
    assert code == 201 and "namespace" not in w["metadata"]
    assert raw.json("GET", f"/apis/{GROUP}/v1/namespaces/default/widgets")[0] == 404
