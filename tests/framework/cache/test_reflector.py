"""Reflector contracts (client-go tools/cache/reflector.go): backoff, RV bookkeeping, relist and re-watch
rules against a scripted client, then paging, bookmarks, stalled watches and supervision over HTTP."""

from __future__ import annotations

import random
import threading
import time
from collections import deque
from typing import Any

import pytest
import structlog

from framework.cache import Backoff, DeltaFIFO, DeltaType, Indexer, Reflector
from framework.client import Client, Gone, ServerError, Timeout, TooManyRequests
from framework.clock import FakeClock
from framework.testing import eventually


def cm(name: str, rv: str | None = None, namespace: str = "default", **data: str) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if rv is not None:
        meta["resourceVersion"] = rv
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def bookmark(rv: str) -> tuple[str, dict]:
    return "BOOKMARK", {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": rv}}


def page(items: list[dict], rv: str, cont: str | None = None) -> dict:
    meta = {"resourceVersion": rv}
    if cont:
        meta["continue"] = cont
    return {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": meta, "items": items}


# --- backoff ------------------------------------------------------------------------------------------


def test_backoff_doubles_with_jitter_caps_and_resets_after_two_quiet_minutes():
    clock = FakeClock()
    b = Backoff(clock=clock, rng=random.Random(7))
    delays = [b.next() for _ in range(8)]
    bases = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    for delay, base in zip(delays, bases, strict=True):
        assert base <= delay < 2 * base
    clock.step(119)
    assert 30.0 <= b.next() < 60.0  # still within 2 minutes of the previous backoff
    clock.step(121)
    assert 0.8 <= b.next() < 1.6  # quiet for 2 minutes: starts over
    no_jitter = Backoff(jitter=0, clock=clock)
    assert [no_jitter.next() for _ in range(3)] == [0.8, 1.6, 3.2]
    with pytest.raises(ValueError):
        Backoff(initial=0)


# --- scripted client ----------------------------------------------------------------------------------


class FakeWatch:
    """Yields scripted events, then raises ``end`` or ends cleanly, or blocks until closed."""

    def __init__(self, events=(), end: BaseException | None = None, block: bool = False) -> None:
        self.events = list(events)
        self.end = end
        self.block = block
        self.closed = threading.Event()

    def __iter__(self):
        for ev in self.events:
            if self.closed.is_set():
                return
            yield ev
        if self.end is not None:
            raise self.end
        if self.block:
            self.closed.wait(10)

    def close(self) -> None:
        self.closed.set()


class ScriptedClient:
    """Answers list/watch from queues (exceptions are raised) and records every call."""

    def __init__(self, lists=(), watches=()) -> None:
        self.lists: deque = deque(lists)
        self.watches: deque = deque(watches)
        self.calls: list[tuple] = []
        self.lock = threading.Lock()

    def list(
        self,
        api_version,
        kind,
        namespace=None,
        label_selector=None,
        field_selector=None,
        limit=None,
        continue_=None,
        resource_version=None,
        **kw,
    ):
        with self.lock:
            self.calls.append(("list", resource_version, limit, continue_))
            answer = self.lists.popleft() if self.lists else page([], "1")
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def watch(
        self,
        api_version,
        kind,
        namespace=None,
        resource_version=None,
        label_selector=None,
        field_selector=None,
        timeout_seconds=None,
        allow_watch_bookmarks=True,
        read_timeout=None,
        **kw,
    ):
        with self.lock:
            self.calls.append(
                ("watch", resource_version, timeout_seconds, allow_watch_bookmarks, read_timeout)
            )
            answer = self.watches.popleft() if self.watches else FakeWatch(block=True)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def kinds(self) -> list[tuple]:
        with self.lock:
            return [c[:2] if c[0] == "watch" else c for c in self.calls]


def fast_reflector(client, store=None, **kw) -> Reflector:
    store = store if store is not None else DeltaFIFO()
    return Reflector(
        client,
        "v1",
        "ConfigMap",
        store,
        namespace="default",
        backoff=Backoff(initial=0.001, cap=0.01),
        **kw,
    )


def run_until(reflector: Reflector, client: ScriptedClient, calls: int) -> list[tuple]:
    reflector.start()
    try:
        eventually(lambda: len(client.calls) >= calls, message=str(client.calls))
    finally:
        assert reflector.stop(5)
    return client.kinds()[:calls]


def gone() -> Gone:
    return Gone(410, "Expired", "too old resource version")


def test_paged_list_watch_from_list_rv_then_gone_relists_at_last_rv_then_at_latest():
    client = ScriptedClient(
        lists=[
            page([cm("a", "8")], "10", cont="c1"),
            page([cm("b", "9")], "10"),
            gone(),  # relist at the last synced RV (from the bookmark): too old as well
            page([cm("a", "8"), cm("c", "11")], "20"),
        ],
        watches=[FakeWatch([("ADDED", cm("c", "11")), bookmark("15")], end=gone())],
    )
    fifo = DeltaFIFO()
    r = fast_reflector(client, fifo)
    assert r.relist_resource_version() == "0"
    calls = run_until(r, client, 6)
    assert calls == [
        ("list", "0", 500, None),
        ("list", None, 500, "c1"),
        ("watch", "10"),
        ("list", "15", 500, None),  # watch 410: relist at the last synced RV (paged: the server pages)
        ("list", None, 500, None),  # list 410: RV unavailable, relist at "" at once
        ("watch", "20"),
    ]
    watch = client.calls[2]
    assert 300 <= watch[2] < 600 and watch[3] is True and watch[4] == 120.0
    assert r.last_sync_resource_version == "20"
    assert r.relist_resource_version() == "20"
    # b vanished between the lists: the second replace queued a tombstone after its Replaced delta.
    deltas = fifo.get_by_key("default/b")
    assert [d.type for d in deltas] == [DeltaType.Replaced, DeltaType.Deleted]
    assert deltas[-1].object.key == "default/b"


def test_the_list_rv_is_the_reflectors_before_its_store_holds_the_list():
    """A consumer may pop the listed items (an informer: synced, a cached List answered with the
    reflector's resourceVersion) before replace() returns: by then the resourceVersion is the list's.
    A replace that fails leaves the previous one."""
    seen: list[str] = []

    class Store(DeltaFIFO):
        def replace(self, objs, resource_version=""):
            seen.append(r.last_sync_resource_version)
            if len(seen) == 2:
                raise RuntimeError("store full")
            super().replace(objs, resource_version)

    client = ScriptedClient(
        lists=[page([cm("a", "3")], "5"), page([cm("a", "3")], "7"), page([cm("a", "3")], "9")],
        watches=[FakeWatch(end=gone()), FakeWatch(block=True)],
    )
    r = fast_reflector(client, Store())
    with structlog.testing.capture_logs() as logs:
        r.start()
        try:
            eventually(lambda: len(seen) == 3 and r.last_sync_resource_version == "9", message=str(seen))
        finally:
            assert r.stop(5)
    assert seen == ["5", "7", "9"]
    assert client.kinds()[:4] == [
        ("list", "0", 500, None),
        ("watch", "5"),
        ("list", "5", None, None),  # the watch's 410: relist at the last RV
        ("list", "5", None, None),  # the failed replace kept 5, not the unapplied 7
    ]
    assert any(e["event"] == "store.replace failed" for e in logs)


def test_unpaged_first_list_disables_paging_for_relists_at_a_concrete_rv():
    client = ScriptedClient(
        lists=[page([cm("a", "3")], "5"), page([], "7")],
        watches=[FakeWatch([bookmark("6")], end=gone())],
    )
    calls = run_until(fast_reflector(client), client, 4)
    assert calls == [("list", "0", 500, None), ("watch", "5"), ("list", "6", None, None), ("watch", "7")]


def test_expired_continue_falls_back_to_one_full_list_at_the_same_rv():
    client = ScriptedClient(
        lists=[page([cm("a", "3")], "5", cont="c1"), gone(), page([cm("a", "3"), cm("b", "4")], "6")],
    )
    calls = run_until(fast_reflector(client), client, 4)
    assert calls == [
        ("list", "0", 500, None),
        ("list", None, 500, "c1"),
        ("list", "0", None, None),
        ("watch", "6"),
    ]


def test_watch_outcomes_rewatch_or_relist_as_client_go():
    client = ScriptedClient(
        lists=[page([], "10"), page([], "30"), page([], "30")],
        watches=[
            TooManyRequests(429, "TooManyRequests", "slow down"),  # open: back off, re-watch
            FakeWatch([("MODIFIED", cm("a", "12"))]),  # clean close after events: re-watch
            FakeWatch([bookmark("14")], end=Timeout(0, "Timeout", "no data")),  # inactivity: re-watch
            FakeWatch(end=TooManyRequests(429, "TooManyRequests", "in stream")),  # back off, re-watch
            FakeWatch(),  # closed at once without events: very short watch, relist
            ServerError(500, "InternalError", "boom"),  # open fails: relist
        ],
    )
    calls = run_until(fast_reflector(client), client, 10)
    assert calls == [
        ("list", "0", 500, None),
        ("watch", "10"),
        ("watch", "10"),
        ("watch", "12"),
        ("watch", "14"),
        ("watch", "14"),
        ("list", "14", None, None),
        ("watch", "30"),
        ("list", "30", None, None),
        ("watch", "30"),
    ]


def test_synthetic_adds_of_a_watch_from_empty_rv_hold_the_rv():
    held = FakeWatch([("ADDED", cm("b", "7")), ("ADDED", cm("a", "3"))], block=True)
    client = ScriptedClient(lists=[page([], "")], watches=[held])
    fifo = DeltaFIFO()
    r = fast_reflector(client, fifo)
    r.start()
    try:
        eventually(lambda: len(fifo) == 2)
        assert client.calls[1][1] is None  # watched from ""
        assert r.last_sync_resource_version == ""  # synthetic ADDEDs do not advance the RV
    finally:
        r.stop()
    events = [
        ("ADDED", cm("b", "7")),
        ("ADDED", cm("a", "3")),
        ("MODIFIED", cm("a", "9")),
        ("ADDED", cm("c", "10")),
    ]
    client = ScriptedClient(lists=[page([], "")], watches=[FakeWatch(events, block=True)])
    r = fast_reflector(client)
    r.start()
    try:
        eventually(lambda: r.last_sync_resource_version == "10")
    finally:
        r.stop()


def test_wrong_kind_is_skipped_and_store_errors_are_logged_not_fatal():
    def transform(obj):
        if obj["metadata"]["name"] == "bad":
            raise ValueError("cannot transform")
        return obj

    fifo = DeltaFIFO(transform=transform)
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "resourceVersion": "11"}}
    client = ScriptedClient(
        lists=[page([], "10")],
        watches=[
            FakeWatch(
                [("ADDED", secret), ("ADDED", cm("bad", "12")), ("ADDED", cm("good", "13"))], block=True
            )
        ],
    )
    with structlog.testing.capture_logs() as logs:
        r = fast_reflector(client, fifo)
        r.start()
        try:
            eventually(lambda: r.last_sync_resource_version == "13")
        finally:
            r.stop()
    assert fifo.list_keys() == ["default/good"]
    events = [e["event"] for e in logs]
    assert "watch event of an unexpected kind; skipped" in events
    assert "store rejected a watch event; object skipped" in events


def test_run_with_an_external_stop_event_returns_promptly_from_a_blocked_watch():
    client = ScriptedClient(lists=[page([], "1")], watches=[FakeWatch(block=True)])
    r = fast_reflector(client)
    stop = threading.Event()
    t = threading.Thread(target=r.run, args=(stop,), name="test-reflector")
    t.start()
    eventually(lambda: len(client.calls) >= 2)
    started = time.monotonic()
    stop.set()
    t.join(3)
    assert not t.is_alive() and time.monotonic() - started < 2


def test_resync_calls_store_resync_when_due_on_the_clock():
    clock = FakeClock()
    store = Indexer()
    fifo = DeltaFIFO(known_objects=store)
    store.add(cm("a", "1"))
    answers = iter([False, True])
    r = Reflector(
        ScriptedClient(lists=[page([cm("a", "1")], "1")]),
        "v1",
        "ConfigMap",
        fifo,
        clock=clock,
        resync_period=10,
        should_resync=lambda: next(answers, True),
    )
    r.start()
    try:
        eventually(lambda: len(fifo) == 1)  # the Replaced delta of the list
        fifo.pop(lambda deltas, initial: None)
        assert clock.wait_for_waiters(1)
        clock.step(10)  # should_resync says no
        assert clock.wait_for_waiters(1)
        assert len(fifo) == 0
        clock.step(10)
        eventually(lambda: len(fifo) == 1)
        assert [d.type for d in fifo.get_by_key("default/a")] == [DeltaType.Sync]
    finally:
        r.stop()


# --- against the API server ---------------------------------------------------------------------------


@pytest.fixture
def client(apiserver) -> Client:
    c = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    yield c
    c.close()


def test_reflector_pages_lists_and_follows_bookmarks(apiserver, client):
    for i in range(7):
        client.create(cm(f"cm-{i}", x=str(i)))
    apiserver.bookmark_interval = 0.1
    store = Indexer()
    fifo = DeltaFIFO(known_objects=store)
    r = Reflector(client, "v1", "ConfigMap", fifo, namespace="default", page_size=3)

    def lists() -> int:
        return sum(n for k, n in apiserver.request_counts().items() if k.verb == "list")

    before = lists()
    r.start()
    try:
        # The RV is set just before the FIFO gets the list: wait for the list itself.
        eventually(lambda: {f"default/cm-{i}" for i in range(7)} <= set(fifo.list_keys()))
        assert lists() - before == 3  # 8 objects (with kube-root-ca.crt) in pages of 3
        # Changes elsewhere move the global RV: bookmarks carry it to the reflector.
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "elsewhere"}})
        target = str(apiserver.resource_version)
        eventually(lambda: int(r.last_sync_resource_version) >= int(target))
    finally:
        assert r.stop(5)


def test_stalled_watch_is_detected_by_the_inactivity_timeout(apiserver, client):
    fifo = DeltaFIFO()
    r = Reflector(client, "v1", "ConfigMap", fifo, namespace="default", inactivity_timeout=0.3)
    with structlog.testing.capture_logs() as logs:
        r.start()
        try:
            eventually(lambda: apiserver.call(lambda: len(apiserver.handler.watchers)) == 1)
            # The open stream stays connected but receives nothing (a silently dead peer).
            apiserver.call(lambda: [t.watchers.clear() for t in apiserver.storage.tables.values()])
            client.create(cm("after-stall"))
            eventually(lambda: "default/after-stall" in fifo.list_keys(), timeout=5)
        finally:
            assert r.stop(5)
    assert any(e["event"] == "watch stream inactive; closing it and re-watching" for e in logs)
    assert r.list_count == 1  # re-watched from the last RV, no relist


def test_unexpected_crash_is_logged_and_the_reflector_restarted(apiserver, client):
    fifo = DeltaFIFO()
    r = Reflector(client, "v1", "ConfigMap", fifo, namespace="default")
    original = r._list_and_watch
    crashed = []

    def crash_once():
        if not crashed:
            crashed.append(True)
            raise RuntimeError("bug")
        original()

    r._list_and_watch = crash_once
    with structlog.testing.capture_logs() as logs:
        r.start()
        try:
            eventually(lambda: r.last_sync_resource_version != "", timeout=5)
        finally:
            assert r.stop(5)
    assert any(e["event"] == "thread died unexpectedly; restarting it" for e in logs)


def test_big_lists_are_promoted_to_the_old_generation_unless_the_app_froze_objects():
    import gc

    from framework.cache import reflector as reflector_module

    young = [{"i": [i]} for i in range(5000)]  # noqa: F841 - kept alive while promoting
    reflector_module._promote_young_objects()
    assert gc.get_freeze_count() == 0  # promoted and thawed again: still collectable
    assert gc.get_count()[0] < 100  # nothing left young for the next collection to walk
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        reflector_module._promote_young_objects()
        assert gc.get_freeze_count() == frozen  # the application's frozen objects stay frozen
    finally:
        gc.unfreeze()


def test_a_long_wait_before_relisting_is_logged_at_info() -> None:
    """The cache stays stale while the reflector waits; a wait of 5 s or more says so at info (the seed 4
    soak's 46 s wait showed only at debug), a short one stays at debug."""
    for initial, loud in ((6.0, True), (0.2, False)):
        client = ScriptedClient(lists=[ServerError(500, "InternalError", "down")] * 3)
        r = Reflector(
            client, "v1", "ConfigMap", DeltaFIFO(), namespace="default",
            backoff=Backoff(initial=initial, cap=initial, jitter=0.0),
        )  # fmt: skip
        with structlog.testing.capture_logs() as logs:
            r.start()
            try:
                if loud:
                    eventually(
                        lambda lg=logs: any(e["event"].startswith("reflector backing off") for e in lg)
                    )
                else:  # the relist after the short wait happened
                    eventually(lambda c=client: len(c.calls) >= 2, message=str(client.calls))
            finally:
                assert r.stop(5)
        waits = [e for e in logs if e["event"] == "reflector backing off before relisting"]
        if loud:
            assert (waits[0]["log_level"], waits[0]["seconds"]) == ("info", initial)
        else:
            assert [e for e in waits if e["log_level"] != "debug"] == []
