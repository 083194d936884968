"""Start-up steps of ``python -m gcm`` that turn an operator's mistake into one line and an exit code.

Every step raises :class:`StartupError`: ``str()`` is what gcm prints on stderr (naming the file, field,
port or address and what to do), ``exit_code`` the documented status (2 for anything the operator
configured wrong). ``run`` and ``stale-report`` share them, so both fail the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from framework.client import Client, ConfigSource
from framework.client import config as client_config
from framework.server import BindError
from gcm.config import ConfigError, ControllerManagerConfiguration, IgnoredField, load_config

__all__ = [
    "EMBEDDED_KUBECONFIG",
    "EXIT_OK",
    "EXIT_RUNTIME",
    "EXIT_USAGE",
    "NO_KUBECONFIG",
    "NO_KUBECONFIG_NOR_EMBEDDED",
    "KubeconfigSource",
    "StartupError",
    "bind_error",
    "check_metrics_certificates",
    "load_configuration",
    "make_client",
    "resolve_kubeconfig",
]

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2

NO_KUBECONFIG = (
    "no kubeconfig found (--kubeconfig, $KUBECONFIG, gardenClientConnection.kubeconfig, in-cluster, "
    "~/.kube/config); to try gcm without a cluster run: python -m gcm --embedded"
)
# Where `gcm --embedded` writes its admin kubeconfig (--embedded-kubeconfig's default), relative to where
# it was started: the tools next to it (stale-report) find that garden there.
EMBEDDED_KUBECONFIG = ".gcm/kubeconfig"
EMBEDDED_ORIGIN = "the garden of a gcm --embedded started here"
NO_KUBECONFIG_NOR_EMBEDDED = (
    "no kubeconfig found (--kubeconfig, $KUBECONFIG, gardenClientConnection.kubeconfig, in-cluster, "
    f"{EMBEDDED_KUBECONFIG}, ~/.kube/config); start a garden with: python -m gcm --embedded"
)


class StartupError(Exception):
    """gcm cannot start; ``str()`` is the message for the operator, ``exit_code`` the process status."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def load_configuration(
    path: str | None, ignored: list[IgnoredField] | None = None
) -> ControllerManagerConfiguration:
    """``load_config`` with every problem in the error message (one line, or one per bad field)."""
    try:
        return load_config(path, ignored=ignored)
    except ConfigError as e:
        where = f" in {path}" if path else ""
        if len(e.errors) == 1:
            raise StartupError(f"invalid configuration{where}: {e.errors[0]}") from None
        raise StartupError(
            f"invalid configuration{where}:\n" + "\n".join(f"  {x}" for x in e.errors)
        ) from None


KubeconfigSource = ConfigSource
"""Where the garden kubeconfig comes from (framework's :class:`~framework.client.ConfigSource`)."""


def resolve_kubeconfig(
    flag: str | None, cfg: ControllerManagerConfiguration, *, embedded: bool = False
) -> KubeconfigSource | None:
    """``framework.client.get_config``'s order (--kubeconfig, $KUBECONFIG, in-cluster, ~/.kube/config)
    with gcm's ``gardenClientConnection.kubeconfig`` after $KUBECONFIG.

    ``embedded``: a ``.gcm/kubeconfig`` in the current directory (a ``gcm --embedded`` started here
    wrote it) comes before ``~/.kube/config``, which more often names another cluster."""
    return client_config.find_config(
        flag,
        after_env=[(cfg.garden_client_connection.kubeconfig, "gardenClientConnection.kubeconfig")],
        before_home=[(EMBEDDED_KUBECONFIG, EMBEDDED_ORIGIN)] if embedded else [],
    )


def make_client(source: KubeconfigSource, cfg: ControllerManagerConfiguration) -> Client:
    """A client for ``source``; a kubeconfig gcm cannot use is a :class:`StartupError` (exit 2).

    Builds the client only: nothing here talks to the API server, so an unreachable server is not
    an error at start-up (the caches and leader election retry)."""
    conn = cfg.garden_client_connection
    kw: dict[str, Any] = {"qps": conn.qps, "burst": conn.burst} if conn.qps else {}
    try:
        return Client.from_config(client_config.load_config(source), **kw)
    except client_config.ConfigError as e:
        raise StartupError(str(e)) from None


def check_metrics_certificates(cert_dir: str) -> None:
    """``--metrics-cert-dir``'s ``tls.crt`` and ``tls.key`` load; else a :class:`StartupError` naming them."""
    import ssl

    from framework.certwatcher import CertWatcher

    directory = Path(cert_dir)
    try:
        CertWatcher(directory / "tls.crt", directory / "tls.key", registry=CollectorRegistry()).read()
    except (OSError, ssl.SSLError, ValueError) as e:
        reason = getattr(e, "strerror", None) or e
        raise StartupError(
            f"--metrics-cert-dir {cert_dir}: cannot load tls.crt and tls.key: {reason}"
        ) from None


# The config field that sets each of gcm's listeners, by server name (framework's defaults).
_SERVER_FIELDS = {
    "health-probe-server": "server.healthProbes",
    "metrics-server": "server.metrics",
}


def bind_error(error: BindError, cfg: ControllerManagerConfiguration, embedded: bool = False) -> StartupError:
    """The one line for a listener that cannot bind: the port, the reason and the field to change."""
    field = _SERVER_FIELDS.get(error.server)
    if field is None and error.server == "webhook-server":
        listener = cfg.server.webhook_listener()
        field = listener.source if listener is not None else "server.webhooks"
    host = error.host or "0.0.0.0"
    shown = f"[{host}]" if ":" in host else host
    where = f"set {field}.port (or {field}.bindAddress) in the config" if field else "change its address"
    if embedded:
        where += ", or pass --embedded-port-offset N to move every embedded port"
    return StartupError(f"{error.server} cannot listen on {shown}:{error.port}: {error.reason}; {where}")
