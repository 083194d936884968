"""Owner references and finalizers on plain dicts, as controller-runtime's controllerutil."""

from __future__ import annotations

import pytest

from framework.controllerutil import (
    AlreadyOwnedError,
    add_finalizer,
    contains_finalizer,
    get_controller_of,
    has_controller_reference,
    has_owner_reference,
    merge_owner_references,
    new_controller_ref,
    remove_controller_reference,
    remove_finalizer,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)


def obj(
    kind: str = "ConfigMap", name: str = "a", namespace: str | None = "default", uid: str = "u-1", av="v1"
):
    meta = {"name": name, "uid": uid}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": av, "kind": kind, "metadata": meta}


def test_set_controller_reference_adds_a_controller_ref():
    owner, child = obj("ConfigMap", "owner", uid="u-owner"), obj("Secret", "child")
    assert set_controller_reference(owner, child) is True
    assert child["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "owner",
            "uid": "u-owner",
            "blockOwnerDeletion": True,
            "controller": True,
        }
    ]
    assert set_controller_reference(owner, child) is False  # idempotent: no change, no write needed
    assert has_controller_reference(child)
    assert get_controller_of(child)["name"] == "owner"


def test_set_controller_reference_refuses_a_second_controller():
    child = obj("Secret", "child")
    set_controller_reference(obj("ConfigMap", "first", uid="u1"), child)
    with pytest.raises(AlreadyOwnedError) as err:
        set_controller_reference(obj("ConfigMap", "second", uid="u2"), child)
    assert str(err.value) == "Object default/child is already owned by another ConfigMap controller first"
    assert err.value.owner["name"] == "first"
    assert [r["name"] for r in child["metadata"]["ownerReferences"]] == ["first"]  # untouched


def test_same_owner_in_another_version_is_the_same_reference():
    child = obj("Secret", "child")
    set_controller_reference(obj("Widget", "w", uid="u1", av="example.com/v1"), child)
    # Group, kind and name identify an owner; a new uid (recreated owner) or version replaces the ref.
    assert set_controller_reference(obj("Widget", "w", uid="u2", av="example.com/v2"), child) is True
    assert child["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "example.com/v2",
            "kind": "Widget",
            "name": "w",
            "uid": "u2",
            "blockOwnerDeletion": True,
            "controller": True,
        }
    ]
    # Another group with the same kind and name is another owner, and a controller already exists.
    with pytest.raises(AlreadyOwnedError):
        set_controller_reference(obj("Widget", "w", uid="u3", av="other.io/v1"), child)


def test_owner_scope_rules():
    with pytest.raises(ValueError, match="cluster-scoped resource must not have a namespace-scoped owner"):
        set_controller_reference(obj("ConfigMap", "o"), obj("Namespace", "ns", namespace=None))
    with pytest.raises(ValueError, match="cross-namespace owner references are disallowed"):
        set_owner_reference(obj("ConfigMap", "o", namespace="a"), obj("Secret", "s", namespace="b"))
    # A cluster-scoped owner may own namespaced and cluster-scoped objects.
    ns_owner = obj("Namespace", "team", namespace=None)
    assert set_controller_reference(ns_owner, obj("Secret", "s"))
    assert set_controller_reference(
        ns_owner, obj("ClusterRole", "r", namespace=None, av="rbac.authorization.k8s.io/v1")
    )


def test_owner_must_exist():
    owner = obj("ConfigMap", "o")
    del owner["metadata"]["uid"]
    with pytest.raises(ValueError, match=r"owner has no metadata\.uid"):
        set_owner_reference(owner, obj("Secret", "s"))
    with pytest.raises(ValueError, match="owner has no apiVersion, kind"):
        set_owner_reference({"metadata": {"name": "x", "uid": "u"}}, obj("Secret", "s"))


def test_set_owner_reference_and_removal():
    child = obj("Secret", "child")
    a, b = obj("ConfigMap", "a", uid="ua"), obj("ConfigMap", "b", uid="ub")
    assert set_owner_reference(a, child) is True
    assert set_owner_reference(b, child, block_owner_deletion=False) is True
    assert child["metadata"]["ownerReferences"][0] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "a",
        "uid": "ua",
    }
    assert child["metadata"]["ownerReferences"][1]["blockOwnerDeletion"] is False
    assert not has_controller_reference(child)
    assert has_owner_reference(child, a) and has_owner_reference(child, b)
    assert remove_owner_reference(a, child) is True
    assert remove_owner_reference(a, child) is False
    assert not has_owner_reference(child, a)
    with pytest.raises(ValueError, match="not the controller"):
        remove_controller_reference(b, child)
    assert remove_owner_reference(b, child) is True
    assert "ownerReferences" not in child["metadata"]  # empty list dropped, as Go's nil slice


def test_remove_controller_reference():
    child, owner = obj("Secret", "child"), obj("ConfigMap", "o")
    set_controller_reference(owner, child)
    assert remove_controller_reference(owner, child) is True
    assert not has_controller_reference(child)
    assert remove_controller_reference(owner, child) is False


def test_finalizers():
    o = obj()
    assert not contains_finalizer(o, "example.com/cleanup")
    assert add_finalizer(o, "example.com/cleanup") is True
    assert add_finalizer(o, "example.com/cleanup") is False
    assert add_finalizer(o, "other") is True
    assert o["metadata"]["finalizers"] == ["example.com/cleanup", "other"]
    assert contains_finalizer(o, "other")
    assert remove_finalizer(o, "example.com/cleanup") is True
    assert remove_finalizer(o, "example.com/cleanup") is False
    assert o["metadata"]["finalizers"] == ["other"]
    assert remove_finalizer(o, "other") is True
    assert "finalizers" not in o["metadata"]
    assert remove_finalizer({"apiVersion": "v1", "kind": "ConfigMap"}, "x") is False
    bare: dict = {}
    assert add_finalizer(bare, "x") is True and bare == {"metadata": {"finalizers": ["x"]}}


def test_new_controller_ref_is_client_gos_new_controller_ref():
    owner = obj("Widget", "w", uid="u1", av="example.com/v1")
    assert new_controller_ref(owner) == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "name": "w",
        "uid": "u1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    # An explicit (apiVersion, kind), for an owner dict that carries neither (metav1.NewControllerRef's gvk).
    bare = {"metadata": {"name": "p", "uid": "u2"}}
    ref = new_controller_ref(bare, ("core.example.com/v1beta1", "Project"), block_owner_deletion=False)
    assert ref["apiVersion"] == "core.example.com/v1beta1" and ref["kind"] == "Project"
    assert ref["blockOwnerDeletion"] is False and ref["controller"] is True
    with pytest.raises(ValueError, match="apiVersion, kind"):
        new_controller_ref(bare)
    with pytest.raises(ValueError, match=r"metadata\.uid"):
        new_controller_ref({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})


def test_merge_owner_references_appends_only_unknown_uids():
    foreign = {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "other"}
    child = obj("Secret", "s")
    child["metadata"]["ownerReferences"] = [foreign]
    mine = new_controller_ref(obj("Widget", "w", uid="u1", av="example.com/v1"))
    assert merge_owner_references(child, [mine]) is True
    assert child["metadata"]["ownerReferences"] == [foreign, mine]
    # The same uid under another name or flags counts as present: nothing is replaced.
    renamed = {**mine, "name": "renamed", "blockOwnerDeletion": False}
    assert merge_owner_references(child, [renamed]) is False
    assert child["metadata"]["ownerReferences"] == [foreign, mine]
    # Duplicates within refs are added once; an object without references gets the list.
    empty = obj("Secret", "t")
    assert merge_owner_references(empty, [mine, dict(mine)]) is True
    assert empty["metadata"]["ownerReferences"] == [mine]
    assert merge_owner_references(empty, []) is False
