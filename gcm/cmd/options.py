"""Start-up steps of ``python -m gcm`` that turn an operator's mistake into one line and an exit code.

Every step raises :class:`StartupError`: ``str()`` is what gcm prints on stderr (naming the file, field,
port or address and what to do), ``exit_code`` the documented status (2 for anything the operator
configured wrong). ``run`` and ``stale-report`` share them, so both fail the same way.
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from framework.client import Client
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
    "load_configuration",
    "make_client",
    "resolve_kubeconfig",
]

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2

_SA_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
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


@dataclass(frozen=True)
class KubeconfigSource:
    """Where the garden kubeconfig comes from: ``path`` ("" = in-cluster credentials) and ``origin``
    (the flag, variable or field that named it, for error messages)."""

    path: str
    origin: str

    def describe(self) -> str:
        return "in-cluster credentials" if not self.path else f"kubeconfig {self.path} (from {self.origin})"


def resolve_kubeconfig(
    flag: str | None, cfg: ControllerManagerConfiguration, *, embedded: bool = False
) -> KubeconfigSource | None:
    """--kubeconfig, $KUBECONFIG, gardenClientConnection.kubeconfig, in-cluster, ~/.kube/config.

    ``embedded``: a ``.gcm/kubeconfig`` in the current directory (a ``gcm --embedded`` started here
    wrote it) comes before ``~/.kube/config``, which more often names another cluster."""
    for candidate, origin in (
        (flag, "--kubeconfig"),
        (os.environ.get("KUBECONFIG"), "$KUBECONFIG"),
        (cfg.garden_client_connection.kubeconfig, "gardenClientConnection.kubeconfig"),
    ):
        if candidate:
            return KubeconfigSource(candidate, origin)
    if os.environ.get("KUBERNETES_SERVICE_HOST") and _SA_TOKEN.exists():
        return KubeconfigSource("", "in-cluster")
    if embedded and Path(EMBEDDED_KUBECONFIG).is_file():
        return KubeconfigSource(EMBEDDED_KUBECONFIG, EMBEDDED_ORIGIN)
    home = Path.home() / ".kube" / "config"
    return KubeconfigSource(str(home), "~/.kube/config") if home.is_file() else None


def _check_kubeconfig_file(source: KubeconfigSource) -> None:
    """What the kubernetes loader reports as a traceback: missing file, not YAML, no current-context."""
    what = source.describe()
    if os.pathsep in source.path:
        return  # a KUBECONFIG list: the loader merges the files and skips missing ones, as kubectl
    path = Path(source.path)
    if not path.exists():
        raise StartupError(f"{what} does not exist; point {source.origin} at a kubeconfig file")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise StartupError(f"{what} cannot be read: {getattr(e, 'strerror', None) or e}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise StartupError(f"{what} is not valid YAML{where}: {getattr(e, 'problem', None) or e}") from None
    if not isinstance(doc, dict):
        raise StartupError(f"{what} is not a kubeconfig (expected a YAML mapping with kind: Config)")
    if not doc.get("current-context"):
        raise StartupError(
            f"{what} has no current-context; set one with "
            f"kubectl config use-context NAME --kubeconfig {source.path}"
        )


def make_client(source: KubeconfigSource, cfg: ControllerManagerConfiguration) -> Client:
    """A client for ``source``; a kubeconfig gcm cannot use is a :class:`StartupError` (exit 2).

    Builds the client only: nothing here talks to the API server, so an unreachable server is not
    an error at start-up (the caches and leader election retry)."""
    from kubernetes.config.config_exception import ConfigException

    conn = cfg.garden_client_connection
    kw: dict[str, Any] = {"qps": conn.qps, "burst": conn.burst} if conn.qps else {}
    if source.path:
        _check_kubeconfig_file(source)
    try:
        if not source.path:
            return Client.in_cluster(**kw)
        return Client.from_kubeconfig(source.path, **kw)
    except (ConfigException, OSError, ValueError, ssl.SSLError) as e:
        raise StartupError(f"{source.describe()} is not usable: {e}") from None
    except (TypeError, KeyError, AttributeError) as e:
        # The loader trips over a malformed structure (a list where a map belongs): still the file.
        raise StartupError(f"{source.describe()} is not usable: malformed kubeconfig ({e})") from None


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
