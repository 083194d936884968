"""Watch streaming: events in order, bookmarks, close from another thread, timeouts, server drops."""

from __future__ import annotations

import threading
import time

import pytest

from framework.client import Client, Timeout, Watch


def cm(name: str, namespace: str = "default", **data: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def collect(w: Watch, until, timeout: float = 5.0) -> list[tuple[str, dict]]:
    """Read events until ``until(events)`` holds (closing the watch), failing after ``timeout``."""
    events: list[tuple[str, dict]] = []
    timer = threading.Timer(timeout, w.close)
    timer.start()
    try:
        for ev in w:
            events.append(ev)
            if until(events):
                break
    finally:
        timer.cancel()
        w.close()
    assert until(events), f"watch ended early: {[(t, o['metadata']) for t, o in events]}"
    return events


def test_watch_streams_changes_in_order(client: Client):
    client.create(cm("before"))
    rv = client.list("v1", "ConfigMap", "default")["metadata"]["resourceVersion"]
    w = client.watch("v1", "ConfigMap", "default", resource_version=rv, read_timeout=5)

    def writer():
        client.create(cm("a", x="1"))
        client.patch("v1", "ConfigMap", "a", {"data": {"x": "2"}}, "default")
        client.delete("v1", "ConfigMap", "a", "default")

    threading.Thread(target=writer).start()
    events = collect(w, lambda evs: any(t == "DELETED" for t, _ in evs))
    changes = [
        (t, o["metadata"]["name"], (o.get("data") or {}).get("x")) for t, o in events if t != "BOOKMARK"
    ]
    assert changes == [("ADDED", "a", "1"), ("MODIFIED", "a", "2"), ("DELETED", "a", "2")]
    assert all(o["kind"] == "ConfigMap" and o["apiVersion"] == "v1" for _, o in events)
    rvs = [int(o["metadata"]["resourceVersion"]) for _, o in events]
    assert rvs == sorted(rvs) and rvs[0] > int(rv)
    assert w.resource_version == events[-1][1]["metadata"]["resourceVersion"]


def test_watch_without_rv_starts_with_synthetic_adds_across_namespaces(client: Client):
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    client.create(cm("a"))
    client.create(cm("b", namespace="other"))
    with client.watch("v1", "ConfigMap", label_selector="!absent", read_timeout=5) as w:
        events = collect(w, lambda evs: {("default", "a"), ("other", "b")} <= _keys(evs))
    assert {t for t, _ in events} == {"ADDED"}


def _keys(events) -> set[tuple[str, str]]:
    return {(o["metadata"].get("namespace"), o["metadata"]["name"]) for t, o in events if t == "ADDED"}


def test_bookmarks_and_close_from_another_thread(apiserver, client: Client):
    apiserver.bookmark_interval = 0.1
    rv = client.list("v1", "ConfigMap", "default")["metadata"]["resourceVersion"]
    w = client.watch("v1", "ConfigMap", "default", resource_version=rv)  # no read timeout: blocks
    bookmarks: list[dict] = []
    done = threading.Event()

    def consume():
        for etype, obj in w:
            if etype == "BOOKMARK":
                bookmarks.append(obj)
        done.set()

    t = threading.Thread(target=consume)
    t.start()
    assert _wait(lambda: len(bookmarks) >= 2)
    # A bookmark carries only the resourceVersion (and the kind), no object.
    assert bookmarks[0]["kind"] == "ConfigMap" and set(bookmarks[0]["metadata"]) == {"resourceVersion"}
    apiserver.bookmark_interval = 3600  # silence: the consumer is now blocked in a read
    time.sleep(0.3)
    start = time.monotonic()
    w.close()
    assert done.wait(2), "close() did not wake the blocked reader"
    assert time.monotonic() - start < 1.0
    t.join(1)
    w.close()  # idempotent
    # The pool is not poisoned by the aborted stream.
    assert client.get("v1", "Namespace", "default")["metadata"]["name"] == "default"


def test_read_timeout_on_silent_watch(client: Client):
    rv = client.list("v1", "ConfigMap", "default")["metadata"]["resourceVersion"]
    w = client.watch(
        "v1", "ConfigMap", "default", resource_version=rv, allow_watch_bookmarks=False, read_timeout=0.3
    )
    start = time.monotonic()
    with pytest.raises(Timeout) as e:
        next(iter(w))
    assert 0.25 <= time.monotonic() - start < 2.0
    assert e.value.status == 0 and "read timeout" in e.value.message
    assert w.closed and next(iter(w), None) is None


def test_server_timeout_and_dropped_watches_end_cleanly(apiserver, client: Client):
    rv = client.list("v1", "ConfigMap", "default")["metadata"]["resourceVersion"]
    start = time.monotonic()
    events = list(
        client.watch("v1", "ConfigMap", "default", resource_version=rv, timeout_seconds=1, read_timeout=5)
    )
    assert 0.9 <= time.monotonic() - start < 3.0
    assert events and all(t == "BOOKMARK" for t, _ in events)  # a bookmark shortly before the timeout

    w = client.watch("v1", "ConfigMap", "default", resource_version=rv, read_timeout=5)
    threading.Timer(0.2, apiserver.drop_watches).start()
    assert [t for t, _ in w if t != "BOOKMARK"] == []  # the stream just ends; the caller re-watches
    assert w.closed
    client.create(cm("after"))
    again = client.watch("v1", "ConfigMap", "default", resource_version=w.resource_version, read_timeout=5)
    got = collect(again, lambda evs: any(t == "ADDED" for t, _ in evs))
    assert got[-1][1]["metadata"]["name"] == "after"


def test_watch_custom_resource(apiserver, client: Client, widget_crd_manifest):
    apiserver.install_crds([widget_crd_manifest])
    w = client.watch("example.com/v1", "Widget", "default", read_timeout=5)
    client.create(
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {"size": 1},
        }
    )
    events = collect(w, lambda evs: any(t == "ADDED" for t, _ in evs))
    assert events[-1][1]["kind"] == "Widget" and events[-1][1]["metadata"]["generation"] == 1


def _wait(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
