"""Property tests of resourceVersion, watch and pagination semantics (spec 6-3, §14, §15).

Each test starts ONE server and runs many hypothesis examples against it; every example works in a
namespace of its own, so examples never see each other's objects. The expected outcomes come from small
independent models (a dict of names, a label-selector evaluator written here), never from server code.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import urllib3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kubernetes import client
from kubernetes.client.rest import ApiException

from framework.testing import APIServer

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NAMES = ("a", "b", "c", "d")
LABEL_KEYS = ("env", "tier")
LABEL_VALUES = ("x", "y", "z")

# -- helpers ----------------------------------------------------------------------------------------


class Raw:
    """Plain HTTP (urllib3) against one server; much cheaper than the official client's models."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.http = urllib3.PoolManager(ca_certs=str(server.ca_path))
        self.auth = {"Authorization": f"Bearer {server.token}"}

    def json(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> tuple[int, Any]:
        headers = dict(self.auth)
        raw = None
        if body is not None:
            raw = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        r = self.http.request(method, self.server.url + path, body=raw, headers=headers)
        return r.status, (json.loads(r.data) if r.data else None)

    def watch(self, path: str, chunk: int = 65536, lag: float = 0.0) -> Stream:
        """A watch on its own connection (closing it early never poisons the pool)."""
        pool = urllib3.PoolManager(ca_certs=str(self.server.ca_path))
        r = pool.request("GET", self.server.url + path, headers=self.auth, preload_content=False, timeout=5.0)
        assert r.status == 200, r.data
        return Stream(r, chunk, lag)


class Stream:
    """Newline-delimited watch events read incrementally from a chunked response."""

    def __init__(self, resp: urllib3.BaseHTTPResponse, chunk: int = 65536, lag: float = 0.0) -> None:
        self.resp = resp
        self.chunks = resp.stream(chunk, decode_content=False)
        self.lag = lag  # seconds to sleep before each chunk: a slow reader
        self.buf = b""

    def read_until(self, stop: Callable[[dict], bool]) -> list[dict]:
        events: list[dict] = []
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                ev = json.loads(line)
                events.append(ev)
                if stop(ev):
                    return events
            if self.lag:
                time.sleep(self.lag)
            try:
                self.buf += next(self.chunks)
            except StopIteration:
                raise AssertionError(f"watch ended before the stop condition; got {events}") from None

    def close(self) -> None:
        self.resp.release_conn()
        self.resp.close()


def fresh_namespace(raw: Raw, counter: Iterator) -> str:
    """A new namespace whose default objects (kube-root-ca.crt, SA) exist, so it is quiet (12-9)."""
    ns = f"prop-{next(counter)}"
    code, _ = raw.json("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    assert code == 201
    deadline = time.monotonic() + 5
    while raw.json("GET", f"/api/v1/namespaces/{ns}/configmaps/kube-root-ca.crt")[0] != 200:
        assert time.monotonic() < deadline, "namespace defaults were not created"
        time.sleep(0.002)
    assert raw.json("GET", f"/api/v1/namespaces/{ns}/serviceaccounts/default")[0] == 200
    return ns


def rv_of(obj: dict) -> int:
    return int(obj["metadata"]["resourceVersion"])


def state_of(obj: dict) -> tuple:
    """What an object's watch/list representation must agree on: content and resourceVersion."""
    meta = obj["metadata"]
    return (
        obj.get("data") or {},
        meta.get("labels") or {},
        tuple(meta.get("finalizers") or ()),
        bool(meta.get("deletionTimestamp")),
        meta["uid"],
        meta["resourceVersion"],
    )


# -- strategies ---------------------------------------------------------------------------------------

names = st.sampled_from(NAMES)
data_maps = st.dictionaries(st.sampled_from(("k1", "k2")), st.sampled_from(("v1", "v2", "")), max_size=2)
label_maps = st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=2)


# A label requirement as (operator, key, values); rendered to 14-1 syntax and evaluated locally.
requirements = st.one_of(
    st.tuples(st.sampled_from(("=", "==", "!=")), st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES)),
    st.tuples(
        st.sampled_from(("in", "notin")),
        st.sampled_from(LABEL_KEYS),
        st.lists(st.sampled_from(LABEL_VALUES), min_size=1, max_size=2, unique=True),
    ),
    st.tuples(st.sampled_from(("exists", "!exists")), st.sampled_from(LABEL_KEYS), st.just("")),
)
selectors = st.lists(requirements, min_size=1, max_size=2)


def render_selector(reqs: list[tuple]) -> str:
    out = []
    for op, key, val in reqs:
        if op in ("in", "notin"):
            out.append(f"{key} {op} ({','.join(val)})")
        elif op == "exists":
            out.append(key)
        elif op == "!exists":
            out.append(f"!{key}")
        else:
            out.append(f"{key}{op}{val}")
    return ",".join(out)


def selector_matches(reqs: list[tuple], labels: dict) -> bool:
    for op, key, val in reqs:
        have = labels.get(key)
        if op in ("=", "=="):
            ok = have == val
        elif op == "!=":
            ok = have != val  # also true when the key is missing (14-1)
        elif op == "in":
            ok = have in val
        elif op == "notin":
            ok = have not in val  # also true when the key is missing
        elif op == "exists":
            ok = key in labels
        else:
            ok = key not in labels
        if not ok:
            return False
    return True


# -- a) resourceVersion monotonicity through the official client -----------------------------------

rv_ops = st.one_of(
    st.tuples(st.just("create"), names, data_maps, label_maps),
    st.tuples(st.just("update"), names, data_maps, label_maps, st.sampled_from(("current", "none", "stale"))),
    st.tuples(st.just("patch"), names, data_maps, label_maps),
    st.tuples(st.just("delete"), names),
    st.tuples(st.just("noop-update"), names),
    st.tuples(st.just("noop-patch"), names),
)


def test_resource_version_monotonic():
    """6-3: writes take strictly increasing RVs from one counter; no-ops and failures take none."""
    with APIServer() as server:
        raw = Raw(server)
        core = client.CoreV1Api(server.api_client())
        counter = itertools.count()

        @SETTINGS
        @given(ops=st.lists(rv_ops, min_size=1, max_size=14))
        def run(ops: list[tuple]) -> None:
            ns = fresh_namespace(raw, counter)
            # name -> (data, labels, rv) as the server must hold them.
            model: dict[str, tuple[dict, dict, str]] = {}
            first = core.list_namespaced_config_map(ns)
            last_write = int(first.metadata.resource_version)
            highest = max(last_write, *(int(i.metadata.resource_version) for i in first.items))

            def wrote(rv: str) -> None:
                nonlocal last_write, highest
                assert int(rv) > highest, f"write RV {rv} not above every earlier RV {highest}"
                last_write = highest = int(rv)

            for op in ops:
                kind, name = op[0], op[1]
                cur = model.get(name)
                try:
                    if kind == "create":
                        _, _, data, labels = op
                        body = {"metadata": {"name": name, "labels": labels}, "data": data}
                        res = core.create_namespaced_config_map(ns, body)
                        assert cur is None, "create of an existing name succeeded"
                        wrote(res.metadata.resource_version)
                        model[name] = (data, labels, res.metadata.resource_version)
                    elif kind == "update":
                        _, _, data, labels, mode = op
                        meta: dict[str, Any] = {"name": name, "labels": labels}
                        if mode == "current" and cur:
                            meta["resourceVersion"] = cur[2]
                        elif mode == "stale":
                            meta["resourceVersion"] = str(int(cur[2]) - 1) if cur else str(highest)
                        res = core.replace_namespaced_config_map(name, ns, {"metadata": meta, "data": data})
                        assert cur is not None and mode != "stale", "update should have failed"
                        rv = res.metadata.resource_version
                        if (data, labels) == cur[:2]:
                            assert rv == cur[2], "no-op update bumped the resourceVersion"
                        else:
                            wrote(rv)
                        model[name] = (data, labels, rv)
                    elif kind == "patch":
                        _, _, data, labels = op
                        body = {"metadata": {"labels": labels}, "data": data}
                        res = core.patch_namespaced_config_map(name, ns, body)
                        assert cur is not None, "patch of a missing object succeeded"
                        new = ({**cur[0], **data}, {**cur[1], **labels})
                        rv = res.metadata.resource_version
                        if new == cur[:2]:
                            assert rv == cur[2], "no-op patch bumped the resourceVersion"
                        else:
                            wrote(rv)
                        assert ((res.data or {}), (res.metadata.labels or {})) == new
                        model[name] = (*new, rv)
                    elif kind == "delete":
                        core.delete_namespaced_config_map(name, ns)
                        assert cur is not None, "delete of a missing object succeeded"
                        del model[name]
                        # The Status carries no RV: the deletion's RV shows as the list RV.
                        wrote(core.list_namespaced_config_map(ns).metadata.resource_version)
                    elif kind == "noop-update":
                        got = core.read_namespaced_config_map(name, ns)
                        assert cur is not None
                        res = core.replace_namespaced_config_map(name, ns, got)
                        assert res.metadata.resource_version == cur[2], "no-op update bumped the RV"
                    else:  # noop-patch: re-send the current labels and data
                        body = {"metadata": {"labels": cur[1] if cur else {}}, "data": cur[0] if cur else {}}
                        res = core.patch_namespaced_config_map(name, ns, body)
                        assert cur is not None, "patch of a missing object succeeded"
                        assert res.metadata.resource_version == cur[2], "no-op patch bumped the RV"
                except ApiException as e:
                    expected = 404 if cur is None else 409
                    assert e.status == expected, (op, e.status, e.body)
                    if kind == "create":
                        assert cur is not None
                    if kind == "update" and cur is not None:
                        assert op[4] == "stale"

                # After every request: the list agrees with the model, and failed or no-op requests
                # moved no RV (the list RV is the global counter, which only writes advance).
                lst = core.list_namespaced_config_map(ns)
                list_rv = int(lst.metadata.resource_version)
                assert list_rv == last_write, f"list RV {list_rv} != last write {last_write} after {op}"
                items = {
                    i.metadata.name: (i.data or {}, i.metadata.labels or {}, i.metadata.resource_version)
                    for i in lst.items
                    if i.metadata.name != "kube-root-ca.crt"
                }
                assert items == model
                assert all(int(i.metadata.resource_version) <= list_rv for i in lst.items)

        run()


# -- b) watch / list consistency ---------------------------------------------------------------------

watch_ops = st.one_of(
    st.tuples(st.just("create"), names, data_maps, label_maps, st.booleans()),
    st.tuples(st.just("update"), names, data_maps, label_maps),
    st.tuples(
        st.just("label"),
        names,
        st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from((*LABEL_VALUES, None))),
    ),
    st.tuples(st.just("patch"), names, data_maps),
    st.tuples(st.just("delete"), names),
    st.tuples(st.just("unfinalize"), names),
    st.tuples(st.just("noop"), names),
)


def apply_raw(raw: Raw, ns: str, op: tuple) -> None:
    """Apply one operation over plain HTTP; failures (404, 409, ...) are part of the game."""
    kind, name = op[0], op[1]
    base = f"/api/v1/namespaces/{ns}/configmaps"
    if kind == "create":
        _, _, data, labels, finalizer = op
        meta: dict = {"name": name, "labels": labels}
        if finalizer:
            meta["finalizers"] = ["example.com/hold"]
        raw.json("POST", base, {"metadata": meta, "data": data})
    elif kind == "update":
        _, _, data, labels = op
        code, cur = raw.json("GET", f"{base}/{name}")
        if code == 200:
            cur["metadata"]["labels"] = labels
            cur["data"] = data
            raw.json("PUT", f"{base}/{name}", cur)
    elif kind == "label":
        raw.json("PATCH", f"{base}/{name}", {"metadata": {"labels": op[2]}}, "application/merge-patch+json")
    elif kind == "patch":
        raw.json("PATCH", f"{base}/{name}", {"data": op[2]}, "application/strategic-merge-patch+json")
    elif kind == "delete":
        raw.json("DELETE", f"{base}/{name}")
    elif kind == "unfinalize":
        raw.json(
            "PATCH", f"{base}/{name}", {"metadata": {"finalizers": None}}, "application/merge-patch+json"
        )
    else:
        code, cur = raw.json("GET", f"{base}/{name}")
        if code == 200:
            code, res = raw.json("PUT", f"{base}/{name}", cur)
            assert code == 200 and res["metadata"]["resourceVersion"] == cur["metadata"]["resourceVersion"]


def replay(initial: dict[str, dict], events: list[dict], after: int) -> dict[str, dict]:
    """Apply unfiltered watch events to a list's items, checking each event fits the state."""
    objs = dict(initial)
    last = after
    for ev in events:
        obj = ev["object"]
        rv = rv_of(obj)
        assert rv > last, f"event RVs not strictly increasing: {rv} after {last}"
        last = rv
        name = obj["metadata"]["name"]
        if ev["type"] == "ADDED":
            assert name not in objs, f"ADDED for existing {name}"
            objs[name] = obj
        elif ev["type"] == "MODIFIED":
            assert name in objs, f"MODIFIED for missing {name}"
            objs[name] = obj
        else:
            assert ev["type"] == "DELETED", ev
            prev = objs.pop(name)
            # 15-5: the last stored state, stamped with the deletion's RV.
            assert state_of(obj)[:5] == state_of(prev)[:5]
    return objs


def expected_filtered(
    initial: dict[str, dict], events: list[dict], match: Callable[[dict], bool]
) -> list[tuple]:
    """The events a selector watch must deliver, derived from the unfiltered ones (15-4)."""
    objs = dict(initial)
    out = []
    for ev in events:
        obj = ev["object"]
        name = obj["metadata"]["name"]
        prev = objs.get(name)
        if ev["type"] == "DELETED":
            objs.pop(name)
            if match(prev):
                out.append(("DELETED", name, state_of(obj)))
            continue
        objs[name] = obj
        now, before = match(obj), prev is not None and match(prev)
        if now and before:
            out.append(("MODIFIED", name, state_of(obj)))
        elif now:
            out.append(("ADDED", name, state_of(obj)))
        elif before:
            # Leaving the selection: the last matching content with the new RV.
            gone = {
                **prev,
                "metadata": {**prev["metadata"], "resourceVersion": obj["metadata"]["resourceVersion"]},
            }
            out.append(("DELETED", name, state_of(gone)))
    return out


def test_watch_replays_to_list():
    """15-2..15-5: a watch from a list RV, replayed onto the list, gives the final list."""
    with APIServer() as server:
        server.bookmark_interval = 0.05  # bookmarks mark "everything up to RV was sent" (15-6)
        raw = Raw(server)
        counter = itertools.count()

        @SETTINGS
        @given(
            pre=st.lists(watch_ops, max_size=6),
            ops=st.lists(watch_ops, min_size=1, max_size=16),
            selector=selectors,
        )
        def run(pre: list[tuple], ops: list[tuple], selector: list[tuple]) -> None:
            ns = fresh_namespace(raw, counter)
            base = f"/api/v1/namespaces/{ns}/configmaps"
            for op in pre:
                apply_raw(raw, ns, op)
            code, first = raw.json("GET", base)
            assert code == 200
            list_rv = int(first["metadata"]["resourceVersion"])
            initial = {o["metadata"]["name"]: o for o in first["items"]}
            sel = render_selector(selector)
            opts = f"watch=1&allowWatchBookmarks=true&resourceVersion={list_rv}"
            live = raw.watch(f"{base}?{opts}")
            live_sel = raw.watch(f"{base}?{opts}&labelSelector={quote(sel)}")
            try:
                for op in ops:
                    apply_raw(raw, ns, op)
                code, final = raw.json("GET", base)
                final_rv = int(final["metadata"]["resourceVersion"])

                def upto(ev: dict) -> bool:
                    return ev["type"] == "BOOKMARK" and rv_of(ev["object"]) >= final_rv

                got = live.read_until(upto)
                got_sel = live_sel.read_until(upto)
            finally:
                live.close()
                live_sel.close()

            # Bookmarks promise every event up to their RV was sent: nothing older may follow one.
            for stream in (got, got_sel):
                seen = list_rv
                for ev in stream:
                    rv = rv_of(ev["object"])
                    if ev["type"] == "BOOKMARK":
                        assert rv >= seen
                    else:
                        assert rv > seen, f"{ev['type']} at {rv} after RV {seen} was already covered"
                    seen = rv
            events = [e for e in got if e["type"] != "BOOKMARK"]
            assert all(
                e["object"]["kind"] == "ConfigMap" and e["object"]["apiVersion"] == "v1" for e in events
            )
            rvs = [rv_of(e["object"]) for e in events]
            assert len(set(rvs)) == len(rvs)
            if events:
                assert rvs[-1] == final_rv  # only our writes happened in between
            else:
                assert final_rv == list_rv

            replayed = replay(initial, events, list_rv)
            assert {n: state_of(o) for n, o in replayed.items()} == {
                o["metadata"]["name"]: state_of(o) for o in final["items"]
            }

            # The same selection as a filtered watch...
            match = lambda o: selector_matches(selector, o["metadata"].get("labels") or {})  # noqa: E731
            sel_events = [
                (e["type"], e["object"]["metadata"]["name"], state_of(e["object"]))
                for e in got_sel
                if e["type"] != "BOOKMARK"
            ]
            assert sel_events == expected_filtered(initial, events, match)
            # ...and as a filtered list of the final state.
            code, final_sel = raw.json("GET", f"{base}?labelSelector={quote(sel)}")
            assert code == 200
            assert sorted(o["metadata"]["name"] for o in final_sel["items"]) == sorted(
                n for n, o in replayed.items() if match(o)
            )

            # 15-3: resuming from the list RV after the fact replays exactly the same events.
            late = raw.watch(f"{base}?{opts}")
            try:
                again = late.read_until(upto)
            finally:
                late.close()
            assert [e for e in again if e["type"] != "BOOKMARK"] == events

        run()


# -- c) pagination ------------------------------------------------------------------------------------

page_writes = st.lists(
    st.one_of(
        st.tuples(st.just("create"), st.integers(0, 40), data_maps, label_maps, st.just(False)),
        st.tuples(st.just("update"), st.integers(0, 40), data_maps, label_maps),
        st.tuples(st.just("patch"), st.integers(0, 40), data_maps),
        st.tuples(st.just("delete"), st.integers(0, 40)),
    ),
    max_size=3,
)


def test_pagination_is_a_consistent_snapshot():
    """14-3: following continue tokens yields exactly the list at the first page's RV."""
    with APIServer() as server:
        raw = Raw(server)
        counter = itertools.count()

        @SETTINGS
        @given(
            initial=st.lists(st.tuples(data_maps, label_maps), max_size=30),
            limit=st.integers(1, 12),
            between=st.lists(page_writes, max_size=12),
            selector=st.none() | selectors,
            everywhere=st.booleans(),
        )
        def run(
            initial: list[tuple],
            limit: int,
            between: list[list[tuple]],
            selector: list[tuple] | None,
            everywhere: bool,
        ) -> None:
            ns = fresh_namespace(raw, counter)
            base = f"/api/v1/namespaces/{ns}/configmaps"
            for i, (data, labels) in enumerate(initial):
                code, _ = raw.json(
                    "POST", base, {"metadata": {"name": f"o{i:02d}", "labels": labels}, "data": data}
                )
                assert code == 201
            q = f"labelSelector={quote(render_selector(selector))}&" if selector else ""
            # Either this namespace, or all of them (every earlier example's objects too).
            path = "/api/v1/configmaps" if everywhere else base
            code, full = raw.json("GET", f"{path}?{q}")
            assert code == 200
            snap_rv = full["metadata"]["resourceVersion"]
            code, page = raw.json("GET", f"{path}?{q}limit={limit}")
            assert code == 200
            assert page["metadata"]["resourceVersion"] == snap_rv  # nothing was written in between
            items = list(page["items"])
            writes = iter(between)
            while page["metadata"].get("continue"):
                assert 0 < len(page["items"]) <= limit
                if selector:
                    assert "remainingItemCount" not in page["metadata"]
                else:
                    assert page["metadata"]["remainingItemCount"] == len(full["items"]) - len(items)
                for kind, idx, *rest in next(writes, []):
                    apply_raw(raw, ns, (kind, f"o{idx:02d}", *rest))
                token = quote(page["metadata"]["continue"])
                code, page = raw.json("GET", f"{path}?{q}limit={limit}&continue={token}")
                assert code == 200, page
                assert page["metadata"]["resourceVersion"] == snap_rv
                items += page["items"]
            assert len(page["items"]) <= limit
            assert "remainingItemCount" not in page["metadata"]
            assert [(o["metadata"]["name"], state_of(o)) for o in items] == [
                (o["metadata"]["name"], state_of(o)) for o in full["items"]
            ]

        run()


# -- regressions found by the properties above ---------------------------------------------------------


def test_bookmarks_never_overtake_events_under_backpressure():
    """15-6: a bookmark promises every event up to its RV was sent, also to a reader that lags behind.

    A slow reader makes the server's writes wait for the socket; events arriving meanwhile must still
    go out before a bookmark carrying a later RV.
    """
    with APIServer() as server:
        server.bookmark_interval = 0.005
        raw = Raw(server)
        base = "/api/v1/namespaces/default/configmaps"
        start = server.resource_version
        stream = raw.watch(
            f"{base}?watch=1&allowWatchBookmarks=true&resourceVersion={start}", chunk=4096, lag=0.0005
        )
        big = "x" * 50_000
        n = 150

        def write() -> None:
            w = Raw(server)
            for i in range(n):
                code, _ = w.json("POST", base, {"metadata": {"name": f"big-{i}"}, "data": {"k": big}})
                assert code == 201

        writer = threading.Thread(target=write, name="writer")
        writer.start()
        seen, events = start, 0
        try:
            while events < n:
                for ev in stream.read_until(lambda ev: True):
                    rv = rv_of(ev["object"])
                    if ev["type"] == "BOOKMARK":
                        assert rv >= seen
                    else:
                        assert rv > seen, f"event at RV {rv} after a bookmark or event at {seen}"
                        events += 1
                    seen = rv
        finally:
            writer.join(30)
            stream.close()


def test_large_bodies_round_trip():
    """Request bodies arrive in many TCP/TLS records; all of them must be read (1 MiB objects, 7-1)."""
    with APIServer() as server:
        raw = Raw(server)
        counter = itertools.count()

        @SETTINGS
        @given(sizes=st.lists(st.integers(0, 900_000), min_size=1, max_size=3))
        def run(sizes: list[int]) -> None:
            for size in sizes:
                body = {"metadata": {"name": f"big-{next(counter)}"}, "data": {"k": "y" * size}}
                code, created = raw.json("POST", "/api/v1/namespaces/default/configmaps", body)
                assert code == 201, created
                assert len(created["data"]["k"]) == size

        run()
