"""Event handlers as controller-runtime's pkg/handler: what each enqueues for create, update and
delete (tombstones included)."""

from __future__ import annotations

from framework.cache import DeletedFinalStateUnknown
from framework.handler import EnqueueRequestForObject, EnqueueRequestForOwner, EnqueueRequestsFromMapFunc
from framework.reconcile import Request


class Recorder:
    def __init__(self) -> None:
        self.added: list[Request] = []

    def add(self, item: Request) -> None:
        self.added.append(item)


def obj(name: str, namespace: str = "ns", owners=()) -> dict:
    meta: dict = {"name": name, "namespace": namespace}
    if owners:
        meta["ownerReferences"] = list(owners)
    return {"metadata": meta}


def owner(
    name: str, kind: str = "Widget", api_version: str = "example.com/v1", controller: bool = True
) -> dict:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": f"uid-{name}",
        "controller": controller,
    }


def test_for_object_enqueues_the_object_itself():
    q, h = Recorder(), EnqueueRequestForObject()
    h.create(obj("a"), q)
    h.update(obj("a"), obj("a"), q)
    h.delete(obj("a"), q)
    h.generic(obj("c", ""), q)
    assert q.added == [Request("a", "ns")] * 3 + [Request("c")]


def test_for_object_unwraps_a_tombstone():
    q, h = Recorder(), EnqueueRequestForObject()
    h.delete(DeletedFinalStateUnknown("ns/a", obj("a")), q)
    assert q.added == [Request("a", "ns")]


def test_for_owner_takes_the_controller_reference_of_the_group_and_kind():
    q = Recorder()
    h = EnqueueRequestForOwner("example.com/v1", "Widget")
    h.create(
        obj(
            "child",
            owners=[
                owner("not-controller", controller=False),
                owner("other-kind", kind="Gadget"),
                owner("other-group", api_version="other.io/v1"),
                owner("w", api_version="example.com/v2"),  # the version does not matter
            ],
        ),
        q,
    )
    assert q.added == [Request("w", "ns")]


def test_for_owner_every_owner_and_cluster_scoped_owners():
    q = Recorder()
    h = EnqueueRequestForOwner("example.com/v1", "Widget", owner_namespaced=False, only_controller=False)
    h.create(obj("child", owners=[owner("a", controller=False), owner("b")]), q)
    assert q.added == [Request("a"), Request("b")]  # cluster-scoped owners have no namespace


def test_for_owner_update_maps_old_and_new_once_each():
    q = Recorder()
    h = EnqueueRequestForOwner("example.com/v1", "Widget")
    h.update(obj("c", owners=[owner("old")]), obj("c", owners=[owner("new")]), q)
    assert sorted(q.added, key=str) == [Request("new", "ns"), Request("old", "ns")]
    q.added.clear()
    h.update(obj("c", owners=[owner("same")]), obj("c", owners=[owner("same")]), q)
    assert q.added == [Request("same", "ns")]


def test_for_owner_unwraps_a_tombstone_and_ignores_unowned_objects():
    q = Recorder()
    h = EnqueueRequestForOwner("example.com/v1", "Widget")
    h.delete(DeletedFinalStateUnknown("ns/c", obj("c", owners=[owner("w")])), q)
    h.create(obj("lonely"), q)
    assert q.added == [Request("w", "ns")]


def test_map_func_sees_the_unwrapped_object_on_delete():
    seen: list[dict] = []
    q = Recorder()
    h = EnqueueRequestsFromMapFunc(lambda o: seen.append(o) or [Request(o["metadata"]["name"] + "-owner")])
    h.delete(DeletedFinalStateUnknown("ns/a", obj("a")), q)
    assert seen == [obj("a")] and q.added == [Request("a-owner")]
