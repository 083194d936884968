"""Builds gcm's Manager from the configuration and registers its controllers and webhooks
(Gardener's ``cmd/gardener-controller-manager/app``): the field indexes are added once
(:func:`gcm.controllers.indexes.add_all_field_indexes`), then :func:`gcm.controllers.add.add_to_manager`
and :func:`gcm.webhooks.add.add_to_manager` add each controller and webhook explicitly.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog
from prometheus_client import CollectorRegistry

from framework.manager import LeaderElectionOptions, Manager
from framework.markers.rbac import rbac
from framework.webhook import WebhookServer
from gcm.config import ConfigError, ControllerManagerConfiguration
from gcm.config.errors import invalid, required
from gcm.connection import APIServerConnection
from gcm.controllers import add as controllers
from gcm.controllers.indexes import add_all_field_indexes
from gcm.webhooks import add as webhooks

log = structlog.get_logger("gcm")

AddToManager = Callable[[Manager, ControllerManagerConfiguration], object]
"""Adds controllers to a Manager from the configuration (:func:`gcm.controllers.add.add_to_manager`)."""

AddIndexes = Callable[[Manager], object]
"""Adds field indexes to a Manager's cache (:func:`gcm.controllers.indexes.add_all_field_indexes`)."""


def bind(address: str, port: int) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"{host}:{port}"


def webhook_server(
    cfg: ControllerManagerConfiguration, registry: CollectorRegistry | None = None
) -> WebhookServer | None:
    """The listener of ``server.webhooks`` (or legacy ``server.https``); its certificates must exist.
    Its metrics go to ``registry`` (the manager's, so ``/metrics`` serves them)."""
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
        registry=registry,
    )
    try:
        server.certs.read()  # not PEM, key not matching: the operator's files, so exit 2 naming them
    except (OSError, ssl.SSLError, ValueError) as e:
        raise ConfigError([invalid(field, str(cert_dir), f"cannot load {cert} and {key}: {e}")]) from None
    return server


# The secure metrics endpoint (--metrics-secure, as deployment.yaml runs gcm): the Manager's metrics
# filter checks a scraper's bearer token with a TokenReview and its `get` on /metrics with a
# SubjectAccessReview (controller-runtime's metrics filters). A review reads and changes nothing stored.
@rbac(groups="authentication.k8s.io", resources="tokenreviews", verbs="create")
@rbac(groups="authorization.k8s.io", resources="subjectaccessreviews", verbs="create")
def build_manager(
    cfg: ControllerManagerConfiguration,
    client: Any,
    *,
    add_controllers: AddToManager = controllers.add_to_manager,
    add_indexes: AddIndexes | None = add_all_field_indexes,
    **manager_options: Any,
) -> Manager:
    """The Manager ``cfg`` describes, with the field indexes ``add_indexes`` adds (all of gcm's, by
    default; ``None``: none, for a manager running controllers that look none up), the controllers
    ``add_controllers`` adds (all that ``cfg`` enables, by default) and the webhooks; ``manager_options``
    go to :class:`Manager`."""
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
    # Fixed when the Manager is constructed: Events cached slim, Secrets metadata-only.
    manager_options["cache_options"] = {
        **controllers.cache_options(cfg),
        **(manager_options.get("cache_options") or {}),
    }
    server = cfg.server
    if cfg.controllers.cache_sync_timeout is not None:
        manager_options.setdefault("cache_sync_timeout", float(cfg.controllers.cache_sync_timeout))
    # One registry for the manager and its webhook server: /metrics serves the webhooks' metrics too.
    registry = manager_options.pop("registry", None) or CollectorRegistry()
    mgr = Manager(
        client,
        registry=registry,
        leader_election=election,
        metrics_bind_address=bind(server.metrics.bind_address, server.metrics.port)
        if server.metrics
        else None,
        health_probe_bind_address=(
            bind(server.health_probes.bind_address, server.health_probes.port)
            if server.health_probes
            else None
        ),
        webhook_server=webhook_server(cfg, registry),
        **manager_options,
    )
    # Waits for the API server in the open: the first contact is logged, /readyz says what is missing.
    connection = APIServerConnection(client)
    mgr.add(connection, need_leader_election=False)
    mgr.add_readyz_check("apiserver", connection.check)
    if add_indexes is not None:
        add_indexes(mgr)  # once, before any controller: they only look the indexes up
    add_controllers(mgr, cfg)
    webhooks.add_to_manager(mgr, cfg)
    return mgr


def add_for_generate(mgr: Manager) -> None:
    """``python -m framework generate``'s setup (``[tool.framework] setup`` in pyproject.toml): the field
    indexes, controllers and webhooks :func:`build_manager` adds, configured as
    ``manifests/deploy/configmap.yaml`` deploys gcm (the Event controller and both webhooks on), so the
    generated ClusterRole holds what the deployed gcm's caches need. The manager is never started."""
    import logging

    import yaml

    from gcm.config.load import load_config

    path = Path(__file__).resolve().parents[1] / "manifests" / "deploy" / "configmap.yaml"
    (configmap,) = [d for d in yaml.safe_load_all(path.read_text()) if d]
    cfg = load_config(text=configmap["data"]["config.yaml"], ignored=[])
    # What build_manager constructs the Manager with (Secrets metadata-only, Events slim).
    mgr.cache.options.update(controllers.cache_options(cfg))
    # Only warnings meanwhile: "serving webhook" and the like would be untrue of a manager that never
    # starts. The caller's logging configuration is restored after.
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    try:
        add_all_field_indexes(mgr)
        controllers.add_to_manager(mgr, cfg)
        webhooks.add_to_manager(mgr, cfg)
    finally:
        structlog.configure(**saved)
