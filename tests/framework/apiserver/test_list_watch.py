"""Selectors, pagination, resourceVersion semantics and watch (spec §14, §15)."""

from __future__ import annotations

import json
import threading
import time

import pytest
from kubernetes import watch
from kubernetes.client.rest import ApiException


def cm(name: str, labels: dict | None = None, ns: str = "default") -> dict:
    return {"metadata": {"name": name, "labels": labels or {}}, "data": {"k": name}}


def names(lst) -> list[str]:
    return [i.metadata.name for i in lst.items if i.metadata.name != "kube-root-ca.crt"]


def test_label_selectors(core):
    """14-1: equality, inequality (matches missing keys), set-based, exists and not-exists."""
    core.create_namespaced_config_map("default", cm("a", {"env": "prod", "tier": "web"}))
    core.create_namespaced_config_map("default", cm("b", {"env": "dev"}))
    core.create_namespaced_config_map("default", cm("c"))
    sel = lambda s: names(core.list_namespaced_config_map("default", label_selector=s))  # noqa: E731
    assert sel("env=prod") == ["a"]
    assert sel("env==dev") == ["b"]
    assert sel("env!=prod") == ["b", "c"]
    assert sel("env in (prod,dev)") == ["a", "b"]
    assert sel("env notin (prod)") == ["b", "c"]
    assert sel("tier") == ["a"]
    assert sel("!tier") == ["b", "c"]
    assert sel("env=prod,tier=web") == ["a"]
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map("default", label_selector="env in (")
    assert e.value.status == 400


def test_field_selectors(core):
    """14-2: metadata.name / metadata.namespace; unsupported fields are 400."""
    core.create_namespaced_config_map("default", cm("a"))
    core.create_namespaced_config_map("default", cm("b"))
    assert names(core.list_namespaced_config_map("default", field_selector="metadata.name=b")) == ["b"]
    assert names(core.list_namespaced_config_map("default", field_selector="metadata.name!=b")) == ["a"]
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map("default", field_selector="spec.foo=bar")
    assert e.value.status == 400
    assert '"spec.foo" is not a known field selector' in json.loads(e.value.body)["message"]
    phases = core.list_namespace(field_selector="status.phase=Active")
    assert "default" in [n.metadata.name for n in phases.items]


def test_pagination_snapshot(core):
    """14-3: limit/continue with remainingItemCount; continuation pages show the first page's snapshot."""
    for i in range(5):
        core.create_namespaced_config_map("default", cm(f"p{i}"))
    first = core.list_namespaced_config_map("default", limit=2)
    assert len(first.items) == 2
    assert first.metadata.remaining_item_count == 4  # 5 + kube-root-ca.crt - 2
    core.delete_namespaced_config_map("p4", "default")
    core.create_namespaced_config_map("default", cm("p9"))
    rest, token = [], first.metadata._continue
    while token:
        page = core.list_namespaced_config_map("default", limit=2, _continue=token)
        assert page.metadata.resource_version == first.metadata.resource_version
        rest += [i.metadata.name for i in page.items]
        token = page.metadata._continue
    assert rest == ["p1", "p2", "p3", "p4"]  # p4 still there at the snapshot, p9 not yet


def test_bad_continue_and_expired_continue(apiserver, core):
    """14-3: malformed token 400; a token older than the history window 410."""
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map("default", limit=1, _continue="garbage!!")
    assert e.value.status == 400 and "continue key is not valid" in json.loads(e.value.body)["message"]
    for i in range(3):
        core.create_namespaced_config_map("default", cm(f"x{i}"))
    first = core.list_namespaced_config_map("default", limit=1)
    core.create_namespaced_config_map("default", cm("later"))
    apiserver.compact()
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map("default", limit=1, _continue=first.metadata._continue)
    st = json.loads(e.value.body)
    assert e.value.status == 410 and st["reason"] == "Expired"
    assert st["message"].startswith("The provided continue parameter is too old")


def test_resource_version_match_rules(core, raw):
    """14-4: option validation and exact reads within the history window."""
    a = core.create_namespaced_config_map("default", cm("a"))
    core.patch_namespaced_config_map("a", "default", {"data": {"k": "changed"}})
    code, body = raw.json(
        "GET",
        f"/api/v1/namespaces/default/configmaps?resourceVersion={a.metadata.resource_version}"
        "&resourceVersionMatch=Exact",
    )
    assert code == 200
    old = next(i for i in body["items"] if i["metadata"]["name"] == "a")
    assert old["data"] == {"k": "a"}
    assert body["metadata"]["resourceVersion"] == a.metadata.resource_version
    code, body = raw.json("GET", "/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact")
    assert code == 422
    assert body["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided"
    )
    assert body["details"]["group"] == "meta.k8s.io" and body["details"]["kind"] == "ListOptions"
    code, body = raw.json("GET", "/api/v1/namespaces/default/configmaps?sendInitialEvents=true")
    assert code == 422


def test_exact_too_old_is_410(apiserver, raw):
    raw.json("POST", "/api/v1/namespaces/default/configmaps", cm("a"))
    rv = apiserver.resource_version
    raw.json("POST", "/api/v1/namespaces/default/configmaps", cm("b"))
    apiserver.compact()
    code, body = raw.json(
        "GET", f"/api/v1/namespaces/default/configmaps?resourceVersion={rv}&resourceVersionMatch=Exact"
    )
    assert code == 410 and body["message"] == "The resourceVersion for the provided list is too old."


def test_future_resource_version_is_504(apiserver, raw):
    apiserver.future_rv_wait = 0.3
    rv = apiserver.resource_version + 1000
    code, body = raw.json(
        "GET", f"/api/v1/namespaces/default/configmaps?resourceVersion={rv}&resourceVersionMatch=NotOlderThan"
    )
    assert code == 504 and body["reason"] == "Timeout"
    assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


@pytest.mark.parametrize("rv", ["18446744073709551616", "99999999999999999999999", "-1", "x"])
def test_a_resource_version_no_uint64_holds_is_invalid_not_a_timeout(raw, rv):
    """The storage parses resourceVersion as a uint64: what does not parse is a malformed request (422),
    not a version from the future waited for (504)."""
    code, body = raw.json("GET", f"/api/v1/namespaces/default/configmaps?resourceVersion={rv}")
    assert (code, body["reason"]) == (422, "Invalid"), body
    assert body["details"]["causes"][0]["field"] == "resourceVersion"


def _stream(raw, path: str, stop_after: int, timeout: float = 5.0) -> list[dict]:
    r = raw.stream(path, timeout=timeout)
    assert r.status == 200
    assert r.headers["Content-Type"] == "application/json"
    assert r.headers.get("Transfer-Encoding") == "chunked"
    events, buf = [], b""
    for chunk in r.stream(1024, decode_content=False):
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            events.append(json.loads(line))
            if len(events) >= stop_after:
                r.close()
                return events
    return events


def test_watch_from_rv_gets_exactly_later_events(core, raw):
    """15-2, 15-3: every change after RV, in order, nothing synthetic."""
    a = core.create_namespaced_config_map("default", cm("a"))
    core.patch_namespaced_config_map("a", "default", {"data": {"k": "1"}})
    core.create_namespaced_config_map("default", cm("b"))
    core.delete_namespaced_config_map("a", "default")
    ev = _stream(
        raw,
        f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={a.metadata.resource_version}",
        3,
    )
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in ev] == [
        ("MODIFIED", "a"),
        ("ADDED", "b"),
        ("DELETED", "a"),
    ]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in ev]
    assert rvs == sorted(rvs) and rvs[0] > int(a.metadata.resource_version)
    assert ev[0]["object"]["kind"] == "ConfigMap" and ev[0]["object"]["apiVersion"] == "v1"


def test_watch_without_rv_sends_synthetic_added(core, raw):
    core.create_namespaced_config_map("default", cm("a"))
    ev = _stream(raw, "/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Da", 1)
    assert ev[0]["type"] == "ADDED" and ev[0]["object"]["metadata"]["name"] == "a"


def test_watch_selector_transitions(core, raw):
    """15-4: entering the selection is ADDED, leaving it DELETED with the previous content."""
    c = core.create_namespaced_config_map("default", cm("a", {"x": "no"}))
    core.patch_namespaced_config_map("a", "default", {"metadata": {"labels": {"x": "yes"}}})
    core.patch_namespaced_config_map(
        "a", "default", {"metadata": {"labels": {"x": "yes"}}, "data": {"k": "2"}}
    )
    left = core.patch_namespaced_config_map("a", "default", {"metadata": {"labels": {"x": "no"}}})
    ev = _stream(
        raw,
        f"/api/v1/namespaces/default/configmaps?watch=1&labelSelector=x%3Dyes"
        f"&resourceVersion={c.metadata.resource_version}",
        3,
    )
    assert [e["type"] for e in ev] == ["ADDED", "MODIFIED", "DELETED"]
    assert ev[2]["object"]["metadata"]["labels"] == {"x": "yes"}
    assert ev[2]["object"]["metadata"]["resourceVersion"] == left.metadata.resource_version


def test_watch_too_old_is_error_event(apiserver, core, raw):
    """15-2: HTTP 200 then one ERROR event carrying a 410 Status."""
    a = core.create_namespaced_config_map("default", cm("a"))
    core.create_namespaced_config_map("default", cm("b"))
    apiserver.compact()
    ev = _stream(
        raw, f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={a.metadata.resource_version}", 1
    )
    assert ev[0]["type"] == "ERROR"
    st = ev[0]["object"]
    assert (
        st["code"] == 410
        and st["reason"] == "Expired"
        and st["message"].startswith("too old resource version")
    )


def test_watch_window_by_count():
    """15-7: a small window expires old starting points."""
    from kubernetes import client

    from framework.testing import APIServer

    with APIServer(watch_cache_size=3) as server:
        core = client.CoreV1Api(server.api_client())
        first = core.create_namespaced_config_map("default", cm("w0"))
        for i in range(1, 6):
            core.create_namespaced_config_map("default", cm(f"w{i}"))
        w = watch.Watch()
        with pytest.raises(ApiException) as e:
            for _ in w.stream(
                core.list_namespaced_config_map,
                "default",
                resource_version=first.metadata.resource_version,
                timeout_seconds=2,
            ):
                pass
        assert e.value.status == 410


def test_watch_bookmarks_only_when_asked(apiserver, raw):
    """15-6: bookmarks carry only the RV; none unless allowWatchBookmarks."""
    apiserver.bookmark_interval = 0.2
    ev = _stream(
        raw,
        "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true"
        "&fieldSelector=metadata.name%3Dnone",
        1,
    )
    assert ev[0]["type"] == "BOOKMARK"
    assert ev[0]["object"] == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": str(apiserver.resource_version)},
    }
    ev = _stream(
        raw,
        "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dnone",
        1,
    )
    assert ev == []


def test_watch_timeout_ends_stream(raw):
    """15-9."""
    start = time.monotonic()
    ev = _stream(raw, "/api/v1/namespaces?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dnone", 10)
    assert ev == [] and time.monotonic() - start < 4


def test_send_initial_events(core, raw):
    """15-8: watch-list sends ADDED for the state then an annotated bookmark."""
    core.create_namespaced_config_map("default", cm("a"))
    path = (
        "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
        "&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Da"
    )
    ev = _stream(raw, path, 2)
    assert ev[0]["type"] == "ADDED"
    assert ev[1]["type"] == "BOOKMARK"
    assert ev[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    code, body = raw.json("GET", "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true")
    assert (
        code == 422
        and "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan" in body["message"]
    )


def test_drop_watches_ends_streams(apiserver, raw):
    got: list = []

    def run() -> None:
        got.append(
            _stream(
                raw, "/api/v1/namespaces?watch=1&resourceVersion=" + str(apiserver.resource_version), 5, 10
            )
        )

    t = threading.Thread(target=run, name="watch-reader")
    t.start()
    time.sleep(0.3)
    apiserver.drop_watches()
    t.join(5)
    assert not t.is_alive() and got == [[]]


def test_python_client_watch_stream(core):
    """23-2: the official client's watch sees our events."""
    lst = core.list_namespaced_config_map("default")
    core.create_namespaced_config_map("default", cm("w"))
    w = watch.Watch()
    seen = []
    for e in w.stream(
        core.list_namespaced_config_map,
        "default",
        resource_version=lst.metadata.resource_version,
        timeout_seconds=2,
    ):
        seen.append((e["type"], e["object"].metadata.name))
        w.stop()
    assert seen == [("ADDED", "w")]
