"""Keys, ThreadSafeStore and Indexer contracts (client-go thread_safe_store.go / index.go)."""

from __future__ import annotations

import gc
import random
import sys
import threading
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from framework.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    IndexNotFoundError,
    ThreadSafeStore,
    meta_namespace_index_func,
    meta_namespace_key_func,
    split_meta_namespace_key,
)


def obj(name: str, ns: str | None = "default", labels: dict[str, str] | None = None, rv: str = "1") -> dict:
    meta: dict = {"name": name, "resourceVersion": rv, "labels": labels or {}}
    if ns is not None:
        meta["namespace"] = ns
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def by_app(o: dict) -> list[str]:
    app = o["metadata"]["labels"].get("app")
    return [app] if app else []


def by_tiers(o: dict) -> list[str]:
    return o["metadata"]["labels"].get("tiers", "").split(",") if o["metadata"]["labels"].get("tiers") else []


def assert_consistent(indexer: Indexer) -> None:
    """Every index equals what its function computes over the current items (no stale, no empty)."""
    items = {k: indexer.get_by_key(k) for k in indexer.list_keys()}
    for name, func in indexer.get_indexers().items():
        expected: dict[str, set[str]] = {}
        for key, o in items.items():
            for value in func(o):
                expected.setdefault(value, set()).add(key)
        actual = {v: set(indexer.index_keys(name, v)) for v in indexer.list_index_func_values(name)}
        assert actual == expected, name


# -- keys -------------------------------------------------------------------------------------------


def test_key_func_namespaced_and_cluster_scoped() -> None:
    assert meta_namespace_key_func(obj("a", "ns1")) == "ns1/a"
    assert meta_namespace_key_func(obj("node-1", None)) == "node-1"
    assert meta_namespace_key_func({"metadata": {"name": "x", "namespace": ""}}) == "x"


def test_key_func_unwraps_tombstone() -> None:
    assert meta_namespace_key_func(DeletedFinalStateUnknown("ns/a", None)) == "ns/a"


@pytest.mark.parametrize("bad", [{}, {"metadata": {}}, {"metadata": None}, "ns/a", 3])
def test_key_func_rejects_objects_without_name(bad: object) -> None:
    with pytest.raises(ValueError):
        meta_namespace_key_func(bad)


def test_split_key() -> None:
    assert split_meta_namespace_key("ns/a") == ("ns", "a")
    assert split_meta_namespace_key("a") == ("", "a")
    for bad in ["", "a/b/c", "ns/", "/"]:
        with pytest.raises(ValueError, match="unexpected key format"):
            split_meta_namespace_key(bad)


@given(
    ns=st.from_regex(r"[a-z0-9-]{0,10}", fullmatch=True),
    name=st.from_regex(r"[a-z0-9.-]{1,20}", fullmatch=True),
)
def test_split_inverts_key_func(ns: str, name: str) -> None:
    assert split_meta_namespace_key(meta_namespace_key_func(obj(name, ns))) == (ns, name)


def test_namespace_index_func() -> None:
    assert NAMESPACE_INDEX == "namespace"
    assert meta_namespace_index_func(obj("a", "ns1")) == ["ns1"]
    assert meta_namespace_index_func(obj("n", None)) == [""]


# -- Indexer basics ---------------------------------------------------------------------------------


def test_add_get_list_update_delete() -> None:
    idx = Indexer()
    a, b = obj("a"), obj("b", "other")
    idx.add(a)
    idx.add(b)
    assert idx.get_by_key("default/a") is a  # the cached dict itself, no copy
    assert idx.get(obj("a")) is a
    assert sorted(idx.list_keys()) == ["default/a", "other/b"]
    assert len(idx.list()) == 2 and len(idx) == 2 and "other/b" in idx
    a2 = obj("a", rv="2")
    idx.update(a2)
    assert idx.get_by_key("default/a") is a2
    idx.delete(a2)
    assert idx.get_by_key("default/a") is None
    idx.delete(a2)  # missing: ignored
    idx.delete(DeletedFinalStateUnknown("other/b", None))  # tombstones key by their key
    assert idx.list() == [] and idx.list_keys() == []


def test_namespace_index_built_in() -> None:
    idx = Indexer()
    idx.add(obj("a", "ns1"))
    idx.add(obj("b", "ns1"))
    idx.add(obj("c", "ns2"))
    idx.add(obj("node", None))
    assert sorted(o["metadata"]["name"] for o in idx.by_index("namespace", "ns1")) == ["a", "b"]
    assert idx.index_keys("namespace", "ns2") == ["ns2/c"]
    assert idx.index_keys("namespace", "") == ["node"]
    assert idx.by_index("namespace", "nope") == []
    assert sorted(idx.list_index_func_values("namespace")) == ["", "ns1", "ns2"]


def test_namespace_index_is_built_on_first_read_and_maintained_after() -> None:
    idx = Indexer()
    idx.add(obj("a", "ns1"))
    idx.add(obj("b", "ns2"))
    idx.delete(obj("b", "ns2"))
    assert NAMESPACE_INDEX in idx.get_indexers()
    assert idx.index_keys("namespace", "ns1") == ["ns1/a"]  # back-filled from what is stored
    assert idx.index_keys("namespace", "ns2") == []
    idx.add(obj("c", "ns2"))
    idx.update(obj("a", "ns1", rv="2"))
    idx.delete(obj("a", "ns1"))
    assert idx.index_keys("namespace", "ns2") == ["ns2/c"]
    assert sorted(idx.list_index_func_values("namespace")) == ["ns2"]
    with pytest.raises(ValueError, match="namespace"):
        idx.add_indexers({"namespace": by_app})


def test_an_indexer_never_read_by_namespace_keeps_no_namespace_index() -> None:
    objs = [obj(f"o{i}", f"ns{i % 50}") for i in range(20_000)]
    keys = [meta_namespace_key_func(o) for o in objs]  # the same key strings for both stores
    store_module = [tracemalloc.Filter(True, "*/framework/cache/store.py")]  # not other threads' work
    sizes = []
    tracemalloc.start()
    try:
        for read_by_namespace in (False, True):
            store = ThreadSafeStore(lazy_indexers={NAMESPACE_INDEX: meta_namespace_index_func})
            for key, o in zip(keys, objs, strict=True):
                store.add(key, o)
            if read_by_namespace:
                assert len(store.by_index(NAMESPACE_INDEX, "ns0")) == 400
            gc.collect()
            snapshot = tracemalloc.take_snapshot().filter_traces(store_module)
            sizes.append(sum(stat.size for stat in snapshot.statistics("filename")))
            del store
            gc.collect()
    finally:
        tracemalloc.stop()
    unread, read = sizes
    assert read - unread > 20 * len(objs)  # the index costs tens of bytes per object, only once read


def test_label_index_is_built_on_first_read_and_follows_label_changes() -> None:
    idx = Indexer()
    idx.add(obj("a", None, {"app": "web"}))
    idx.add(obj("b", None, {"app": "db"}))
    idx.add(obj("c", None))
    assert "label:app" not in idx.get_indexers()  # nothing paid before a read by label
    assert [o["metadata"]["name"] for o in idx.by_label("app", "web")] == ["a"]
    assert "label:app" in idx.get_indexers()
    idx.update(obj("b", None, {"app": "web"}, rv="2"))  # moves from db to web
    idx.update(obj("a", None, {"tier": "front"}, rv="2"))  # label removed
    idx.add(obj("d", None, {"app": "web"}))
    idx.delete(obj("d", None))
    assert [o["metadata"]["name"] for o in idx.by_label("app", "web")] == ["b"]
    assert idx.by_label("app", "db") == []
    assert sorted(idx.list_index_func_values("label:app")) == ["web"]  # emptied values pruned
    assert idx.by_label("tier", "front") == [obj("a", None, {"tier": "front"}, rv="2")]


def test_namespace_indexer_may_be_passed_again_but_not_overridden() -> None:
    Indexer(indexers={"namespace": meta_namespace_index_func, "app": by_app})
    with pytest.raises(ValueError, match="conflict"):
        Indexer(indexers={"namespace": by_app})


def test_update_moves_key_between_values_and_prunes_empty_sets() -> None:
    idx = Indexer(indexers={"app": by_app})
    idx.add(obj("a", labels={"app": "web"}))
    idx.update(obj("a", labels={"app": "db"}))
    assert idx.index_keys("app", "web") == []
    assert idx.list_index_func_values("app") == ["db"]  # "web" pruned, not left as an empty set
    idx.update(obj("a", labels={}))
    assert idx.list_index_func_values("app") == []
    idx.update(obj("a", labels={"app": "db"}))
    idx.delete(obj("a"))
    assert idx.list_index_func_values("app") == []
    assert idx.list_index_func_values("namespace") == []
    assert_consistent(idx)


def test_multi_value_index_and_index_of_object() -> None:
    idx = Indexer(indexers={"tiers": by_tiers})
    idx.add(obj("a", labels={"tiers": "x,y"}))
    idx.add(obj("b", labels={"tiers": "y,z"}))
    idx.add(obj("c", labels={"tiers": "z,z"}))  # duplicate values collapse
    assert sorted(idx.index_keys("tiers", "y")) == ["default/a", "default/b"]
    assert sorted(idx.index_keys("tiers", "z")) == ["default/b", "default/c"]
    probe = obj("probe", labels={"tiers": "x,z"})
    assert sorted(o["metadata"]["name"] for o in idx.index("tiers", probe)) == ["a", "b", "c"]
    assert [o["metadata"]["name"] for o in idx.index("tiers", obj("p", labels={"tiers": "x"}))] == ["a"]
    idx.update(obj("a", labels={"tiers": "y,w"}))  # keeps y, drops x, gains w
    assert sorted(idx.list_index_func_values("tiers")) == ["w", "y", "z"]
    idx.delete(obj("c"))
    assert sorted(idx.index_keys("tiers", "z")) == ["default/b"]
    assert_consistent(idx)


def test_index_func_may_return_any_iterable() -> None:
    idx = Indexer(indexers={"gen": lambda o: (v for v in by_app(o))})
    idx.add(obj("a", labels={"app": "web"}))
    idx.update(obj("a", labels={"app": "db"}))
    assert idx.list_index_func_values("gen") == ["db"]


@pytest.mark.parametrize(
    "call",
    [
        lambda i: i.by_index("nope", "v"),
        lambda i: i.index_keys("nope", "v"),
        lambda i: i.index("nope", obj("a")),
        lambda i: i.list_index_func_values("nope"),
    ],
)
def test_unknown_index_raises_key_error_with_clear_message(call) -> None:
    idx = Indexer()
    with pytest.raises(KeyError) as info:
        call(idx)
    assert isinstance(info.value, IndexNotFoundError)
    assert str(info.value) == "index 'nope' does not exist (known: 'namespace')"


def test_raising_index_func_propagates_and_leaves_store_unchanged() -> None:
    def picky(o: dict) -> list[str]:
        if o["metadata"]["labels"].get("bad"):
            raise RuntimeError("boom")
        return by_app(o)

    idx = Indexer(indexers={"picky": picky})
    good = obj("a", labels={"app": "web"})
    idx.add(good)
    with pytest.raises(RuntimeError, match="boom") as info:
        idx.update(obj("a", labels={"app": "db", "bad": "1"}))
    assert any("picky" in note for note in info.value.__notes__)
    assert idx.get_by_key("default/a") is good
    assert idx.index_keys("picky", "web") == ["default/a"]
    with pytest.raises(RuntimeError):
        idx.add(obj("b", labels={"bad": "1"}))
    assert idx.list_keys() == ["default/a"]
    assert idx.index_keys("namespace", "default") == ["default/a"]
    with pytest.raises(RuntimeError):
        idx.replace([obj("c"), obj("d", labels={"bad": "1"})], "9")
    assert idx.list_keys() == ["default/a"]
    assert_consistent(idx)


def test_store_rejects_none() -> None:
    with pytest.raises(ValueError):
        ThreadSafeStore().add("k", None)


def test_replace_rebuilds_indices() -> None:
    idx = Indexer(indexers={"app": by_app})
    idx.add(obj("a", "ns1", labels={"app": "web"}))
    idx.add(obj("b", "ns2", labels={"app": "db"}))
    idx.replace([obj("b", "ns2", labels={"app": "web"}), obj("c", "ns3", labels={"app": "web"})], "42")
    assert sorted(idx.list_keys()) == ["ns2/b", "ns3/c"]
    assert sorted(idx.index_keys("app", "web")) == ["ns2/b", "ns3/c"]
    assert idx.list_index_func_values("app") == ["web"]
    assert sorted(idx.list_index_func_values("namespace")) == ["ns2", "ns3"]
    idx.replace([], "43")
    assert idx.list() == []
    assert idx.list_index_func_values("app") == []
    assert idx.list_index_func_values("namespace") == []


def test_add_indexers_backfills_and_rejects_clashes() -> None:
    idx = Indexer()
    idx.add(obj("a", labels={"app": "web"}))
    idx.add(obj("b", labels={"app": "web"}))
    idx.add(obj("c", labels={}))
    idx.add_indexers({"app": by_app})
    assert sorted(idx.index_keys("app", "web")) == ["default/a", "default/b"]
    idx.add(obj("d", labels={"app": "web"}))  # maintained from now on
    assert len(idx.by_index("app", "web")) == 3
    with pytest.raises(ValueError, match="'app'"):
        idx.add_indexers({"app": by_app, "tiers": by_tiers})
    with pytest.raises(ValueError, match="'namespace'"):
        idx.add_indexers({"namespace": meta_namespace_index_func})
    assert set(idx.get_indexers()) == {"namespace", "app"}  # nothing of the rejected call was added
    with pytest.raises(KeyError):
        idx.by_index("tiers", "x")
    assert_consistent(idx)


def test_add_indexers_with_raising_func_adds_nothing() -> None:
    idx = Indexer()
    idx.add(obj("a"))
    with pytest.raises(ZeroDivisionError):
        idx.add_indexers({"ok": by_app, "bad": lambda o: [str(1 / 0)]})
    assert set(idx.get_indexers()) == {"namespace"}


def test_thread_safe_store_with_explicit_keys() -> None:
    store = ThreadSafeStore({"app": by_app})
    store.add("k1", obj("a", labels={"app": "web"}))
    store.update("k1", obj("a", labels={"app": "db"}))
    store.add("k2", obj("b", labels={"app": "db"}))
    assert sorted(store.index_keys("app", "db")) == ["k1", "k2"]
    store.delete("k1")
    store.delete("missing")
    assert store.list_keys() == ["k2"] and len(store) == 1 and "k2" in store
    store.replace({"k3": obj("c", labels={"app": "x"})})
    assert store.list_index_func_values("app") == ["x"]
    store.resync()


@pytest.fixture
def fast_switching():
    """Switch threads every 10 us instead of 5 ms so races actually interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


# -- property and concurrency -----------------------------------------------------------------------

ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "update", "delete", "replace"]),
        st.integers(0, 5),  # name
        st.sampled_from(["ns1", "ns2", None]),
        st.sampled_from(["", "web", "db", "x,y", "y,z"]),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(ops)
def test_indices_match_a_model_after_any_sequence(seq) -> None:
    idx = Indexer(indexers={"app": by_app, "tiers": by_tiers})
    model: dict[str, dict] = {}
    for op, n, ns, label in seq:
        o = obj(f"o{n}", ns, labels={"app": label, "tiers": label} if label else {})
        key = meta_namespace_key_func(o)
        if op == "delete":
            idx.delete(o)
            model.pop(key, None)
        elif op == "replace":
            keep = [v for k, v in sorted(model.items()) if hash(k) % 2] + [o]
            idx.replace(keep, "1")
            model = {meta_namespace_key_func(v): v for v in keep}
        else:
            getattr(idx, op)(o)
            model[key] = o
        assert {k: idx.get_by_key(k) for k in idx.list_keys()} == model
        assert_consistent(idx)


@pytest.mark.parametrize("round_", range(3))  # a race is probabilistic: a few rounds catch most
def test_concurrent_writers_readers_and_add_indexers_keep_indices_consistent(fast_switching, round_) -> None:
    idx = Indexer(indexers={"app": by_app})
    apps = [f"app{i}" for i in range(30)] + [""]  # many values: a stale index entry rarely heals
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer(seed: int) -> None:
        rnd = random.Random(seed)
        try:
            for i in range(4000):
                name, ns = f"o{rnd.randrange(12)}", f"ns{rnd.randrange(2)}"  # few keys: writers collide
                o = obj(name, ns, labels={"app": rnd.choice(apps)}, rv=str(i))
                if rnd.random() < 0.2:
                    idx.delete(o)
                else:
                    idx.update(o)
                if i in (1000, 2000):
                    idx.replace(idx.list()[::2], "0")
        except BaseException as exc:  # pragma: no cover - surfaced below
            errors.append(exc)

    def reader() -> None:
        try:
            while not stop.is_set():
                for app in idx.list_index_func_values("app"):
                    for o in idx.by_index("app", app):  # a snapshot under the lock: always matching
                        assert o["metadata"]["labels"]["app"] == app
                for o in idx.by_index("namespace", "ns1"):
                    assert o["metadata"]["namespace"] == "ns1"
                for key in idx.list_keys():
                    idx.get_by_key(key)
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    writers = [threading.Thread(target=writer, args=(s + 10 * round_,)) for s in range(4)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in writers + readers:
        t.start()
    idx.add_indexers({"tiers": by_tiers, "name": lambda o: [o["metadata"]["name"]]})  # while in use
    for t in writers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert not errors, errors
    assert_consistent(idx)
    assert set(idx.list_index_func_values("name")) == {o["metadata"]["name"] for o in idx.list()}
