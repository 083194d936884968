"""RESTMapper unit tests on canned discovery documents: caching, refresh on a miss, errors, paths."""

from __future__ import annotations

import threading

import pytest

from framework.client import NoKindMatchError, NoResourceMatchError, NotFound, RESTMapper
from framework.client.rest_mapper import split_api_version

CORE = {
    "kind": "APIResourceList",
    "groupVersion": "v1",
    "resources": [
        {
            "name": "configmaps",
            "singularName": "configmap",
            "namespaced": True,
            "kind": "ConfigMap",
            "verbs": ["get", "list", "watch"],
            "shortNames": ["cm"],
        },
        {
            "name": "namespaces",
            "singularName": "namespace",
            "namespaced": False,
            "kind": "Namespace",
            "verbs": ["get", "list"],
        },
        {
            "name": "namespaces/status",
            "singularName": "",
            "namespaced": False,
            "kind": "Namespace",
            "verbs": ["get", "patch", "update"],
        },
        {
            "name": "namespaces/finalize",
            "singularName": "",
            "namespaced": False,
            "kind": "Namespace",
            "verbs": ["update"],
        },
    ],
}
WIDGETS = {
    "kind": "APIResourceList",
    "groupVersion": "example.com/v1",
    "resources": [
        {"name": "widgets", "singularName": "widget", "namespaced": True, "kind": "Widget", "verbs": ["get"]},
        {
            "name": "widgets/status",
            "singularName": "",
            "namespaced": True,
            "kind": "Widget",
            "verbs": ["get"],
        },
    ],
}


class Discovery:
    def __init__(self) -> None:
        self.docs: dict[str, dict] = {"/api/v1": CORE}
        self.calls: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, path: str) -> dict:
        with self.lock:
            self.calls.append(path)
        if path not in self.docs:
            raise NotFound(404, "NotFound", "the server could not find the requested resource")
        return self.docs[path]


def test_mapping_is_cached():
    d = Discovery()
    m = RESTMapper(d)
    cm = m.mapping("v1", "ConfigMap")
    assert (cm.resource, cm.namespaced, cm.short_names, cm.api_version) == ("configmaps", True, ("cm",), "v1")
    ns = m.mapping("v1", "Namespace")
    assert ns.subresources == frozenset({"status", "finalize"}) and not ns.namespaced
    assert m.mapping_for_resource("v1", "namespaces") is ns
    assert d.calls == ["/api/v1"]


def test_miss_refreshes_and_finds_new_kinds():
    d = Discovery()
    m = RESTMapper(d)
    with pytest.raises(NoKindMatchError, match=r'no matches for kind "Widget" in version "example\.com/v1"'):
        m.mapping("example.com/v1", "Widget")
    d.docs["/apis/example.com/v1"] = WIDGETS  # the CRD got established
    w = m.mapping("example.com/v1", "Widget")
    assert (w.group, w.version, w.resource, w.subresources) == (
        "example.com",
        "v1",
        "widgets",
        frozenset({"status"}),
    )
    assert w.qualified_resource == "widgets.example.com"
    # An unknown kind in a known group/version refreshes that group/version once per lookup.
    calls = len(d.calls)
    with pytest.raises(NoKindMatchError):
        m.mapping("v1", "Pod")
    assert len(d.calls) == calls + 1
    with pytest.raises(NoResourceMatchError):
        m.mapping_for_resource("v1", "pods")
    m.invalidate("v1")
    m.mapping("v1", "ConfigMap")
    assert d.calls[-1] == "/api/v1"


def test_concurrent_lookups():
    d = Discovery()
    d.docs["/apis/example.com/v1"] = WIDGETS
    m = RESTMapper(d)
    results: list[str] = []

    def look() -> None:
        for _ in range(200):
            results.append(m.mapping("example.com/v1", "Widget").resource)
            results.append(m.mapping("v1", "ConfigMap").resource)

    threads = [threading.Thread(target=look) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(results) == {"widgets", "configmaps"} and len(results) == 3200
    assert len(d.calls) <= 16  # at most one fetch per thread and group/version before the cache fills


def test_paths_and_api_versions():
    m = RESTMapper(Discovery())
    cm = m.mapping("v1", "ConfigMap")
    assert cm.path() == "/api/v1/configmaps"
    assert cm.path("default") == "/api/v1/namespaces/default/configmaps"
    assert cm.path("default", "a") == "/api/v1/namespaces/default/configmaps/a"
    ns = m.mapping("v1", "Namespace")
    assert ns.path(None, "x", "finalize") == "/api/v1/namespaces/x/finalize"
    assert ns.path(None, "system:node") == "/api/v1/namespaces/system:node"
    with pytest.raises(ValueError):
        cm.path("default", None, "status")
    assert split_api_version("v1") == ("", "v1")
    assert split_api_version("apps/v1") == ("apps", "v1")
    for bad in ("", "/v1", "apps/"):
        with pytest.raises(ValueError):
            split_api_version(bad)
