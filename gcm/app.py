"""Builds gcm's Manager from the configuration and registers its controllers and webhooks.

A controller plugs in with one call: ``register_controller(name, fn)`` where ``fn(manager, config)``
adds it to the manager (``gcm/controllers/...``); the registrations run in ``build_manager``.
"""

from __future__ import annotations

import importlib
import importlib.util
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from framework.manager import LeaderElectionOptions, Manager
from framework.webhook import WebhookServer
from gcm.config import ConfigError, ControllerManagerConfiguration
from gcm.config.errors import invalid, required
from gcm.connection import APIServerConnection

log = structlog.get_logger("gcm")

Registration = Callable[[Manager, ControllerManagerConfiguration], None]
_controllers: list[tuple[str, Registration]] = []

# Each module exposes ``add_to_manager(mgr, cfg)`` and decides from ``cfg`` whether it is enabled.
CONTROLLER_MODULES = (
    "gcm.controllers.project.project",
    "gcm.controllers.project.resourcequota",
    "gcm.controllers.project.stale",
    "gcm.controllers.project.activity",
    "gcm.controllers.event",
    "gcm.webhooks.namespacedeletion",
)


def register_controller(name: str, fn: Registration) -> None:
    """Add a controller (or webhook) registration run for every Manager ``build_manager`` creates."""
    _controllers.append((name, fn))


def bind(address: str, port: int) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"{host}:{port}"


def webhook_server(cfg: ControllerManagerConfiguration) -> WebhookServer | None:
    """The listener of ``server.webhooks`` (or legacy ``server.https``); its certificates must exist."""
    listener = cfg.server.webhook_listener()
    if listener is None:
        return None
    if listener.cert_dir:
        cert_dir, cert, key = Path(listener.cert_dir), "tls.crt", "tls.key"
        field = f"{listener.source}.tls.serverCertDir"
    elif listener.cert_path and listener.key_path:
        cert_dir, cert, key = (
            Path(listener.cert_path).parent,
            Path(listener.cert_path).name,
            Path(listener.key_path).name,
        )
        field = f"{listener.source}.tls.serverCertPath"
    else:
        raise ConfigError([required(f"{listener.source}.tls", "the webhook server needs certificates")])
    missing = [p for p in (cert_dir / cert, cert_dir / key) if not p.is_file()]
    if missing:
        raise ConfigError(
            [invalid(field, str(cert_dir), "certificate files not found: " + ", ".join(map(str, missing)))]
        )
    server = WebhookServer(
        listener.bind_address or "0.0.0.0",
        listener.port,
        cert_dir=str(cert_dir),
        cert_name=cert,
        key_name=key,
    )
    try:
        server.certs.read()  # not PEM, key not matching: the operator's files, so exit 2 naming them
    except (OSError, ssl.SSLError, ValueError) as e:
        raise ConfigError([invalid(field, str(cert_dir), f"cannot load {cert} and {key}: {e}")]) from None
    return server


def _available(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def build_manager(cfg: ControllerManagerConfiguration, client: Any, **manager_options: Any) -> Manager:
    le = cfg.leader_election
    election = None
    if le is not None and le.leader_elect:
        election = LeaderElectionOptions(
            namespace=le.resource_namespace,
            name=le.resource_name,
            lease_duration=float(le.lease_duration),
            renew_deadline=float(le.renew_deadline),
            retry_period=float(le.retry_period),
            release_on_cancel=True,
        )
    if cfg.controllers.event is not None:
        # Events are cached slim; cache options are fixed when the Manager is constructed.
        from gcm.controllers.event import EVENT_CACHE_OPTIONS

        manager_options["cache_options"] = {
            **EVENT_CACHE_OPTIONS,
            **(manager_options.get("cache_options") or {}),
        }
    # Secrets are cached metadata-only (stale check, activity): never their data.
    from gcm.controllers.project.stale.cache import cache_options as stale_cache_options

    manager_options["cache_options"] = {
        **stale_cache_options(),
        **(manager_options.get("cache_options") or {}),
    }
    server = cfg.server
    if cfg.controllers.cache_sync_timeout is not None:
        manager_options.setdefault("cache_sync_timeout", float(cfg.controllers.cache_sync_timeout))
    mgr = Manager(
        client,
        leader_election=election,
        metrics_bind_address=bind(server.metrics.bind_address, server.metrics.port)
        if server.metrics
        else None,
        health_probe_bind_address=(
            bind(server.health_probes.bind_address, server.health_probes.port)
            if server.health_probes
            else None
        ),
        webhook_server=webhook_server(cfg),
        **manager_options,
    )
    # Waits for the API server in the open: the first contact is logged, /readyz says what is missing.
    connection = APIServerConnection(client)
    mgr.add(connection, need_leader_election=False)
    mgr.add_readyz_check("apiserver", connection.check)
    for module in CONTROLLER_MODULES:
        if not _available(module):
            log.warning("controller module not available", module=module)
            continue
        importlib.import_module(module).add_to_manager(mgr, cfg)
    for name, register in _controllers:
        log.info("registering", controller=name)
        register(mgr, cfg)
    return mgr
