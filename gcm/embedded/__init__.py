"""``--embedded``: gcm against the built-in API server, with gcm's own least-privilege RBAC.

The server runs with RBAC authorization; the CRDs, the cluster-wide objects, gcm's RBAC and the
ValidatingAdmissionPolicy narrowing it (``manifests/deploy/policy.yaml``) from ``manifests/`` are
installed, and gcm runs as its ServiceAccount ``garden/gardener-controller-manager``, so every
end-to-end run exercises the permissions a real deployment gets.

``enable_webhooks`` makes gcm serve its admission webhooks to the embedded server: a self-signed
certificate (the only place gcm makes one) unless the configuration names certificates, the
ValidatingWebhookConfigurations of ``manifests/deploy`` with that CA as ``caBundle`` (without the
webhooks the configuration turns off), and the Service ``garden/gardener-controller-manager`` mapped to
gcm's webhook listener, so ``kubectl delete namespace garden-<project>`` and a Secret in a project
namespace holding a kubeconfig with an exec plugin are refused as in a real Gardener.

Everything embedded mode writes lives in its data directory (default ``.gcm/data``, mode 0700,
files 0600), besides the admin kubeconfig it is asked for: ``apiserver/`` (the API server's SQLite
storage, certificates and kubeconfigs, see :mod:`framework.apiserver.storage.persistence`),
``webhook-certs/`` and ``gcm.kubeconfig`` (gcm's ServiceAccount). With ``ephemeral`` the API server
keeps its objects in memory and those files go to ``ephemeral/``, removed on stop and on the next
start. A lock file keeps a second gcm off the same directory.
"""

from __future__ import annotations

import base64
import importlib.resources
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
import yaml

from framework.apiserver import APIServer
from framework.apiserver.admission.plugins import AdmissionPlugin
from framework.apiserver.storage.persistence import (
    LOCK_NAME,
    DataDirError,
    check_directory,
    lock_directory,
    unlock_directory,
)
from framework.client import AlreadyExists, Client, NotFound
from framework.webhook import self_signed_cert
from gcm.config.types import DEFAULT_WEBHOOK_PORT

log = structlog.get_logger("gcm.embedded")

NAMESPACE = "garden"
SERVICE_ACCOUNT = "gardener-controller-manager"
SERVICE = "gardener-controller-manager"  # in front of gcm's webhook listener
# From manifests/deploy, only what makes gcm's identity and permissions, and the admission policy that
# narrows them (policy.yaml, docs/rbac.md); workloads are not run here.
IDENTITY_KINDS = {
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}
DEFAULT_DATA_DIR = ".gcm/data"
# What embedded mode writes into its data directory (anything else there: refuse to start).
DATA_ENTRIES = frozenset(
    {"apiserver", "webhook-certs", "gcm.kubeconfig", "gcm.kubeconfig.tmp", "ephemeral", LOCK_NAME}
)
__all__ = [
    "DEFAULT_DATA_DIR",
    "DataDirError",
    "Embedded",
    "ReadyLine",
    "disabled_webhooks",
    "enable_webhooks",
    "local_servers",
    "start",
    "urls",
]


@dataclass
class Embedded:
    server: APIServer
    admin_kubeconfig: str
    gcm_kubeconfig: str
    data_dir: Path
    files: Path  # where gcm's own files go: the data dir, or its ephemeral/ part
    lock_fd: int = -1
    cleanup: list[Path] = field(default_factory=list)  # removed on stop (ephemeral files)
    ephemeral: bool = False
    # What this start made, so that a start that fails leaves nothing behind: the directories (the
    # data directory's missing parents and itself, outermost first), whether the lock file and the
    # admin kubeconfig were there before.
    created_dirs: list[Path] = field(default_factory=list)
    lock_existed: bool = True
    kubeconfig_existed: bool = True

    def stop(self, discard: bool = False) -> None:
        """Stop the API server and let go of the data directory.

        ``discard`` (a start that failed): everything this start created goes (a data directory it
        made, with its parents, and the admin kubeconfig it wrote); a data directory that was there
        keeps its objects. An ephemeral garden always removes its files and its lock file.
        """
        self.server.stop()
        for path in self.cleanup:
            shutil.rmtree(path, ignore_errors=True)
        made_root = self.data_dir in self.created_dirs
        if discard and made_root:
            shutil.rmtree(self.data_dir, ignore_errors=True)  # all of it is ours, written just now
        if self.lock_fd >= 0:
            remove = self.ephemeral or (discard and not self.lock_existed)
            unlock_directory(self.data_dir, self.lock_fd, remove=remove)
            self.lock_fd = -1
        if discard and not self.kubeconfig_existed and self.admin_kubeconfig:
            Path(self.admin_kubeconfig).unlink(missing_ok=True)
        if discard or self.ephemeral:
            _remove_empty(self.created_dirs)  # those left empty (an ephemeral run keeps the kubeconfig)


def manifests_dir() -> Path:
    """The manifests gcm ships: package data ``gcm/manifests`` (the repository's ``manifests/``).

    In a checkout ``gcm/manifests`` is a symbolic link to ``manifests/``; wheels carry the files.
    """
    path = importlib.resources.files("gcm") / "manifests"
    if not isinstance(path, Path) or not (path / "crds").is_dir():
        raise FileNotFoundError(f"gcm's package data is incomplete: no manifests in {path}")
    return path


def load_documents(directory: Path) -> list[dict]:
    docs = []
    for f in sorted(directory.rglob("*.yaml")):
        if f.name == "kustomization.yaml":
            continue
        docs += [d for d in yaml.safe_load_all(f.read_text()) if isinstance(d, dict) and d.get("kind")]
    return docs


def apply(client: Client, obj: dict) -> None:
    """Create, or replace what exists (as ``kubectl apply`` would for objects we own)."""
    try:
        client.create(obj)
    except AlreadyExists:
        meta = obj["metadata"]
        live = client.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        client.update({**obj, "metadata": {**meta, "resourceVersion": live["metadata"]["resourceVersion"]}})


def _private_parent(path: Path) -> None:
    """Create ``path``'s missing parent directories readable only by the user."""
    missing = [p for p in path.parents if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=0o700)


def start(
    port: int,
    admin_kubeconfig: str | os.PathLike,
    host: str = "127.0.0.1",
    data_dir: str | os.PathLike | None = None,
    ephemeral: bool = False,
    admission_plugins: Iterable[AdmissionPlugin] = (),
    extension_roles: bool = False,
) -> Embedded:
    """Start the API server and bootstrap it; returns the kubeconfigs for the admin and for gcm.

    ``extension_roles`` (``controllers.project.extensionRoles``): also grant gcm the opt-in RBAC of
    ``manifests/extension-roles`` (equivalent to cluster-admin, docs/rbac.md); without it those objects
    are removed, should an earlier run in the same data directory have created them.

    ``data_dir`` defaults to ``data`` next to the admin kubeconfig (the CLI passes ``.gcm/data``).
    ``admission_plugins``: in-process admission beside the server's built-in plugins; the CLI passes
    the Gardener API server's Project and Shoot rules (createdBy, owner, validation, deletion
    confirmation: :func:`gcm.embedded.admission.plugins`), test harnesses built on this function choose.
    Raises :class:`DataDirError` (one line naming the file) for a data directory it must not use.
    """
    manifests = manifests_dir()
    root = Path(data_dir) if data_dir is not None else Path(admin_kubeconfig).parent / "data"
    created = [p for p in reversed((root, *root.parents)) if not p.exists()]
    lock_existed = (root / LOCK_NAME).exists()
    kubeconfig_existed = Path(admin_kubeconfig).exists()
    try:
        _private_parent(root)
        check_directory(root, DATA_ENTRIES, "gcm --embedded")
        lock_fd = lock_directory(root, "gcm --embedded")
    except BaseException:
        _remove_empty(created)
        raise
    try:
        if ephemeral:
            files = root / "ephemeral"
            shutil.rmtree(files, ignore_errors=True)  # a previous ephemeral run killed with -9
            files.mkdir(mode=0o700)
            server = APIServer(
                host,
                port,
                authorization="RBAC",
                files_dir=files / "apiserver",
                admission_plugins=admission_plugins,
            )
        else:
            files = root
            server = APIServer(
                host,
                port,
                authorization="RBAC",
                data_dir=root / "apiserver",
                admission_plugins=admission_plugins,
            )
    except BaseException:
        if root in created:
            shutil.rmtree(root, ignore_errors=True)
        unlock_directory(root, lock_fd, remove=not lock_existed)
        _remove_empty(created)
        raise
    embedded = Embedded(
        server,
        "",
        "",
        root,
        files,
        lock_fd,
        [files] if ephemeral else [],
        ephemeral=ephemeral,
        created_dirs=created,
        lock_existed=lock_existed,
        kubeconfig_existed=kubeconfig_existed,
    )
    try:
        server.start()
        admin = Client.from_kubeconfig(server.kubeconfig, qps=0)
        apply(admin, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        server.install_crds(manifests / "crds")
        for obj in load_documents(manifests / "global"):
            apply(admin, obj)
        for obj in load_documents(manifests / "deploy"):
            if obj["kind"] in IDENTITY_KINDS:
                apply(admin, obj)
        for obj in load_documents(manifests / "extension-roles"):
            if extension_roles:
                apply(admin, obj)
            else:
                meta = obj["metadata"]
                try:
                    admin.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
                except NotFound:
                    pass
        token = admin.request(
            "POST",
            f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{SERVICE_ACCOUNT}/token",
            body={
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 365 * 24 * 3600},
            },
        )["status"]["token"]
        _private_parent(Path(admin_kubeconfig))
        embedded.admin_kubeconfig = server.write_kubeconfig(admin_kubeconfig)
        gcm_path = files / "gcm.kubeconfig"
        kc: dict[str, Any] = server.kubeconfig_dict(NAMESPACE, ca_file=True)
        kc["users"][0] = {"name": SERVICE_ACCOUNT, "user": {"token": token}}
        kc["contexts"][0]["context"]["user"] = SERVICE_ACCOUNT
        tmp = gcm_path.with_name(gcm_path.name + ".tmp")
        tmp.touch(mode=0o600)
        tmp.chmod(0o600)
        tmp.write_text(yaml.safe_dump(kc))
        tmp.replace(gcm_path)
        embedded.gcm_kubeconfig = str(gcm_path)
    except BaseException:
        embedded.admin_kubeconfig = embedded.admin_kubeconfig or str(admin_kubeconfig)
        embedded.stop(discard=True)
        raise
    return embedded


def _remove_empty(directories: list[Path]) -> None:
    """Remove ``directories`` (outermost first) that are empty, innermost first."""
    for directory in reversed(directories):
        try:
            directory.rmdir()
        except FileNotFoundError:
            continue
        except OSError:  # not empty: it and its parents stay
            return


def enable_webhooks(embedded: Embedded, cfg: Any, port: int = DEFAULT_WEBHOOK_PORT) -> None:
    """Serve gcm's admission webhooks to the embedded API server (changes ``cfg.server`` in place).

    Without ``server.webhooks`` (or legacy ``server.https``) a listener on 127.0.0.1 and ``port``
    (default 2721) is configured; without certificates a self-signed one (for
    ``gardener-controller-manager.garden.svc`` and localhost) is written to ``webhook-certs/`` in the
    data directory. With configured certificates, ``ca.crt`` next to them (else the certificate
    itself) becomes the ``caBundle``.
    """
    from gcm.config.types import LegacyTLSServer, WebhookServer, WebhookTLS

    server_cfg = cfg.server
    listener = server_cfg.webhook_listener()
    if listener is None:
        server_cfg.webhooks = WebhookServer(bind_address="127.0.0.1", port=port, tls=WebhookTLS())
        listener = server_cfg.webhook_listener()
        assert listener is not None
    service = f"{SERVICE}.{NAMESPACE}.svc"
    if listener.cert_dir is None and not (listener.cert_path and listener.key_path):
        directory = embedded.files / "webhook-certs"
        directory.mkdir(mode=0o700, exist_ok=True)
        cert, key, ca_pem = self_signed_cert(directory, ("127.0.0.1", "localhost", "::1", service))
        cert.chmod(0o600)
        if listener.source == "server.webhooks":
            server_cfg.webhooks.tls.server_cert_dir = str(directory)
        else:
            server_cfg.https.tls = LegacyTLSServer(server_cert_path=str(cert), server_key_path=str(key))
        log.info("generated a self-signed webhook certificate", directory=str(directory), hosts=service)
    else:
        cert = Path(listener.cert_dir) / "tls.crt" if listener.cert_dir else Path(listener.cert_path or "")
        ca_file = cert.with_name("ca.crt")
        ca_pem = (ca_file if ca_file.is_file() else cert).read_bytes()
    host = listener.bind_address if listener.bind_address not in ("", "0.0.0.0", "::") else "127.0.0.1"
    address = _host_port(host, listener.port)
    admin = Client.from_kubeconfig(embedded.server.kubeconfig, qps=0)
    off = disabled_webhooks(cfg)
    for obj in load_documents(manifests_dir() / "deploy"):
        if obj["kind"] != "ValidatingWebhookConfiguration":
            continue
        obj["webhooks"] = [h for h in obj.get("webhooks") or [] if h.get("name") not in off]
        if not obj["webhooks"]:
            continue  # turned off in the configuration: nobody would answer (failurePolicy Fail)
        for hook in obj["webhooks"]:
            cc = hook.setdefault("clientConfig", {})
            cc["caBundle"] = base64.b64encode(ca_pem).decode()
            svc = cc.get("service")
            if svc:
                embedded.server.map_webhook_service(
                    svc.get("namespace", ""), svc.get("name", ""), address, int(svc.get("port") or 443)
                )
        apply(admin, obj)
        log.info("registered admission webhooks", configuration=obj["metadata"]["name"], address=address)


def disabled_webhooks(cfg: Any) -> set[str]:
    """The names of the webhooks ``cfg`` turns off (``webhooks.<name>.enabled: false``)."""
    from gcm.webhooks import kubeconfigsecret, namespacedeletion

    return {
        module.WEBHOOK_NAME
        for module in (namespacedeletion, kubeconfigsecret)
        if not cfg.webhook_enabled(module.CONFIG_SWITCH)
    }


def local_servers(cfg: Any, offset: int) -> None:
    """Embedded mode: gcm's probe and metrics listeners on 127.0.0.1 unless the configuration names an
    address, every port (the configured one or its default) moved by ``offset``."""
    from gcm.config.types import DEFAULT_HEALTH_PROBES_PORT, DEFAULT_METRICS_PORT

    server_cfg = cfg.server
    for listener, default in (
        (server_cfg.health_probes, DEFAULT_HEALTH_PROBES_PORT),
        (server_cfg.metrics, DEFAULT_METRICS_PORT),
        (server_cfg.webhooks, DEFAULT_WEBHOOK_PORT),
        (server_cfg.https, DEFAULT_WEBHOOK_PORT),
    ):
        if listener is not None:
            listener.bind_address = listener.bind_address or "127.0.0.1"
            listener.port = (listener.port or default) + offset


def urls(embedded: Embedded, cfg: Any, *, metrics_secure: bool = False) -> dict[str, str]:
    """What embedded mode serves, for the "ready" line (``metrics_secure``: /metrics over HTTPS)."""
    server_cfg = cfg.server
    out = {"apiserver": embedded.server.url}
    listener = server_cfg.webhook_listener()
    if listener is not None:
        out["webhook"] = f"https://{_host_port(listener.bind_address, listener.port)}"
    if server_cfg.metrics is not None:
        metrics = server_cfg.metrics
        scheme = "https" if metrics_secure else "http"
        out["metrics"] = f"{scheme}://{_host_port(metrics.bind_address, metrics.port)}/metrics"
    if server_cfg.health_probes is not None:
        hp = server_cfg.health_probes
        out["healthz"] = f"http://{_host_port(hp.bind_address, hp.port)}/healthz"
    return out


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class ReadyLine:
    """A manager runnable that logs one "ready" line once every listener of gcm is up."""

    def __init__(self, **fields: str) -> None:
        self.fields = fields

    def start(self) -> None:
        log.info("gcm --embedded ready", **self.fields)

    def stop(self, timeout: float = 30.0) -> None:
        """Nothing to stop."""
