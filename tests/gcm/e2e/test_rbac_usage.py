"""gcm's RBAC is exactly what gcm uses (issue 31): every controller, the namespace-deletion webhook and
``gcm stale-report`` run as gcm's ServiceAccount against an RBAC-enforcing API server bootstrapped from
``manifests/`` (``gcm.embedded``), with the configuration of ``manifests/deploy/configmap.yaml`` and the
admission policy of ``manifests/deploy/policy.yaml`` in force. The server records every request
(``APIServer.record_requests``); the test fails on any 403 for gcm's ServiceAccount (RBAC's or the
policy's) and on any (rule, resource, verb) of gcm's ClusterRole and Role that no recorded request
used.

A request "uses" every rule piece that authorizes it. kube-apiserver also authorizes two things the
request itself does not show, and the test counts them from the objects gcm wrote:

- RBAC escalation checks: a ClusterRole gcm writes needs each of its rules held by gcm (gcm has no
  ``escalate``), a binding needs ``bind`` on its roleRef's name or each rule of the referenced role;
- OwnerReferencesPermissionEnforcement (not implemented by the test server): an owner reference with
  ``blockOwnerDeletion: true`` needs ``update`` on the owner's ``finalizers`` subresource.

The second test runs extension roles with the opt-in grants of ``manifests/extension-roles`` and checks
those grants the same way. What the ServiceAccount must not be able to do is asserted in
``tests/gcm/manifests/test_manifests.py`` (``test_sa_cannot_escalate``).
"""

from __future__ import annotations

import io
import json
import threading
from argparse import Namespace
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml

from framework.client import Client, Forbidden, NotFound
from framework.testing import eventually, free_port
from gcm import embedded
from gcm.cmd import stale_report
from gcm.cmd.app import build_manager
from gcm.config import load_config

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "manifests" / "deploy"
GCM_USER = f"system:serviceaccount:{embedded.NAMESPACE}:{embedded.SERVICE_ACCOUNT}"
CORE = "core.gardener.cloud/v1beta1"
RBAC = "rbac.authorization.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"
EVENTS = "events.k8s.io/v1"
ADMISSION = "admissionregistration.k8s.io/v1"
POLICY = "gardener-controller-manager-writes"  # manifests/deploy/policy.yaml
PROJECT_LABELS = {"gardener.cloud/role": "project"}
SKIP_STALE = {"project.gardener.cloud/skip-stale-check": "true"}
KEEP = {"namespace.gardener.cloud/keep-after-project-deletion": "true"}
TIMEOUT = 20.0


def user(name: str, **extra: Any) -> dict:
    return {"apiGroup": RBAC_GROUP, "kind": "User", "name": name, **extra}


# --- gcm as its ServiceAccount, configured like manifests/deploy --------------------------------------


def deploy_config(**project: Any) -> Any:
    """configmap.yaml's configuration, with short leader election timings, listeners on free local
    ports (the webhook's is set by ``embedded.enable_webhooks``), an event TTL of one second and
    ``project`` overrides."""
    (cm,) = [d for d in yaml.safe_load_all((DEPLOY / "configmap.yaml").read_text()) if d]
    raw = yaml.safe_load(cm["data"]["config.yaml"])
    raw["leaderElection"].update(leaseDuration="2s", renewDeadline="1500ms", retryPeriod="300ms")
    raw["server"] = {
        "healthProbes": {"bindAddress": "127.0.0.1", "port": free_port()},
        "metrics": {"bindAddress": "127.0.0.1", "port": free_port()},
    }
    raw["controllers"]["event"]["ttlNonShootEvents"] = "1s"
    raw["controllers"]["project"].update(project)
    return load_config(text=json.dumps(raw))


class Garden:
    """The embedded API server (recording requests) and gcm's Manager running as its ServiceAccount."""

    def __init__(self, tmp_path: Path, cfg: Any) -> None:
        self.cfg = cfg
        self.embedded = embedded.start(
            0,
            tmp_path / "admin.kubeconfig",
            ephemeral=True,
            extension_roles=cfg.controllers.project.extension_roles,
        )
        self.server = self.embedded.server
        self.server.record_requests()
        self.admin = Client.from_kubeconfig(self.embedded.admin_kubeconfig, qps=0)
        self.gcm = Client.from_kubeconfig(self.embedded.gcm_kubeconfig, qps=0)
        self.mgr: Any = None
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        embedded.enable_webhooks(self.embedded, self.cfg, free_port())
        # As manifests/deploy/deployment.yaml runs it: with the secure metrics endpoint.
        self.mgr = build_manager(self.cfg, self.gcm, graceful_shutdown_timeout=10, metrics_secure=True)
        self.thread = threading.Thread(target=self.mgr.start, name="gcm-manager", daemon=True)
        self.thread.start()
        eventually(self.mgr.is_leader, TIMEOUT, message="gcm leads")
        secret_informers = [
            k for k in self.mgr.cache.factory.informers() if k.kind in ("Secret", "InternalSecret")
        ]
        assert secret_informers and all(k.metadata_only for k in secret_informers), secret_informers

    def stop_gcm(self) -> None:
        """Stop gcm; its watches end, and a watch is recorded when it ends."""
        if self.mgr is not None:
            self.mgr.stop()
            assert self.thread is not None
            self.thread.join(20)
            assert not self.thread.is_alive(), "manager did not stop"
            self.mgr = None
            self.gcm.close()

    def close(self) -> None:
        try:
            self.stop_gcm()
        finally:
            self.embedded.stop()

    # -- helpers --------------------------------------------------------------------------------------

    def project(self, name: str) -> dict:
        return self.admin.get(CORE, "Project", name)

    def wait_gone(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        def gone() -> bool:
            try:
                self.admin.get(api_version, kind, name, namespace)
            except NotFound:
                return True
            return False

        eventually(gone, TIMEOUT, interval=0.05, message=f"{kind} {name} gone")

    def wait_ready(self, name: str, generation: int | None = None) -> dict:
        def ready() -> dict | None:
            p = self.project(name)
            status = p.get("status") or {}
            want = generation or p["metadata"].get("generation")
            return p if status.get("phase") == "Ready" and status.get("observedGeneration") == want else None

        return eventually(ready, TIMEOUT, interval=0.05, message=f"project {name} Ready")

    def namespace(self, name: str, project: str, annotations: dict) -> None:
        labels = {**PROJECT_LABELS, "project.gardener.cloud/name": project}
        meta = {"name": name, "labels": labels, "annotations": annotations}
        self.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": meta})

    def events(self, reason: str) -> list[dict]:
        return [e for e in self.admin.list(EVENTS, "Event", "default")["items"] if e.get("reason") == reason]


@pytest.fixture
def garden(tmp_path) -> Iterator[Garden]:
    g = Garden(
        tmp_path, deploy_config(minimumLifetimeDays=0, staleGracePeriodDays=0, staleExpirationTimeDays=0)
    )
    try:
        yield g
    finally:
        g.close()


# --- rule matching (kube's RBAC rule semantics, as the tests need them) --------------------------------


def rule_pieces(rules: list[dict], namespace: str) -> list[tuple]:
    """Each rule broken into (namespace scope, apiGroup, resource, verb, resourceNames) pieces."""
    return [
        (namespace, group, resource, verb, tuple(rule.get("resourceNames") or ()))
        for rule in rules
        for group in rule.get("apiGroups") or ()
        for resource in rule.get("resources") or ()
        for verb in rule.get("verbs") or ()
    ]


def piece_allows(piece: tuple, verb: str, group: str, resource: str, namespace: str, name: str) -> bool:
    scope, p_group, p_resource, p_verb, names = piece
    return (
        (not scope or scope == namespace)
        and p_verb in ("*", verb)
        and p_group in ("*", group)
        and p_resource in ("*", resource)
        and (not names or name in names)
    )


def gcm_pieces(*directories: Path) -> list[tuple]:
    """Every piece of gcm's ClusterRoles (any namespace) and Roles (their namespace) in ``directories``
    (default: manifests/deploy)."""
    pieces = []
    docs = [d for directory in directories or (DEPLOY,) for d in embedded.load_documents(directory)]
    for doc in docs:
        if doc["kind"] == "ClusterRole":
            pieces += rule_pieces(doc["rules"], "")
        elif doc["kind"] == "Role":
            pieces += rule_pieces(doc["rules"], doc["metadata"]["namespace"])
    return pieces


def implied_checks(written: list[dict], roles: dict[str, dict], pieces: list[tuple]) -> list[tuple]:
    """What kube-apiserver authorizes beyond the request for objects gcm wrote: (verb, group, resource,
    namespace, name) of the escalation, bind and owner-reference checks (see the module docstring)."""
    checks = []
    for obj in written:
        meta = obj["metadata"]
        ns = meta.get("namespace") or ""
        for ref in meta.get("ownerReferences") or ():
            if ref.get("blockOwnerDeletion"):
                group = ref["apiVersion"].rpartition("/")[0]
                checks.append(("update", group, f"{ref['kind'].lower()}s/finalizers", "", ref["name"]))
        if obj["kind"] == "ClusterRole" and obj.get("aggregationRule"):
            # Only a requester with `escalate` (authorized without a name: a create names nothing) or
            # full authority may write an aggregationRule.
            checks.append(("escalate", RBAC_GROUP, "clusterroles", "", ""))
            continue
        if obj["kind"] == "ClusterRole":
            rules = obj.get("rules") or []
        elif obj["kind"] in ("ClusterRoleBinding", "RoleBinding"):
            ref = obj["roleRef"]
            bind = ("bind", RBAC_GROUP, "clusterroles", ns, ref["name"])
            if any(piece_allows(p, *bind) for p in pieces):
                checks.append(bind)
                continue
            rules = (roles.get(ref["name"]) or {}).get("rules") or []
        else:
            continue
        for rule in rules:
            for _, group, resource, verb, names in rule_pieces([rule], ""):
                checks += [(verb, group, resource, ns, n) for n in names or ("",)]
    return checks


def objects_gcm_owns(admin: Client) -> list[dict]:
    """The RBAC objects, namespaces and ResourceQuotas gcm wrote (Project owner references)."""
    out = []
    for api_version, kind in (
        (RBAC, "ClusterRole"),
        (RBAC, "ClusterRoleBinding"),
        (RBAC, "RoleBinding"),
        ("v1", "Namespace"),
        ("v1", "ResourceQuota"),
    ):
        for obj in admin.list(api_version, kind)["items"]:
            refs = obj["metadata"].get("ownerReferences") or ()
            if any(r.get("kind") == "Project" for r in refs):
                out.append({**obj, "apiVersion": api_version, "kind": kind})
    return out


# --- the scenarios -------------------------------------------------------------------------------------


def run_scenarios(g: Garden) -> list[dict]:
    """Every controller and the webhook at work; returns snapshots of the objects gcm wrote."""
    admin = g.admin
    written: list[dict] = []
    # Before gcm starts: a namespace to adopt, leftovers of an extension role, an old legacy Event.
    g.namespace("garden-alpha", "alpha", {**SKIP_STALE, **KEEP})
    g.namespace("garden-beta", "beta", SKIP_STALE)
    ext = "gardener.cloud:extension:project:alpha:old"
    ext_labels = {"gardener.cloud/role": "extension-project-role", "project.gardener.cloud/name": "alpha"}
    admin.create(
        {
            "apiVersion": RBAC,
            "kind": "ClusterRole",
            "metadata": {"name": ext, "labels": ext_labels},
            "aggregationRule": {
                "clusterRoleSelectors": [
                    {"matchLabels": {"rbac.gardener.cloud/aggregate-to-extension-role": "old"}}
                ]
            },
        }
    )
    admin.create(
        {
            "apiVersion": RBAC,
            "kind": "RoleBinding",
            "metadata": {"name": ext, "namespace": "garden-alpha", "labels": ext_labels},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": ext},
            "subjects": [user("mallory")],
        }
    )
    admin.create(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "old.1", "namespace": "default"},
            "involvedObject": {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "namespace": "default"},
            "reason": "Old",
            "message": "long ago",
            "type": "Normal",
            "firstTimestamp": "2020-01-01T00:00:00Z",
            "lastTimestamp": "2020-01-01T00:00:00Z",
            "count": 1,
            "source": {"component": "test"},
        }
    )
    g.start()

    # Project create + adopt, every member role (the extension role is off in the deploy config).
    members = [
        user("alice", role="admin", roles=["owner"]),
        user("bob", role="viewer"),
        user("carol", role="uam"),
        user("dave", role="serviceaccountmanager"),
        user("erin", role="extension:ops"),
    ]
    spec = {"namespace": "garden-alpha", "owner": user("alice"), "members": members}
    admin.create({"apiVersion": CORE, "kind": "Project", "metadata": {"name": "alpha"}, "spec": spec})
    g.wait_ready("alpha")
    g.wait_gone(RBAC, "ClusterRole", ext)
    g.wait_gone(RBAC, "RoleBinding", ext, "garden-alpha")
    eventually(lambda: g.events("ExtensionRolesDisabled"), TIMEOUT, message="ExtensionRolesDisabled event")
    eventually(
        lambda: (
            admin.get("v1", "ResourceQuota", "gardener", "garden-alpha")["metadata"].get("annotations") or {}
        ),
        TIMEOUT,
        message="per-shoot quota accounted",
    )
    written += objects_gcm_owns(admin)

    # Activity: a binding-referenced Secret in the project namespace.
    admin.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": "creds",
                "namespace": "garden-alpha",
                "labels": {"reference.gardener.cloud/secretbinding": "true"},
            },
            "stringData": {"k": "v"},
        }
    )
    eventually(
        lambda: (g.project("alpha").get("status") or {}).get("lastActivityTimestamp"),
        TIMEOUT,
        message="activity recorded",
    )

    # Hand edits gcm repairs: a deleted member RoleBinding (owned, watched); a ClusterRole's rules, a
    # ClusterRoleBinding's roleRef and the default quota (repaired at the next reconcile: members change).
    admin.patch(
        "v1",
        "ResourceQuota",
        "gardener",
        {"spec": {"hard": {"count/secretbindings.core.gardener.cloud": None}}},
        "garden-alpha",
    )
    admin.delete(RBAC, "RoleBinding", "gardener.cloud:system:project-viewer", "garden-alpha")
    eventually(
        lambda: admin.get(RBAC, "RoleBinding", "gardener.cloud:system:project-viewer", "garden-alpha"),
        TIMEOUT,
        interval=0.05,
        message="member RoleBinding restored",
        ignore=(NotFound,),
    )
    admin.patch(RBAC, "ClusterRole", "gardener.cloud:system:project-viewer:alpha", {"rules": []})
    uam = "gardener.cloud:system:project-uam:alpha"
    admin.delete(RBAC, "ClusterRoleBinding", uam)
    admin.create(
        {
            "apiVersion": RBAC,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": uam},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "view"},
            "subjects": [],
        }
    )
    admin.patch(CORE, "Project", "alpha", {"spec": {"members": [m for m in members if m["name"] != "bob"]}})
    g.wait_ready("alpha")
    eventually(
        lambda: admin.get(RBAC, "ClusterRoleBinding", uam)["roleRef"]["name"] == uam,
        TIMEOUT,
        message="roleRef restored",
    )
    eventually(
        lambda: admin.get(RBAC, "ClusterRole", "gardener.cloud:system:project-viewer:alpha")["rules"],
        TIMEOUT,
        message="rules restored",
    )
    eventually(
        lambda: (
            "count/secretbindings.core.gardener.cloud"
            in admin.get("v1", "ResourceQuota", "gardener", "garden-alpha")["spec"]["hard"]
        ),
        TIMEOUT,
        message="quota restored",
    )
    written += objects_gcm_owns(admin)

    # The webhook refuses to delete a project namespace directly.
    with pytest.raises(Forbidden) as refused:
        admin.delete("v1", "Namespace", "garden-alpha")
    assert "direct deletion" in str(refused.value)

    # Stale: a project without protection is marked stale and auto-deleted (namespace deleted, webhook
    # allows it, finalizer removed).
    admin.create({"apiVersion": CORE, "kind": "Project", "metadata": {"name": "stale"}, "spec": {}})
    g.wait_gone(CORE, "Project", "stale")

    # Deletion waits for Shoots; the Shoot delete (metadata-only watch) lets it finish.
    admin.create(
        {
            "apiVersion": CORE,
            "kind": "Project",
            "metadata": {"name": "beta"},
            "spec": {"namespace": "garden-beta"},
        }
    )
    g.wait_ready("beta")
    shoot = {
        "apiVersion": CORE,
        "kind": "Shoot",
        "metadata": {"name": "s1", "namespace": "garden-beta"},
        "spec": {},
    }
    admin.create(shoot)
    written += objects_gcm_owns(admin)
    admin.delete(CORE, "Project", "beta")
    eventually(lambda: g.events("NamespaceNotEmpty"), TIMEOUT, message="deletion waits for the Shoot")
    admin.delete(CORE, "Shoot", "s1", "garden-beta")
    g.wait_gone(CORE, "Project", "beta")

    # gcm stale-report with gcm's credentials.
    out = io.StringIO()
    args = Namespace(config=None, kubeconfig=g.embedded.gcm_kubeconfig, output="json")
    assert stale_report.run(args, out=out) == 0
    assert "alpha" in out.getvalue()

    # Event TTL: gcm's own events and the old legacy one are deleted.
    g.wait_gone("v1", "Event", "old.1", "default")

    # Deleting an adopted namespace's Project keeps the namespace (released).
    admin.delete(CORE, "Project", "alpha")
    g.wait_gone(CORE, "Project", "alpha")
    ns = admin.get("v1", "Namespace", "garden-alpha")
    assert "project.gardener.cloud/name" not in (ns["metadata"].get("labels") or {})
    scrape_secure_metrics(g)
    return written


def scrape_secure_metrics(g: Garden) -> None:
    """A scraper bound to manifests/deploy's metrics-reader ClusterRole reads /metrics: gcm reviews its
    token (TokenReview) and its `get /metrics` (SubjectAccessReview) as its ServiceAccount."""
    token = g.server.add_user("prometheus")
    admin_create_binding(
        g.admin, "prometheus-metrics", "gardener-controller-manager-metrics-reader", "prometheus"
    )
    server = g.mgr.metrics_server
    with urllib3.PoolManager(ca_cert_data=server.ca_pem.decode(), retries=False) as http:
        response = http.request("GET", server.url + "/metrics", headers={"Authorization": f"Bearer {token}"})
    assert response.status == 200, response.data
    assert b"controller_runtime_reconcile_total" in response.data


def admin_create_binding(admin: Client, name: str, role: str, user_name: str) -> None:
    admin.create(
        {
            "apiVersion": RBAC,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
            "subjects": [user(user_name)],
        }
    )


def test_gcm_rbac_is_what_gcm_uses(garden):
    written = run_scenarios(garden)
    garden.stop_gcm()
    records = eventually(
        lambda: (
            [r for r in garden.server.recorded_requests(GCM_USER) if r.verb == "watch"]
            and garden.server.recorded_requests(GCM_USER)
        ),
        message="gcm's watches ended",
    )
    assert records, "no request of gcm recorded"
    denied = sorted({r for r in records if not r.allowed})
    assert denied == [], "gcm's ServiceAccount was refused (by RBAC or by the admission policy)"
    # The policy was in force all along (installed by embedded.start, never removed) and applies to
    # gcm's ServiceAccount: a write its RBAC allows but gcm never makes is refused.
    assert (
        garden.admin.get(ADMISSION, "ValidatingAdmissionPolicyBinding", POLICY)["spec"]["policyName"]
        == POLICY
    )
    gcm = Client.from_kubeconfig(garden.embedded.gcm_kubeconfig, qps=0)
    with pytest.raises(Forbidden, match=f"ValidatingAdmissionPolicy '{POLICY}'"):
        gcm.delete(RBAC, "ClusterRole", "gardener.cloud:system:project-member")
    gcm.close()

    assert_uses_every_piece(garden, written, records, gcm_pieces())


def assert_uses_every_piece(
    g: Garden, written: list[dict], records: list, pieces: list[tuple], required: list[tuple] | None = None
) -> None:
    """Every piece of ``required`` (default: all ``pieces``) is used by a recorded request or an implied
    check; every implied check is allowed by ``pieces``."""
    used: set[tuple] = set()
    for r in records:
        resource = f"{r.resource}/{r.subresource}" if r.subresource else r.resource
        used.update(p for p in pieces if piece_allows(p, r.verb, r.group, resource, r.namespace, r.name))
    roles = {r["metadata"]["name"]: r for r in g.admin.list(RBAC, "ClusterRole")["items"]}
    roles |= {
        o["metadata"]["name"]: o for o in written if o["kind"] == "ClusterRole"
    }  # deleted with Projects
    for check in implied_checks(written, roles, pieces):
        matching = [p for p in pieces if piece_allows(p, *check)]
        assert matching, f"kube-apiserver would refuse gcm {check}"
        used.update(matching)
    unused = [p for p in (pieces if required is None else required) if p not in used]
    assert unused == [], f"granted but never used: {unused}"


def test_extension_roles_opt_in(tmp_path):
    """With manifests/extension-roles and controllers.project.extensionRoles: true, extension roles are
    written as Gardener writes them, and the opt-in's two grants are used; the price (docs/rbac.md) is
    asserted too: gcm's ServiceAccount may then bind cluster-admin."""
    g = Garden(tmp_path, deploy_config(extensionRoles=True))
    try:
        g.namespace("garden-ext", "ext", SKIP_STALE)
        g.start()
        members = [user("erin", role="extension:ops"), user("frank", roles=["viewer", "extension:audit"])]
        spec = {"namespace": "garden-ext", "members": members}
        g.admin.create({"apiVersion": CORE, "kind": "Project", "metadata": {"name": "ext"}, "spec": spec})
        g.wait_ready("ext")
        for role in ("ops", "audit"):
            name = f"gardener.cloud:extension:project:ext:{role}"
            selector = g.admin.get(RBAC, "ClusterRole", name)["aggregationRule"]["clusterRoleSelectors"]
            assert selector == [{"matchLabels": {"rbac.gardener.cloud/aggregate-to-extension-role": role}}]
            assert g.admin.get(RBAC, "RoleBinding", name, "garden-ext")["roleRef"]["name"] == name
        assert not g.events("ExtensionRolesDisabled")
        written = objects_gcm_owns(g.admin)
        g.stop_gcm()
        records = g.server.recorded_requests(GCM_USER)
        assert sorted({r for r in records if not r.allowed}) == []
        opt_in = gcm_pieces(ROOT / "manifests" / "extension-roles")
        # escalate and bind are used by the implied checks of the extension objects
        assert_uses_every_piece(g, written, records, gcm_pieces() + opt_in, required=opt_in)

        # The price: RBAC lets the opt-in bind cluster-admin; the admission policy refuses it, and where
        # the policy is missing (a cluster older than Kubernetes 1.30) nothing does.
        risk = {
            "apiVersion": RBAC,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "gcm-escalation"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": embedded.SERVICE_ACCOUNT, "namespace": "garden"}],
        }
        gcm = Client.from_kubeconfig(g.embedded.gcm_kubeconfig, qps=0)
        with pytest.raises(Forbidden) as refused:
            gcm.create(risk, dry_run=True)
        assert f"ValidatingAdmissionPolicy '{POLICY}'" in str(refused.value)
        assert "ClusterRoleBinding gcm-escalation is not one" in str(refused.value)
        g.admin.delete(ADMISSION, "ValidatingAdmissionPolicyBinding", POLICY)
        assert gcm.create(risk, dry_run=True)["roleRef"]["name"] == "cluster-admin"
        gcm.close()
    finally:
        g.close()
