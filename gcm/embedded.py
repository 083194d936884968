"""``--embedded``: gcm against the built-in API server, with gcm's own least-privilege RBAC.

The server runs with RBAC authorization; the CRDs, the cluster-wide objects and gcm's RBAC from
``manifests/`` are installed, and gcm runs as its ServiceAccount ``garden/gardener-controller-manager``,
so every end-to-end run exercises the permissions a real deployment gets.

``enable_webhooks`` makes gcm serve its admission webhooks to the embedded server: a self-signed
certificate (the only place gcm makes one) unless the configuration names certificates, the
ValidatingWebhookConfiguration of ``manifests/deploy`` with that CA as ``caBundle``, and the Service
``garden/gardener-controller-manager`` mapped to gcm's webhook listener, so ``kubectl delete namespace
garden-<project>`` is refused as in a real Gardener.
"""

from __future__ import annotations

import base64
import importlib.resources
import os
import shutil
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
import yaml

from framework.client import AlreadyExists, Client
from framework.testing import APIServer
from framework.webhook import self_signed_cert

log = structlog.get_logger("gcm.embedded")

NAMESPACE = "garden"
SERVICE_ACCOUNT = "gardener-controller-manager"
SERVICE = "gardener-controller-manager"  # in front of gcm's webhook listener
# From manifests/deploy, only what makes gcm's identity and permissions; workloads are not run here.
IDENTITY_KINDS = {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}


@dataclass
class Embedded:
    server: APIServer
    admin_kubeconfig: str
    gcm_kubeconfig: str
    cleanup: list[Path] = field(default_factory=list)  # temporary directories (webhook certificates)

    def stop(self) -> None:
        self.server.stop()
        for path in self.cleanup:
            shutil.rmtree(path, ignore_errors=True)


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


def start(port: int, admin_kubeconfig: str | os.PathLike, host: str = "127.0.0.1") -> Embedded:
    """Start the API server and bootstrap it; returns the kubeconfigs for the admin and for gcm."""
    manifests = manifests_dir()
    server = APIServer(host, port, authorization="RBAC").start()
    try:
        admin = Client.from_kubeconfig(server.kubeconfig, qps=0)
        apply(admin, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        server.install_crds(manifests / "crds")
        for obj in load_documents(manifests / "global"):
            apply(admin, obj)
        for obj in load_documents(manifests / "deploy"):
            if obj["kind"] in IDENTITY_KINDS:
                apply(admin, obj)
        token = admin.request(
            "POST",
            f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{SERVICE_ACCOUNT}/token",
            body={
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 365 * 24 * 3600},
            },
        )["status"]["token"]
        admin_path = server.write_kubeconfig(admin_kubeconfig)
        gcm_path = Path(admin_path).with_name("gcm-serviceaccount.kubeconfig")
        kc: dict[str, Any] = server.kubeconfig_dict(NAMESPACE)
        kc["users"][0] = {"name": SERVICE_ACCOUNT, "user": {"token": token}}
        kc["contexts"][0]["context"]["user"] = SERVICE_ACCOUNT
        gcm_path.write_text(yaml.safe_dump(kc))
        gcm_path.chmod(0o600)
    except BaseException:
        server.stop()
        raise
    return Embedded(server, admin_path, str(gcm_path))


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def enable_webhooks(embedded: Embedded, cfg: Any) -> None:
    """Serve gcm's admission webhooks to the embedded API server (changes ``cfg.server`` in place).

    Without ``server.webhooks`` (or legacy ``server.https``) a listener on 127.0.0.1 and a free port is
    configured; without certificates a self-signed one (for ``gardener-controller-manager.garden.svc``
    and localhost) is written to a temporary directory. With configured certificates, ``ca.crt`` next
    to them (else the certificate itself) becomes the ``caBundle``.
    """
    from gcm.config.types import LegacyTLSServer, WebhookServer, WebhookTLS

    server_cfg = cfg.server
    listener = server_cfg.webhook_listener()
    if listener is None:
        server_cfg.webhooks = WebhookServer(
            bind_address="127.0.0.1", port=_free_port("127.0.0.1"), tls=WebhookTLS()
        )
        listener = server_cfg.webhook_listener()
        assert listener is not None
    service = f"{SERVICE}.{NAMESPACE}.svc"
    if listener.cert_dir is None and not (listener.cert_path and listener.key_path):
        directory = Path(tempfile.mkdtemp(prefix="gcm-webhook-certs-"))
        embedded.cleanup.append(directory)
        cert, key, ca_pem = self_signed_cert(directory, ("127.0.0.1", "localhost", "::1", service))
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
    address = f"[{host}]:{listener.port}" if ":" in host else f"{host}:{listener.port}"
    admin = Client.from_kubeconfig(embedded.admin_kubeconfig, qps=0)
    for obj in load_documents(manifests_dir() / "deploy"):
        if obj["kind"] != "ValidatingWebhookConfiguration":
            continue
        for hook in obj.get("webhooks") or []:
            cc = hook.setdefault("clientConfig", {})
            cc["caBundle"] = base64.b64encode(ca_pem).decode()
            svc = cc.get("service")
            if svc:
                embedded.server.map_webhook_service(
                    svc.get("namespace", ""), svc.get("name", ""), address, int(svc.get("port") or 443)
                )
        apply(admin, obj)
        log.info("registered admission webhooks", configuration=obj["metadata"]["name"], address=address)
