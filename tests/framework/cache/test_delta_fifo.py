"""DeltaFIFO contracts (client-go tools/cache/delta_fifo.go; spec §1.2)."""

from __future__ import annotations

import sys
import threading
import time

import pytest
from structlog.testing import capture_logs

import framework.cache.delta_fifo as delta_fifo_module
from framework.cache import (
    DeletedFinalStateUnknown,
    Delta,
    DeltaFIFO,
    DeltaType,
    FIFOClosedError,
    Indexer,
)
from framework.testing import consistently

A, U, D, R, S = DeltaType.Added, DeltaType.Updated, DeltaType.Deleted, DeltaType.Replaced, DeltaType.Sync


def obj(name: str, rv: str = "1", ns: str = "ns") -> dict:
    return {"metadata": {"name": name, "namespace": ns, "resourceVersion": rv}}


def tomb(name: str, last: dict | None, ns: str = "ns") -> DeletedFinalStateUnknown:
    return DeletedFinalStateUnknown(f"{ns}/{name}", last)


def pop(fifo: DeltaFIFO) -> tuple[list[Delta], bool]:
    """Pop one item without blocking; returns (deltas, is_in_initial_list)."""
    seen: list = []
    deltas = fifo.pop(lambda d, initial: seen.append(initial), timeout=0)
    assert deltas is not None, "queue unexpectedly empty"
    return deltas, seen[0]


def types(deltas: list[Delta]) -> list[DeltaType]:
    return [d.type for d in deltas]


def known(*objs: dict) -> Indexer:
    idx = Indexer()
    for o in objs:
        idx.add(o)
    return idx


# -- basics -----------------------------------------------------------------------------------------


def test_delta_type_names() -> None:
    assert [t.value for t in DeltaType] == ["Added", "Updated", "Deleted", "Replaced", "Sync"]
    assert DeltaType.ADDED is DeltaType.Added and DeltaType("Sync") is DeltaType.Sync


def test_deltas_accumulate_per_key_and_keys_pop_in_fifo_order() -> None:
    fifo = DeltaFIFO()
    a1, b1, a2 = obj("a", "1"), obj("b", "1"), obj("a", "2")
    fifo.add(a1)
    fifo.add(b1)
    fifo.update(a2)
    assert len(fifo) == 2 and fifo.list_keys() == ["ns/a", "ns/b"]
    assert fifo.get_by_key("ns/a") == [Delta(A, a1), Delta(U, a2)]
    assert fifo.get(a1) == fifo.get_by_key("ns/a")
    assert fifo.list() == [a2, b1]  # newest object per key
    deltas, _ = pop(fifo)
    assert deltas == [Delta(A, a1), Delta(U, a2)] and deltas[1].object is a2
    assert fifo.get_by_key("ns/a") is None
    assert pop(fifo)[0] == [Delta(A, b1)]
    assert len(fifo) == 0
    assert fifo.pop(lambda d, i: None, timeout=0) is None


def test_get_by_key_returns_a_copy() -> None:
    fifo = DeltaFIFO()
    fifo.add(obj("a"))
    fifo.get_by_key("ns/a").clear()
    assert len(fifo.get_by_key("ns/a")) == 1


def test_key_of() -> None:
    fifo = DeltaFIFO()
    assert fifo.key_of(obj("a")) == "ns/a"
    assert fifo.key_of(DeletedFinalStateUnknown("x/y", None)) == "x/y"
    assert fifo.key_of([Delta(A, obj("b"))]) == "ns/b"
    with pytest.raises(ValueError):
        fifo.key_of([])


def test_custom_key_func() -> None:
    fifo = DeltaFIFO(key_func=lambda o: o["metadata"]["name"].upper())
    fifo.add(obj("a"))
    assert fifo.list_keys() == ["A"]


# -- delete dedup and filtering ---------------------------------------------------------------------


def test_two_consecutive_deletes_collapse_keeping_the_non_tombstone() -> None:
    fifo = DeltaFIFO()
    a = obj("a")
    fifo.add(a)
    fifo.delete(a)
    fifo.delete(tomb("a", a))
    assert types(fifo.get_by_key("ns/a")) == [A, D]
    assert fifo.get_by_key("ns/a")[1].object is a  # the real final state wins over the tombstone

    fifo2 = DeltaFIFO()
    b, b_final = obj("b", "1"), obj("b", "2")
    fifo2.add(b)
    fifo2.delete(tomb("b", b))
    fifo2.delete(b_final)
    assert fifo2.get_by_key("ns/b") == [Delta(A, b), Delta(D, b_final)]  # tombstone replaced

    fifo3 = DeltaFIFO()
    fifo3.add(b)
    fifo3.delete(b)
    fifo3.delete(b_final)
    assert fifo3.get_by_key("ns/b") == [Delta(A, b), Delta(D, b)]  # two real ones: keep the older


def test_only_consecutive_deletes_collapse() -> None:
    fifo = DeltaFIFO()
    a = obj("a")
    fifo.add(a)
    fifo.delete(a)
    fifo.add(a)
    fifo.delete(a)
    fifo.update(a)
    fifo.update(a)  # updates never collapse
    assert types(fifo.get_by_key("ns/a")) == [A, D, A, D, U, U]


def test_delete_dropped_when_neither_queued_nor_known() -> None:
    fifo = DeltaFIFO()
    fifo.delete(obj("a"))
    assert len(fifo) == 0

    fifo = DeltaFIFO(known_objects=known(obj("b")))
    fifo.delete(obj("a"))
    assert len(fifo) == 0
    fifo.delete(obj("b"))  # known, not queued
    assert types(fifo.get_by_key("ns/b")) == [D]
    fifo.add(obj("c"))
    fifo.delete(obj("c"))  # queued, not known
    assert types(fifo.get_by_key("ns/c")) == [A, D]


# -- replace ----------------------------------------------------------------------------------------


def test_replace_emits_replaced_or_sync() -> None:
    a, b = obj("a"), obj("b")
    fifo = DeltaFIFO()
    fifo.replace([a, b], "10")
    assert fifo.get_by_key("ns/a") == [Delta(R, a)] and fifo.get_by_key("ns/b") == [Delta(R, b)]
    fifo = DeltaFIFO(emit_delta_type_replaced=False)
    fifo.replace([a], "10")
    assert fifo.get_by_key("ns/a") == [Delta(S, a)]


def test_replace_tombstones_known_objects_missing_from_the_list() -> None:
    a, b, c = obj("a"), obj("b"), obj("c")
    store = known(a, b, c)
    fifo = DeltaFIFO(known_objects=store)
    b2 = obj("b", "2")
    fifo.replace([b2], "10")
    assert fifo.get_by_key("ns/b") == [Delta(R, b2)]  # listed: no tombstone
    for name, last in (("a", a), ("c", c)):
        (delta,) = fifo.get_by_key(f"ns/{name}")
        assert delta.type is D and delta.object == tomb(name, last)
        assert delta.object.obj is last  # carries the last known object


def test_replace_tombstones_queued_keys_with_their_newest_object() -> None:
    fifo = DeltaFIFO()
    a1, a2 = obj("a", "1"), obj("a", "2")
    fifo.add(a1)
    fifo.update(a2)
    fifo.replace([obj("b")], "10")
    deltas = fifo.get_by_key("ns/a")
    assert types(deltas) == [A, U, D]
    assert deltas[2].object == tomb("a", a2) and deltas[2].object.obj is a2


def test_key_both_queued_and_known_gets_one_tombstone() -> None:
    a_known, a_queued = obj("a", "1"), obj("a", "2")
    fifo = DeltaFIFO(known_objects=known(a_known))
    fifo.update(a_queued)
    fifo.replace([], "10")
    deltas = fifo.get_by_key("ns/a")
    assert types(deltas) == [U, D]
    assert deltas[1].object.obj is a_queued  # queued state is newer than the known one


def test_repeated_relists_do_not_nest_or_duplicate_tombstones() -> None:
    a = obj("a")
    fifo = DeltaFIFO(known_objects=known(a))
    fifo.replace([], "10")
    fifo.replace([], "11")
    (delta,) = fifo.get_by_key("ns/a")  # second tombstone collapsed into the first
    assert delta.type is D and delta.object == tomb("a", a)
    assert delta.object.obj is a  # unwrapped, not DFSU(DFSU(a))


def test_replace_of_an_empty_list() -> None:
    fifo = DeltaFIFO()
    fifo.replace([], "1")
    assert len(fifo) == 0 and fifo.has_synced()  # nothing to wait for

    a, b = obj("a"), obj("b")
    fifo = DeltaFIFO(known_objects=known(a, b))
    fifo.replace([], "1")
    assert sorted(fifo.list_keys()) == ["ns/a", "ns/b"]
    for key, last in (("ns/a", a), ("ns/b", b)):
        assert fifo.get_by_key(key) == [Delta(D, DeletedFinalStateUnknown(key, last))]
    assert not fifo.has_synced()  # tombstones belong to the initial population
    pop(fifo)
    assert not fifo.has_synced()
    pop(fifo)
    assert fifo.has_synced()


def test_delete_after_relist_tombstone_is_not_reported_twice_once_popped() -> None:
    """The watch's late DELETED after a relist already reported it is dropped."""
    a = obj("a")
    store = known(a)
    fifo = DeltaFIFO(known_objects=store)
    fifo.replace([], "10")
    deltas, _ = pop(fifo)
    store.delete(deltas[-1].object)  # the informer applies the tombstone
    fifo.delete(a)
    assert len(fifo) == 0


# -- resync -----------------------------------------------------------------------------------------


def test_resync_only_for_known_keys_without_pending_deltas() -> None:
    a, b, c = obj("a"), obj("b"), obj("c")
    fifo = DeltaFIFO(known_objects=known(a, b, c))
    b2 = obj("b", "2")
    fifo.update(b2)
    fifo.resync()
    assert fifo.get_by_key("ns/a") == [Delta(S, a)] and fifo.get_by_key("ns/a")[0].object is a
    assert fifo.get_by_key("ns/b") == [Delta(U, b2)]  # pending: no stale Sync behind it
    assert fifo.get_by_key("ns/c") == [Delta(S, c)]
    fifo.resync()  # everything pending now: nothing more
    assert fifo.get_by_key("ns/a") == [Delta(S, a)]


def test_resync_without_known_objects_does_nothing() -> None:
    fifo = DeltaFIFO()
    fifo.resync()
    assert len(fifo) == 0


# -- has_synced -------------------------------------------------------------------------------------


def test_has_synced_after_first_replace_items_are_popped() -> None:
    fifo = DeltaFIFO()
    assert not fifo.has_synced()
    fifo.replace([obj("a"), obj("b"), obj("c"), obj("a", "2")], "1")  # duplicate key counts once
    assert not fifo.has_synced()
    fifo.add(obj("d"))  # after the replace: not part of the initial population
    flags = [pop(fifo)[1] for _ in range(3)]
    assert flags == [True, True, True]
    assert fifo.has_synced()
    assert pop(fifo)[1] is False
    fifo.replace([obj("z")], "2")  # a later relist does not un-sync
    assert fifo.has_synced() and pop(fifo)[1] is False


@pytest.mark.parametrize("op", ["add", "update", "delete"])
def test_has_synced_when_a_change_precedes_any_replace(op: str) -> None:
    fifo = DeltaFIFO()
    getattr(fifo, op)(obj("a"))  # even a dropped delete counts, as in client-go
    assert fifo.has_synced()
    fifo.replace([obj("b")], "1")
    assert fifo.has_synced()


# -- transform --------------------------------------------------------------------------------------


def test_transform_runs_once_at_enqueue_not_for_tombstones_or_sync() -> None:
    calls: list[object] = []

    def strip(o):
        calls.append(o)
        if isinstance(o, DeletedFinalStateUnknown):
            raise AssertionError("transform saw a tombstone")
        out = dict(o)
        out["stripped"] = True
        return out

    a, b = obj("a"), obj("b")
    store = known(b)
    fifo = DeltaFIFO(known_objects=store, transform=strip)
    fifo.add(a)
    fifo.update(a)
    fifo.delete(a)
    assert [d.object.get("stripped") for d in fifo.get_by_key("ns/a")] == [True, True, True]
    assert len(calls) == 3
    fifo.delete(tomb("a", a))  # tombstone handed to delete: untouched
    fifo.replace([obj("c")], "1")  # c transformed; a's and b's tombstones not
    assert len(calls) == 4 and fifo.get_by_key("ns/c")[0].object["stripped"]
    assert fifo.get_by_key("ns/b")[0].object == tomb("b", b)
    while len(fifo):
        pop(fifo)
    fifo.resync()  # Sync carries the cached (already transformed) object as is
    assert len(calls) == 4 and fifo.get_by_key("ns/b")[0].object is b


def test_transform_applies_to_replace_even_when_emitting_sync() -> None:
    fifo = DeltaFIFO(emit_delta_type_replaced=False, transform=lambda o: {**o, "t": 1})
    fifo.replace([obj("a")], "1")
    (delta,) = fifo.get_by_key("ns/a")
    assert delta.type is S and delta.object["t"] == 1


@pytest.fixture
def fast_switching():
    """Switch threads every 10 us instead of 5 ms so races actually interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


# -- pop, close, concurrency ------------------------------------------------------------------------


def test_pop_blocks_until_an_item_arrives() -> None:
    fifo = DeltaFIFO()
    got: list = []
    t = threading.Thread(target=lambda: got.append(fifo.pop(lambda d, i: None)))
    t.start()
    consistently(lambda: t.is_alive() and not got, duration=0.05, message="pop() blocks while empty")
    fifo.add(obj("a"))
    t.join(2)
    assert not t.is_alive() and types(got[0]) == [A]


def test_pop_timeout_returns_none() -> None:
    fifo = DeltaFIFO()
    start = time.monotonic()
    assert fifo.pop(lambda d, i: None, timeout=0.05) is None
    assert 0.04 <= time.monotonic() - start < 1


def test_close_wakes_blocked_pop_and_remaining_items_drain_first() -> None:
    fifo = DeltaFIFO()
    errors: list = []

    def waiter() -> None:
        try:
            fifo.pop(lambda d, i: None)
        except FIFOClosedError as exc:
            errors.append(exc)

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.05)
    assert not fifo.is_closed()
    fifo.close()
    t.join(2)
    assert not t.is_alive() and len(errors) == 1 and fifo.is_closed()

    fifo = DeltaFIFO()
    fifo.add(obj("a"))
    fifo.close()
    assert types(pop(fifo)[0]) == [A]  # queued before close: still delivered
    with pytest.raises(FIFOClosedError):
        fifo.pop(lambda d, i: None)
    with pytest.raises(FIFOClosedError):
        fifo.pop(lambda d, i: None, timeout=5)  # closed wins over waiting


def test_process_error_propagates_and_item_is_not_requeued() -> None:
    fifo = DeltaFIFO()
    fifo.add(obj("a"))

    def fail(deltas, initial):
        raise RuntimeError("handler failed")

    with pytest.raises(RuntimeError):
        fifo.pop(fail)
    assert len(fifo) == 0 and fifo.get_by_key("ns/a") is None


def test_process_runs_under_the_lock_and_may_reenter() -> None:
    fifo = DeltaFIFO()
    fifo.add(obj("a"))
    fifo.add(obj("b"))
    blocked = threading.Event()
    release = threading.Event()
    seen: list = []

    def process(deltas, initial):
        seen.append(len(fifo))  # same thread: the RLock lets process call back in
        blocked.set()
        release.wait(2)

    t = threading.Thread(target=fifo.pop, args=(process,))
    t.start()
    assert blocked.wait(2)
    producer = threading.Thread(target=fifo.add, args=(obj("c"),))
    producer.start()
    producer.join(0.05)
    assert producer.is_alive()  # producers wait while process runs
    release.set()
    t.join(2)
    producer.join(2)
    assert seen == [1] and fifo.list_keys() == ["ns/b", "ns/c"]


def test_slow_process_with_backlog_is_logged(monkeypatch) -> None:
    monkeypatch.setattr(delta_fifo_module, "_SLOW_PROCESS_SECONDS", 0.0)
    fifo = DeltaFIFO()
    for i in range(12):
        fifo.add(obj(f"o{i}"))
    with capture_logs() as logs:
        pop(fifo)
        for _ in range(11):
            pop(fifo)
    slow = [e for e in logs if e["event"] == "slow DeltaFIFO process"]
    assert len(slow) == 1 and slow[0]["depth"] == 11 and slow[0]["log_level"] == "warning"


def test_producers_and_consumer_end_with_cache_equal_to_source_of_truth(fast_switching) -> None:
    """A reflector-like producer per key range and an informer-like consumer applying to an Indexer."""
    cache = Indexer()
    fifo = DeltaFIFO(known_objects=cache)
    truth: dict[str, dict] = {}
    truth_lock = threading.Lock()
    last_rv: dict[str, int] = {}
    problems: list[str] = []

    def producer(p: int) -> None:
        for step in range(600):
            name = f"p{p}-o{step % 25}"
            o = obj(name, str(step))
            if step % 7 == 3:
                with truth_lock:
                    truth.pop(f"ns/{name}", None)
                fifo.delete(o)
            else:
                with truth_lock:
                    truth[f"ns/{name}"] = o
                fifo.update(o)

    def process(deltas: list[Delta], initial: bool) -> None:
        for d in deltas:
            if d.type is DeltaType.Deleted:
                cache.delete(d.object)
                continue
            key = fifo.key_of(d.object)
            rv = int(d.object["metadata"]["resourceVersion"])
            if rv < last_rv.get(key, -1):
                problems.append(f"{key} went back from {last_rv[key]} to {rv}")
            last_rv[key] = rv
            cache.update(d.object)

    done = threading.Event()

    def consumer() -> None:
        while True:
            try:
                fifo.pop(process, timeout=0.05)
            except FIFOClosedError:
                return
            if done.is_set() and len(fifo) == 0:
                fifo.close()

    producers = [threading.Thread(target=producer, args=(p,)) for p in range(4)]
    cons = threading.Thread(target=consumer)
    cons.start()
    for t in producers:
        t.start()
    for t in producers:
        t.join()
    done.set()
    cons.join(10)
    assert not cons.is_alive()
    assert not problems, problems[:5]
    assert {k: cache.get_by_key(k) for k in cache.list_keys()} == truth


def test_informer_style_relist_recovers_missed_deletion() -> None:
    cache = Indexer()
    fifo = DeltaFIFO(known_objects=cache)

    def process(deltas, initial):
        for d in deltas:
            if d.type is DeltaType.Deleted:
                cache.delete(d.object)
            else:
                cache.update(d.object)

    a, b = obj("a"), obj("b")
    fifo.replace([a, b], "1")
    while len(fifo):
        fifo.pop(process)
    assert fifo.has_synced() and sorted(cache.list_keys()) == ["ns/a", "ns/b"]
    # The watch dropped; b was deleted meanwhile; the relist only has a.
    fifo.replace([a], "5")
    popped = [fifo.pop(process) for _ in range(2)]
    assert [types(d) for d in popped] == [[R], [D]]
    assert popped[1][0].object == tomb("b", b)
    assert cache.list_keys() == ["ns/a"]


def test_raising_transform_propagates_and_queues_nothing() -> None:
    def boom(o):
        raise ValueError("bad object")

    fifo = DeltaFIFO(transform=boom)
    with pytest.raises(ValueError, match="bad object"):
        fifo.add(obj("a"))
    assert len(fifo) == 0 and fifo.get_by_key("ns/a") is None
