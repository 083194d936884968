"""SharedInformerFactory: one informer per (kind, namespace, selectors), started, synced and shut down
together, against the API server over HTTP."""

from __future__ import annotations

import threading

import pytest
import structlog

from framework.cache import InformerKey, SharedIndexInformer, SharedInformerFactory, drop_managed_fields
from framework.client import Client
from framework.testing import eventually


def cm(name: str, namespace: str = "default", **labels: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
    }


@pytest.fixture
def client(apiserver) -> Client:
    c = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    yield c
    c.close()


@pytest.fixture
def factory(client):
    f = SharedInformerFactory(client)
    yield f
    assert f.shutdown(5)


def test_one_informer_per_kind_namespace_and_selectors(factory):
    a = factory.informer_for("v1", "ConfigMap", "default")
    assert factory.informer_for("v1", "ConfigMap", "default") is a
    assert factory.informer_for("v1", "ConfigMap", "default", label_selector="app=x") is not a
    assert factory.informer_for("v1", "ConfigMap", "kube-system") is not a
    assert factory.informer_for("v1", "ConfigMap") is not a  # all namespaces
    assert factory.informer_for("v1", "Secret", "default") is not a
    assert isinstance(a, SharedIndexInformer)
    assert len(factory.informers()) == 5
    assert InformerKey("v1", "ConfigMap", "default", None, None) in factory.informers()


def test_start_sync_and_share_one_watch(apiserver, client, factory):
    client.create(cm("a", app="x"))
    client.create(cm("b", app="y"))
    configmaps = factory.informer_for("v1", "ConfigMap", "default", transform=drop_managed_fields)
    selected = factory.informer_for("v1", "ConfigMap", "default", label_selector="app=x")
    namespaces = factory.informer_for("v1", "Namespace")
    seen_by_two: list[list[str]] = [[], []]
    for seen in seen_by_two:
        factory.informer_for("v1", "ConfigMap", "default").add_event_handler(
            on_add=lambda o, seen=seen: seen.append(o["metadata"]["name"])
        )
    factory.start()
    synced = factory.wait_for_cache_sync(10)
    assert synced == {
        InformerKey("v1", "ConfigMap", "default", None, None): True,
        InformerKey("v1", "ConfigMap", "default", "app=x", None): True,
        InformerKey("v1", "Namespace", None, None, None): True,
    }
    assert {o["metadata"]["name"] for o in selected.indexer.list()} == {"a"}
    assert namespaces.indexer.get_by_key("default") is not None
    assert all("managedFields" not in o["metadata"] for o in configmaps.indexer.list())
    client.create(cm("c", app="x"))
    eventually(lambda: all("c" in seen for seen in seen_by_two))
    eventually(lambda: selected.indexer.get_by_key("default/c") is not None)
    # Two handlers, one list and watch for the unselected ConfigMap informer.
    eventually(lambda: apiserver.call(lambda: len(apiserver.handler.watchers)) == 3)


def test_informers_added_later_start_on_the_next_start(client, factory):
    first = factory.informer_for("v1", "ConfigMap", "default")
    factory.start()
    later = factory.informer_for("v1", "Namespace")
    assert first.is_started() and not later.is_started()
    factory.start()
    assert later.is_started()
    assert all(factory.wait_for_cache_sync(10).values())


def test_factory_namespace_resync_and_options(client):
    f = SharedInformerFactory(
        client, default_resync=30, namespace="kube-system", informer_options={"page_size": 2}
    )
    try:
        informer = f.informer_for("v1", "ConfigMap")
        assert informer.namespace == "kube-system"
        assert informer.add_event_handler(on_add=lambda o: None).resync_period == 30
        assert f.informer_for("v1", "ConfigMap", "kube-system") is informer
        with structlog.testing.capture_logs() as logs:
            assert f.informer_for("v1", "ConfigMap", transform=drop_managed_fields) is informer
        assert any("another transform" in e["event"] for e in logs)
        f.start()
        assert all(f.wait_for_cache_sync(10).values())
        assert informer.reflector.page_size == 2
    finally:
        assert f.shutdown(5)


def test_shutdown_stops_every_thread_and_blocks_later_starts(client):
    f = SharedInformerFactory(client)
    f.informer_for("v1", "ConfigMap", "default").add_event_handler(on_add=lambda o: None)
    f.informer_for("v1", "Namespace")
    f.start()
    assert all(f.wait_for_cache_sync(10).values())
    assert any(t.name.startswith("informer[") for t in threading.enumerate())
    assert f.shutdown(5)
    assert not any(t.name.startswith("informer[") for t in threading.enumerate())
    f.informer_for("v1", "Secret", "default")
    f.start()  # shut down: nothing starts
    assert not any(t.name.startswith("informer[") for t in threading.enumerate())
    assert all(i.is_stopped() for k, i in f.informers().items() if k.kind != "Secret")
