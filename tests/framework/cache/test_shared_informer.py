"""SharedIndexInformer against the API server over HTTP: the cache stays equal to the server through
changes, dropped and stalled watches, compaction (410), restarts and injected failures; tombstones,
handler replay, per-handler resync, transforms, slow and failing handlers, supervision."""

from __future__ import annotations

import threading
import time
from typing import Any

import orjson
import pytest
import structlog

from framework.cache import (
    DeletedFinalStateUnknown,
    SharedIndexInformer,
    default_watch_error_handler,
    drop_managed_fields,
    drop_managed_fields_and_share_strings,
    meta_namespace_key_func,
)
from framework.cache.reflector import Reflector
from framework.client import Client, Gone
from framework.clock import FakeClock
from framework.testing import eventually

NS = "default"


def cm(name: str, namespace: str = NS, labels: dict | None = None, **data: str) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def key(obj: Any) -> str:
    return obj.key if isinstance(obj, DeletedFinalStateUnknown) else meta_namespace_key_func(obj)


class Recorder:
    """A handler that logs every notification and rebuilds the server state from them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[tuple[str, str, Any]] = []
        self.state: dict[str, str] = {}
        self.duplicates: list[str] = []

    def on_add(self, obj: dict) -> None:
        with self.lock:
            k = key(obj)
            if k in self.state:
                self.duplicates.append(f"add of cached {k}")
            self.state[k] = obj["metadata"]["resourceVersion"]
            self.events.append(("add", k, obj))

    def on_update(self, old: dict, new: dict) -> None:
        with self.lock:
            k = key(new)
            if k not in self.state:
                self.duplicates.append(f"update of unknown {k}")
            self.state[k] = new["metadata"]["resourceVersion"]
            self.events.append(("update", k, (old, new)))

    def on_delete(self, obj: Any) -> None:
        with self.lock:
            k = key(obj)
            if self.state.pop(k, None) is None:
                self.duplicates.append(f"delete of unknown {k}")
            self.events.append(("delete", k, obj))

    def register(self, informer: SharedIndexInformer, **kw):
        return informer.add_event_handler(self.on_add, self.on_update, self.on_delete, **kw)

    def mark(self) -> int:
        with self.lock:
            return len(self.events)

    def since(self, mark: int) -> list[tuple[str, str, Any]]:
        with self.lock:
            return list(self.events[mark:])

    def snapshot(self) -> dict[str, str]:
        with self.lock:
            return dict(self.state)


def server_state(client: Client, namespace: str | None = NS, **kw) -> dict[str, str]:
    items = client.list("v1", "ConfigMap", namespace, **kw)["items"]
    return {meta_namespace_key_func(o): o["metadata"]["resourceVersion"] for o in items}


def cache_state(informer: SharedIndexInformer) -> dict[str, str]:
    return {meta_namespace_key_func(o): o["metadata"]["resourceVersion"] for o in informer.indexer.list()}


def converged(client: Client, informer: SharedIndexInformer, *recorders: Recorder, **kw) -> None:
    """Wait until the cache and every recorder's rebuilt state equal a fresh list of the server."""

    def check() -> bool:
        want = server_state(client, informer.namespace, **kw)
        return cache_state(informer) == want and all(r.snapshot() == want for r in recorders)

    eventually(check, message=lambda: (server_state(client, informer.namespace, **kw), cache_state(informer)))
    for r in recorders:
        assert not r.duplicates, r.duplicates


@pytest.fixture
def client(apiserver) -> Client:
    c = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    yield c
    c.close()


@pytest.fixture
def make_informer(client):
    informers: list[SharedIndexInformer] = []

    def make(c: Client | None = None, **kw) -> SharedIndexInformer:
        kw.setdefault("namespace", NS)
        kw.setdefault("backoff_initial", 0.05)
        kw.setdefault("backoff_cap", 0.2)
        informer = SharedIndexInformer(c or client, "v1", "ConfigMap", **kw)
        informers.append(informer)
        return informer

    yield make
    for informer in informers:
        assert informer.stop(5)


def started(informer: SharedIndexInformer, *recorders: Recorder) -> SharedIndexInformer:
    for r in recorders:
        r.register(informer)
    informer.start()
    assert informer.wait_for_cache_sync(10)
    return informer


def churn(client: Client, prefix: str, n: int = 6) -> None:
    for i in range(n):
        client.create(cm(f"{prefix}-{i}", v="0"))
    for i in range(0, n, 2):
        client.patch("v1", "ConfigMap", f"{prefix}-{i}", {"data": {"v": "1"}}, NS)
    for i in range(0, n, 3):
        client.delete("v1", "ConfigMap", f"{prefix}-{i}", NS)


def stall_watches(apiserver) -> None:
    """Open watch streams stay connected but get no more events: a silently dead peer."""
    apiserver.call(lambda: [t.watchers.clear() for t in apiserver.storage.tables.values()])


def open_watches(apiserver) -> int:
    return apiserver.call(lambda: len(apiserver.handler.watchers))


def counts(apiserver, verb: str, code: int | None = None) -> int:
    return sum(
        n
        for k, n in apiserver.request_counts().items()
        if k.verb == verb and k.resource == "configmaps" and (code is None or k.code == code)
    )


# --- consistency with the server ----------------------------------------------------------------------


def test_informer_follows_creates_updates_and_deletes(client, make_informer):
    for i in range(5):
        client.create(cm(f"pre-{i}", v="0"))
    rec = Recorder()
    informer = started(make_informer(), rec)
    assert informer.has_synced()
    converged(client, informer, rec)
    mark = rec.mark()
    churn(client, "live")
    client.delete("v1", "ConfigMap", "pre-1", NS)
    converged(client, informer, rec)
    kinds = [(kind, k) for kind, k, _ in rec.since(mark)]
    assert ("delete", "default/pre-1") in kinds
    # The deletion was watched: on_delete got the final object, not a tombstone.
    final = next(obj for kind, k, obj in rec.since(mark) if kind == "delete" and k == "default/pre-1")
    assert isinstance(final, dict) and final["metadata"]["name"] == "pre-1"
    # Updates carry the previous state.
    old, new = next(obj for kind, k, obj in rec.since(mark) if kind == "update" and k == "default/live-2")
    assert (old["data"]["v"], new["data"]["v"]) == ("0", "1")
    assert int(informer.last_sync_resource_version) >= int(new["metadata"]["resourceVersion"])


def test_metadata_only_informer_follows_changes_with_the_watched_kind(apiserver, client, make_informer):
    """A metadata-only informer caches PartialObjectMetadata stamped with the watched kind (as
    controller-runtime's metadata informers): listed objects and every watch event alike."""
    client.create(cm("listed", v="0"))
    events: list[tuple[str, dict]] = []
    informer = make_informer(metadata_only=True)
    informer.add_event_handler(
        on_add=lambda obj, initial=False: events.append(("add", obj)),
        on_update=lambda old, new: events.append(("update", new)),
        on_delete=lambda obj: events.append(("delete", obj)),
    )
    informer.start()
    assert informer.wait_for_cache_sync(10)
    client.create(cm("watched", v="0"))
    client.patch("v1", "ConfigMap", "watched", {"metadata": {"labels": {"a": "b"}}}, NS)
    client.delete("v1", "ConfigMap", "listed", NS)
    eventually(lambda: any(kind == "delete" for kind, _ in events), message=lambda: events)
    eventually(lambda: (informer.indexer.get_by_key(f"{NS}/watched") or {}).get("metadata", {}).get("labels"))
    seen = {(kind, obj["metadata"]["name"]) for kind, obj in events}
    assert {("add", "listed"), ("add", "watched"), ("update", "watched"), ("delete", "listed")} <= seen
    for _, obj in events:
        assert (obj["apiVersion"], obj["kind"]) == ("v1", "ConfigMap")
        assert set(obj) == {"apiVersion", "kind", "metadata"}  # no data: metadata only
    cached = informer.indexer.get_by_key(f"{NS}/watched")
    assert (
        cached["kind"] == "ConfigMap" and "data" not in cached and cached["metadata"]["labels"] == {"a": "b"}
    )


def test_dropped_watches_are_resumed_without_a_relist(apiserver, client, make_informer):
    rec = Recorder()
    informer = started(make_informer(), rec)
    for round_ in range(3):
        eventually(lambda: open_watches(apiserver) == 1)
        apiserver.drop_watches()
        churn(client, f"round{round_}", 4)
        converged(client, informer, rec)


def test_compaction_410_relists_without_duplicate_or_missed_final_states(apiserver, client, make_informer):
    for i in range(6):
        client.create(cm(f"o{i}", v="0"))
    rec = Recorder()
    errors: list[BaseException] = []

    def on_error(reflector: Reflector, err: BaseException) -> None:
        errors.append(err)
        default_watch_error_handler(reflector, err)

    informer = make_informer(inactivity_timeout=0.3)
    informer.set_watch_error_handler(on_error)
    started(informer, rec)
    converged(client, informer, rec)
    before = {k: v for k, v in cache_state(informer).items()}
    eventually(lambda: open_watches(apiserver) == 1)
    rt = apiserver.registry.get("", "v1", "configmaps")
    api = apiserver.api

    def while_watch_is_blind() -> None:
        # One atomic step on the server: the watch misses all of it, then the history is compacted.
        for t in apiserver.storage.tables.values():
            t.watchers.clear()
        api.update(rt, NS, "o1", cm("o1", v="1"))
        api.update(rt, NS, "o1", cm("o1", v="2"))
        api.delete(rt, NS, "o2")
        api.update(rt, NS, "o3", cm("o3", v="1"))
        api.delete(rt, NS, "o3")
        api.create(rt, NS, cm("n1", v="0"))
        api.create(rt, NS, cm("n2", v="0"))
        api.delete(rt, NS, "n2")
        apiserver.storage.compact()

    mark = rec.mark()
    apiserver.call(while_watch_is_blind)
    # The inactivity timeout re-watches from the old RV: 410, relist.
    converged(client, informer, rec)
    assert any(isinstance(e, Gone) for e in errors), errors
    events = {(kind, k): obj for kind, k, obj in rec.since(mark)}
    assert sorted(events) == [
        ("add", "default/n1"),
        ("delete", "default/o2"),
        ("delete", "default/o3"),
        ("update", "default/o1"),
    ]
    old, new = events[("update", "default/o1")]
    assert (old["data"]["v"], new["data"]["v"]) == ("0", "2")  # the final state, once
    for k in ("default/o2", "default/o3"):
        tomb = events[("delete", k)]
        assert isinstance(tomb, DeletedFinalStateUnknown) and tomb.key == k
        assert tomb.obj["metadata"]["resourceVersion"] == before[k]  # the last state this cache knew


def test_server_restart(apiserver, client, make_informer):
    rec = Recorder()
    informer = started(make_informer(), rec)
    churn(client, "before")
    converged(client, informer, rec)
    apiserver.restart()
    churn(client, "after")
    converged(client, informer, rec)
    apiserver.restart()
    client.delete("v1", "ConfigMap", "after-1", NS)
    converged(client, informer, rec)


def test_injected_429_and_500_on_list_and_watch(apiserver, make_informer):
    # No client-side retries: the reflector's own backoff handles every failure.
    bare = Client.from_kubeconfig(apiserver.kubeconfig, qps=0, max_retries=0)
    writer = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    try:
        for i in range(3):
            writer.create(cm(f"pre-{i}"))
        apiserver.inject_failure("list", "configmaps", 429, count=2, retry_after=0)
        apiserver.inject_failure("list", "configmaps", 500, count=1)
        apiserver.inject_failure("watch", "configmaps", 500, count=1)
        apiserver.inject_failure("watch", "configmaps", 429, count=2, retry_after=0)
        rec = Recorder()
        informer = started(make_informer(bare), rec)
        churn(writer, "live")
        converged(writer, informer, rec)
        assert counts(apiserver, "list", 429) == 2 and counts(apiserver, "list", 500) == 1
        eventually(lambda: counts(apiserver, "watch", 429) == 2 and counts(apiserver, "watch", 500) == 1)
        # Failures while running: the watch is dropped and cannot come back for a while.
        apiserver.inject_failure("watch", "configmaps", 500, count=2)
        apiserver.inject_failure("list", "configmaps", 429, count=1, retry_after=0)
        apiserver.drop_watches()
        churn(writer, "during")
        converged(writer, informer, rec)
    finally:
        bare.close()
        writer.close()


def test_stalled_watch_is_replaced_after_the_inactivity_timeout(apiserver, client, make_informer):
    rec = Recorder()
    informer = started(make_informer(inactivity_timeout=0.3), rec)
    eventually(lambda: open_watches(apiserver) == 1)
    stall_watches(apiserver)
    with structlog.testing.capture_logs() as logs:
        churn(client, "stalled")
        converged(client, informer, rec)
    assert any(e["event"] == "watch stream inactive; closing it and re-watching" for e in logs)
    assert informer.reflector.list_count == 1


def test_deletions_while_the_watch_is_down_arrive_as_tombstones(apiserver, client, make_informer):
    for name in ("keep", "doomed"):
        client.create(cm(name, v="0"))
    rec = Recorder()
    informer = started(make_informer(), rec)
    converged(client, informer, rec)
    last_known = informer.indexer.get_by_key("default/doomed")
    apiserver.inject_failure("watch", "configmaps", 500, count=None)
    apiserver.drop_watches()
    eventually(lambda: counts(apiserver, "watch", 500) >= 1)
    mark = rec.mark()
    client.delete("v1", "ConfigMap", "doomed", NS)
    eventually(lambda: any(kind == "delete" for kind, _, _ in rec.since(mark)))
    apiserver.clear_failures()
    converged(client, informer, rec)
    deletes = [obj for kind, k, obj in rec.since(mark) if kind == "delete"]
    assert len(deletes) == 1
    tomb = deletes[0]
    assert isinstance(tomb, DeletedFinalStateUnknown)
    assert tomb.key == "default/doomed"
    assert tomb.obj["metadata"]["resourceVersion"] == last_known["metadata"]["resourceVersion"]
    assert informer.indexer.get_by_key("default/doomed") is None


# --- handlers -----------------------------------------------------------------------------------------


def test_late_handler_gets_the_cache_replayed_as_adds(client, make_informer):
    for i in range(4):
        client.create(cm(f"pre-{i}"))
    informer = started(make_informer())
    initial_flags: list[bool] = []
    late = Recorder()

    def on_add(obj, is_in_initial_list):
        initial_flags.append(is_in_initial_list)
        late.on_add(obj)

    reg = informer.add_event_handler(on_add, late.on_update, late.on_delete)
    eventually(reg.has_synced)
    assert late.snapshot() == cache_state(informer)
    assert initial_flags and all(initial_flags)
    client.create(cm("after"))
    converged(client, informer, late)
    assert initial_flags[-1] is False


def test_registration_has_synced_waits_for_its_initial_adds(client, make_informer):
    for i in range(3):
        client.create(cm(f"pre-{i}"))
    informer = make_informer()
    gate = threading.Event()
    reg = informer.add_event_handler(on_add=lambda obj: gate.wait(5))
    fast = informer.add_event_handler(on_add=lambda obj: None)
    assert not reg.has_synced()
    informer.start()
    assert informer.wait_for_cache_sync(10)
    eventually(fast.has_synced)
    assert not reg.has_synced()  # still blocked in its first on_add
    gate.set()
    eventually(reg.has_synced)


def test_slow_handler_does_not_stall_others_and_keeps_order(client, make_informer):
    informer = make_informer()
    gate = threading.Event()
    slow_seen: list[str] = []
    fast = Recorder()

    def slow_update(old, new):
        gate.wait(10)
        slow_seen.append(new["data"]["v"])

    informer.add_event_handler(on_update=slow_update)
    started(informer, fast)
    client.create(cm("hot", v="0"))
    for v in range(1, 30):
        client.patch("v1", "ConfigMap", "hot", {"data": {"v": str(v)}}, NS)
    converged(client, informer, fast)  # the fast handler is done while the slow one is blocked
    assert slow_seen == []
    gate.set()
    eventually(lambda: len(slow_seen) == 29)
    assert slow_seen == [str(v) for v in range(1, 30)]


def test_failing_handler_is_logged_and_keeps_receiving(client, make_informer):
    seen: list[str] = []

    def flaky(obj):
        seen.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "bad":
            raise RuntimeError("handler bug")

    informer = make_informer()
    informer.add_event_handler(on_add=flaky)
    started(informer)
    with structlog.testing.capture_logs() as logs:
        client.create(cm("bad"))
        client.create(cm("good"))
        eventually(lambda: "good" in seen)
    assert any(e["event"] == "event handler raised" and e.get("exc_info") for e in logs)


def test_per_handler_resync_reaches_only_due_handlers(client, make_informer):
    for i in range(3):
        client.create(cm(f"r{i}"))
    clock = FakeClock()
    informer = make_informer(clock=clock)
    every10, every30, never = Recorder(), Recorder(), Recorder()
    every10.register(informer, resync_period=10)
    every30.register(informer, resync_period=30)
    never.register(informer)
    started(informer)
    n = len(informer.indexer.list())

    def resyncs(r: Recorder) -> int:
        return sum(
            1
            for kind, _, objs in r.since(0)
            if kind == "update"
            and objs[0]["metadata"]["resourceVersion"] == objs[1]["metadata"]["resourceVersion"]
        )

    expected = {10: (1, 0), 20: (2, 0), 30: (3, 1)}
    for t in (10, 20, 30):
        assert clock.wait_for_waiters(1)
        clock.step(10)
        want10, want30 = expected[t]
        eventually(lambda w=want10: resyncs(every10) == w * n, message=lambda: resyncs(every10))
        eventually(lambda w=want30: resyncs(every30) == w * n)
    assert resyncs(never) == 0
    # Resync updates hand over the cached object itself as both old and new.
    _, _, (old, new) = next(e for e in every10.since(0) if e[0] == "update")
    assert old is new


def test_handler_resync_periods_follow_the_check_period(make_informer):
    informer = make_informer(resync_period=20, clock=FakeClock())
    early = informer.add_event_handler(on_add=lambda o: None, resync_period=10)
    assert early.resync_period == 10  # before start: lowers the check period to 10
    informer.start()
    late = informer.add_event_handler(on_add=lambda o: None, resync_period=5)
    assert late.resync_period == 10  # after start: raised to the check period
    assert informer.add_event_handler(on_add=lambda o: None).resync_period == 20  # the default
    tiny = make_informer(clock=FakeClock()).add_event_handler(on_add=lambda o: None, resync_period=0.2)
    assert tiny.resync_period == 1.0  # the minimum


# --- cache features -----------------------------------------------------------------------------------


def test_transform_is_applied_before_caching_and_delivery(client, make_informer):
    client.create(cm("a", labels={"app": "web"}, v="1"))
    delivered: list[dict] = []

    def transform(obj):
        obj = drop_managed_fields_and_share_strings(obj)
        obj["metadata"]["annotations"] = {"transformed": "yes"}
        return obj

    informer = make_informer(transform=transform)
    informer.add_event_handler(on_add=delivered.append, on_update=lambda old, new: delivered.append(new))
    started(informer)
    client.patch("v1", "ConfigMap", "a", {"data": {"v": "2"}}, NS)
    eventually(lambda: any(o["data"].get("v") == "2" for o in delivered))
    for obj in [*informer.indexer.list(), *delivered]:
        assert "managedFields" not in obj["metadata"]
        assert obj["metadata"]["annotations"] == {"transformed": "yes"}
    cached = informer.indexer.get_by_key("default/a")
    assert cached["metadata"]["labels"] == {"app": "web"} and cached["data"]["v"] == "2"


def test_drop_managed_fields_transform(client, make_informer):
    client.create(cm("a"))
    informer = started(make_informer(transform=drop_managed_fields))
    assert all("managedFields" not in o["metadata"] for o in informer.indexer.list())
    assert client.get("v1", "ConfigMap", "a", NS)["metadata"].get("managedFields")


def test_add_indexers_on_a_running_informer_and_label_selector(client, make_informer):
    for i in range(6):
        client.create(cm(f"c{i}", labels={"app": f"a{i % 2}", "team": "x" if i < 4 else "y"}))
    informer = started(make_informer(label_selector="team=x"))
    informer.add_indexers({"app": lambda o: [o["metadata"]["labels"]["app"]]})
    assert sorted(o["metadata"]["name"] for o in informer.indexer.by_index("app", "a0")) == ["c0", "c2"]
    client.create(cm("c6", labels={"app": "a0", "team": "x"}))
    client.create(cm("c7", labels={"app": "a0", "team": "y"}))
    eventually(lambda: len(informer.indexer.by_index("app", "a0")) == 3)
    assert informer.indexer.get_by_key("default/c7") is None
    converged(client, informer, label_selector="team=x")


def test_all_namespaces_informer(client, make_informer):
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    client.create(cm("a"))
    client.create(cm("b", namespace="other"))
    informer = started(make_informer(namespace=None))
    keys = set(cache_state(informer))
    assert {"default/a", "other/b"} <= keys
    in_other = {o["metadata"]["name"] for o in informer.indexer.by_index("namespace", "other")}
    assert in_other == {"b", "kube-root-ca.crt"}


# --- lifecycle ----------------------------------------------------------------------------------------


def test_threads_are_named_and_stop_is_bounded(client, make_informer):
    informer = make_informer(name="lifecycle")
    informer.add_event_handler(on_add=lambda o: None)
    started(informer)
    names = {t.name for t in threading.enumerate()}
    assert {
        "informer[lifecycle]-reflector",
        "informer[lifecycle]-controller",
        "informer[lifecycle]-handler-0",
    } <= names
    t0 = time.monotonic()
    assert informer.stop(5)
    assert time.monotonic() - t0 < 2
    assert not any(t.name.startswith("informer[lifecycle]") for t in threading.enumerate())
    assert informer.is_stopped()
    with pytest.raises(RuntimeError):
        informer.add_event_handler(on_add=lambda o: None)
    informer.start()  # a stopped informer never restarts
    assert not any(t.name.startswith("informer[lifecycle]") for t in threading.enumerate())


def test_crashed_reflector_thread_is_logged_and_restarted(client, make_informer, monkeypatch):
    crashed: list[bool] = []
    original = Reflector._list_and_watch

    def crash_once(self):
        if not crashed:
            crashed.append(True)
            raise RuntimeError("reflector bug")
        return original(self)

    monkeypatch.setattr(Reflector, "_list_and_watch", crash_once)
    client.create(cm("a"))
    with structlog.testing.capture_logs() as logs:
        informer = make_informer()
        informer.start()
        assert informer.wait_for_cache_sync(10)
    assert crashed
    died = [e for e in logs if e["event"] == "thread died unexpectedly; restarting it"]
    assert died and died[0]["thread"] == "informer[v1/ConfigMap@default]-reflector"
    assert informer.indexer.get_by_key("default/a") is not None


def test_removed_handler_gets_nothing_more_and_run_blocks_until_stopped(client, make_informer):
    informer = make_informer()
    kept, removed = Recorder(), Recorder()
    kept.register(informer)
    reg = removed.register(informer)
    stop = threading.Event()
    runner = threading.Thread(target=informer.run, args=(stop,), name="test-informer-run")
    runner.start()
    assert informer.wait_for_cache_sync(10)
    assert informer.remove_event_handler(reg)
    assert not informer.remove_event_handler(reg)
    mark = removed.mark()
    client.create(cm("after-removal"))
    converged(client, informer, kept)
    assert removed.since(mark) == []
    assert runner.is_alive()
    stop.set()
    runner.join(5)
    assert not runner.is_alive() and informer.is_stopped()


def test_share_strings_interns_repeated_values_and_dedupes_within_an_object():
    raw = orjson.dumps(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": "e",
                "namespace": "team-a",
                "labels": {"app": "web"},
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "managedFields": [{"manager": "kubelet"}],
            },
            "firstTimestamp": "2026-01-01T00:00:00Z",
            "reason": "Pulled",
            "items": ["2026-01-01T00:00:00Z"],
        }
    )
    a = drop_managed_fields_and_share_strings(orjson.loads(raw))
    b = drop_managed_fields_and_share_strings(orjson.loads(raw))
    assert "managedFields" not in a["metadata"]
    for path in (("kind",), ("apiVersion",), ("reason",), ("metadata", "namespace")):
        x, y = a, b
        for part in path:
            x, y = x[part], y[part]
        assert x is y, path  # interned: one string for every object
    assert a["metadata"]["labels"]["app"] is b["metadata"]["labels"]["app"]
    assert a["firstTimestamp"] is a["metadata"]["creationTimestamp"] is a["items"][0]  # within one object
    expected = orjson.loads(raw)
    del expected["metadata"]["managedFields"]
    assert a == expected
    assert drop_managed_fields({"kind": "x"}) == {"kind": "x"}  # no metadata: left alone


# --- inline handlers ------------------------------------------------------------------------------------


def test_inline_handler_follows_changes_on_the_informers_thread_without_one_of_its_own(client, make_informer):
    for i in range(3):
        client.create(cm(f"pre-{i}", v="0"))
    informer = make_informer(name="inline")
    rec = Recorder()
    threads: set[str] = set()

    def on_add(obj):
        threads.add(threading.current_thread().name)
        rec.on_add(obj)

    reg = informer.add_event_handler(on_add, rec.on_update, rec.on_delete, inline=True)
    started(informer)
    assert reg.has_synced() and reg.pending() == 0
    churn(client, "live")
    converged(client, informer, rec)
    assert threads == {"informer[inline]-controller"}
    assert not any(t.name.startswith("informer[inline]-handler") for t in threading.enumerate())


def test_late_inline_handler_gets_the_cache_replayed_before_registration_returns(client, make_informer):
    for i in range(4):
        client.create(cm(f"pre-{i}"))
    informer = started(make_informer())
    late = Recorder()
    reg = late.register(informer, inline=True)
    # Delivered on this thread, under the informer's delta lock: complete once add_event_handler returns.
    assert late.snapshot() == cache_state(informer)
    assert reg.has_synced()
    client.create(cm("after"))
    converged(client, informer, late)


def test_failing_inline_handler_is_logged_and_the_informer_goes_on(client, make_informer):
    seen: list[str] = []
    others = Recorder()

    def flaky(obj):
        seen.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "bad":
            raise RuntimeError("handler bug")

    informer = make_informer()
    informer.add_event_handler(on_add=flaky, inline=True)
    started(informer, others)
    with structlog.testing.capture_logs() as logs:
        client.create(cm("bad"))
        client.create(cm("good"))
        eventually(lambda: "good" in seen)
    converged(client, informer, others)  # the cache and a threaded handler are unaffected
    assert any(e["event"] == "event handler raised" and e.get("exc_info") for e in logs)


def test_removed_inline_handler_gets_nothing_more(client, make_informer):
    informer = make_informer()
    rec = Recorder()
    reg = rec.register(informer, inline=True)
    started(informer)
    client.create(cm("before"))
    eventually(lambda: "default/before" in rec.snapshot())
    assert informer.remove_event_handler(reg)
    client.create(cm("after"))
    watcher = Recorder()
    watcher.register(informer)
    converged(client, informer, watcher)
    assert "default/after" not in rec.snapshot()
