"""Helpers shared by the Project controller tests (imported as
``tests.gcm.controllers.project.project_harness``; not collected); the fixtures built on them (``env``,
``ext_env``, ``make_env``) are in ``conftest.py``.

Every :class:`Env` is an RBAC-enforcing API server bootstrapped like ``python -m gcm --embedded``
(``gcm.embedded.start``: CRDs, ``manifests/global``, gcm's ServiceAccount and least-privilege RBAC from
``manifests/deploy``; plus ``manifests/extension-roles`` for tests that turn extension roles on, the
``ext_env`` fixture), with the ``project`` and ``project-resourcequota`` controllers running in a
Manager *as that ServiceAccount*, so every test also proves gcm's RBAC suffices.

pytest imports test modules with ``--import-mode=importlib`` (so they cannot import their siblings);
this module is imported from the repository root (``pythonpath`` in pyproject.toml).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from framework.client import Client, NotFound
from framework.manager import Manager
from framework.reconcile import Request
from framework.testing import eventually
from gcm import embedded
from gcm.config import API_VERSION, KIND, load_config
from gcm.controllers.indexes import add_all_field_indexes
from gcm.controllers.project import project as project_controller
from gcm.controllers.project import resourcequota

P = "core.gardener.cloud/v1beta1"
RBAC = "rbac.authorization.k8s.io/v1"
GCM_USER = "system:serviceaccount:garden:gardener-controller-manager"
READ_VERBS = {"get", "list", "watch"}
CONFIRM = {"confirmation.gardener.cloud/deletion": "true"}


def make_config(**project: Any) -> Any:
    """A defaulted configuration; ``project`` holds ``controllers.project`` fields in their JSON names.

    ``extensionRoles`` is false unless a test asks for it, as in manifests/deploy: then gcm runs with
    exactly the deploy's least-privilege RBAC; with it, :class:`Env` adds manifests/extension-roles.
    """
    project.setdefault("extensionRoles", False)
    raw = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "leaderElection": {"leaderElect": False},
        "controllers": {"project": project},
    }
    return load_config(text=json.dumps(raw))


def wait_for(fn: Callable[[], Any], timeout: float = 15.0, message: str = "condition") -> Any:
    """Poll ``fn`` every 50 ms until it returns something truthy (NotFound: not yet); fail after
    ``timeout`` seconds."""
    return eventually(fn, timeout, interval=0.05, message=message, ignore=(NotFound,))


class Env:
    def __init__(
        self,
        tmp_path: Path,
        cfg: Any = None,
        start: bool = True,
        controllers: tuple[str, ...] = ("project", "project-resourcequota"),
    ) -> None:
        self.tmp_path = tmp_path
        self.controllers = controllers
        self.cfg = cfg or make_config()
        self.embedded = embedded.start(
            0, tmp_path / "admin.kubeconfig", extension_roles=self.cfg.controllers.project.extension_roles
        )
        self.server = self.embedded.server
        self.admin = Client.from_kubeconfig(self.embedded.admin_kubeconfig, qps=0)
        self.mgr: Manager | None = None
        self.controller: Any = None
        self._thread: threading.Thread | None = None
        if start:
            self.start()

    # -- gcm -------------------------------------------------------------------------------------------

    def start(self, cfg: Any = None, concurrent_syncs: int | None = None) -> Manager:
        if cfg is not None:
            self.cfg = cfg
        if concurrent_syncs is not None:
            self.cfg.controllers.project.concurrent_syncs = concurrent_syncs
        client = Client.from_kubeconfig(self.embedded.gcm_kubeconfig, qps=0)
        mgr = Manager(client, graceful_shutdown_timeout=10)
        add_all_field_indexes(mgr)
        if "project" in self.controllers:
            self.controller = project_controller.add_to_manager(mgr, self.cfg)
        if "project-resourcequota" in self.controllers:
            self.quota_controller = resourcequota.add_to_manager(mgr, self.cfg)
        self.mgr = mgr
        self._thread = threading.Thread(target=mgr.start, name="gcm-manager", daemon=True)
        self._thread.start()
        wait_for(mgr.is_leader, message="controllers started")
        return mgr

    def stop(self) -> None:
        if self.mgr is not None:
            self.mgr.stop()
            assert self._thread is not None
            self._thread.join(20)
            assert not self._thread.is_alive(), "manager did not stop"
            self.mgr = None

    def close(self) -> None:
        try:
            self.stop()
        finally:
            self.embedded.stop()

    def reconciles(self, controller: str = "project", result: str = "success") -> float:
        assert self.mgr is not None
        value = self.mgr.registry.get_sample_value(
            "controller_runtime_reconcile_total", {"controller": controller, "result": result}
        )
        return value or 0.0

    def reconcile_again(self, name: str) -> None:
        """Enqueue the Project (as a resync would) and wait until one more reconcile succeeded."""
        before = self.reconciles()
        self.controller.queue.add(Request(name))
        wait_for(lambda: self.reconciles() > before, message=f"{name} reconciled again")

    def wait_cached(self, obj: dict) -> None:
        """Wait until gcm's cache holds ``obj`` at its resourceVersion (so a reconcile sees it)."""
        meta = obj["metadata"]

        def cached() -> bool:
            assert self.mgr is not None
            live = self.mgr.client.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
            return int(live["metadata"]["resourceVersion"]) >= int(meta["resourceVersion"])

        wait_for(cached, message=f"{meta['name']} cached")

    def gcm_writes(self) -> dict[tuple[str, str], int]:
        """Requests gcm sent that are not reads, by (verb, resource)."""
        out: dict[tuple[str, str], int] = {}
        for key, n in self.server.request_counts().items():
            if key.user == GCM_USER and key.verb not in READ_VERBS:
                out[(key.verb, key.resource)] = out.get((key.verb, key.resource), 0) + n
        return out

    # -- objects ---------------------------------------------------------------------------------------

    def create_project(
        self,
        name: str,
        namespace: str | None = None,
        members: list[dict] | None = None,
        labels: dict[str, str] | None = None,
        **spec: Any,
    ) -> dict:
        meta: dict[str, Any] = {"name": name}
        if labels:
            meta["labels"] = labels
        if namespace:
            spec["namespace"] = namespace
        if members is not None:
            spec["members"] = members
        return self.admin.create({"apiVersion": P, "kind": "Project", "metadata": meta, "spec": spec})

    def project(self, name: str) -> dict | None:
        try:
            return self.admin.get(P, "Project", name)
        except NotFound:
            return None

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict | None:
        try:
            return self.admin.get(api_version, kind, name, namespace)
        except NotFound:
            return None

    def wait_phase(self, name: str, phase: str, timeout: float = 15.0) -> dict:
        def check() -> dict | None:
            p = self.project(name)
            if p is None:
                return None
            status = p.get("status") or {}
            ok = (
                status.get("phase") == phase
                and status.get("observedGeneration") == p["metadata"]["generation"]
            )
            return p if ok else None

        return wait_for(check, timeout, f"project {name} {phase}")

    def delete_project(self, name: str) -> None:
        """Annotate the deletion confirmation (gardener-apiserver requires it), then DELETE."""
        self.admin.patch(P, "Project", name, {"metadata": {"annotations": CONFIRM}})
        self.admin.delete(P, "Project", name)

    def wait_gone(self, api_version: str, kind: str, name: str, namespace: str | None = None, timeout=15.0):
        wait_for(lambda: self.get(api_version, kind, name, namespace) is None, timeout, f"{kind} {name} gone")

    def events(self, name: str, reason: str | None = None) -> list[dict]:
        items = self.admin.list("events.k8s.io/v1", "Event", namespace="default")["items"]
        return [
            e
            for e in items
            if (e.get("regarding") or {}).get("kind") == "Project"
            and (e.get("regarding") or {}).get("name") == name
            and (reason is None or e.get("reason") == reason)
        ]

    def wait_event(self, name: str, reason: str, timeout: float = 15.0) -> dict:
        return wait_for(lambda: self.events(name, reason), timeout, f"event {reason} for {name}")[0]

    def create_namespace(
        self, name: str, labels: dict | None = None, annotations: dict | None = None
    ) -> dict:
        meta: dict[str, Any] = {"name": name}
        if labels:
            meta["labels"] = labels
        if annotations:
            meta["annotations"] = annotations
        return self.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": meta})

    def create_shoot(self, name: str, namespace: str) -> dict:
        return self.admin.create(
            {"apiVersion": P, "kind": "Shoot", "metadata": {"name": name, "namespace": namespace}, "spec": {}}
        )


def project_labels(name: str) -> dict[str, str]:
    return {"gardener.cloud/role": "project", "project.gardener.cloud/name": name}


def user(name: str, **roles: Any) -> dict:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name, **roles}


class FakeRecorder:
    """Collects ``eventf`` calls as (type, reason, action, note) for reconcilers run directly."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str, str]] = []

    def eventf(self, regarding: Any, type: str, reason: str, action: str, note: str, *args: Any, **kw: Any):
        self.events.append((type, reason, action, note % args if args else note))
        return True


class PhaseWatch:
    """Records every (phase, observedGeneration, generation, resourceVersion) a Project passes through."""

    def __init__(self, env: Env, name: str) -> None:
        self.name = name
        self.seen: list[tuple[Any, Any, Any, int]] = []
        self._watch = env.admin.watch(P, "Project", resource_version=str(env.server.resource_version))
        self._thread = threading.Thread(target=self._run, name=f"phase-watch-{name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for _, obj in self._watch:
                meta = obj.get("metadata") or {}
                if meta.get("name") != self.name:
                    continue
                status = obj.get("status") or {}
                entry = (
                    status.get("phase"),
                    status.get("observedGeneration"),
                    meta.get("generation"),
                    int(meta.get("resourceVersion") or 0),
                )
                if not self.seen or self.seen[-1][:3] != entry[:3]:
                    self.seen.append(entry)
        except Exception:
            pass

    def phases(self) -> list[Any]:
        out: list[Any] = []
        for phase, *_ in self.seen:
            if not out or out[-1] != phase:
                out.append(phase)
        return out

    def close(self) -> None:
        self._watch.close()
        self._thread.join(5)
