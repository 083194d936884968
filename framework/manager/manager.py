"""``Manager``: runs caches, servers, leader election and controllers, and shuts them down in order."""

from __future__ import annotations

import copy
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import structlog
from prometheus_client import CollectorRegistry

from framework.client import Client
from framework.clock import Clock, RealClock
from framework.healthz import HealthProbeServer
from framework.leaderelection import LeaderElectionConfig, LeaderElectionLost, LeaderElector, LeaseLock
from framework.manager.cache import DEFAULT_SYNC_PERIOD, Cache, CacheOptions, IndexFunc
from framework.metrics import MetricsServer, parse_bind_address, register_runtime_collectors
from framework.metrics.filters import DelegatingAuth
from framework.record import EventBroadcaster, EventRecorder

if TYPE_CHECKING:  # imported when used: a manager without webhooks needs no certificate code
    from framework.webhook.configuration import WebhookConfiguration, WebhookConfigurator

log = structlog.get_logger("framework.manager")

# How often the main thread wakes while waiting for stop(), so that signal handlers run promptly.
_STOP_POLL_SECONDS = 0.25
# How often the wait for cache sync re-checks the informers (stop() wakes it at once).
_SYNC_POLL_SECONDS = 0.02

DEFAULT_CACHE_SYNC_TIMEOUT = 120.0
"""controller-runtime's ``CacheSyncTimeout`` default (2 minutes)."""


class CacheSyncTimeout(TimeoutError):
    """Caches did not sync within ``Manager(cache_sync_timeout=...)``; ``kinds`` names them."""

    def __init__(self, kinds: list[str], timeout: float) -> None:
        self.kinds = kinds
        self.timeout = timeout
        super().__init__(
            f"timed out after {timeout:g}s waiting for caches to sync: {', '.join(kinds)} "
            "(is the kind served by the API server, and may this client list and watch it?)"
        )


class Runnable(Protocol):
    """Anything the manager starts and stops: controllers, or your own workers."""

    def start(self) -> None: ...

    def stop(self, timeout: float = 30.0) -> Any: ...


@dataclass(frozen=True)
class LeaderElectionOptions:
    """Lease-based leader election (client-go's defaults: 15 s / 10 s / 2 s)."""

    namespace: str
    name: str
    identity: str = ""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = True


class Manager:
    """Shared cache, cache-backed client, leader election, metrics, probes and webhooks for controllers.

    ``mgr.cache`` (:class:`~framework.manager.Cache`) is a Reader plus informers; ``mgr.client`` is
    ``client`` with that cache in front of its reads (:meth:`Client.with_cache
    <framework.client.Client.with_cache>`, controller-runtime's ``client.Options.Cache``): ``get`` and
    ``list`` answer from the cache, except for the kinds in ``disable_for`` (``(apiVersion, kind)``
    pairs, read live); writes go to the API server. ``mgr.api_reader`` is ``client``, reading live.

    Caches, servers and runnables added with ``need_leader_election=False`` run on every replica, so
    standbys keep warm caches and serve webhooks; controllers run only while this replica leads.
    ``start()`` blocks until ``stop()``, SIGTERM or SIGINT, then shuts down in order (controllers drain,
    leader election releases, caches, servers) within ``graceful_shutdown_timeout``. A lost lease stops
    the controllers at once and makes ``start()`` raise :class:`LeaderElectionLost`.

    ``sync_period`` (seconds; default 10 h as controller-runtime's, jittered per informer; 0 or None
    disables) re-delivers every cached object to the handlers as an update with an unchanged
    resourceVersion, so predicates that pass resyncs get a periodic re-reconcile.

    Controllers start once every cache synced. A cache still not synced after ``cache_sync_timeout``
    seconds (default 2 min, as controller-runtime's ``CacheSyncTimeout``) makes ``start()`` shut down
    and raise :class:`CacheSyncTimeout` naming the kinds; ``stop()`` during the wait is honoured at once.
    ``/readyz`` (with a probe address) fails until the caches synced and while a started controller has
    no live worker thread.

    Metrics: everything the manager runs reports to ``registry`` (a fresh one per manager unless
    given): the client's ``rest_client_*`` (the client is made to report there), the controllers' and
    work queues', leader election's, the webhook server's (one made without a registry), the event
    recorder's, and the process, platform and GC collectors. ``metrics_bind_address`` serves them at
    ``/metrics``; ``metrics_secure`` serves HTTPS (``metrics_cert_dir`` with ``metrics_cert_name`` and
    ``metrics_key_name``, re-read on change; self-signed without a directory) and lets in only callers
    whose bearer token the API server authenticates (TokenReview) and who may ``get`` the non-resource
    URL ``/metrics`` (SubjectAccessReview), as kubebuilder's ``--metrics-secure``: 401 ``Unauthorized``
    or 403 naming the user otherwise. The client then needs ``create`` on ``tokenreviews`` and
    ``subjectaccessreviews``.

    ``webhook_configuration`` (opt-in, :class:`~framework.webhook.WebhookConfiguration`) makes the
    manager write the Mutating/ValidatingWebhookConfiguration of the typed webhooks on
    ``webhook_server`` and keep it up to date, with a self-signed certificate it rotates if asked
    (``/readyz`` fails while it cannot be written).
    """

    def __init__(
        self,
        client: Client,
        *,
        disable_for: Iterable[tuple[str, str]] = (),
        leader_election: LeaderElectionOptions | None = None,
        metrics_bind_address: str | None = None,
        metrics_secure: bool = False,
        metrics_cert_dir: str | os.PathLike[str] | None = None,
        metrics_cert_name: str = "tls.crt",
        metrics_key_name: str = "tls.key",
        health_probe_bind_address: str | None = None,
        webhook_server: Any = None,
        webhook_configuration: WebhookConfiguration | None = None,
        cache_options: Mapping[tuple[str, str], CacheOptions] | None = None,
        registry: CollectorRegistry | None = None,
        clock: Clock | None = None,
        graceful_shutdown_timeout: float = 30.0,
        sync_period: float | None = DEFAULT_SYNC_PERIOD,
        cache_sync_timeout: float = DEFAULT_CACHE_SYNC_TIMEOUT,
    ) -> None:
        if isinstance(cache_sync_timeout, bool) or not isinstance(cache_sync_timeout, int | float):
            raise TypeError(f"cache_sync_timeout must be seconds, got {type(cache_sync_timeout).__name__}")
        if cache_sync_timeout <= 0:
            raise ValueError(f"cache_sync_timeout must be positive, got {cache_sync_timeout}")
        self.api_reader = client
        self.cache_sync_timeout = float(cache_sync_timeout)
        self.clock = clock or RealClock()
        # Each manager has its own registry, so several managers can live in one process (tests), and
        # everything the manager runs reports to it: the client's rest_client_* metrics, the webhook
        # server, leader election, the event recorder, the controllers the builder makes.
        self.registry = registry or CollectorRegistry()
        register_runtime_collectors(self.registry)
        if getattr(client, "metrics_registry", self.registry) is not self.registry:
            client.report_metrics_to(self.registry)  # in place: the lock's and the cache's copies share it
        if webhook_server is not None and not getattr(webhook_server, "registry_given", True):
            webhook_server.use_registry(self.registry)
        self.cache = Cache(
            client,
            cache_options,
            clock=self.clock,
            sync_timeout=self.cache_sync_timeout,
            sync_period=sync_period,
        )
        self.client = client.with_cache(self.cache, disable_for=disable_for)
        self.leader_election = leader_election
        self.webhook_server = webhook_server
        self.graceful_shutdown_timeout = graceful_shutdown_timeout
        self.metrics_server = None
        if metrics_bind_address and parse_bind_address(metrics_bind_address) is not None:
            self.metrics_server = MetricsServer(
                metrics_bind_address,
                self.registry,
                secure=metrics_secure,
                cert_dir=metrics_cert_dir,
                cert_name=metrics_cert_name,
                key_name=metrics_key_name,
                # Callers are checked by the API server with this manager's credentials, through a copy
                # of the client without the leader's write guard: a review is no write, and a replica
                # whose lease ran out still answers scrapes.
                auth=DelegatingAuth(copy.copy(client)) if metrics_secure else None,
            )
        self.probe_server = (
            HealthProbeServer(health_probe_bind_address)
            if health_probe_bind_address and parse_bind_address(health_probe_bind_address) is not None
            else None
        )
        self._leader_runnables: list[Runnable] = []
        self._runnables: list[Runnable] = []
        self.webhook_configurator: WebhookConfigurator | None = None
        if webhook_configuration is not None:
            if webhook_server is None:
                raise ValueError("webhook_configuration needs a webhook_server to configure")
            from framework.webhook.configuration import WebhookConfigurator

            # Every replica serves webhooks, so every replica keeps the configuration written.
            self.webhook_configurator = WebhookConfigurator(client, webhook_server, webhook_configuration)
            self._runnables.append(self.webhook_configurator)
        if self.probe_server is not None:
            self.probe_server.add_readyz_check("informer-sync", self._caches_synced)
            self.probe_server.add_readyz_check("controllers", self._controllers_working)
            if leader_election is not None:
                self.probe_server.add_readyz_check("leader-election", self._election_healthy)
        self._controller_names: set[str] = set()
        self._failure: BaseException | None = None
        self._broadcaster: EventBroadcaster | None = None
        self._stop = threading.Event()
        self._leading = threading.Event()
        self._lost = False
        self._elector: LeaderElector | None = None
        self._started = False

    # -- registration ------------------------------------------------------------------------------

    def add(self, runnable: Runnable, need_leader_election: bool = True) -> None:
        """Run ``runnable`` with the manager; a controller's name must be unique in this manager."""
        name = getattr(runnable, "name", None)
        if isinstance(name, str) and hasattr(runnable, "reconcile_item"):  # a Controller
            if not getattr(runnable, "skip_name_validation", False):
                self.check_controller_name(name)
            self._controller_names.add(name)
        (self._leader_runnables if need_leader_election else self._runnables).append(runnable)
        if self._started and (not need_leader_election or self._leading.is_set()):
            runnable.start()

    def check_controller_name(self, name: str) -> None:
        """``ValueError`` if a controller named ``name`` was added already (controller-runtime checks
        it too: two controllers of one name would report to the same metrics)."""
        if name in self._controller_names:
            raise ValueError(
                f"controller with name {name!r} already exists; controller names must be unique so their "
                "metrics stay apart (Builder.named(...) sets another, "
                "with_options(skip_name_validation=True) allows it)"
            )

    def add_field_index(self, api_version: str, kind: str, name: str, func: IndexFunc) -> None:
        self.cache.add_field_index(api_version, kind, name, func)

    def add_healthz_check(self, name: str, check: Callable[[], Any]) -> None:
        """A liveness check (no-op without a health probe address)."""
        if self.probe_server is not None:
            self.probe_server.add_healthz_check(name, check)

    def add_readyz_check(self, name: str, check: Callable[[], Any]) -> None:
        """A readiness check; ``informer-sync`` is built in (not ready until caches synced; it names
        the caches and the last list error), and ``leader-election`` with leader election (not ready
        while the lease cannot be read or written)."""
        if self.probe_server is not None:
            self.probe_server.add_readyz_check(name, check)

    def event_recorder(self, name: str) -> EventRecorder:
        """An :class:`~framework.record.EventRecorder` reporting as controller ``name``."""
        if self._broadcaster is None:
            self._broadcaster = EventBroadcaster(self.api_reader, clock=self.clock, registry=self.registry)
        return self._broadcaster.new_recorder(name)

    def is_leader(self) -> bool:
        return self._leading.is_set()

    def _election_healthy(self) -> str | None:
        # Fails while the lock cannot be read or written (API down, lease namespace missing, RBAC);
        # a standby that sees another holder's valid lease is healthy.
        elector, le = self._elector, self.leader_election
        error = elector.last_error if elector is not None else None
        return f"lease {le.namespace}/{le.name}: {error}" if error and le is not None else None

    def _caches_synced(self) -> str | None:
        waiting = self.cache.unsynced()
        if not waiting:
            return None
        # Which caches, and why: an unreachable API server, a kind not served (CRD missing), RBAC.
        errors = sorted({error for error in waiting.values() if error})
        more = f" (and {len(errors) - 1} other errors)" if len(errors) > 1 else ""
        reason = f"; last list error: {errors[0]}{more}" if errors else " (listing)"
        return f"caches not synced: {', '.join(sorted(waiting))}{reason}"

    def _controllers_working(self) -> str | None:
        broken = []
        for r in (*self._runnables, *self._leader_runnables):
            readiness = getattr(r, "readiness", None)
            reason = readiness() if callable(readiness) else None
            if reason:
                broken.append(reason)
        return "; ".join(broken) or None

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Run until ``stop()`` or a signal; raise ``LeaderElectionLost`` if the lease was lost."""
        self._started = True
        self._install_signal_handlers()
        try:
            for server in (self.metrics_server, self.probe_server):
                if server is not None:
                    server.start()
            if self.webhook_configurator is not None:
                self.webhook_configurator.prepare()  # a self-signed certificate before the server reads it
            if self.webhook_server is not None:
                self.webhook_server.start()
            self.cache.start()
            for r in self._runnables:
                r.start()
            if self.leader_election is None:
                self._start_leading()
                self._wait_for_stop()
            else:
                self._run_election()
        finally:
            self._shutdown()
        if self._failure is not None:
            raise self._failure
        if self._lost:
            raise LeaderElectionLost("leader election lost")

    def stop(self) -> None:
        self._stop.set()

    def _wait_for_stop(self) -> None:
        # Never an unbounded wait: a SIGTERM the kernel delivers to another thread does not interrupt
        # the main thread's lock wait, and CPython runs the handler only once the main thread wakes.
        while not self._stop.wait(_STOP_POLL_SECONDS):
            pass

    def _run_election(self) -> None:
        le = self.leader_election
        assert le is not None
        identity = le.identity or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
        lost = threading.Event()

        def started(leading_stop: threading.Event) -> None:
            self._start_leading()

        def stopped() -> None:
            if self._leading.is_set() and not self._stop.is_set():
                # Lease lost while we were meant to run: stop leader work at once, never two leaders.
                self._lost = True
                lost.set()
                self._stop_leader_runnables(0.0)
                self._stop.set()

        # The lock writes through its own copy of the client: every other write of this process
        # (controllers, events) is refused once a leader's lease has run out (a paused process
        # resumed past its renew deadline), so two replicas never write as leader at the same time.
        lock_client = copy.copy(self.api_reader)
        lock_client.write_guard = None
        self.api_reader.write_guard = self.client.write_guard = self._refuse_writes_without_lease
        self._elector = LeaderElector(
            LeaderElectionConfig(
                lock=LeaseLock(lock_client, le.namespace, le.name, identity),
                lease_duration=le.lease_duration,
                renew_deadline=le.renew_deadline,
                retry_period=le.retry_period,
                release_on_cancel=le.release_on_cancel,
                name=le.name,
                on_started_leading=started,
                on_stopped_leading=stopped,
            ),
            clock=self.clock,
            registry=self.registry,
        )
        elector_stop = threading.Event()
        thread = threading.Thread(
            target=self._elector.run, args=(elector_stop,), name="leader-election", daemon=True
        )
        thread.start()
        self._wait_for_stop()
        if not lost.is_set():
            # Graceful: controllers drain first, then the lease is released for the next leader.
            self._stop_leader_runnables(self.graceful_shutdown_timeout)
        elector_stop.set()
        # Stepping down waits up to renew_deadline for leader work, then releases the lease.
        thread.join(le.renew_deadline + 2 * le.retry_period + 1.0)

    def _refuse_writes_without_lease(self, method: str, path: str) -> None:
        elector = self._elector
        if elector is not None and (elector.lost or (elector.is_leader() and not elector.holds_lease())):
            raise LeaderElectionLost(f"not writing {method} {path}: the lease is past its renew deadline")

    def _wait_for_cache_sync(self) -> bool:
        """True once every started informer synced, False if stop() came first; raises
        :class:`CacheSyncTimeout` after ``cache_sync_timeout`` (real seconds, as client-go's wait)."""
        deadline = time.monotonic() + self.cache_sync_timeout
        while True:
            pending = [
                f"{key.api_version} {key.kind}"
                for key, informer in self.cache.factory.informers().items()
                if informer.is_started() and not informer.has_synced()
            ]
            if not pending:
                return True
            if self._stop.is_set():
                return False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CacheSyncTimeout(sorted(set(pending)), self.cache_sync_timeout)
            self._stop.wait(min(_SYNC_POLL_SECONDS, remaining))

    def _start_leading(self) -> None:
        try:
            synced = self._wait_for_cache_sync()
        except CacheSyncTimeout as e:
            log.error("caches did not sync; not starting controllers", kinds=e.kinds, timeout=e.timeout)
            self._failure = e
            self._stop.set()
            return
        if not synced:
            return  # stop() came first
        self._leading.set()
        log.info("starting leader runnables", count=len(self._leader_runnables))
        for r in self._leader_runnables:
            r.start()

    def _stop_leader_runnables(self, timeout: float) -> None:
        if not self._leading.is_set():
            return
        self._leading.clear()
        deadline = time.monotonic() + timeout
        threads = []
        for r in self._leader_runnables:
            t = threading.Thread(
                target=r.stop,
                args=(max(0.0, deadline - time.monotonic()),),
                name=f"stop-{getattr(r, 'name', type(r).__name__)}",
                daemon=True,
            )
            t.start()
            threads.append(t)
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()) + 0.5)

    def _shutdown(self) -> None:
        deadline = time.monotonic() + self.graceful_shutdown_timeout

        def left() -> float:
            return max(0.1, deadline - time.monotonic())

        self._stop_leader_runnables(left())
        for r in self._runnables:
            r.stop(left())
        if self._broadcaster is not None:
            self._broadcaster.shutdown(min(left(), 5.0))
        self.cache.stop(left())
        for server in (self.webhook_server, self.probe_server, self.metrics_server):
            if server is not None:
                server.stop(left())
        log.info("manager stopped")

    def _install_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread() or os.environ.get(
            "FRAMEWORK_NO_SIGNALS"
        ):
            return
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self._stop.set())
