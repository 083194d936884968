"""Builder: what can never work fails at build time with a clear error, not in a worker later."""

from __future__ import annotations

import pytest

from framework.builder import Builder
from framework.client import Client
from framework.handler import EnqueueRequestsFromMapFunc
from framework.manager import Manager
from framework.predicate import Funcs, GenerationChangedPredicate
from framework.reconcile import Func, Request


@pytest.fixture
def mgr(apiserver):
    return Manager(Client.from_kubeconfig(apiserver.kubeconfig, qps=0))


def noop(request: Request) -> None:
    return None


def test_complete_takes_a_reconciler_or_a_plain_function(mgr):
    class Rec:
        def reconcile(self, request):
            return None

    rec = Rec()
    assert Builder(mgr).named("obj").for_("v1", "ConfigMap").complete(rec).reconciler is rec
    ctrl = Builder(mgr).named("fn").for_("v1", "ConfigMap").complete(noop)
    assert isinstance(ctrl.reconciler, Func) and ctrl.reconciler.fn is noop


def test_complete_rejects_async_and_non_callable_reconcilers(mgr):
    async def reconcile(request):
        return None

    class AsyncRec:
        async def reconcile(self, request):
            return None

    for bad, match in (
        (reconcile, "reconcile function .*reconcile is async; controllers run on threads"),
        (AsyncRec(), "AsyncRec.reconcile .*is async"),
        ("not a reconciler", "must have a reconcile\\(request\\) method or be a function"),
        (None, "must have a reconcile\\(request\\) method or be a function"),
    ):
        with pytest.raises(TypeError, match=match):
            Builder(mgr).for_("v1", "ConfigMap").complete(bad)
    assert mgr.cache.factory.informers() == {}  # nothing was wired


def test_an_async_map_function_is_rejected_when_the_handler_is_made(mgr):
    async def to_requests(obj):
        return []

    with pytest.raises(TypeError, match=r"map function .*to_requests is async"):
        Builder(mgr).for_("v1", "ConfigMap").watches("v1", "Secret", EnqueueRequestsFromMapFunc(to_requests))


def test_watch_arguments_of_the_wrong_type(mgr):
    b = Builder(mgr).for_("v1", "ConfigMap")
    with pytest.raises(TypeError, match="EnqueueRequestsFromMapFunc"):
        b.watches("v1", "Secret", lambda obj: [Request("a")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"predicate\.Funcs"):
        b.owns("v1", "Secret", predicates=[lambda obj: True])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="predicates must be a list of Predicate"):
        b.owns("v1", "Secret", predicates=GenerationChangedPredicate())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a predicate must be a Predicate"):
        b.with_event_filter("not a predicate")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="apiVersion and kind must be non-empty strings"):
        b.owns("v1", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="controller name"):
        b.named("")
    b.owns("v1", "Secret", predicates=[Funcs(create=lambda obj: True)])  # the right types pass


def test_for_once_and_before_complete(mgr):
    with pytest.raises(ValueError, match="for_\\(\\) or named\\(\\) must be called before complete"):
        Builder(mgr).complete(noop)
    with pytest.raises(ValueError, match="for_\\(\\) or named\\(\\) must be called before complete"):
        Builder(mgr).watches("v1", "Secret", EnqueueRequestsFromMapFunc(lambda o: [])).complete(noop)
    with pytest.raises(ValueError, match="only be called once"):
        Builder(mgr).for_("v1", "ConfigMap").for_("v1", "Secret")


def test_options_are_checked_at_complete(mgr):
    with pytest.raises(ValueError, match="max_concurrent_reconciles"):
        Builder(mgr).for_("v1", "ConfigMap").with_options(max_concurrent_reconciles=0).complete(noop)
    with pytest.raises(ValueError, match="reconcile_timeout"):
        Builder(mgr).for_("v1", "ConfigMap").with_options(reconcile_timeout=-1).complete(noop)


def test_duplicate_controller_names_raise_unless_skipped(mgr):
    Builder(mgr).for_("v1", "ConfigMap").complete(noop)  # named "configmap" after the kind
    with pytest.raises(ValueError, match="controller with name 'configmap' already exists"):
        Builder(mgr).for_("v1", "ConfigMap").complete(noop)
    with pytest.raises(ValueError, match="already exists"):
        Builder(mgr).named("configmap").for_("v1", "Secret").complete(noop)
    ctrl = Builder(mgr).for_("v1", "ConfigMap").with_options(skip_name_validation=True).complete(noop)
    assert ctrl.name == "configmap"
    Builder(mgr).named("other").for_("v1", "ConfigMap").complete(noop)


def test_names_are_per_manager(apiserver):
    for _ in range(2):
        m = Manager(Client.from_kubeconfig(apiserver.kubeconfig, qps=0))
        Builder(m).named("same").for_("v1", "ConfigMap").complete(noop)


def test_an_inline_for_watch_reconciles_without_a_handler_thread(apiserver, mgr):
    """``for_(..., inline=True)``: the predicates and the enqueue run on the informer's thread; the
    controller reconciles creates as with a threaded handler, and no handler thread exists."""
    import threading

    from framework.testing import eventually

    seen: list[str] = []
    Builder(mgr).named("inline").for_(
        "v1", "ConfigMap", predicates=[Funcs(update=lambda old, new: False)], inline=True
    ).complete(lambda request: seen.append(request.name))
    runner = threading.Thread(target=mgr.start, name="manager", daemon=True)
    runner.start()
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    try:
        client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}}
        )
        eventually(lambda: "a" in seen, message="a reconciled")
        client.patch("v1", "ConfigMap", "a", {"data": {"k": "v"}}, "default")  # filtered by the predicate
        client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "default"}}
        )
        eventually(lambda: "b" in seen, message="b reconciled")
        assert seen.count("a") == 1
        handlers = [t.name for t in threading.enumerate() if "ConfigMap" in t.name and "-handler-" in t.name]
        assert handlers == []
    finally:
        mgr.stop()
        runner.join(15)
        client.close()
    assert not runner.is_alive()


def test_named_without_for_needs_a_watch_and_no_owns(mgr):
    # As controller-runtime: Owns() needs For() (whose requests would it enqueue?), and a controller
    # without any watch would never be triggered.
    with pytest.raises(ValueError, match=r"owns\(\) needs for_\(\)"):
        Builder(mgr).named("orphan").owns("v1", "ConfigMap").complete(noop)
    with pytest.raises(ValueError, match=r"without for_\(\) needs watches\(\)"):
        Builder(mgr).named("idle").complete(noop)
    ctrl = (
        Builder(mgr)
        .named("watcher")
        .watches("v1", "Secret", EnqueueRequestsFromMapFunc(lambda o: []))
        .complete(noop)
    )
    assert ctrl.name == "watcher"


def test_named_without_for_still_refuses_a_duplicate_name(mgr):
    handler = EnqueueRequestsFromMapFunc(lambda o: [])
    Builder(mgr).named("watcher").watches("v1", "Secret", handler).complete(noop)
    with pytest.raises(ValueError, match="controller with name 'watcher' already exists"):
        Builder(mgr).named("watcher").watches("v1", "ConfigMap", handler).complete(noop)
    Builder(mgr).named("secret").watches("v1", "Secret", handler).complete(noop)
    with pytest.raises(ValueError, match="controller with name 'secret' already exists"):
        Builder(mgr).for_("v1", "Secret").complete(noop)  # named "secret" after its kind


def test_a_watches_only_controller_reconciles_what_its_handler_maps(apiserver, mgr):
    """``named`` + ``watches`` without ``for_``: each ConfigMap event is mapped to a request for its
    ``owner`` label; ConfigMaps without one reconcile nothing."""
    import threading

    from framework.testing import eventually

    seen: list[tuple[str | None, str]] = []

    def to_owner(obj: dict) -> list[Request]:
        owner = (obj["metadata"].get("labels") or {}).get("owner")
        return [Request(owner, "owners")] if owner else []

    Builder(mgr).named("owner-watcher").watches(
        "v1", "ConfigMap", EnqueueRequestsFromMapFunc(to_owner)
    ).complete(lambda request: seen.append((request.namespace, request.name)))
    runner = threading.Thread(target=mgr.start, name="manager", daemon=True)
    runner.start()
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    try:
        for name, labels in (("plain", {}), ("owned", {"owner": "alice"})):
            client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": "default", "labels": labels},
                }
            )
        eventually(lambda: ("owners", "alice") in seen, message="alice reconciled")
        assert all(request == ("owners", "alice") for request in seen), seen
    finally:
        mgr.stop()
        runner.join(15)
        client.close()
    assert not runner.is_alive()
