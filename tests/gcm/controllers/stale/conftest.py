"""Fixtures for the stale and activity controller tests.

Every test gets an RBAC-enforcing API server bootstrapped like ``gcm --embedded`` (CRDs, global roles,
gcm's ServiceAccount and RBAC from ``manifests/``); the controllers run in a Manager authenticated as
that ServiceAccount, so the tests also prove gcm's RBAC suffices. Objects are set up with the admin
client.

Time: the reconcilers get a :class:`FakeClock`; the manager itself (work queues, informers) runs on
real time. Creation timestamps are set by the server, so tests age a Project by setting the fake clock
relative to its ``creationTimestamp`` (:meth:`Harness.age`) and then run a stale check explicitly
(:meth:`Harness.check`: the request is enqueued as the periodic requeue would, and the call returns
once a reconcile that started after the clock was set has finished).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from framework.client import Client, NotFound
from framework.clock import FakeClock
from framework.manager import Manager
from framework.meta.time import parse_time
from framework.reconcile import Request
from framework.testing import eventually
from gcm import embedded
from gcm.config import Duration, default_config
from gcm.controllers.indexes import add_all_field_indexes
from gcm.controllers.project import activity, stale
from gcm.controllers.project.stale.cache import cache_options

DAY = timedelta(hours=24)
CORE = "core.gardener.cloud/v1beta1"
SECURITY = "security.gardener.cloud/v1alpha1"
SA_USER = f"system:serviceaccount:{embedded.NAMESPACE}:{embedded.SERVICE_ACCOUNT}"


def make_config(
    minimum: int = 30, grace: int = 14, expiration: int = 90, sync_period: float = 3600.0, workers: int = 1
):
    cfg = default_config()
    p = cfg.controllers.project
    p.minimum_lifetime_days, p.stale_grace_period_days, p.stale_expiration_time_days = (
        minimum,
        grace,
        expiration,
    )
    p.stale_sync_period = Duration(sync_period)
    p.concurrent_syncs = workers
    return cfg


class Recorder:
    """Wraps a reconciler: counts reconciles per request, when they started (real time), errors."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.cond = threading.Condition()
        self.finished: dict[str, list[tuple[float, Any]]] = defaultdict(list)
        self.inflight = 0

    def reconcile(self, request: Request) -> Any:
        started = time.monotonic()
        outcome: Any = None
        with self.cond:
            self.inflight += 1
        try:
            outcome = self.inner.reconcile(request)
            return outcome
        except Exception as e:
            outcome = e
            raise
        finally:
            with self.cond:
                self.inflight -= 1
                self.finished[request.name].append((started, outcome))
                self.cond.notify_all()

    def wait_after(self, name: str, mark: float, timeout: float = 10.0) -> Any:
        """The outcome (Result or exception) of the first reconcile of ``name`` started after ``mark``."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for started, outcome in self.finished[name]:
                    if started > mark:
                        return outcome
                left = deadline - time.monotonic()
                assert left > 0, f"no reconcile of {name} finished in {timeout}s"
                self.cond.wait(left)

    def count(self, name: str) -> int:
        with self.cond:
            return len(self.finished[name])


def wait_for(fn: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    return eventually(fn, timeout, message=what)


class Env:
    """The API server and its clients; outlives Managers (a config change is a gcm restart)."""

    def __init__(self, tmp: Path) -> None:
        self.embedded = embedded.start(0, tmp / "admin.kubeconfig")
        self.server = self.embedded.server
        self.admin = Client.from_kubeconfig(self.embedded.admin_kubeconfig, qps=0)
        self.clock = FakeClock(datetime.now(UTC).replace(microsecond=0))
        self.suffix = uuid.uuid4().hex[:5]
        self.harnesses: list[Harness] = []

    def manager(
        self,
        minimum: int = 30,
        grace: int = 14,
        expiration: int = 90,
        sync_period: float = 3600.0,
        workers: int = 1,
        **kw: Any,
    ) -> Harness:
        """A started Manager with ``project-stale`` (and ``project-activity``, ``with_activity=True``)."""
        cfg = make_config(minimum, grace, expiration, sync_period, workers)
        h = Harness(self, cfg, **kw)
        self.harnesses.append(h)
        return h

    config = staticmethod(make_config)
    wait_for = staticmethod(wait_for)

    # -- objects ---------------------------------------------------------------------------------

    def project(
        self,
        name: str,
        namespace: str | None = "",
        ns_annotations: dict | None = None,
        create_ns: bool = True,
    ) -> dict:
        """A Project with ``spec.namespace`` (default ``garden-<name>``) and that namespace."""
        ns = f"garden-{name}" if namespace == "" else namespace
        if ns and create_ns:
            self.admin.create(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {
                        "name": ns,
                        "labels": {"gardener.cloud/role": "project", "project.gardener.cloud/name": name},
                        "annotations": ns_annotations or {},
                    },
                }
            )
        spec = {"namespace": ns} if ns else {}
        return self.admin.create(
            {"apiVersion": CORE, "kind": "Project", "metadata": {"name": name}, "spec": spec}
        )

    def create(
        self, api_version: str, kind: str, ns: str, name: str, labels: dict | None = None, **body
    ) -> dict:
        meta = {"name": name, "namespace": ns, "labels": labels or {}}
        return self.admin.create({"apiVersion": api_version, "kind": kind, "metadata": meta, **body})

    def shoot(self, ns: str, name: str, secret_binding: str = "", credentials_binding: str = "") -> dict:
        spec: dict = {"cloudProfileName": "aws", "region": "eu-1"}
        if secret_binding:
            spec["secretBindingName"] = secret_binding
        if credentials_binding:
            spec["credentialsBindingName"] = credentials_binding
        return self.create(CORE, "Shoot", ns, name, spec=spec)

    def get_project(self, name: str) -> dict | None:
        try:
            return self.admin.get(CORE, "Project", name)
        except NotFound:
            return None

    def status(self, name: str) -> dict:
        return (self.get_project(name) or {}).get("status") or {}

    def patch_status(self, name: str, **fields: Any) -> dict:
        return self.admin.patch(CORE, "Project", name, {"status": fields}, subresource="status")

    def created(self, name: str) -> datetime:
        created = parse_time(self.admin.get(CORE, "Project", name)["metadata"]["creationTimestamp"])
        assert created is not None
        return created

    def age(self, name: str, days: float) -> datetime:
        """Set the fake clock to ``days`` after the Project's creation; returns the new now."""
        when = self.created(name) + days * DAY
        self.clock.set(when)
        return when

    def sa_requests(self, verb: str, resource: str) -> int:
        """Requests gcm's ServiceAccount made with ``verb`` on ``resource`` (plural, any group and
        subresource: ``projects`` counts ``projects.core.gardener.cloud/status`` too)."""
        return sum(
            n
            for k, n in self.server.request_counts().items()
            if k.user == SA_USER and k.verb == verb and k.resource.split("/")[0].split(".")[0] == resource
        )

    def stop(self) -> None:
        for h in self.harnesses:
            h.stop()
        self.embedded.stop()


class Harness:
    """A Manager (as gcm's ServiceAccount) running only ``project-stale`` and ``project-activity``."""

    def __init__(
        self, env: Env, cfg: Any, start: bool = True, with_activity: bool = True, also: tuple = ()
    ) -> None:
        self.env = env
        self.cfg = cfg
        self.sa = Client.from_kubeconfig(env.embedded.gcm_kubeconfig, qps=0)
        self.mgr = Manager(self.sa, cache_options=cache_options())
        add_all_field_indexes(self.mgr)
        self.stale_ctrl = stale.add_to_manager(self.mgr, cfg, clock=env.clock)
        self.stale = Recorder(self.stale_ctrl.reconciler)
        self.stale_ctrl.reconciler = self.stale
        if with_activity:
            self.activity_ctrl = activity.add_to_manager(self.mgr, cfg, clock=env.clock)
            self.activity = Recorder(self.activity_ctrl.reconciler)
            self.activity_ctrl.reconciler = self.activity
        for module in also:  # other controllers' modules (``add_to_manager(mgr, cfg)``)
            module.add_to_manager(self.mgr, cfg)
        self._thread: threading.Thread | None = None
        if start:
            self.start()

    def start(self) -> None:
        self._thread = threading.Thread(target=self.mgr.start, name="test-manager", daemon=True)
        self._thread.start()
        wait_for(self.mgr.is_leader, what="manager leading")

    def stop(self) -> None:
        if self._thread is not None:
            self.mgr.stop()
            self._thread.join(15)
            self._thread = None

    def cached_project(self, name: str) -> dict | None:
        try:
            return self.mgr.client.get(CORE, "Project", name)
        except NotFound:
            return None

    def sync(self, name: str) -> None:
        """Wait until the cache holds the Project as the API server has it (or both lack it)."""

        def same() -> bool:
            live, cached = self.env.get_project(name), self.cached_project(name)
            return (live or {}).get("metadata", {}).get("resourceVersion") == (cached or {}).get(
                "metadata", {}
            ).get("resourceVersion")

        wait_for(same, what=f"cache of project {name}")

    def idle(self, *names: str) -> None:
        """Wait until the stale controller is idle (nothing queued or running) and the cache holds
        ``names`` as the API server does, so the next reconcile starts from the current state."""

        def quiet() -> bool:
            with self.stale.cond:
                return self.stale.inflight == 0 and len(self.stale_ctrl.queue) == 0

        while True:
            wait_for(quiet, what="stale controller idle")
            for name in names:
                self.sync(name)
            time.sleep(0.02)  # a watch event of the last write may still be on its way to the queue
            if quiet():
                return

    def check(self, *names: str) -> dict[str, Any]:
        """Run one stale check of each Project at the fake clock's now; returns the outcomes."""
        self.idle(*names)
        mark = time.monotonic()
        for name in names:
            self.stale_ctrl.queue.add(Request(name))
        return {name: self.stale.wait_after(name, mark) for name in names}

    def seen(self, *objs: dict) -> None:
        """Wait until the cache holds each object at (at least) its resourceVersion."""
        for obj in objs:
            meta = obj["metadata"]

            def cached(obj=obj, meta=meta) -> bool:
                try:
                    got = self.mgr.client.get(
                        obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace")
                    )
                except NotFound:
                    return False
                return int(got["metadata"]["resourceVersion"]) >= int(meta["resourceVersion"])

            wait_for(cached, what=f"cache of {obj['kind']} {meta.get('namespace')}/{meta['name']}")

    def gone(self, api_version: str, kind: str, name: str, ns: str | None = None) -> None:
        def absent() -> bool:
            try:
                self.mgr.client.get(api_version, kind, name, ns)
            except NotFound:
                return True
            return False

        wait_for(absent, what=f"{kind} {ns}/{name} gone from the cache")


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path)
    try:
        yield e
    finally:
        e.stop()
