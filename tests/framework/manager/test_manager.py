"""Manager: leader election across replicas, lost leases, metrics and probes over HTTP."""

from __future__ import annotations

import threading
import time

import urllib3

from framework.builder import Builder
from framework.client import Client, TokenBucket
from framework.leaderelection import LeaderElectionLost
from framework.manager import CacheOptions, LeaderElectionOptions, Manager
from framework.predicate import Funcs
from framework.reconcile import Request
from framework.testing import eventually

LE = dict(
    namespace="kube-system",
    name="sample-leader",
    lease_duration=1.0,
    renew_deadline=0.6,
    retry_period=0.2,
    release_on_cancel=True,
)


class Replica:
    """One manager with a controller over ConfigMaps that records which replica reconciled."""

    def __init__(
        self, server, name: str, log: list, active: set, overlap: list, client_options=None, **kw
    ) -> None:
        self.name = name
        self.raw = Client.from_kubeconfig(server.kubeconfig, **(client_options or {"qps": 0}))
        self.mgr = Manager(
            self.raw,
            leader_election=LeaderElectionOptions(identity=name, **LE),
            **kw,
        )
        replica = self

        class Rec:
            def reconcile(self, request: Request) -> None:
                active.add(replica.name)
                if len(active) > 1:
                    overlap.append(set(active))
                log.append((replica.name, request.name))
                time.sleep(0.01)
                active.discard(replica.name)

        Builder(self.mgr).named("cm").for_("v1", "ConfigMap").complete(Rec())
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name=f"manager-{name}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.mgr.start()
        except BaseException as e:
            self.error = e

    def stop(self) -> None:
        self.mgr.stop()
        self.thread.join(15)
        assert not self.thread.is_alive()


def lease_holders(client: Client, since: str, until: str) -> list[str]:
    """The holder of each write to the test's Lease after ``since``, up to the first held by ``until``."""
    holders: list[str] = []
    with client.watch(
        "coordination.k8s.io/v1", "Lease", LE["namespace"], resource_version=since, read_timeout=10
    ) as w:
        for kind, obj in w:
            if kind == "BOOKMARK" or obj["metadata"]["name"] != LE["name"]:
                continue
            holders.append(obj["spec"].get("holderIdentity") or "")
            if holders[-1] == until:
                return holders
    raise AssertionError(f"the watch ended before {until} held the lease: {holders}")


def test_one_leader_reconciles_and_hands_over(apiserver):
    log: list = []
    active: set = set()
    overlap: list = []
    replicas = [Replica(apiserver, f"r{i}", log, active, overlap) for i in range(3)]
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    try:
        leader = eventually(lambda: next((r for r in replicas if r.mgr.is_leader()), None))
        assert sum(r.mgr.is_leader() for r in replicas) == 1
        client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}}
        )
        eventually(lambda: "a" in {n for _, n in log})
        assert {who for who, n in log if n == "a"} == {leader.name}
        lease = ("coordination.k8s.io/v1", "Lease", LE["name"], LE["namespace"])
        before = client.get(*lease)["metadata"]["resourceVersion"]
        leader.stop()  # graceful: releases the lease
        others = [r for r in replicas if r is not leader]
        new = eventually(lambda: next((r for r in others if r.mgr.is_leader()), None))
        # Handed over by a release (an empty holder), not left to expire: the lease's writes since
        # before the stop show the release ahead of the new holder, however slow the machine.
        assert lease_holders(client, before, until=new.name)[-2:] == ["", new.name]
        client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "default"}}
        )
        eventually(lambda: any(n == "b" and who == new.name for who, n in log))
        assert not overlap
    finally:
        for r in replicas:
            if r.thread.is_alive():
                r.stop()


def test_lost_lease_stops_work_and_raises(apiserver):
    log: list = []
    r = Replica(apiserver, "solo", log, set(), [])
    try:
        eventually(r.mgr.is_leader)
        apiserver.inject_failure("update", "leases.coordination.k8s.io", 500, count=None)
        r.thread.join(10)
        assert not r.thread.is_alive()
        assert isinstance(r.error, LeaderElectionLost)
        assert not r.mgr.is_leader()
    finally:
        apiserver.clear_failures()
        if r.thread.is_alive():
            r.stop()


def test_metrics_and_probes(apiserver):
    mgr = Manager(
        Client.from_kubeconfig(apiserver.kubeconfig, qps=0),
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
    )
    done = threading.Event()

    class Rec:
        def reconcile(self, request: Request) -> None:
            done.set()

    Builder(mgr).named("probe").for_("v1", "Namespace").complete(Rec())
    t = threading.Thread(target=mgr.start, name="manager", daemon=True)
    t.start()
    http = urllib3.PoolManager(retries=False)
    try:
        assert done.wait(10)
        eventually(lambda: http.request("GET", mgr.probe_server.url + "/readyz").status == 200)
        verbose = http.request("GET", mgr.probe_server.url + "/readyz?verbose").data.decode()
        assert "[+]informer-sync ok" in verbose
        assert http.request("GET", mgr.probe_server.url + "/healthz").status == 200
        body = http.request("GET", mgr.metrics_server.url + "/metrics").data.decode()
        assert 'controller_runtime_reconcile_total{controller="probe",result="success"}' in body
        assert 'workqueue_adds_total{name="probe"}' in body
        assert 'controller_runtime_max_concurrent_reconciles{controller="probe"} 1.0' in body
    finally:
        mgr.stop()
        t.join(15)


def test_sync_period_resyncs_cached_objects_through_predicates(apiserver):
    """Informers resync every sync_period (controller-runtime's SyncPeriod): each cached object comes
    again as an update with an unchanged resourceVersion, and a predicate passing resyncs reconciles it."""
    resyncs: list[tuple[str, str]] = []
    reconciled: list[str] = []

    def resync_only(old: dict, new: dict) -> bool:
        same = old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]
        if same:
            resyncs.append((new["metadata"]["name"], new["metadata"]["resourceVersion"]))
        return same

    admin = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    created = admin.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rs", "namespace": "default"}}
    )
    mgr = Manager(Client.from_kubeconfig(apiserver.kubeconfig, qps=0), sync_period=1.0)

    class Rec:
        def reconcile(self, request: Request) -> None:
            reconciled.append(request.name)

    predicate = Funcs(create=lambda obj: False, update=resync_only, delete=lambda obj: False)
    Builder(mgr).named("resync").for_("v1", "ConfigMap", predicates=[predicate]).complete(Rec())
    thread = threading.Thread(target=mgr.start, name="manager-resync", daemon=True)
    thread.start()
    try:
        eventually(lambda: reconciled.count("rs") >= 2, timeout=10, message="two resync reconciles")
        assert ("rs", created["metadata"]["resourceVersion"]) in resyncs
        informer = mgr.cache.informer("v1", "ConfigMap")
        assert 0.9 <= informer.resync_period < 1.1  # jittered per informer
    finally:
        mgr.stop()
        thread.join(15)


def test_sync_period_zero_disables_resync(apiserver):
    mgr = Manager(Client.from_kubeconfig(apiserver.kubeconfig, qps=0), sync_period=0)
    assert mgr.cache.informer("v1", "ConfigMap").resync_period == 0
    default = Manager(Client.from_kubeconfig(apiserver.kubeconfig, qps=0))
    assert 0.9 * 36000 <= default.cache.informer("v1", "ConfigMap").resync_period < 1.1 * 36000


def test_cache_options_can_opt_a_kind_out_of_resync(apiserver):
    mgr = Manager(
        Client.from_kubeconfig(apiserver.kubeconfig, qps=0),
        cache_options={("v1", "Secret"): CacheOptions(resync=False)},
    )
    assert mgr.cache.informer("v1", "Secret").resync_period == 0
    assert mgr.cache.informer("v1", "ConfigMap").resync_period > 0


def test_unsafe_disable_deep_copy_hands_out_the_cached_objects(apiserver):
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    for kind, name in (("ConfigMap", "shared"), ("Secret", "copied")):
        client.create({"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": "default"}})
    mgr = Manager(client, cache_options={("v1", "ConfigMap"): CacheOptions(unsafe_disable_deep_copy=True)})
    thread = threading.Thread(target=mgr.start, name="manager", daemon=True)
    thread.start()
    try:
        # controller-runtime's UnsafeDisableDeepCopy: every read returns the one cached object ...
        first = mgr.client.get("v1", "ConfigMap", "shared", "default")
        assert mgr.client.get("v1", "ConfigMap", "shared", "default") is first
        listed = mgr.client.list("v1", "ConfigMap", "default", field_selector="metadata.name=shared")
        assert len(listed["items"]) == 1 and listed["items"][0] is first
        # ... while other kinds stay copied: a caller's change never reaches the cache.
        secret = mgr.client.get("v1", "Secret", "copied", "default")
        secret["metadata"]["labels"] = {"changed": "locally"}
        again = mgr.client.get("v1", "Secret", "copied", "default")
        assert again is not secret and "labels" not in again["metadata"]
    finally:
        mgr.stop()
        thread.join(10)


def _write_past_the_lease(r, clock, cm: dict, wait_s: float) -> list:
    """Start ``cm``'s create on ``r``'s client in a thread, step ``clock`` past the renew deadline after
    ``wait_s`` (while the create is held back, as a paused process would be) and return its outcome."""
    outcome: list[BaseException | dict] = []

    def write() -> None:
        try:
            outcome.append(r.mgr.client.create(cm))
        except BaseException as e:
            outcome.append(e)

    writer = threading.Thread(target=write, name=f"{cm['metadata']['name']}-writer")
    writer.start()
    time.sleep(wait_s)
    clock.step(LE["renew_deadline"] + 0.1)  # meanwhile the process was paused past its deadline
    writer.join(10)
    assert not writer.is_alive()
    return outcome


def test_a_write_retried_after_429_is_refused_once_the_lease_ran_out(apiserver):
    """A write waiting out a 429's Retry-After when the leader is paused (SIGSTOP) must not be resent
    once the lease is past its renew deadline (found by bench/chaos.py seed 1: three workers resumed
    and resent their ClusterRole creates while another replica held the lease)."""
    from framework.clock import FakeClock

    clock = FakeClock()
    r = Replica(apiserver, "retrying", [], set(), [], clock=clock)
    reader = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "retried", "namespace": "default"}}
    try:
        eventually(r.mgr.is_leader)
        apiserver.inject_failure("create", "configmaps", 429, count=1, retry_after=2)
        # After 0.5 s the create has its 429 and waits out Retry-After (real seconds).
        outcome = _write_past_the_lease(r, clock, cm, 0.5)
        assert len(outcome) == 1 and isinstance(outcome[0], LeaderElectionLost), outcome
        names = {o["metadata"]["name"] for o in reader.list("v1", "ConfigMap", "default")["items"]}
        assert "retried" not in names
    finally:
        apiserver.clear_failures()
        if r.thread.is_alive():
            r.stop()


def test_a_write_throttled_until_past_the_lease_is_refused(apiserver):
    """A write waiting for a client-side rate-limit token while the leader is paused must be refused
    once the lease is past its renew deadline (bench/chaos.py seed 5: an Event delete sent 10.6 s after
    the lease expired; the guard was asked before the throttling wait)."""
    from framework.clock import FakeClock

    clock = FakeClock()
    r = Replica(apiserver, "throttled", [], set(), [], clock=clock)
    reader = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "throttled", "namespace": "default"}}
    try:
        eventually(r.mgr.is_leader)
        # Throttle only from here: at 0.5 qps the election and the informer's list alone would take
        # about 10 s (one token each), the whole of eventually()'s budget (CI run of stop 24).
        # The manager's client is its own copy of the raw client (Client.with_cache): throttle that one.
        r.mgr.client.rate_limiter = TokenBucket(0.5, 1)
        r.mgr.client.create({**cm, "metadata": {**cm["metadata"], "name": "token-taker"}})  # bucket empty
        outcome = _write_past_the_lease(r, clock, cm, 0.3)  # the create waits ~2 s (real) for a token
        assert len(outcome) == 1 and isinstance(outcome[0], LeaderElectionLost), outcome
        names = {o["metadata"]["name"] for o in reader.list("v1", "ConfigMap", "default")["items"]}
        assert "throttled" not in names
    finally:
        if r.thread.is_alive():
            r.stop()


def test_a_leader_past_its_renew_deadline_writes_nothing(apiserver):
    """A leader paused past its renew deadline (SIGSTOP, found by bench/chaos.py seed 19) must not
    write on resuming, even before its deadline watcher has noticed: another replica may lead by now."""
    from framework.clock import FakeClock

    clock = FakeClock()
    r = Replica(apiserver, "paused", [], set(), [], clock=clock)
    reader = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late", "namespace": "default"}}
    try:
        eventually(r.mgr.is_leader)
        r.mgr.client.create({**cm, "metadata": {**cm["metadata"], "name": "in-time"}})  # leading: written
        clock.step(LE["renew_deadline"] + 0.1)  # the process "resumes" after its deadline
        try:
            r.mgr.client.create(cm)
            raise AssertionError("a leader past its renew deadline wrote")
        except LeaderElectionLost:
            pass
        names = {o["metadata"]["name"] for o in reader.list("v1", "ConfigMap", "default")["items"]}
        assert "in-time" in names and "late" not in names
    finally:
        if r.thread.is_alive():
            r.stop()
