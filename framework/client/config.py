"""``get_config()``: where a program's API server credentials come from, in controller-runtime's order
(``sigs.k8s.io/controller-runtime/pkg/client/config.GetConfig``).

::

    from framework.client import Client, get_config

    client = Client.from_config(get_config(args.kubeconfig))  # args.kubeconfig: a --kubeconfig flag

The first that exists wins:

1. ``kubeconfig``, the program's ``--kubeconfig`` flag (an error if that file is missing: it was asked for);
2. ``$KUBECONFIG`` (a path, or several joined by ``:`` that are merged as kubectl merges them);
3. the pod's service account (``$KUBERNETES_SERVICE_HOST`` and ``$KUBERNETES_SERVICE_PORT`` set, and its
   token file present), as client-go's ``rest.InClusterConfig``;
4. ``~/.kube/config``.

``context`` picks a kubeconfig context other than the current one. Whatever goes wrong is one line
(:class:`ConfigError`, a ``ValueError``) naming the file and where it came from, or, when nothing was
found, everything that was tried. :func:`find_config` and :func:`load_config` are the two halves, for a
program that adds places of its own to the search (gcm's ``gardenClientConnection.kubeconfig``).
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "SERVICE_ACCOUNT_DIR",
    "ConfigError",
    "ConfigSource",
    "RESTConfig",
    "find_config",
    "get_config",
    "in_cluster_config",
    "load_config",
    "load_kubeconfig",
]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
"""Where the kubelet mounts a pod's service-account token, CA and namespace."""

HOME_KUBECONFIG = "~/.kube/config"


class ConfigError(ValueError):
    """No usable configuration; ``str()`` is one line naming the file and its origin, or what was tried."""


@dataclass(frozen=True)
class ConfigSource:
    """Where the configuration comes from: ``path`` (``""``: the pod's service account) and ``origin``,
    the flag, variable or field that named it (for messages)."""

    path: str
    origin: str

    @property
    def in_cluster(self) -> bool:
        return not self.path

    def describe(self) -> str:
        return "in-cluster credentials" if self.in_cluster else f"kubeconfig {self.path} (from {self.origin})"


@dataclass(frozen=True)
class RESTConfig:
    """A loaded configuration: the official ``kubernetes.client.Configuration`` (host, TLS, credentials),
    the default namespace (the kubeconfig context's, or the service account's) and its source.
    :meth:`Client.from_config <framework.client.Client.from_config>` builds a client from it."""

    configuration: Any
    namespace: str | None
    source: ConfigSource

    @property
    def host(self) -> str:
        return str(self.configuration.host)


def find_config(
    kubeconfig: str | os.PathLike[str] | None = None,
    *,
    flag: str = "--kubeconfig",
    after_env: Iterable[tuple[str | None, str]] = (),
    before_home: Iterable[tuple[str | None, str]] = (),
    service_account_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR,
    tried: list[str] | None = None,
) -> ConfigSource | None:
    """The first of ``kubeconfig`` (named ``flag`` in messages), ``$KUBECONFIG``, each ``(path, origin)``
    of ``after_env`` that is set, the service account in ``service_account_dir`` (when
    ``$KUBERNETES_SERVICE_HOST`` is set), each of ``before_home`` whose file exists, ``~/.kube/config``;
    ``None`` if none is there. ``tried`` (if given) gets one phrase per place looked at."""
    notes = tried if tried is not None else []
    explicit = [
        (os.fspath(kubeconfig) if kubeconfig else None, flag),
        (os.environ.get("KUBECONFIG"), "$KUBECONFIG"),
    ]
    for candidate, origin in (*explicit, *after_env):
        if candidate:
            return ConfigSource(str(candidate), origin)
        notes.append(f"{origin} (not set)")
    token = Path(service_account_dir) / "token"
    if os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT"):
        if token.is_file():
            return ConfigSource("", "in-cluster")
        notes.append(f"in-cluster ({token} missing)")
    else:
        notes.append("in-cluster ($KUBERNETES_SERVICE_HOST not set)")
    for candidate, origin in before_home:
        if candidate and Path(candidate).is_file():
            return ConfigSource(str(candidate), origin)
        if candidate:
            notes.append(f"{origin} ({candidate} missing)")
    home = Path.home() / ".kube" / "config"
    if home.is_file():
        return ConfigSource(str(home), HOME_KUBECONFIG)
    notes.append(f"{HOME_KUBECONFIG} ({home} missing)")
    return None


def get_config(
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    *,
    service_account_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR,
) -> RESTConfig:
    """The configuration of the first place in the module's order that exists; :class:`ConfigError`
    (one line) when none does or the one found cannot be used."""
    tried: list[str] = []
    source = find_config(kubeconfig, service_account_dir=service_account_dir, tried=tried)
    if source is None:
        raise ConfigError("no kubeconfig found; tried " + ", ".join(tried))
    return load_config(source, context, service_account_dir=service_account_dir)


def load_config(
    source: ConfigSource,
    context: str | None = None,
    *,
    service_account_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR,
) -> RESTConfig:
    """Load ``source``: the kubeconfig file (its ``context``, else the current one) or the service
    account. Nothing is sent to the API server. Raises :class:`ConfigError` naming the file and origin."""
    from kubernetes.config.config_exception import ConfigException

    if not source.in_cluster:
        _check_kubeconfig_file(source, context)
    try:
        if source.in_cluster:
            return _in_cluster(source, Path(service_account_dir))
        configuration, namespace = load_kubeconfig(source.path, context)
        return RESTConfig(configuration, namespace, source)
    except (ConfigException, OSError, ValueError, ssl.SSLError) as e:
        raise ConfigError(f"{source.describe()} is not usable: {e}") from None
    except (TypeError, KeyError, AttributeError) as e:
        # The loader trips over a malformed structure (a list where a map belongs): still the file.
        raise ConfigError(f"{source.describe()} is not usable: malformed kubeconfig ({e})") from None


def load_kubeconfig(path: str | None, context: str | None = None) -> tuple[Any, str | None]:
    """``(Configuration, namespace)`` of a kubeconfig file (``None``: ``$KUBECONFIG`` or
    ``~/.kube/config``; several files joined by ``:`` are merged), loaded by ``kubernetes.config``
    (exec and token plugins, client certificates)."""
    from kubernetes import client as k8s_client
    from kubernetes.config import kube_config

    cfg = k8s_client.Configuration()
    file = path or os.environ.get("KUBECONFIG") or None  # read now, not when ``kubernetes`` was imported
    # What ``load_kube_config`` does, keeping the loader to look at its credential.
    loader = kube_config._get_kube_config_loader(
        filename=file or kube_config.KUBE_CONFIG_DEFAULT_LOCATION,
        active_context=context,
        persist_config=False,
    )
    loader.load_and_set(cfg)
    if "expiry" not in vars(loader):
        # A credential without expiry (token, token file, basic auth, exec/OIDC without one) never
        # changes: the loader's refresh hook would only re-apply the same cluster settings, and it
        # costs ~13 % of a request's client CPU (setting ``host`` re-reads the proxy environment).
        cfg.refresh_api_key_hook = None
    return cfg, _kubeconfig_namespace(file, context)


def _kubeconfig_namespace(path: str | None, context: str | None) -> str | None:
    from kubernetes import config as k8s_config

    try:
        contexts, active = k8s_config.list_kube_config_contexts(path)
    except Exception:  # the loader already validated the file; this is best effort
        return None
    chosen = active
    if context is not None:
        chosen = next((c for c in contexts if c.get("name") == context), active)
    return ((chosen or {}).get("context") or {}).get("namespace")


def in_cluster_config(service_account_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR) -> RESTConfig:
    """The pod's service account as a :class:`RESTConfig` (``kubernetes.config``'s in-cluster loader:
    ``$KUBERNETES_SERVICE_HOST``/``_PORT``, the token re-read as it rotates, the CA); raises the
    loader's ``ConfigException`` outside a pod."""
    return _in_cluster(ConfigSource("", "in-cluster"), Path(service_account_dir))


def _in_cluster(source: ConfigSource, directory: Path) -> RESTConfig:
    from kubernetes import client as k8s_client
    from kubernetes.config.incluster_config import InClusterConfigLoader

    cfg = k8s_client.Configuration()
    # The loader re-reads the token file as it rotates (bound service-account tokens).
    InClusterConfigLoader(
        token_filename=str(directory / "token"), cert_filename=str(directory / "ca.crt")
    ).load_and_set(cfg)
    try:
        namespace = (directory / "namespace").read_text().strip() or None
    except OSError:
        namespace = None
    return RESTConfig(cfg, namespace, source)


def _check_kubeconfig_file(source: ConfigSource, context: str | None) -> None:
    """What the kubernetes loader reports as a traceback: missing file, not YAML, no current-context."""
    what = source.describe()
    if os.pathsep in source.path:
        return  # a KUBECONFIG list: the loader merges the files and skips missing ones, as kubectl
    path = Path(source.path)
    if not path.exists():
        raise ConfigError(f"{what} does not exist; point {source.origin} at a kubeconfig file")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{what} cannot be read: {getattr(e, 'strerror', None) or e}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"{what} is not valid YAML{where}: {getattr(e, 'problem', None) or e}") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{what} is not a kubeconfig (expected a YAML mapping with kind: Config)")
    if not doc.get("current-context") and context is None:
        raise ConfigError(
            f"{what} has no current-context; set one with "
            f"kubectl config use-context NAME --kubeconfig {source.path}"
        )
