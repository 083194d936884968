"""One Reader contract: the live ``Client``, the manager's cache (``mgr.cache``, a Reader plus informers)
and the manager's client (the live client with that cache in front of its reads) answer every read
with the same result and fail every bad read with the same error; both clients write to the API
server."""

from __future__ import annotations

import threading

import pytest

from framework.client import Client, Conflict, NoKindMatchError, NotFound, Reader, ReaderWriter, Writer
from framework.manager import Manager
from framework.testing import consistently, eventually

SEED = [
    ("team-a", "a1", {"app": "web", "tier": "front"}),
    ("team-a", "a2", {"app": "db", "tier": "back"}),
    ("team-a", "a3", {}),
    ("team-b", "b1", {"app": "web", "tier": "back"}),
]


@pytest.fixture
def admin(apiserver):
    c = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    for ns in ("team-a", "team-b"):
        c.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"team": ns}}})
    for ns, name, labels in SEED:
        c.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": ns, "labels": labels},
                "data": {"k": name},
            }
        )
    # The server's root-CA publisher adds a ConfigMap to each namespace: let it land before any read,
    # so the cache and a later live list see the same objects.
    for ns in ("team-a", "team-b"):
        eventually(lambda ns=ns: c.get("v1", "ConfigMap", "kube-root-ca.crt", ns), ignore=(NotFound,))
    yield c
    c.close()


@pytest.fixture
def mgr(admin):
    m = Manager(admin)
    yield m
    m.cache.stop()


@pytest.fixture(params=["live", "cache", "cached-client"])
def reader(request, admin, mgr):
    """Each Reader: the live client, the manager's cache, the manager's client."""
    return {"live": admin, "cache": mgr.cache, "cached-client": mgr.client}[request.param]


@pytest.fixture(params=["live", "cached-client"])
def client(request, admin, mgr):
    """Each client (Reader and Writer): the live one and the manager's."""
    return admin if request.param == "live" else mgr.client


def comparable(obj: dict) -> dict:
    """An object without managedFields (the cache drops them by default)."""
    out = dict(obj, metadata=dict(obj["metadata"]))
    out["metadata"].pop("managedFields", None)
    return out


def names(result: dict) -> list[str]:
    """``namespace/name`` of the listed objects, without the server's own root-CA ConfigMaps."""
    return sorted(
        f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}"
        for o in result["items"]
        if o["metadata"]["name"] != "kube-root-ca.crt"
    )


def test_both_clients_implement_the_protocols(admin, mgr):
    for c in (admin, mgr.client):
        assert isinstance(c, Reader) and isinstance(c, Writer) and isinstance(c, ReaderWriter)
    # The cache is a Reader, not a Writer: nothing writes through it.
    assert isinstance(mgr.cache, Reader) and not isinstance(mgr.cache, Writer)
    # The manager's client is the live client with the cache in front of its reads.
    assert isinstance(mgr.client, Client) and mgr.client.cache is mgr.cache and admin.cache is None


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"namespace": "team-a"},
        {"label_selector": "app=web"},
        {"label_selector": "app in (web,db),tier!=front"},
        {"label_selector": "!app"},
        {"label_selector": {"app": "web"}},
        {"label_selector": {"matchLabels": {"app": "web"}}},
        {"label_selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["back"]}]}},
        {"label_selector": {"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}},
        {"namespace": "team-a", "label_selector": {"tier": "back"}},
        {"field_selector": "metadata.name=a2"},
        {"field_selector": {"metadata.namespace": "team-b"}},
        {"namespace": "team-a", "field_selector": "metadata.namespace=team-b"},
        {"field_selector": "metadata.name==b1,metadata.namespace=team-b", "label_selector": "app=web"},
    ],
    ids=repr,
)
@pytest.mark.parametrize("cached_reader", ["cache", "client"])
def test_list_answers_alike(admin, mgr, args, cached_reader):
    live = admin.list("v1", "ConfigMap", **args)
    cached = (mgr.cache if cached_reader == "cache" else mgr.client).list("v1", "ConfigMap", **args)
    assert cached["apiVersion"] == live["apiVersion"] == "v1"
    assert cached["kind"] == live["kind"] == "ConfigMapList"
    assert cached["metadata"]["resourceVersion"]
    assert sorted(map(str, map(comparable, live["items"]))) == sorted(
        map(str, map(comparable, cached["items"]))
    )
    seeded = {"team-a/a1", "team-a/a2", "team-a/a3", "team-b/b1"}
    got = set(names(live)) & seeded
    if args.get("namespace") == "team-a" and "field_selector" in args:
        assert got == set()  # namespace and field selector disagree: nothing
    else:
        assert got, "the case must select something to prove anything"


def test_expected_selections(reader):
    ns_a = {"namespace": "team-a"}
    assert names(reader.list("v1", "ConfigMap", **ns_a)) == ["team-a/a1", "team-a/a2", "team-a/a3"]
    assert names(reader.list("v1", "ConfigMap", label_selector={"app": "web"})) == ["team-a/a1", "team-b/b1"]
    assert names(reader.list("v1", "ConfigMap", "team-a", label_selector="!app")) == ["team-a/a3"]
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["front"]}],
    }
    assert names(reader.list("v1", "ConfigMap", label_selector=selector)) == ["team-b/b1"]
    assert names(reader.list("v1", "Namespace", label_selector={"team": "team-b"})) == ["/team-b"]


@pytest.mark.parametrize("cached_reader", ["cache", "client"])
def test_get_answers_alike(admin, mgr, cached_reader):
    cache = mgr.cache if cached_reader == "cache" else mgr.client
    for kind, name, ns in (("ConfigMap", "a1", "team-a"), ("Namespace", "team-b", None)):
        live, cached = admin.get("v1", kind, name, ns), cache.get("v1", kind, name, ns)
        assert comparable(live) == comparable(cached)
        assert cached["metadata"]["name"] == name and cached["kind"] == kind
    assert cached["metadata"]["labels"]["team"] == "team-b"


def test_metadata_only_reads_alike(admin, mgr, reader):
    obj = reader.get("v1", "ConfigMap", "a1", "team-a", metadata_only=True)
    assert (obj["apiVersion"], obj["kind"]) == ("v1", "ConfigMap")
    assert "data" not in obj and obj["metadata"]["labels"] == {"app": "web", "tier": "front"}
    listed = reader.list("v1", "ConfigMap", "team-a", label_selector="app=web", metadata_only=True)
    assert listed["kind"] == "ConfigMapList"
    ((item),) = listed["items"]
    assert (item["apiVersion"], item["kind"], item["metadata"]["name"]) == ("v1", "ConfigMap", "a1")
    assert "data" not in item


def test_missing_objects_are_not_found_alike(admin, mgr):
    errors = []
    for c in (admin, mgr.cache, mgr.client):
        with pytest.raises(NotFound) as err:
            c.get("v1", "ConfigMap", "nope", "team-a")
        errors.append((err.value.status, err.value.reason, err.value.message, err.value.details.get("kind")))
    assert (
        errors[0] == errors[1] == errors[2] == (404, "NotFound", 'configmaps "nope" not found', "configmaps")
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.get("v1", "ConfigMap", "a1"), "ConfigMap (v1) is namespaced: a namespace is required"),
        (
            lambda c: c.get("v1", "ConfigMap", "a1", ""),
            "ConfigMap (v1) is namespaced: a namespace is required",
        ),
        (
            lambda c: c.get("v1", "Namespace", "team-a", "team-a"),
            "Namespace (v1) is cluster-scoped: namespace must be None, not 'team-a'",
        ),
        (
            lambda c: c.list("v1", "Namespace", "team-a"),
            "Namespace (v1) is cluster-scoped: namespace must be None, not 'team-a'",
        ),
    ],
)
def test_scope_errors_alike(reader, call, message):
    # A forgotten namespace is a programming error in both, never "object deleted" (NotFound).
    with pytest.raises(ValueError) as err:
        call(reader)
    assert str(err.value) == message


def test_unknown_kind_alike(reader):
    with pytest.raises(NoKindMatchError):
        reader.get("example.com/v1", "Nothing", "x", "team-a")
    with pytest.raises(NoKindMatchError):
        reader.list("example.com/v1", "Nothing")


def test_bad_label_selector_map_fails_before_any_request(reader):
    bad = {"matchExpressions": [{"key": "app", "operator": "Near", "values": ["x"]}]}
    with pytest.raises(ValueError, match="not a valid label selector operator"):
        reader.list("v1", "ConfigMap", label_selector=bad)


def test_cached_field_selectors_use_field_indexes(mgr):
    mgr.add_field_index("v1", "ConfigMap", "data.k", lambda o: [(o.get("data") or {}).get("k", "")])
    assert names(mgr.client.list("v1", "ConfigMap", field_selector={"data.k": "b1"})) == ["team-b/b1"]
    assert names(mgr.client.list("v1", "ConfigMap", "team-a", field_selector="data.k=b1")) == []
    with pytest.raises(ValueError, match=r"has no index 'data\.x'; register one with add_field_index"):
        mgr.client.list("v1", "ConfigMap", field_selector="data.x=1")
    with pytest.raises(ValueError, match="only exact matches"):
        mgr.client.list("v1", "ConfigMap", field_selector="data.k!=b1")


def test_writes_pass_through(apiserver, admin, client):
    reader = client
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w", "namespace": "team-a"}}
    created = reader.create(cm)
    assert admin.get("v1", "ConfigMap", "w", "team-a")["metadata"]["uid"] == created["metadata"]["uid"]
    created["data"] = {"x": "1"}
    updated = reader.update(created)
    with pytest.raises(Conflict):
        reader.update(created)  # stale resourceVersion
    patched = reader.patch("v1", "ConfigMap", "w", {"data": {"y": "2"}}, "team-a")
    assert patched["data"] == {"x": "1", "y": "2"}
    assert patched["metadata"]["resourceVersion"] != updated["metadata"]["resourceVersion"]
    reader.delete("v1", "ConfigMap", "w", "team-a")
    with pytest.raises(NotFound):
        admin.get("v1", "ConfigMap", "w", "team-a")
    reader.delete_collection("v1", "ConfigMap", "team-a", label_selector={"app": "db"})
    assert names(admin.list("v1", "ConfigMap", "team-a")) == ["team-a/a1", "team-a/a3"]


def test_server_side_apply(admin, client):
    reader = client
    desired = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "applied", "namespace": "team-a"},
        "data": {"owner": "one"},
    }
    first = reader.apply(desired, field_owner="controller-one")
    assert first["data"] == {"owner": "one"}
    managers = {
        m["manager"] for m in admin.get("v1", "ConfigMap", "applied", "team-a")["metadata"]["managedFields"]
    }
    assert managers == {"controller-one"}
    # Another manager setting the same field differently conflicts, unless it forces ownership.
    other = dict(desired, data={"owner": "two"})
    with pytest.raises(Conflict):
        reader.apply(other, field_owner="controller-two")
    assert admin.get("v1", "ConfigMap", "applied", "team-a")["data"] == {"owner": "one"}
    forced = reader.apply(other, field_owner="controller-two", force=True)
    assert forced["data"] == {"owner": "two"}
    with pytest.raises(ValueError, match=r"apply needs metadata\.name"):
        reader.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}, field_owner="x")


def test_cached_reads_follow_writes(admin, mgr):
    created = admin.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late", "namespace": "team-b"}}
    )
    mgr.client.list("v1", "ConfigMap")  # informer started
    listed = eventually(
        lambda: "team-b/late" in names(mgr.client.list("v1", "ConfigMap", "team-b")),
        message="cache sees late",
    )
    assert listed
    assert (
        mgr.client.get("v1", "ConfigMap", "late", "team-b")["metadata"]["uid"] == created["metadata"]["uid"]
    )


GIZMO_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gizmos.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "gizmos", "kind": "Gizmo"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


def test_cached_read_of_a_watched_kind_waits_for_its_crd(apiserver, mgr):
    # A controller watches Gizmos (its informer exists) before the CRD is installed: a read from a
    # handler waits for the informer instead of failing, as an unwatched unknown kind does.
    mgr.cache.informer("example.com/v1", "Gizmo")
    result: list = []
    t = threading.Thread(
        target=lambda: result.append(mgr.client.list("example.com/v1", "Gizmo")), name="reader"
    )
    t.start()
    consistently(lambda: t.is_alive() and not result, duration=0.3, message="the read waits for the CRD")
    apiserver.install_crds([GIZMO_CRD])
    t.join(30)
    assert not t.is_alive()
    assert result and result[0]["kind"] == "GizmoList" and result[0]["items"] == []


def test_disable_for_kinds_read_live(admin, apiserver):
    """``Manager(disable_for=[...])``: those kinds are read live (no informer, a write is seen at once),
    the others from the cache; ``reading_live`` adds kinds to a cached client's live ones."""
    mgr = Manager(admin, disable_for=[("v1", "Secret")])
    try:
        secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "team-a"}}
        created = admin.create(secret)
        got = mgr.client.get("v1", "Secret", "s", "team-a")
        assert got["metadata"]["uid"] == created["metadata"]["uid"]
        assert "managedFields" in got["metadata"]  # as served: the cache would have dropped them
        assert not mgr.cache.has_informer("v1", "Secret")
        mgr.client.get("v1", "ConfigMap", "a1", "team-a")
        assert mgr.cache.has_informer("v1", "ConfigMap")
        # Live-only options are refused for cached kinds rather than silently ignored ...
        with pytest.raises(ValueError, match="limit: not served by the cache"):
            mgr.client.list("v1", "ConfigMap", limit=1)
        with pytest.raises(ValueError, match="subresource: not served by the cache"):
            mgr.client.get("v1", "ConfigMap", "a1", "team-a", subresource="status")
        # ... and served for kinds read live.
        assert len(mgr.client.list("v1", "Secret", "team-a", limit=1)["items"]) == 1
        namespaces_live = mgr.client.reading_live(("v1", "Namespace"))
        assert namespaces_live.disable_for == {("v1", "Secret"), ("v1", "Namespace")}
        assert namespaces_live.list("v1", "Namespace", limit=1)["metadata"].get("continue")
        assert admin.reading_live(("v1", "Namespace")) is admin  # a live client reads live already
    finally:
        mgr.cache.stop()


def test_cache_reads_of_unwatched_kinds_start_an_informer(admin, mgr):
    """As controller-runtime's informer cache: the first read of a kind without an informer starts one
    and waits for it to sync; an unknown kind raises and starts none."""
    assert not mgr.cache.has_informer("v1", "ConfigMap")
    assert "team-a/a1" in names(mgr.cache.list("v1", "ConfigMap", "team-a"))
    assert mgr.cache.has_informer("v1", "ConfigMap")
    assert mgr.cache.informer("v1", "ConfigMap").has_synced()
    with pytest.raises(NoKindMatchError):
        mgr.cache.get("example.com/v1", "Nothing", "x", "team-a")
    assert not mgr.cache.has_informer("example.com/v1", "Nothing")
