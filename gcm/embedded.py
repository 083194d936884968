"""``--embedded``: gcm against the built-in API server, with gcm's own least-privilege RBAC.

The server runs with RBAC authorization; the CRDs, the cluster-wide objects and gcm's RBAC from
``manifests/`` are installed, and gcm runs as its ServiceAccount ``garden/gardener-controller-manager``,
so every end-to-end run exercises the permissions a real deployment gets.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
import yaml

from framework.client import AlreadyExists, Client
from framework.testing import APIServer

log = structlog.get_logger("gcm.embedded")

NAMESPACE = "garden"
SERVICE_ACCOUNT = "gardener-controller-manager"
# From manifests/deploy, only what makes gcm's identity and permissions; workloads are not run here.
IDENTITY_KINDS = {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}


@dataclass
class Embedded:
    server: APIServer
    admin_kubeconfig: str
    gcm_kubeconfig: str

    def stop(self) -> None:
        self.server.stop()


def manifests_dir() -> Path:
    """``manifests/`` of the source checkout gcm runs from."""
    path = Path(__file__).resolve().parent.parent / "manifests"
    if not path.is_dir():
        raise FileNotFoundError(
            f"--embedded needs the manifests/ directory of a gcm source checkout ({path})"
        )
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
