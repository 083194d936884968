"""A dry-run DELETE deletes nothing (spec 4-4, 11-1, 11-9), whether ``dryRun`` comes in the
DeleteOptions body (kubectl ``--dry-run=server``, ``V1DeleteOptions(dry_run=[...])``) or in the query.

As in kube-apiserver (``k8s.io/apiserver/pkg/endpoints/handlers/delete.go``), a DELETE with a body
takes all of its DeleteOptions from the body and ignores the query's.
"""

from __future__ import annotations

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

NS = "default"


def make_cm(core: client.CoreV1Api, name: str, ns: str = NS, **meta) -> client.V1ConfigMap:
    return core.create_namespaced_config_map(ns, {"metadata": {"name": name, **meta}, "data": {"k": "v"}})


def global_rv(core: client.CoreV1Api) -> str:
    """The server's resourceVersion counter (6-3): any write, a delete included, moves it."""
    return core.list_namespaced_config_map(NS).metadata.resource_version


def test_kubectl_delete_dry_run_server_keeps_configmap(kubectl, core):
    make_cm(core, "keep")
    rv = global_rv(core)
    out = kubectl.ok("delete", "configmap", "keep", "--dry-run=server")
    assert out.strip() == 'configmap "keep" deleted (server dry run)'
    assert core.read_namespaced_config_map("keep", NS).data == {"k": "v"}
    assert global_rv(core) == rv


def test_kubectl_delete_dry_run_server_keeps_namespace(kubectl, core):
    core.create_namespace({"metadata": {"name": "team-a"}})
    make_cm(core, "inside", "team-a")
    out = kubectl.ok("delete", "namespace", "team-a", "--dry-run=server")
    assert "(server dry run)" in out
    ns = core.read_namespace("team-a")
    assert ns.status.phase == "Active" and ns.metadata.deletion_timestamp is None
    assert core.read_namespaced_config_map("inside", "team-a").data == {"k": "v"}


def test_kubectl_delete_all_and_selector_dry_run_server_keep_everything(kubectl, core):
    for name in ("a", "b", "c"):
        make_cm(core, name, labels={"app": "x"})
    rv = global_rv(core)
    kubectl.ok("delete", "configmaps", "--all", "--dry-run=server")
    kubectl.ok("delete", "configmaps", "-l", "app=x", "--dry-run=server")
    names = {i.metadata.name for i in core.list_namespaced_config_map(NS).items}
    assert {"a", "b", "c"} <= names
    assert global_rv(core) == rv


def test_kubectl_delete_dry_run_server_on_object_with_finalizer(kubectl, core):
    make_cm(core, "held", finalizers=["example.com/hold"])
    out = kubectl.ok("delete", "configmap", "held", "--dry-run=server", "--wait=false")
    assert "(server dry run)" in out
    cm = core.read_namespaced_config_map("held", NS)
    assert cm.metadata.deletion_timestamp is None


def test_client_delete_options_body_dry_run(core):
    make_cm(core, "body")
    rv = global_rv(core)
    st = core.delete_namespaced_config_map("body", NS, body=client.V1DeleteOptions(dry_run=["All"]))
    # The client types this answer as a plain object (a Status, or the object while finalizers hold it).
    assert st["status"] == "Success" and st["details"]["name"] == "body"
    assert core.read_namespaced_config_map("body", NS).data == {"k": "v"}
    assert global_rv(core) == rv


def test_client_query_dry_run(core):
    make_cm(core, "query")
    core.delete_namespaced_config_map("query", NS, dry_run="All")
    assert core.read_namespaced_config_map("query", NS).data == {"k": "v"}


def test_client_namespace_delete_dry_run_in_body(core):
    core.create_namespace({"metadata": {"name": "team-b"}})
    ns = core.delete_namespace("team-b", body=client.V1DeleteOptions(dry_run=["All"]))
    # The answer shows the namespace as the deletion would leave it; the stored one is untouched.
    assert ns["status"]["phase"] == "Terminating" and ns["metadata"]["deletionTimestamp"]
    stored = core.read_namespace("team-b")
    assert stored.status.phase == "Active" and stored.metadata.deletion_timestamp is None


@pytest.mark.parametrize("where", ["body", "query"])
def test_client_delete_collection_dry_run(core, where):
    for name in ("c1", "c2"):
        make_cm(core, name, labels={"set": "c"})
    rv = global_rv(core)
    if where == "body":
        core.delete_collection_namespaced_config_map(
            NS, label_selector="set=c", body=client.V1DeleteOptions(dry_run=["All"])
        )
    else:
        core.delete_collection_namespaced_config_map(NS, label_selector="set=c", dry_run="All")
    assert len(core.list_namespaced_config_map(NS, label_selector="set=c").items) == 2
    assert global_rv(core) == rv


def test_raw_delete_collection_dry_run_answers_the_would_be_deleted(raw, core):
    for name in ("r1", "r2"):
        make_cm(core, name, labels={"set": "r"})
    code, out = raw.json(
        "DELETE", f"/api/v1/namespaces/{NS}/configmaps?labelSelector=set%3Dr", {"dryRun": ["All"]}
    )
    assert code == 200 and out["kind"] == "ConfigMapList"
    assert [i["metadata"]["name"] for i in out["items"]] == ["r1", "r2"]
    assert len(core.list_namespaced_config_map(NS, label_selector="set=r").items) == 2


def test_body_options_win_over_query(raw, core):
    """kube-apiserver reads the query only when the DELETE has no body: a body without ``dryRun``
    deletes for real even with ``?dryRun=All`` (what a client must know, not a server choice)."""
    make_cm(core, "both")
    r = raw.request(
        "DELETE", f"/api/v1/namespaces/{NS}/configmaps/both?dryRun=All", {"propagationPolicy": "Background"}
    )
    assert r.status == 200
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map("both", NS)
    assert e.value.status == 404


def test_invalid_dry_run_in_body_is_422_and_deletes_nothing(raw, core):
    make_cm(core, "bad")
    code, st = raw.json("DELETE", f"/api/v1/namespaces/{NS}/configmaps/bad", {"dryRun": ["Some"]})
    assert code == 422
    assert st["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: '
        'supported values: "All"'
    )
    assert st["details"]["kind"] == "DeleteOptions"
    assert core.read_namespaced_config_map("bad", NS).data == {"k": "v"}


def test_invalid_dry_run_in_query_is_422(raw, core):
    make_cm(core, "badq")
    code, st = raw.json("DELETE", f"/api/v1/namespaces/{NS}/configmaps/badq?dryRun=Some")
    assert code == 422 and st["reason"] == "Invalid"
    assert core.read_namespaced_config_map("badq", NS).data == {"k": "v"}


def test_dry_run_of_wrong_type_in_body_is_400(raw, core):
    make_cm(core, "typed")
    code, st = raw.json("DELETE", f"/api/v1/namespaces/{NS}/configmaps/typed", {"dryRun": "All"})
    assert code == 400
    assert st["message"] == (
        "json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string"
    )
    assert core.read_namespaced_config_map("typed", NS).data == {"k": "v"}


def test_delete_without_dry_run_still_deletes(kubectl, core):
    make_cm(core, "gone")
    out = kubectl.ok("delete", "configmap", "gone")
    assert out.strip() == 'configmap "gone" deleted'
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map("gone", NS)
    assert e.value.status == 404
