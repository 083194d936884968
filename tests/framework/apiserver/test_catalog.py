"""Every built-in resource of the client's release is served (issue 18 item 2; spec 3-5, 3-6, 17-1).

The catalog (``catalog/resources.json``) is generated from the official client's API classes; the first
test regenerates it in memory, so it cannot go stale. The others run against one server per module:
discovery through the official client's own ``get_api_resources()`` of every API class and through
kubectl, and storage semantics (CRUD, list/watch with selectors, ``/status``, versions sharing storage)
of the resources that only the generic strategy serves.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from pathlib import Path

import pytest
import urllib3
from kubernetes import client, dynamic
from kubernetes.client.exceptions import ApiException

from framework.apiserver.catalog import builtin_resources
from framework.apiserver.catalog.generic import reset_status
from framework.apiserver.registry import builtin_strategies
from framework.apiserver.registry.served import builtin_types

ROOT = Path(__file__).resolve().parents[3]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_builtin_catalog", ROOT / "hack/gen-builtin-catalog.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_builtin_catalog", module)
    spec.loader.exec_module(module)
    return module


def test_catalog_is_generated_from_the_installed_client():
    """resources.json is exactly what hack/gen-builtin-catalog.py derives from the client now."""
    gen = _generator()
    assert gen.OUT.read_text() == gen.render(gen.generate())


def test_catalog_covers_known_resources():
    """Spot checks against what a real cluster lists (kubectl api-resources of that release)."""
    by = {(e.group, e.version, e.resource): e for e in builtin_resources()}
    cj = by[("batch", "v1", "cronjobs")]
    assert (cj.kind, cj.namespaced, cj.short_names, cj.categories) == ("CronJob", True, ("cj",), ("all",))
    assert [s.name for s in cj.subresources] == ["status"]
    sts = by[("apps", "v1", "statefulsets")]
    scale = sts.subresource("scale")
    assert scale and (scale.group, scale.version, scale.kind) == ("autoscaling", "v1", "Scale")
    pv = by[("", "v1", "persistentvolumes")]
    assert (pv.kind, pv.namespaced, pv.model) == ("PersistentVolume", False, "V1PersistentVolume")
    ns = by[("", "v1", "namespaces")]
    assert "deletecollection" not in ns.verbs  # kube-apiserver serves no DELETE on /api/v1/namespaces
    assert by[("authorization.k8s.io", "v1", "selfsubjectrulesreviews")].verbs == ("create",)
    assert by[("", "v1", "componentstatuses")].verbs == ("get", "list", "watch")
    assert by[("", "v1", "events")].model == "CoreV1Event"


@pytest.fixture(scope="module")
def server(module_server):
    return module_server


@pytest.fixture(scope="module")
def api_client(module_api):
    return module_api


def test_every_resource_of_the_clients_api_classes_is_in_discovery(api_client):
    """Each API class's own get_api_resources() (its group-version's APIResourceList) lists every
    resource of the catalog in that group-version with its kind, scope, verbs, short names and
    categories; the generic and own-module kinds alike."""
    classes = [
        cls
        for name, cls in inspect.getmembers(client, inspect.isclass)
        if name.endswith("Api") and hasattr(cls, "get_api_resources") and name != "CustomObjectsApi"
    ]
    listed: dict[tuple[str, str], dict] = {}
    for cls in classes:
        doc = cls(api_client).get_api_resources()
        gv = doc.group_version
        group, _, version = gv.rpartition("/")
        for r in doc.resources:
            listed[(f"{group}/{version}" if group else version, r.name)] = r
    assert {gv for gv, _ in listed} == {e.api_version for e in builtin_resources()}
    missing = []
    for e in builtin_resources():
        r = listed.get((e.api_version, e.resource))
        if r is None:
            missing.append(f"{e.resource}.{e.api_version}")
            continue
        assert (r.kind, r.namespaced, r.singular_name) == (e.kind, e.namespaced, e.kind.lower())
        assert tuple(r.verbs) == e.verbs, e.resource
        assert tuple(r.short_names or ()) == e.short_names, e.resource
        assert tuple(r.categories or ()) == e.categories, e.resource
    assert not missing
    # Served subresources are listed as plural/sub (3-5).
    assert listed[("batch/v1", "cronjobs/status")].verbs == ["get", "patch", "update"]
    assert ("v1", "pods/exec") not in listed  # no kubelet: documented exception


def test_kubectl_api_resources_lists_the_release(module_kubectl):
    """kubectl api-resources (aggregated discovery, 3-6) shows every resource's preferred version."""
    rows = [line.split() for line in module_kubectl.ok("api-resources", "--no-headers").splitlines()]
    names = {(row[0], row[-3]) for row in rows}
    preferred = {}
    for rt in builtin_types():
        preferred.setdefault((rt.group, rt.resource), rt)
    for (group, resource), _rt in preferred.items():
        assert any(name == resource and av.startswith(group) for name, av in names), resource
    rows_by = {(row[0], row[-3]): row for row in rows}
    assert rows_by[("cronjobs", "batch/v1")] == ["cronjobs", "cj", "batch/v1", "true", "CronJob"]
    assert rows_by[("horizontalpodautoscalers", "autoscaling/v2")][1] == "hpa"
    assert rows_by[("storageclasses", "storage.k8s.io/v1")] == [
        "storageclasses",
        "sc",
        "storage.k8s.io/v1",
        "false",
        "StorageClass",
    ]
    # The group's preferred version comes first: leasecandidates are served as v1beta1 and v1alpha2.
    assert ("leasecandidates", "coordination.k8s.io/v1beta1") in rows_by


def _generic() -> list:
    """The persisted resources the generic strategy serves, one version per group/resource: those
    without a module, and those whose module adds no defaulting or validation (only printer columns)."""
    explicit = {
        (rt.group, rt.resource)
        for rt in builtin_strategies()
        if rt.validate is not None or rt.normalize not in (None, reset_status)
    }
    seen: set[tuple[str, str]] = set()
    out = []
    for rt in builtin_types():
        key = (rt.group, rt.resource)
        if key in explicit or key in seen or not rt.persisted or "create" not in rt.verbs:
            continue
        seen.add(key)
        out.append(rt)
    return out


def test_generic_resources_have_storage_semantics(server, api_client):
    """Create, get, list by label, patch, update, status and delete for every generic resource."""
    dyn = dynamic.DynamicClient(api_client)
    generic = _generic()
    assert len(generic) > 30
    for rt in generic:
        res = dyn.resources.get(api_version=rt.api_version, kind=rt.kind)
        ns = {"namespace": "default"} if rt.namespaced else {}
        body = {
            "apiVersion": rt.api_version,
            "kind": rt.kind,
            "metadata": {"name": "x1", "labels": {"app": "a"}, **ns},
        }
        made = res.create(body=body, **ns).to_dict()
        assert made["metadata"]["uid"] and made["apiVersion"] == rt.api_version, rt.resource
        assert res.get(name="x1", **ns).metadata.name == "x1"
        items = res.get(label_selector="app=a", **ns).items
        assert [i.metadata.name for i in items] == ["x1"], rt.resource
        assert res.get(label_selector="app!=a", **ns).items == []
        patched = res.patch(
            name="x1",
            body={"metadata": {"labels": {"b": "c"}}},
            content_type="application/merge-patch+json",
            **ns,
        )
        assert patched.to_dict()["metadata"]["labels"] == {"app": "a", "b": "c"}
        current = patched.to_dict()
        current["metadata"]["annotations"] = {"note": "updated"}
        updated = res.replace(body=current, **ns)
        assert updated.to_dict()["metadata"]["annotations"] == {"note": "updated"}
        with pytest.raises(ApiException) as stale:
            res.replace(body=current, **ns)  # the old resourceVersion: optimistic concurrency
        assert stale.value.status == 409
        res.delete(name="x1", **ns)
        with pytest.raises(ApiException) as gone:
            res.get(name="x1", **ns)
        assert gone.value.status == 404, rt.resource


def test_generic_status_subresource_and_generation(api_client):
    """A generic kind with /status: status is reset on create, ignored by the main resource, written
    only through /status; generation follows changes outside metadata and status."""
    dyn = dynamic.DynamicClient(api_client)
    res = dyn.resources.get(api_version="networking.k8s.io/v1", kind="ServiceCIDR")
    made = res.create(
        body={
            "apiVersion": "networking.k8s.io/v1",
            "kind": "ServiceCIDR",
            "metadata": {"name": "extra"},
            "spec": {"cidrs": ["10.100.0.0/16"]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        }
    ).to_dict()
    assert made["status"] == {} and made["metadata"]["generation"] == 1
    cond = {"type": "Ready", "status": "True", "reason": "R", "message": "", "lastTransitionTime": None}
    cond["lastTransitionTime"] = "2026-01-01T00:00:00Z"
    status = res.status.patch(
        name="extra", body={"status": {"conditions": [cond]}}, content_type="application/merge-patch+json"
    ).to_dict()
    assert status["status"]["conditions"][0]["reason"] == "R"
    assert status["metadata"]["generation"] == 1
    spec = res.patch(
        name="extra",
        body={"spec": {"cidrs": ["10.101.0.0/16"]}, "status": None},
        content_type="application/merge-patch+json",
    ).to_dict()
    assert spec["metadata"]["generation"] == 2 and spec["status"]["conditions"][0]["reason"] == "R"
    res.delete(name="extra")


def test_versions_share_storage(api_client, server):
    """An object written through one version is read through every other version of the resource, with
    that version's apiVersion; watches through an older version see it too."""
    http = urllib3.PoolManager(ca_certs=str(server.ca_path), retries=False)
    auth = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}
    body = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceClass", "metadata": {"name": "gpu"}}
    r = http.request(
        "POST",
        server.url + "/apis/resource.k8s.io/v1beta1/deviceclasses",
        body=json.dumps(body),
        headers=auth,
    )
    assert r.status == 201, r.data
    for version in ("v1", "v1beta1", "v1beta2"):
        r = http.request("GET", server.url + f"/apis/resource.k8s.io/{version}/deviceclasses", headers=auth)
        items = json.loads(r.data)["items"]
        assert [(i["apiVersion"], i["metadata"]["name"]) for i in items] == [
            (f"resource.k8s.io/{version}", "gpu")
        ]
    r = http.request(
        "GET",
        server.url + "/apis/resource.k8s.io/v1beta2/deviceclasses?watch=1&resourceVersion=0&timeoutSeconds=1",
        headers=auth,
    )
    events = [json.loads(line) for line in r.data.splitlines() if line]
    assert [(e["type"], e["object"]["apiVersion"]) for e in events] == [("ADDED", "resource.k8s.io/v1beta2")]
    r = http.request("DELETE", server.url + "/apis/resource.k8s.io/v1/deviceclasses/gpu", headers=auth)
    assert r.status == 200
    r = http.request("GET", server.url + "/apis/resource.k8s.io/v1beta1/deviceclasses/gpu", headers=auth)
    assert r.status == 404


def test_read_only_and_create_only_resources(server):
    """componentstatuses answer get/list only (405 for writes); unknown subresources are 404."""
    http = urllib3.PoolManager(ca_certs=str(server.ca_path), retries=False)
    auth = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}
    r = http.request("GET", server.url + "/api/v1/componentstatuses", headers=auth)
    assert r.status == 200 and json.loads(r.data)["items"] == []
    body = {"apiVersion": "v1", "kind": "ComponentStatus", "metadata": {"name": "etcd-0"}}
    r = http.request("POST", server.url + "/api/v1/componentstatuses", body=json.dumps(body), headers=auth)
    assert r.status == 405
    r = http.request("GET", server.url + "/apis/batch/v1/namespaces/default/cronjobs/x/exec", headers=auth)
    assert r.status == 404


def test_generic_create_only_kinds_answer_201(server):
    """A SelfSubjectRulesReview is answered (incomplete: rules are not enumerated, docs/apiserver.md)."""
    http = urllib3.PoolManager(ca_certs=str(server.ca_path), retries=False)
    auth = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "default"},
    }
    r = http.request(
        "POST",
        server.url + "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        body=json.dumps(body),
        headers=auth,
    )
    assert r.status == 201
    out = json.loads(r.data)
    assert out["spec"] == {"namespace": "default"} and out["status"]["incomplete"] is True
    r = http.request(
        "GET", server.url + "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", headers=auth
    )
    assert r.status == 405
