"""create_or_update / create_or_patch against the test API server, through the live client and the
manager's cached client alike: they create, update only on change, and never write a no-op."""

from __future__ import annotations

import pytest

from framework.client import Client, Conflict
from framework.controllerutil import (
    OperationResult,
    create_or_patch,
    create_or_update,
    set_controller_reference,
)
from framework.manager import Manager
from framework.testing import eventually

GIZMO_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gizmos.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "gizmos", "kind": "Gizmo"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


def cm(name: str = "cfg") -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def gizmo(name: str = "g") -> dict:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Gizmo",
        "metadata": {"name": name, "namespace": "default"},
    }


@pytest.fixture(params=["live", "cached"])
def rw(request, apiserver):
    """The client under test: ``Client`` itself, or ``mgr.client`` (reads from the informer cache)."""
    live = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    if request.param == "live":
        yield live
    else:
        mgr = Manager(live)
        yield mgr.client
        mgr.cache.stop()
    live.close()


def seen(reader, obj: dict) -> None:
    """Wait until ``reader`` (a cache may lag) shows ``obj``'s resourceVersion."""
    meta = obj["metadata"]
    eventually(
        lambda: (
            reader.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))["metadata"][
                "resourceVersion"
            ]
            == meta["resourceVersion"]
        ),
        message=f"reader sees {meta['name']} at {meta['resourceVersion']}",
        ignore=(Exception,),
    )


def writes(apiserver) -> dict[str, int]:
    """Write requests served so far, by verb."""
    out: dict[str, int] = {}
    for key, n in apiserver.request_counts().items():
        if key.verb in ("create", "update", "patch", "delete"):
            out[key.verb] = out.get(key.verb, 0) + n
    return out


def test_create_or_update_creates_updates_and_skips_no_ops(apiserver, rw):
    def mutate(o: dict) -> None:
        o["data"] = {"color": "blue"}

    created, result = create_or_update(rw, cm(), mutate)
    assert result is OperationResult.CREATED
    assert created["data"] == {"color": "blue"} and created["metadata"]["uid"]
    seen(rw, created)

    apiserver.reset_request_counts()
    same, result = create_or_update(rw, cm(), mutate)
    assert result is OperationResult.UNCHANGED
    assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert writes(apiserver) == {}  # nothing changed: nothing written

    def recolor(o: dict) -> None:
        o["data"]["color"] = "green"

    updated, result = create_or_update(rw, cm(), recolor)
    assert result is OperationResult.UPDATED
    assert updated["data"] == {"color": "green"}
    assert writes(apiserver) == {"update": 1}
    assert Client.from_kubeconfig(apiserver.kubeconfig).get("v1", "ConfigMap", "cfg", "default")["data"] == {
        "color": "green"
    }


def test_create_or_update_sets_an_owner_inside_mutate(rw):
    owner, _ = create_or_update(rw, cm("owner"))
    seen(rw, owner)

    def mutate(secret: dict) -> None:
        secret["stringData"] = {"k": "v"}
        set_controller_reference(owner, secret)

    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}}
    created, result = create_or_update(rw, secret, mutate)
    assert result is OperationResult.CREATED
    assert created["metadata"]["ownerReferences"][0]["uid"] == owner["metadata"]["uid"]


def test_create_or_update_refuses_to_rename(rw):
    def rename(o: dict) -> None:
        o["metadata"]["name"] = "other"

    with pytest.raises(ValueError, match="must not change the object's name or namespace"):
        create_or_update(rw, cm(), rename)


def test_create_or_update_stale_read_conflicts(apiserver, rw):
    created, _ = create_or_update(rw, cm(), lambda o: o.update(data={"n": "1"}))
    seen(rw, created)
    admin = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    # A write the reader has not seen yet (the live client reads it, so patch it behind the update's back).
    current = dict(created)

    class StaleReader:
        """Answers every read with the object as first created: a cache that has not caught up."""

        def get(self, *args, **kwargs):
            return current

        def update(self, obj):
            return rw.update(obj)

    admin.patch("v1", "ConfigMap", "cfg", {"data": {"n": "2"}}, "default")
    with pytest.raises(Conflict):
        create_or_update(StaleReader(), cm(), lambda o: o.update(data={"n": "3"}))
    assert admin.get("v1", "ConfigMap", "cfg", "default")["data"] == {"n": "2"}


def test_create_or_patch_patches_object_and_status_separately(apiserver, rw):
    apiserver.install_crds([GIZMO_CRD])
    created, result = create_or_patch(
        rw, gizmo(), lambda o: o.update(spec={"size": 1}, status={"phase": "new"})
    )
    assert result is OperationResult.CREATED
    assert "status" not in created  # status is dropped on create, as the API server drops it
    seen(rw, created)

    apiserver.reset_request_counts()
    _, result = create_or_patch(rw, gizmo(), lambda o: o["spec"].update(size=1))
    assert result is OperationResult.UNCHANGED
    assert writes(apiserver) == {}

    status_only, result = create_or_patch(rw, gizmo(), lambda o: o.update(status={"phase": "ready"}))
    assert result is OperationResult.UPDATED_STATUS_ONLY
    assert status_only["status"] == {"phase": "ready"}
    assert writes(apiserver) == {"patch": 1}
    seen(rw, status_only)

    def both(o: dict) -> None:
        o["spec"]["size"] = 2
        o["status"]["phase"] = "resizing"

    patched, result = create_or_patch(rw, gizmo(), both)
    assert result is OperationResult.UPDATED_STATUS
    assert patched["spec"] == {"size": 2} and patched["status"] == {"phase": "resizing"}
    assert writes(apiserver) == {"patch": 3}
    seen(rw, patched)

    def drop_size(o: dict) -> None:
        del o["spec"]["size"]

    patched, result = create_or_patch(rw, gizmo(), drop_size)
    assert result is OperationResult.UPDATED
    assert "size" not in patched.get("spec", {})
    assert patched["status"] == {"phase": "resizing"}
