"""Finalizers, propagation, preconditions, namespaces and garbage collection (spec §11, §12, §13)."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from framework.testing import consistently, eventually


def gone(fn) -> bool:
    try:
        fn()
    except ApiException as e:
        return e.status == 404
    return False


def cm(name: str, **meta) -> dict:
    return {"metadata": {"name": name, **meta}, "data": {"k": "v"}}


def test_immediate_delete_returns_success_status(raw):
    """11-2, 5-5."""
    code, created = raw.json("POST", "/api/v1/namespaces/default/configmaps", cm("a"))
    code, body = raw.json("DELETE", "/api/v1/namespaces/default/configmaps/a")
    assert code == 200
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "a", "kind": "configmaps", "uid": created["metadata"]["uid"]},
    }


def test_finalizers_block_and_last_removal_deletes(core):
    """11-3, 11-4, 11-5."""
    core.create_namespaced_config_map("default", cm("f", finalizers=["example.com/f"]))
    marked = core.delete_namespaced_config_map("f", "default")
    assert marked["metadata"]["deletionTimestamp"] and marked["metadata"]["deletionGracePeriodSeconds"] == 0
    again = core.delete_namespaced_config_map("f", "default")  # repeated delete changes nothing
    assert again["metadata"]["resourceVersion"] == marked["metadata"]["resourceVersion"]
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_config_map(
            "f", "default", {"metadata": {"finalizers": ["example.com/f", "x/y"]}}
        )
    st = json.loads(e.value.body)
    assert e.value.status == 422
    assert st["message"] == (
        'ConfigMap "f" is invalid: metadata.finalizers: Forbidden: no new finalizers can be '
        'added if the object is being deleted, found new finalizers []string{"x/y"}'
    )
    lst = core.list_namespaced_config_map("default")
    from kubernetes import watch

    w = watch.Watch()
    core.patch_namespaced_config_map("f", "default", [{"op": "remove", "path": "/metadata/finalizers"}])
    events = []
    for ev in w.stream(
        core.list_namespaced_config_map,
        "default",
        resource_version=lst.metadata.resource_version,
        timeout_seconds=1,
    ):
        events.append((ev["type"], ev["object"].metadata.finalizers))
    assert events == [("DELETED", ["example.com/f"])]
    assert gone(lambda: core.read_namespaced_config_map("f", "default"))


def test_deletion_timestamp_cannot_be_set_by_client(raw):
    """6-5."""
    _, created = raw.json("POST", "/api/v1/namespaces/default/configmaps", cm("d"))
    created["metadata"]["deletionTimestamp"] = "2030-01-01T00:00:00Z"
    code, body = raw.json("PUT", "/api/v1/namespaces/default/configmaps/d", created)
    assert (
        code == 422
        and "metadata.deletionTimestamp" in body["message"]
        and "field is immutable" in body["message"]
    )


def test_preconditions(core, raw):
    """11-7."""
    _, created = raw.json("POST", "/api/v1/namespaces/default/configmaps", cm("p"))
    code, body = raw.json(
        "DELETE",
        "/api/v1/namespaces/default/configmaps/p",
        {"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}},
    )
    assert code == 409
    assert body["message"] == (
        'Operation cannot be fulfilled on ConfigMap "p": the UID in the precondition '
        "(00000000-0000-0000-0000-000000000000) does not match the UID in record "
        f"({created['metadata']['uid']}). "
        "The object might have been deleted and then recreated"
    )
    code, body = raw.json(
        "DELETE", "/api/v1/namespaces/default/configmaps/p", {"preconditions": {"resourceVersion": "1"}}
    )
    assert code == 409 and "the ResourceVersion in the precondition (1)" in body["message"]
    code, _ = raw.json(
        "DELETE",
        "/api/v1/namespaces/default/configmaps/p",
        {"preconditions": {"uid": created["metadata"]["uid"]}},
    )
    assert code == 200


def test_bad_delete_options(raw):
    """11-1."""
    raw.json("POST", "/api/v1/namespaces/default/configmaps", cm("o"))
    code, body = raw.json(
        "DELETE", "/api/v1/namespaces/default/configmaps/o", {"propagationPolicy": "Sideways"}
    )
    assert code == 422 and "propagationPolicy: Unsupported value" in body["message"]
    code, body = raw.json(
        "DELETE",
        "/api/v1/namespaces/default/configmaps/o",
        {"propagationPolicy": "Orphan", "orphanDependents": True},
    )
    assert code == 422


def test_delete_collection(core, raw):
    """11-9: honours selectors; finalized objects remain, marked."""
    core.create_namespaced_config_map("default", cm("a", labels={"g": "1"}))
    core.create_namespaced_config_map("default", cm("b", labels={"g": "1"}, finalizers=["x.io/f"]))
    core.create_namespaced_config_map("default", cm("c", labels={"g": "2"}))
    code, body = raw.json("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=g%3D1")
    assert code == 200 and body["kind"] == "ConfigMapList"
    assert sorted(i["metadata"]["name"] for i in body["items"]) == ["a", "b"]
    left = {i.metadata.name: i for i in core.list_namespaced_config_map("default").items}
    assert "a" not in left and left["b"].metadata.deletion_timestamp and "c" in left


def test_namespace_lifecycle(core, raw):
    """12-1..12-6: Terminating, 403 on create, content deleted, then the namespace goes."""
    ns = core.create_namespace({"metadata": {"name": "life"}})
    assert ns.metadata.labels == {"kubernetes.io/metadata.name": "life"}
    core.create_namespaced_config_map("life", cm("held", finalizers=["example.com/hold"]))
    core.create_namespaced_secret("life", {"metadata": {"name": "s"}})
    eventually(lambda: core.list_namespaced_service_account("life").items)  # 12-9 default SA
    deleted = core.delete_namespace("life")
    assert deleted["status"]["phase"] == "Terminating"
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map("life", cm("new"))
    st = json.loads(e.value.body)
    assert e.value.status == 403
    assert st["message"] == (
        'configmaps "new" is forbidden: unable to create new content in namespace life '
        "because it is being terminated"
    )
    assert st["details"]["causes"] == [
        {
            "reason": "NamespaceTerminating",
            "message": "namespace life is being terminated",
            "field": "metadata.namespace",
        }
    ]
    eventually(lambda: gone(lambda: core.read_namespaced_secret("s", "life")))

    def content_remaining():
        conds = {c.type: c for c in core.read_namespace("life").status.conditions or []}
        c = conds.get("NamespaceContentRemaining")
        return c is not None and c.status == "True" and c

    cond = eventually(content_remaining)
    assert cond.reason == "SomeResourcesRemain"
    assert cond.message == "Some resources are remaining: configmaps. has 1 resource instances"
    with pytest.raises(ApiException) as e:
        core.delete_namespace("life")
    assert (
        e.value.status == 409
        and "The system is ensuring all content is removed" in json.loads(e.value.body)["message"]
    )
    core.patch_namespaced_config_map(
        "held", "life", {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/hold"]}}
    )
    eventually(lambda: gone(lambda: core.read_namespace("life")))


def test_protected_namespaces(core):
    """12-4."""
    with pytest.raises(ApiException) as e:
        core.delete_namespace("kube-system")
    assert e.value.status == 403
    assert (
        json.loads(e.value.body)["message"]
        == 'namespaces "kube-system" is forbidden: this namespace may not be deleted'
    )


def owned(name: str, owner, block: bool = False) -> dict:
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": owner.metadata.name, "uid": owner.metadata.uid}
    if block:
        ref["blockOwnerDeletion"] = True
    return cm(name, ownerReferences=[ref])


def test_gc_background(core):
    """13-1, 13-5: dependents of a deleted owner are collected after the owner is gone."""
    owner = core.create_namespaced_config_map("default", cm("owner"))
    core.create_namespaced_config_map("default", owned("dep", owner))
    core.delete_namespaced_config_map("owner", "default")
    eventually(lambda: gone(lambda: core.read_namespaced_config_map("dep", "default")))


def test_gc_keeps_dependents_with_live_owner(core):
    a = core.create_namespaced_config_map("default", cm("a"))
    b = core.create_namespaced_config_map("default", cm("b"))
    refs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": o.metadata.name, "uid": o.metadata.uid}
        for o in (a, b)
    ]
    core.create_namespaced_config_map("default", cm("dep", ownerReferences=refs))
    core.delete_namespaced_config_map("a", "default")
    eventually(
        lambda: (
            [r.name for r in core.read_namespaced_config_map("dep", "default").metadata.owner_references]
            == ["b"]
        )
    )


def test_gc_foreground(core):
    """11-6: the owner waits for blocking dependents."""
    owner = core.create_namespaced_config_map("default", cm("owner"))
    core.create_namespaced_config_map(
        "default",
        {
            **owned("dep", owner, block=True),
            "metadata": {**owned("dep", owner, True)["metadata"], "finalizers": ["example.com/hold"]},
        },
    )
    core.delete_namespaced_config_map("owner", "default", propagation_policy="Foreground")
    o = core.read_namespaced_config_map("owner", "default")
    assert "foregroundDeletion" in o.metadata.finalizers
    eventually(lambda: core.read_namespaced_config_map("dep", "default").metadata.deletion_timestamp)
    consistently(
        lambda: core.read_namespaced_config_map("owner", "default"),
        duration=0.2,
        message="owner still blocked",
    )
    core.patch_namespaced_config_map("dep", "default", {"metadata": {"finalizers": None}})
    eventually(lambda: gone(lambda: core.read_namespaced_config_map("owner", "default")))


def test_gc_orphan(core):
    owner = core.create_namespaced_config_map("default", cm("owner"))
    core.create_namespaced_config_map("default", owned("dep", owner))
    core.delete_namespaced_config_map("owner", "default", propagation_policy="Orphan")
    eventually(lambda: gone(lambda: core.read_namespaced_config_map("owner", "default")))
    dep = core.read_namespaced_config_map("dep", "default")
    assert not dep.metadata.owner_references


def test_gc_cluster_scoped_owner(core):
    """13-2: a namespaced dependent may have a cluster-scoped owner."""
    ns = core.create_namespace({"metadata": {"name": "owner-ns"}})
    ref = {"apiVersion": "v1", "kind": "Namespace", "name": "owner-ns", "uid": ns.metadata.uid}
    core.create_namespaced_config_map("default", cm("dep", ownerReferences=[ref]))
    core.delete_namespace("owner-ns")
    eventually(lambda: gone(lambda: core.read_namespaced_config_map("dep", "default")), timeout=10)


def test_gc_cross_namespace_owner_is_absent(core):
    """13-2: a reference to an owner in another namespace counts as absent, with a Warning event."""
    core.create_namespace({"metadata": {"name": "other"}})
    owner = core.create_namespaced_config_map("other", cm("owner"))
    core.create_namespaced_config_map("default", owned("dep", owner))
    eventually(lambda: gone(lambda: core.read_namespaced_config_map("dep", "default")))
    events = core.list_namespaced_event("default", field_selector="reason=OwnerRefInvalidNamespace")
    assert events.items and events.items[0].involved_object.name == "dep"
    assert isinstance(events.items[0], client.CoreV1Event)
