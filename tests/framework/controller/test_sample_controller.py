"""A sample controller built with the Builder, end to end against the API server."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from framework.builder import Builder
from framework.client import Client, NotFound
from framework.handler import EnqueueRequestsFromMapFunc
from framework.manager import Manager
from framework.predicate import GenerationChangedPredicate
from framework.reconcile import Request, Result, TerminalError
from framework.testing import consistently, eventually

GROUP, VERSION = "example.com", "v1"
API = f"{GROUP}/{VERSION}"

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "widgets", "kind": "Widget"},
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


class WidgetReconciler:
    """Creates a child ConfigMap per Widget and reports Ready in status; misbehaves on demand."""

    def __init__(self, client) -> None:
        self.client = client
        self.calls: Counter[str] = Counter()
        self.times: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def reconcile(self, request: Request) -> Result | None:
        with self.lock:
            self.calls[request.name] += 1
            n = self.calls[request.name]
            self.times.setdefault(request.name, []).append(time.monotonic())
        if request.name == "fail":
            raise RuntimeError("always failing")
        if request.name == "terminal":
            raise TerminalError("cannot ever work")
        if request.name == "crash" and n == 1:
            raise KeyError("a bug on the first try")
        try:
            widget = self.client.get(API, "Widget", request.name, request.namespace)
        except NotFound:
            return None
        child = f"{request.name}-child"
        try:
            self.client.get("v1", "ConfigMap", child, request.namespace)
        except NotFound:
            self.client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {
                        "name": child,
                        "namespace": request.namespace,
                        "ownerReferences": [
                            {
                                "apiVersion": API,
                                "kind": "Widget",
                                "name": request.name,
                                "uid": widget["metadata"]["uid"],
                                "controller": True,
                                "blockOwnerDeletion": True,
                            }
                        ],
                    },
                    "data": {"size": str(widget.get("spec", {}).get("size", 0))},
                }
            )
        if widget.get("status", {}).get("phase") != "Ready":
            widget["status"] = {"phase": "Ready"}
            self.client.update_status(widget)
        return None


@pytest.fixture
def env(apiserver):
    apiserver.install_crds([CRD])
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    mgr = Manager(client)
    rec = WidgetReconciler(mgr.client)
    Builder(mgr).for_(API, "Widget", predicates=[GenerationChangedPredicate()]).owns(
        "v1", "ConfigMap"
    ).with_options(max_concurrent_reconciles=3).complete(rec)
    t = threading.Thread(target=mgr.start, name="manager", daemon=True)
    t.start()
    yield client, rec, mgr
    mgr.stop()
    t.join(15)
    assert not t.is_alive()


def widget(name: str, size: int = 1) -> dict:
    return {
        "apiVersion": API,
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"size": size},
    }


def test_for_and_owns(env):
    client, rec, _ = env
    client.create(widget("w1", 3))
    cm = eventually(lambda: _get(client, "v1", "ConfigMap", "w1-child"))
    assert cm["data"] == {"size": "3"} and cm["metadata"]["ownerReferences"][0]["name"] == "w1"
    eventually(lambda: _get(client, API, "Widget", "w1").get("status", {}).get("phase") == "Ready")
    calls = quiet(rec, "w1")
    w = client.get(API, "Widget", "w1", "default")
    w["status"] = {"phase": "Ready", "note": "status only"}
    client.update_status(w)
    # status-only updates are filtered by GenerationChangedPredicate
    consistently(lambda: rec.calls["w1"] == calls, duration=0.3, message="no reconcile of a status write")
    client.patch(API, "Widget", "w1", {"spec": {"size": 4}}, namespace="default")
    eventually(lambda: rec.calls["w1"] > calls)  # a spec change bumps generation and passes
    calls = quiet(rec, "w1")
    client.delete("v1", "ConfigMap", "w1-child", "default")  # the owned child goes: owner re-enqueued
    eventually(lambda: _get(client, "v1", "ConfigMap", "w1-child"))
    assert rec.calls["w1"] > calls


def test_errors_back_off_terminal_stops_crash_recovers(env):
    client, rec, mgr = env
    for name in ("fail", "terminal", "crash"):
        client.create(widget(name))
    eventually(lambda: _get(client, "v1", "ConfigMap", "crash-child"))  # recovered after the first crash
    eventually(lambda: rec.calls["fail"] >= 5)
    gaps = [b - a for a, b in zip(rec.times["fail"], rec.times["fail"][1:], strict=False)]
    # Exponential backoff, 5 ms, 10 ms, 20 ms, 40 ms ...: a retry never comes before its delay (a loaded
    # machine only makes the gaps longer, so compare each with its lower bound, not with each other).
    assert all(g >= 0.005 * 2**i for i, g in enumerate(gaps[:4])), gaps
    consistently(lambda: rec.calls["terminal"] == 1, duration=0.3, message="terminal error not retried")
    reg = mgr.registry
    assert (
        reg.get_sample_value("controller_runtime_terminal_reconcile_errors_total", {"controller": "widget"})
        == 1
    )
    assert reg.get_sample_value("controller_runtime_reconcile_panics_total", {"controller": "widget"}) >= 1
    assert reg.get_sample_value("controller_runtime_reconcile_errors_total", {"controller": "widget"}) >= 5


def test_requeue_after(apiserver):
    """Result(requeue_after=s) reconciles the object again after s seconds, with no event in between."""
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    mgr = Manager(client)
    times: list[float] = []

    class Later:
        def reconcile(self, request: Request) -> Result | None:
            if request.name != "later":
                return None
            times.append(time.monotonic())
            return Result(requeue_after=0.2) if len(times) < 3 else None

    Builder(mgr).named("later").for_("v1", "ConfigMap").complete(Later())
    t = threading.Thread(target=mgr.start, name="manager", daemon=True)
    t.start()
    try:
        client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "later", "namespace": "default"}}
        )
        eventually(lambda: len(times) >= 3)
        assert times[1] - times[0] >= 0.18 and times[2] - times[1] >= 0.18
        consistently(lambda: len(times) == 3, duration=0.4, message="no requeue after a plain success")
    finally:
        mgr.stop()
        t.join(15)


def test_map_func_watch(apiserver):
    """Watches with a map function: a Secret labelled widget=NAME enqueues that widget."""
    apiserver.install_crds([CRD])
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    mgr = Manager(client)
    seen: list[Request] = []

    class Recorder:
        def reconcile(self, request: Request) -> None:
            seen.append(request)

    def to_widget(obj: dict) -> list[Request]:
        name = (obj["metadata"].get("labels") or {}).get("widget")
        return [Request(name, obj["metadata"]["namespace"])] if name else []

    Builder(mgr).named("mapper").for_(API, "Widget").watches(
        "v1", "Secret", EnqueueRequestsFromMapFunc(to_widget)
    ).complete(Recorder())
    t = threading.Thread(target=mgr.start, name="manager", daemon=True)
    t.start()
    try:
        client.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "s", "namespace": "default", "labels": {"widget": "target"}},
            }
        )
        eventually(lambda: Request("target", "default") in seen)
    finally:
        mgr.stop()
        t.join(15)


def test_graceful_shutdown_drains_in_flight(apiserver):
    apiserver.install_crds([CRD])
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    mgr = Manager(client, graceful_shutdown_timeout=5)
    started, finished = threading.Event(), threading.Event()

    class Slow:
        def reconcile(self, request: Request) -> None:
            started.set()
            time.sleep(0.5)
            finished.set()

    Builder(mgr).named("slow").for_(API, "Widget").complete(Slow())
    t = threading.Thread(target=mgr.start, name="manager", daemon=True)
    t.start()
    client.create(widget("s1"))
    assert started.wait(10)
    mgr.stop()
    t.join(10)
    assert finished.is_set() and not t.is_alive()


def quiet(rec: WidgetReconciler, name: str, period: float = 0.3) -> int:
    """Wait until ``name`` has not been reconciled for ``period`` seconds; return its call count."""
    while True:
        n = rec.calls[name]
        time.sleep(period)
        if rec.calls[name] == n:
            return n


def _get(client, api_version, kind, name):
    try:
        return client.get(api_version, kind, name, "default")
    except NotFound:
        return None


def test_reconcile_timeout_is_cooperative(apiserver):
    """Client calls after the per-reconcile deadline raise Timeout; the timeout is counted and retried."""
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    mgr = Manager(client)
    outcomes: list[str] = []

    class Slow:
        def reconcile(self, request: Request) -> None:
            if request.name != "slow":
                return
            time.sleep(0.3)  # past the 0.1 s deadline; the worker thread itself is never abandoned
            try:
                mgr.api_reader.get("v1", "ConfigMap", "slow", "default")
                outcomes.append("call went out")
            except Exception as e:
                outcomes.append(type(e).__name__)
                raise

    Builder(mgr).named("deadline").for_("v1", "ConfigMap").with_options(reconcile_timeout=0.1).complete(
        Slow()
    )
    t = threading.Thread(target=mgr.start, name="manager", daemon=True)
    t.start()
    try:
        client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "slow", "namespace": "default"}}
        )
        eventually(lambda: len(outcomes) >= 2)
        assert set(outcomes) == {"Timeout"}

        # Counted when the reconcile is over, a moment after the outcome above was recorded.
        def timeouts() -> float:
            labels = {"controller": "deadline"}
            return mgr.registry.get_sample_value("controller_runtime_reconcile_timeouts_total", labels) or 0

        eventually(lambda: timeouts() >= 2, message="two timeouts counted")
    finally:
        mgr.stop()
        t.join(15)
