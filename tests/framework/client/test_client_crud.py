"""CRUD, patch types, status, deletion and REST mapping against the in-process API server over HTTPS."""

from __future__ import annotations

import pytest

from framework.client import (
    Client,
    Conflict,
    Invalid,
    NoKindMatchError,
    NotFound,
    UnsupportedMediaType,
)


def cm(name: str, namespace: str = "default", labels: dict | None = None, **data: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "data": data,
    }


def widget(name: str, size: int = 3, namespace: str = "default") -> dict:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"size": size},
    }


def names(lst: dict) -> list[str]:
    return [i["metadata"]["name"] for i in lst["items"] if i["metadata"]["name"] != "kube-root-ca.crt"]


def test_configmap_crud(client: Client):
    created = client.create(cm("a", color="blue"))
    assert created["metadata"]["uid"] and created["data"] == {"color": "blue"}
    assert isinstance(created, dict)

    got = client.get("v1", "ConfigMap", "a", namespace="default")
    assert got["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]

    got["data"]["color"] = "green"
    updated = client.update(got)
    assert updated["data"] == {"color": "green"}
    assert int(updated["metadata"]["resourceVersion"]) > int(got["metadata"]["resourceVersion"])

    with pytest.raises(Conflict):  # the stale copy carries the old resourceVersion
        client.update(got)

    status = client.delete("v1", "ConfigMap", "a", namespace="default")
    assert status["kind"] == "Status" and status["status"] == "Success"
    with pytest.raises(NotFound):
        client.get("v1", "ConfigMap", "a", namespace="default")


def test_list_namespaced_all_namespaces_and_pages(client: Client):
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    for i in range(5):
        client.create(cm(f"p{i}", labels={"app": "web" if i % 2 else "db"}))
    client.create(cm("x", namespace="other"))

    lst = client.list("v1", "ConfigMap", namespace="default")
    assert lst["kind"] == "ConfigMapList" and lst["metadata"]["resourceVersion"]
    assert names(lst) == [f"p{i}" for i in range(5)]
    # Built-in list items lack TypeMeta on the wire; the client fills it in.
    assert all(i["kind"] == "ConfigMap" and i["apiVersion"] == "v1" for i in lst["items"])

    everywhere = client.list("v1", "ConfigMap")  # namespaced kind, no namespace: all namespaces
    assert {(i["metadata"]["namespace"], i["metadata"]["name"]) for i in everywhere["items"]} >= {
        ("default", "p0"),
        ("other", "x"),
    }
    assert names(client.list("v1", "ConfigMap", "default", label_selector="app=web")) == ["p1", "p3"]
    assert names(client.list("v1", "ConfigMap", "default", field_selector="metadata.name=p2")) == ["p2"]

    seen, cont = [], None
    while True:
        page = client.list("v1", "ConfigMap", "default", limit=2, continue_=cont)
        seen += [i["metadata"]["name"] for i in page["items"]]
        cont = page["metadata"].get("continue")
        if not cont:
            break
    assert [n for n in seen if n != "kube-root-ca.crt"] == [f"p{i}" for i in range(5)]

    exact = client.list(
        "v1",
        "ConfigMap",
        "default",
        resource_version=lst["metadata"]["resourceVersion"],
        resource_version_match="Exact",
    )
    assert names(exact) == names(lst)


def test_namespace_is_cluster_scoped(client: Client):
    ns = client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    assert ns["status"]["phase"] == "Active"
    assert client.get("v1", "Namespace", "team-a")["metadata"]["name"] == "team-a"
    assert "team-a" in names(client.list("v1", "Namespace"))
    with pytest.raises(ValueError, match="cluster-scoped"):
        client.get("v1", "Namespace", "team-a", namespace="default")
    # Namespace deletion returns the Namespace, now Terminating.
    gone = client.delete("v1", "Namespace", "team-a")
    assert gone["kind"] == "Namespace" and gone["status"]["phase"] == "Terminating"


def test_scope_errors_are_value_errors(client: Client):
    with pytest.raises(ValueError, match="namespaced"):
        client.get("v1", "ConfigMap", "a")
    with pytest.raises(ValueError, match=r"metadata\.namespace"):
        client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    with pytest.raises(ValueError, match="apiVersion and kind"):
        client.create({"metadata": {"name": "a"}})
    with pytest.raises(ValueError, match="needs a namespace"):
        client.delete_collection("v1", "ConfigMap")


def test_lease_crud(client: Client):
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "leader", "namespace": "default"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
    }
    created = client.create(lease)
    created["spec"]["holderIdentity"] = "b"
    assert client.update(created)["spec"]["holderIdentity"] == "b"
    # Leases refuse an update without resourceVersion (7-5).
    with pytest.raises(Invalid):
        client.update(lease)
    got = client.get("coordination.k8s.io/v1", "Lease", "leader", "default")
    assert got["spec"]["holderIdentity"] == "b"
    client.delete("coordination.k8s.io/v1", "Lease", "leader", "default")
    assert client.list("coordination.k8s.io/v1", "Lease", "default")["items"] == []


def test_patch_types(client: Client):
    client.create(cm("p", a="1", b="2"))
    merged = client.patch("v1", "ConfigMap", "p", {"data": {"a": None, "c": "3"}}, namespace="default")
    assert merged["data"] == {"b": "2", "c": "3"}

    jsonp = client.patch(
        "v1",
        "ConfigMap",
        "p",
        [{"op": "add", "path": "/data/d", "value": "4"}, {"op": "remove", "path": "/data/b"}],
        namespace="default",
        patch_type="json",
    )
    assert jsonp["data"] == {"c": "3", "d": "4"}

    smp = client.patch(
        "v1",
        "ConfigMap",
        "p",
        {"metadata": {"finalizers": ["example.com/keep"]}, "data": {"e": "5"}},
        namespace="default",
        patch_type="strategic",
    )
    assert smp["metadata"]["finalizers"] == ["example.com/keep"] and smp["data"]["e"] == "5"
    smp = client.patch(
        "v1",
        "ConfigMap",
        "p",
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/keep"]}},
        namespace="default",
        patch_type="strategic",
    )
    assert not smp["metadata"].get("finalizers")

    # A JSON patch whose test op fails is 422 Invalid (what kopf relies on for optimistic patches).
    with pytest.raises(Invalid):
        client.patch(
            "v1",
            "ConfigMap",
            "p",
            [{"op": "test", "path": "/metadata/resourceVersion", "value": "1"}],
            namespace="default",
            patch_type="json",
        )

    # Server-side apply: application/apply-patch+yaml with a JSON body and fieldManager. A server
    # without it (the test server before SSA, docs/apiserver.md deviation 24-4) answers 415, which
    # must surface as UnsupportedMediaType.
    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"}, "data": {"z": "9"}}
    try:
        applied = client.patch(
            "v1",
            "ConfigMap",
            "p",
            desired,
            namespace="default",
            patch_type="apply",
            field_manager="tests",
            force=True,
        )
    except UnsupportedMediaType as e:
        assert e.status == 415 and "apply" in e.message
    else:
        assert applied["data"]["z"] == "9"

    with pytest.raises(ValueError, match="field_manager"):
        client.patch("v1", "ConfigMap", "p", {}, namespace="default", patch_type="apply")
    with pytest.raises(ValueError, match="force"):
        client.patch("v1", "ConfigMap", "p", {}, namespace="default", force=True)
    with pytest.raises(ValueError, match="patch_type"):
        client.patch("v1", "ConfigMap", "p", {}, namespace="default", patch_type="xml")  # type: ignore[arg-type]


def test_dry_run_and_field_manager(client: Client):
    out = client.create(cm("dry", a="1"), dry_run=True, field_manager="tests")
    assert out["metadata"]["name"] == "dry"
    with pytest.raises(NotFound):
        client.get("v1", "ConfigMap", "dry", "default")


def test_delete_preconditions_and_collection(client: Client):
    created = client.create(cm("d"))
    with pytest.raises(Conflict) as e:
        client.delete("v1", "ConfigMap", "d", "default", preconditions={"resourceVersion": "1"})
    assert "precondition" in e.value.message.lower()
    with pytest.raises(Conflict):
        client.delete("v1", "ConfigMap", "d", "default", preconditions={"uid": "not-the-uid"})
    client.delete(
        "v1",
        "ConfigMap",
        "d",
        "default",
        propagation_policy="Background",
        grace_period_seconds=0,
        preconditions={
            "uid": created["metadata"]["uid"],
            "resourceVersion": created["metadata"]["resourceVersion"],
        },
    )
    with pytest.raises(NotFound):
        client.get("v1", "ConfigMap", "d", "default")

    for i in range(3):
        client.create(cm(f"c{i}", labels={"sweep": "yes" if i < 2 else "no"}))
    out = client.delete_collection("v1", "ConfigMap", "default", label_selector="sweep=yes")
    assert out["kind"] in ("ConfigMapList", "Status")
    assert names(client.list("v1", "ConfigMap", "default")) == ["c2"]


def test_custom_resource_mapper_finds_crd_installed_later(apiserver, client: Client, widget_crd_manifest):
    with pytest.raises(NoKindMatchError, match='"Widget"') as e:
        client.mapping("example.com/v1", "Widget")
    assert isinstance(e.value, LookupError) and e.value.kind == "Widget"

    apiserver.install_crds([widget_crd_manifest])
    m = client.mapping("example.com/v1", "Widget")  # the miss refreshes discovery
    assert (m.resource, m.namespaced, m.subresources) == ("widgets", True, frozenset({"status"}))
    assert {"get", "list", "watch", "create"} <= m.verbs
    assert m.path("ns1", "w") == "/apis/example.com/v1/namespaces/ns1/widgets/w"

    w = client.create(widget("w1"))
    assert w["metadata"]["generation"] == 1 and "status" not in w

    # /status changes only status and never bumps generation.
    w["status"] = {"phase": "Ready"}
    w["spec"]["size"] = 99
    after = client.update_status(w)
    assert after["status"] == {"phase": "Ready"} and after["spec"]["size"] == 3
    assert after["metadata"]["generation"] == 1

    patched = client.patch(
        "example.com/v1", "Widget", "w1", {"status": {"phase": "Done"}}, "default", subresource="status"
    )
    assert patched["status"]["phase"] == "Done"
    spec = client.patch("example.com/v1", "Widget", "w1", {"spec": {"size": 5}}, "default")
    assert spec["metadata"]["generation"] == 2

    with pytest.raises(Invalid) as inv:  # schema: spec.size >= 1
        client.create(widget("bad", size=0))
    assert any(c.get("field") == "spec.size" for c in inv.value.causes)
    # Strategic merge patch is not defined for custom resources (8-1).
    with pytest.raises(UnsupportedMediaType):
        client.patch(
            "example.com/v1", "Widget", "w1", {"spec": {"size": 6}}, "default", patch_type="strategic"
        )

    assert [i["metadata"]["name"] for i in client.list("example.com/v1", "Widget")["items"]] == ["w1"]
    client.delete("example.com/v1", "Widget", "w1", "default")
    with pytest.raises(NotFound):
        client.get("example.com/v1", "Widget", "w1", "default")


def test_request_escape_hatch(client: Client):
    version = client.request("GET", "/version")
    assert version["major"] == "1"
    assert client.request("GET", "/healthz") == b"ok"
    groups = client.mapper.group_versions()
    assert groups[""] == ["v1"] and "coordination.k8s.io" in groups
    assert client.mapper.preferred_version("coordination.k8s.io") == "coordination.k8s.io/v1"


def test_concurrent_use_and_server_restart(apiserver, client: Client):
    """One client shared by threads; pooled connections survive a server restart."""
    import threading

    failures: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(15):
                client.create(cm(f"t{k}-{i}", v=str(i)))
                assert client.get("v1", "ConfigMap", f"t{k}-{i}", "default")["data"] == {"v": str(i)}
        except BaseException as e:  # surfaced below
            failures.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    assert len(names(client.list("v1", "ConfigMap", "default"))) == 90

    apiserver.restart()  # keep-alive connections in the pool are now dead
    assert client.get("v1", "ConfigMap", "t0-0", "default")["data"] == {"v": "0"}
    assert client.create(cm("after-restart"))["metadata"]["name"] == "after-restart"
