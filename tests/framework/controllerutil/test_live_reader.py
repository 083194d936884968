"""create_or_update / create_or_patch with ``live_reader``: the (cached) read only decides whether a
write is needed; the write is decided again, and based, on the live object.

The stale cache is a real one: a manager's informer cache, synced and then stopped, keeps answering
from the state it last saw while the objects move on in the API server.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from framework.client import AlreadyExists, Client, Conflict
from framework.controllerutil import OperationResult, create_or_patch, create_or_update
from framework.manager import Manager

OWNED = "example.com/owned"


class Refused(Exception):
    pass


def cm(name: str = "cfg", **fields: Any) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        **fields,
    }


def adopt(o: dict) -> None:
    """The safety rule under test: only a ConfigMap labelled ours may be touched; then set data."""
    if (o["metadata"].get("labels") or {}).get(OWNED) != "true":
        raise Refused(f"{o['metadata']['name']} is not ours")
    o["data"] = {"color": "blue"}


@pytest.fixture
def live(apiserver) -> Iterator[Client]:
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    yield client
    client.close()


@pytest.fixture
def frozen(live):
    """``freeze(*objs)``: a cached client whose cache has seen ``objs`` (at their resourceVersions) and
    then stopped: a cache that lags behind every later write."""
    managers: list[Manager] = []

    def freeze(*objs: dict) -> Any:
        mgr = Manager(live)
        managers.append(mgr)
        mgr.client.list("v1", "ConfigMap", "default")  # starts and syncs the informer
        for o in objs:
            meta = o["metadata"]
            seen = mgr.client.get("v1", "ConfigMap", meta["name"], "default")
            assert seen["metadata"]["resourceVersion"] == meta["resourceVersion"]
        assert mgr.cache.stop()
        return mgr.client

    yield freeze
    for mgr in managers:
        mgr.cache.stop()


def requests(apiserver) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, n in apiserver.request_counts().items():
        if key.resource == "configmaps":
            out[key.verb] = out.get(key.verb, 0) + n
    return out


@pytest.mark.parametrize("operation", [create_or_update, create_or_patch])
def test_live_recheck_refuses_what_the_stale_cache_allowed(apiserver, live, frozen, operation):
    ours = live.create(cm(metadata={"name": "cfg", "namespace": "default", "labels": {OWNED: "true"}}))
    cached = frozen(ours)
    # Since the cache looked, the ConfigMap was handed to someone else.
    live.patch("v1", "ConfigMap", "cfg", {"metadata": {"labels": {OWNED: None}}}, "default")

    apiserver.reset_request_counts()
    with pytest.raises(Refused):
        operation(cached, cm(), adopt, live_reader=live)
    assert requests(apiserver) == {"get": 1}  # read live, and nothing written
    assert "data" not in live.get("v1", "ConfigMap", "cfg", "default")


def test_without_live_reader_the_stale_cache_decides(apiserver, live, frozen):
    """The counter-test: without the live read a merge patch goes out on the stale cache's say-so."""
    ours = live.create(cm(metadata={"name": "cfg", "namespace": "default", "labels": {OWNED: "true"}}))
    cached = frozen(ours)
    live.patch("v1", "ConfigMap", "cfg", {"metadata": {"labels": {OWNED: None}}}, "default")
    _, result = create_or_patch(cached, cm(), adopt)
    assert result is OperationResult.UPDATED
    assert live.get("v1", "ConfigMap", "cfg", "default")["data"] == {"color": "blue"}


def test_live_recheck_accepts_and_writes_at_the_live_resource_version(apiserver, live, frozen):
    ours = live.create(cm(metadata={"name": "cfg", "namespace": "default", "labels": {OWNED: "true"}}))
    cached = frozen(ours)
    moved = live.patch("v1", "ConfigMap", "cfg", {"metadata": {"annotations": {"a": "1"}}}, "default")

    # Without the live read the update carries the cache's resourceVersion and conflicts ...
    with pytest.raises(Conflict):
        create_or_update(cached, cm(), adopt)
    # ... with it, the update is based on the live object: it keeps the concurrent change.
    updated, result = create_or_update(cached, cm(), adopt, live_reader=live)
    assert result is OperationResult.UPDATED
    assert updated["data"] == {"color": "blue"}
    assert updated["metadata"]["annotations"] == {"a": "1"}
    assert int(updated["metadata"]["resourceVersion"]) > int(moved["metadata"]["resourceVersion"])


def test_a_write_between_the_live_read_and_the_update_conflicts(apiserver, live, frozen):
    ours = live.create(cm(metadata={"name": "cfg", "namespace": "default", "labels": {OWNED: "true"}}))
    cached = frozen(ours)
    calls: list[str] = []

    def racing(o: dict) -> None:
        calls.append(o["metadata"]["resourceVersion"])
        adopt(o)
        if len(calls) == 2:  # the live pass: another writer gets in before our update
            live.patch("v1", "ConfigMap", "cfg", {"data": {"color": "red"}}, "default")

    with pytest.raises(Conflict):
        create_or_update(cached, cm(), racing, live_reader=live)
    assert len(calls) == 2
    assert live.get("v1", "ConfigMap", "cfg", "default")["data"] == {"color": "red"}


@pytest.mark.parametrize("operation", [create_or_update, create_or_patch])
def test_nothing_is_read_live_or_written_when_nothing_changes(apiserver, live, frozen, operation):
    done = live.create(
        cm(
            metadata={"name": "cfg", "namespace": "default", "labels": {OWNED: "true"}},
            data={"color": "blue"},
        )
    )
    cached = frozen(done)
    apiserver.reset_request_counts()
    same, result = operation(cached, cm(), adopt, live_reader=live)
    assert result is OperationResult.UNCHANGED
    assert same["metadata"]["resourceVersion"] == done["metadata"]["resourceVersion"]
    assert requests(apiserver) == {}


@pytest.mark.parametrize("operation", [create_or_update, create_or_patch])
def test_the_live_object_already_as_wanted_is_not_written(apiserver, live, frozen, operation):
    ours = live.create(cm(metadata={"name": "cfg", "namespace": "default", "labels": {OWNED: "true"}}))
    cached = frozen(ours)
    done = live.patch("v1", "ConfigMap", "cfg", {"data": {"color": "blue"}}, "default")  # done since
    apiserver.reset_request_counts()
    same, result = operation(cached, cm(), adopt, live_reader=live)
    assert result is OperationResult.UNCHANGED
    assert same["metadata"]["resourceVersion"] == done["metadata"]["resourceVersion"]
    assert requests(apiserver) == {"get": 1}


@pytest.mark.parametrize("operation", [create_or_update, create_or_patch])
def test_create_when_the_cache_has_none(apiserver, live, frozen, operation):
    cached = frozen()
    labelled = cm(metadata={"name": "cfg", "namespace": "default", "labels": {OWNED: "true"}})
    apiserver.reset_request_counts()
    created, result = operation(cached, labelled, adopt, live_reader=live)
    assert result is OperationResult.CREATED
    assert created["data"] == {"color": "blue"} and created["metadata"]["labels"] == {OWNED: "true"}
    assert requests(apiserver) == {"create": 1}  # a create needs no live read
    # mutate's rule holds on create too: an unlabelled object is never created.
    with pytest.raises(Refused):
        operation(cached, cm("other"), adopt, live_reader=live)


@pytest.mark.parametrize("operation", [create_or_update, create_or_patch])
def test_created_since_the_cache_looked_goes_on_with_the_live_object(apiserver, live, frozen, operation):
    cached = frozen()
    live.create(cm(metadata={"name": "cfg", "namespace": "default", "labels": {OWNED: "true", "x": "1"}}))
    labelled = cm(metadata={"name": "cfg", "namespace": "default", "labels": {OWNED: "true"}})

    with pytest.raises(AlreadyExists):  # without the live reader, the create's answer is the result
        operation(cached, labelled, adopt)
    updated, result = operation(cached, labelled, adopt, live_reader=live)
    assert result is OperationResult.UPDATED
    assert updated["data"] == {"color": "blue"}
    assert updated["metadata"]["labels"] == {OWNED: "true", "x": "1"}  # the live object's, not obj's

    # Created since by someone else and not ours: the live re-check refuses it.
    live.create(cm("foreign"))
    with pytest.raises(Refused):
        operation(
            cached,
            cm("foreign", metadata={"name": "foreign", "namespace": "default", "labels": {OWNED: "true"}}),
            adopt,
            live_reader=live,
        )
    assert "data" not in live.get("v1", "ConfigMap", "foreign", "default")


@pytest.mark.parametrize("operation", [create_or_update, create_or_patch])
def test_deleted_since_the_cache_looked_is_created_again(apiserver, live, frozen, operation):
    ours = live.create(cm(metadata={"name": "cfg", "namespace": "default", "labels": {OWNED: "true"}}))
    cached = frozen(ours)
    live.delete("v1", "ConfigMap", "cfg", "default")
    labelled = cm(metadata={"name": "cfg", "namespace": "default", "labels": {OWNED: "true"}})
    created, result = operation(cached, labelled, adopt, live_reader=live)
    assert result is OperationResult.CREATED
    assert created["metadata"]["uid"] != ours["metadata"]["uid"]
    assert live.get("v1", "ConfigMap", "cfg", "default")["data"] == {"color": "blue"}
