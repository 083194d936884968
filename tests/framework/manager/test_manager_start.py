"""Manager start-up: caches must sync within cache_sync_timeout, stop() is honoured while waiting,
and /readyz reports a controller without a live worker."""

from __future__ import annotations

import threading

import pytest
import urllib3

from framework.builder import Builder
from framework.client import Client
from framework.manager import DEFAULT_CACHE_SYNC_TIMEOUT, CacheSyncTimeout, Manager
from framework.testing import eventually
from framework.workqueue import ItemExponentialFailureRateLimiter

NEVER = ("example.com/v1", "Unserved")  # no such kind: its informer can never list


class Run:
    """``mgr.start()`` on a thread, keeping what it raised."""

    def __init__(self, mgr: Manager) -> None:
        self.mgr = mgr
        self.error: BaseException | None = None
        self.returned = threading.Event()
        self.thread = threading.Thread(target=self._run, name="manager", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.mgr.start()
        except BaseException as e:
            self.error = e
        finally:
            self.returned.set()

    def join(self) -> None:
        self.mgr.stop()
        self.thread.join(15)
        assert not self.thread.is_alive()


def test_default_cache_sync_timeout_is_controller_runtimes(apiserver):
    assert DEFAULT_CACHE_SYNC_TIMEOUT == 120.0
    assert Manager(Client.from_kubeconfig(apiserver.kubeconfig)).cache_sync_timeout == 120.0
    with pytest.raises(ValueError, match="cache_sync_timeout must be positive"):
        Manager(Client.from_kubeconfig(apiserver.kubeconfig), cache_sync_timeout=0)


def test_a_cache_that_never_syncs_fails_start_naming_the_kind(apiserver):
    mgr = Manager(Client.from_kubeconfig(apiserver.kubeconfig, qps=0), cache_sync_timeout=0.5)
    started = threading.Event()
    Builder(mgr).named("cm").for_("v1", "ConfigMap").complete(lambda r: started.set())
    mgr.cache.informer(*NEVER)
    apiserver_client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    apiserver_client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}}
    )
    run = Run(mgr)
    assert run.returned.wait(30), "start() returned"
    assert isinstance(run.error, CacheSyncTimeout)
    assert run.error.kinds == ["example.com/v1 Unserved"]
    assert "example.com/v1 Unserved" in str(run.error) and "0.5s" in str(run.error)
    assert not started.is_set()  # controllers never started
    run.join()


def test_stop_is_honoured_while_waiting_for_caches(apiserver):
    mgr = Manager(Client.from_kubeconfig(apiserver.kubeconfig, qps=0), cache_sync_timeout=600)
    mgr.cache.informer(*NEVER)
    run = Run(mgr)
    eventually(lambda: mgr.cache.factory.informers() and not mgr.cache.has_synced(), message="waiting")
    mgr.stop()
    assert run.returned.wait(10), "start() returned after stop(), long before the 600 s timeout"
    assert run.error is None
    run.join()


class Broken(ItemExponentialFailureRateLimiter):
    """A custom rate limiter whose bug kills the worker that calls it, until it is fixed."""

    def __init__(self) -> None:
        super().__init__()
        self.fixed = threading.Event()

    def when(self, item):
        if not self.fixed.is_set():
            raise RuntimeError("rate limiter bug")
        return super().when(item)


def test_readyz_fails_while_a_controller_has_no_live_worker(apiserver):
    mgr = Manager(
        Client.from_kubeconfig(apiserver.kubeconfig, qps=0), health_probe_bind_address="127.0.0.1:0"
    )
    limiter = Broken()
    fixed = limiter.fixed

    def reconcile(request):
        if not fixed.is_set():
            raise RuntimeError("reconcile fails, so the broken rate limiter is called")

    ctrl = (
        Builder(mgr)
        .named("crashy")
        .for_("v1", "Namespace")
        .with_options(rate_limiter=limiter)
        .complete(reconcile)
    )
    run = Run(mgr)
    http = urllib3.PoolManager(retries=False)
    try:
        url = eventually(lambda: mgr.probe_server.port and mgr.probe_server.url, message="bound") + "/readyz"
        body = eventually(
            lambda: (
                (r := http.request("GET", url + "?verbose")).status == 500
                and "[-]controllers failed: controller crashy has no live worker" in (text := r.data.decode())
                and text
            ),
            message="readyz fails while the worker is dead",
        )
        assert "[+]informer-sync ok" in body  # caches synced: only the controller is not ready
        restarts = mgr.registry.get_sample_value("controller_worker_restarts_total", {"controller": "crashy"})
        assert restarts and restarts >= 1
        fixed.set()
        eventually(lambda: http.request("GET", url).status == 200, timeout=60, message="ready again")
        assert ctrl.live_workers() == 1
    finally:
        run.join()
