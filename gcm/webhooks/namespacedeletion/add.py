"""Wiring of the namespace-deletion webhook: registered on the manager's webhook server by a runnable
once the Namespace and Project caches synced, with the readiness check ``webhook-namespace-deletion``."""

from __future__ import annotations

import threading
from typing import Any

import structlog

from framework.manager import Manager
from gcm.apis.constants import PROJECT
from gcm.config import ControllerManagerConfiguration
from gcm.webhooks.metrics import counted
from gcm.webhooks.namespacedeletion.handler import PATH, WEBHOOK_NAME, NamespaceDeletionHandler
from gcm.webhooks.switch import webhook_server_for

log = structlog.get_logger("gcm.webhooks.namespacedeletion")

READYZ_CHECK = "webhook-namespace-deletion"
CONFIG_SWITCH = "namespace_deletion"  # webhooks.namespaceDeletion.enabled


class WebhookRegistrar:
    """A runnable (every replica) that registers ``handler`` at ``path`` once ``informers`` synced."""

    def __init__(
        self, server: Any, path: str, handler: Any, informers: list[Any], poll: float = 0.05
    ) -> None:
        self.server = server
        self.path = path
        self.handler = handler
        self.informers = informers
        self.poll = poll
        self.name = "namespace-deletion-webhook"
        self._registered = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            if all(i.has_synced() for i in self.informers):
                if self.path not in self.server.webhooks:
                    self.server.register(self.path, self.handler)
                self._registered.set()
                log.info("serving webhook", path=self.path)
                return
            self._stop.wait(self.poll)

    def stop(self, timeout: float = 30.0) -> bool:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    @property
    def registered(self) -> bool:
        return self._registered.is_set()

    def wait_registered(self, timeout: float | None = None) -> bool:
        return self._registered.wait(timeout)

    def check(self) -> str | None:
        """Readiness: None once the webhook is served."""
        if not self._registered.is_set():
            return f"webhook {self.path} is waiting for the Namespace and Project caches to sync"
        return None


def add_to_manager(mgr: Manager, cfg: ControllerManagerConfiguration) -> WebhookRegistrar | None:
    """Register the webhook (served once the caches synced) and its readiness check; None (and a log
    line) when it is off."""
    server = webhook_server_for(mgr, cfg, CONFIG_SWITCH, WEBHOOK_NAME)
    if server is None:
        return None
    handler = counted(NamespaceDeletionHandler(mgr.client, mgr.api_reader), PATH, mgr.registry)
    informers = [mgr.cache.informer("v1", "Namespace"), mgr.cache.informer(*PROJECT)]
    registrar = WebhookRegistrar(server, PATH, handler, informers)
    mgr.add(registrar, need_leader_election=False)  # every replica serves it (it only reads)
    mgr.add_readyz_check(READYZ_CHECK, registrar.check)
    return registrar
