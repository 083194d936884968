"""The namespace-deletion webhook (Gardener's namespacedeletion admission handler).

- the handler alone with fake readers (scenarios 86-94);
- the handler behind gcm's webhook server over HTTPS (95, 96, v1beta1, 413);
- end to end: the RBAC-enforcing API server set up like ``gcm --embedded`` (``enable_webhooks``: a
  self-signed certificate, the ValidatingWebhookConfiguration of manifests/deploy, the Service mapped to
  gcm's listener) with gcm's webhook running as its ServiceAccount, driven through kubectl and the
  official client; a standby replica serves too; failurePolicy Fail/Ignore with the webhook down;
- configuration: missing certificates exit 2 naming the setting, no listener → off, certificate reload
  (``python -m gcm --embedded`` refusing ``kubectl delete namespace``: test_gcm_embedded_webhooks.py).
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import structlog
import urllib3
import yaml
from kubernetes import client as k8s

from framework.certs import generate_ca, issue_serving_cert
from framework.client import Client, NotFound
from framework.manager import LeaderElectionOptions, Manager
from framework.testing import consistently, free_port
from framework.webhook import AdmissionRequest, WebhookServer, self_signed_cert
from gcm import embedded
from gcm.cmd.app import webhook_server
from gcm.config import ConfigError, default_config
from gcm.config.types import WebhookServer as WebhookServerConfig
from gcm.config.types import WebhookTLS
from gcm.webhooks import namespacedeletion
from gcm.webhooks.namespacedeletion import PATH, WEBHOOK_NAME, WebhookRegistrar
from gcm.webhooks.namespacedeletion.handler import NamespaceDeletionHandler

ROOT = Path(__file__).resolve().parents[3]
CORE = "core.gardener.cloud/v1beta1"
V1 = "admission.k8s.io/v1"
V1BETA1 = "admission.k8s.io/v1beta1"
NOW = "2024-01-01T00:00:00Z"


def direct(ns: str, project: str) -> str:
    return (
        f'Namespace "{ns}" is forbidden: direct deletion of namespace "{ns}" is not permitted (you must '
        f'delete the corresponding project "{project}")'
    )


def still_shoots(ns: str) -> str:
    return (
        f'Namespace "{ns}" is forbidden: deletion of namespace "{ns}" is not permitted (it still contains '
        "Shoots)"
    )


# --- the handler alone (scenarios 86-94) ------------------------------------------------------------------


def not_found(kind: str, name: str) -> NotFound:
    return NotFound(404, "NotFound", f'{kind} "{name}" not found')


class FakeReader:
    """``get`` from a dict keyed by (kind, name); an Exception value is raised."""

    def __init__(self, objects: dict[tuple[str, str], Any] | None = None) -> None:
        self.objects = dict(objects or {})
        self.calls: list[tuple[str, str]] = []

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None, **kw: Any) -> dict:
        self.calls.append((kind, name))
        value = self.objects.get((kind, name))
        if value is None:
            raise not_found(kind, name)
        if isinstance(value, Exception):
            raise value
        return value


class FakeAPIReader(FakeReader):
    """A live reader: ``get`` as above, Shoot lists from ``shoots`` (or raising ``list_error``)."""

    def __init__(self, objects=None, shoots: int = 0, list_error: Exception | None = None) -> None:
        super().__init__(objects)
        self.shoots = shoots
        self.list_error = list_error
        self.lists: list[tuple[str, str, str | None, dict]] = []

    def list(self, api_version: str, kind: str, namespace: str | None = None, **options: Any) -> dict:
        self.lists.append((api_version, kind, namespace, options))
        if self.list_error is not None:
            raise self.list_error
        limit = options.get("limit") or self.shoots
        return {"items": [{"metadata": {"name": f"s{i}"}} for i in range(min(self.shoots, limit))]}


def namespace(name: str = "garden-bar", project: str | None = "bar", deleting: bool = False) -> dict:
    meta: dict[str, Any] = {"name": name, "labels": {"gardener.cloud/role": "project"}}
    if project:
        meta["labels"]["project.gardener.cloud/name"] = project
    if deleting:
        meta["deletionTimestamp"] = NOW
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def project(name: str = "bar", deleting: bool = False) -> dict:
    meta: dict[str, Any] = {"name": name}
    if deleting:
        meta["deletionTimestamp"] = NOW
        meta["finalizers"] = ["gardener"]
    return {"apiVersion": CORE, "kind": "Project", "metadata": meta, "spec": {"namespace": "garden-bar"}}


def request(operation: str = "DELETE", name: str = "garden-bar", old: dict | None = None) -> AdmissionRequest:
    raw = {
        "uid": "u-1",
        "kind": {"group": "", "version": "v1", "kind": "Namespace"},
        "resource": {"group": "", "version": "v1", "resource": "namespaces"},
        "name": name,
        "namespace": name,
        "operation": operation,
        "userInfo": {"username": "alice"},
        "object": None if operation == "DELETE" else namespace(name),
        "oldObject": old if old is not None else namespace(name),
    }
    return AdmissionRequest.from_dict(raw)


def handler(cache: dict, live: dict | None = None, **kw: Any) -> NamespaceDeletionHandler:
    return NamespaceDeletionHandler(
        FakeReader(cache), FakeAPIReader(live if live is not None else cache, **kw)
    )


def test_86_project_label_without_project_is_allowed():
    resp = handler({("Namespace", "garden-bar"): namespace()})(request())
    assert resp.allowed and resp.code == 200


def test_87_namespace_without_project_label_is_allowed():
    resp = handler({("Namespace", "garden-bar"): namespace(project=None)})(request())
    assert resp.allowed


@pytest.mark.parametrize("failing", ["Namespace", "Project"])
def test_88_read_failures_are_internal_errors(failing):
    objects: dict = {("Namespace", "garden-bar"): namespace(), ("Project", "bar"): project()}
    objects[(failing, "garden-bar" if failing == "Namespace" else "bar")] = RuntimeError("fake err")
    resp = handler(objects)(request())
    assert not resp.allowed
    assert resp.status["code"] == 500 and resp.status["reason"] == "InternalError"
    assert resp.status["message"] == "Internal error occurred: fake err"
    assert resp.status["details"]["causes"][0]["message"] == "fake err"


def test_89_missing_namespace_is_allowed():
    h = handler({})
    assert h(request()).allowed
    assert h.api_reader.calls == [("Namespace", "garden-bar")]  # the cache's NotFound was confirmed live


def test_90_namespace_already_being_deleted_is_allowed():
    objects = {("Namespace", "garden-bar"): namespace(deleting=True), ("Project", "bar"): project()}
    assert handler(objects)(request()).allowed


def test_91_project_not_being_deleted_denies():
    objects = {("Namespace", "garden-bar"): namespace(), ("Project", "bar"): project()}
    resp = handler(objects)(request())
    assert not resp.allowed
    assert resp.status == {
        "status": "Failure",
        "code": 403,
        "reason": "Forbidden",
        "message": direct("garden-bar", "bar"),
        "details": {"name": "garden-bar", "kind": "Namespace"},
    }
    assert "direct deletion of namespace" in resp.status["message"]


def test_92_listing_shoots_fails_is_an_internal_error():
    objects = {("Namespace", "garden-bar"): namespace(), ("Project", "bar"): project(deleting=True)}
    resp = handler(objects, list_error=RuntimeError("list broke"))(request())
    assert not resp.allowed and resp.status["code"] == 500
    assert "list broke" in resp.status["message"]


@pytest.mark.parametrize("shoots", [0, 1, 3])
def test_93_project_being_deleted_allows_only_without_shoots(shoots):
    objects = {("Namespace", "garden-bar"): namespace(), ("Project", "bar"): project(deleting=True)}
    h = handler(objects, shoots=shoots)
    resp = h(request())
    if shoots == 0:
        assert resp.allowed
    else:
        assert not resp.allowed and resp.status["code"] == 403
        assert resp.status["message"] == still_shoots("garden-bar")
        assert "still contains Shoots" in resp.status["message"]
    # Shoots are listed live, metadata only, one at most.
    ((api_version, kind, namespace_, options),) = h.api_reader.lists
    assert (api_version, kind, namespace_) == (CORE, "Shoot", "garden-bar")
    assert options["limit"] == 1 and options["metadata_only"] is True and options["timeout"] > 0


@pytest.mark.parametrize("operation", ["CREATE", "UPDATE", "CONNECT"])
def test_94_other_operations_are_allowed_without_warnings(operation):
    resp = handler({})(request(operation))
    assert resp.allowed and resp.warnings == ()


def test_stale_cache_not_found_is_confirmed_live():
    cache = {("Namespace", "garden-bar"): namespace()}
    live = {("Namespace", "garden-bar"): namespace(), ("Project", "bar"): project()}
    resp = handler(cache, live)(request())
    assert not resp.allowed and resp.status["message"] == direct("garden-bar", "bar")


def test_delete_without_old_object_is_a_bad_request():
    raw = dict(request().raw)
    raw.pop("oldObject")
    resp = handler({})(AdmissionRequest.from_dict(raw))
    assert not resp.allowed and resp.status["code"] == 400
    assert resp.status["message"] == "there is no content to decode"


# --- behind the webhook server (95, 96) --------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, bytes]]:
    """gcm's webhook server (``gcm.cmd.app.webhook_server``) serving the handler with fake readers."""
    certs = tmp_path_factory.mktemp("served-certs")
    _, _, ca_pem = self_signed_cert(certs)
    cfg = default_config()
    cfg.server.webhooks = WebhookServerConfig("127.0.0.1", free_port(), WebhookTLS(str(certs)))
    server = webhook_server(cfg)
    assert server is not None
    objects = {("Namespace", "garden-bar"): namespace(), ("Project", "bar"): project()}
    server.register(PATH, handler(objects))
    server.start()
    yield f"{server.url}{PATH}", ca_pem
    server.stop(5)


def post(served: tuple[str, bytes], body: bytes, content_type: str = "application/json") -> tuple[int, dict]:
    url, ca_pem = served
    ctx = ssl.create_default_context(cadata=ca_pem.decode())
    http = urllib3.PoolManager(ssl_context=ctx, retries=False)
    r = http.request("POST", url, body=body, headers={"Content-Type": content_type})
    return r.status, json.loads(r.data)


@pytest.mark.parametrize("version", [V1, V1BETA1])
def test_95_review_answered_in_kind_with_uid(served, version):
    review = {"apiVersion": version, "kind": "AdmissionReview", "request": dict(request().raw, uid="X-42")}
    code, body = post(served, orjson.dumps(review))
    assert code == 200
    assert body["apiVersion"] == version and body["kind"] == "AdmissionReview"
    resp = body["response"]
    assert resp["uid"] == "X-42" and resp["allowed"] is False
    assert resp["status"]["code"] == 403 and resp["status"]["reason"] == "Forbidden"
    assert resp["status"]["message"] == direct("garden-bar", "bar")


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (
            b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}}',
            "text/plain",
        ),
        (b"{not json", "application/json"),
        (b"", "application/json"),
        (b'{"apiVersion":"v1","kind":"Namespace"}', "application/json"),
    ],
)
def test_96_malformed_requests_get_400_in_a_200(served, body, content_type):
    code, doc = post(served, body, content_type)
    assert code == 200
    assert doc["response"]["allowed"] is False and doc["response"]["status"]["code"] == 400


def test_huge_body_gets_413(served):
    code, doc = post(served, b'{"x":"' + b"a" * (7 * 1024 * 1024 + 10) + b'"}')
    assert code == 200 and doc["response"]["status"]["code"] == 413


# --- end to end ---------------------------------------------------------------------------------------------


class Env:
    def __init__(self, emb: embedded.Embedded, cfg: Any, mgr: Manager, registrar: WebhookRegistrar) -> None:
        self.emb, self.cfg, self.mgr, self.registrar = emb, cfg, mgr, registrar
        self.admin = Client.from_kubeconfig(emb.admin_kubeconfig, qps=0)
        self.core = k8s.CoreV1Api(emb.server.api_client())
        self.kubectl_env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}

    def kubectl(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["kubectl", "--kubeconfig", self.emb.admin_kubeconfig, *args],
            capture_output=True,
            text=True,
            timeout=30,
            env=self.kubectl_env,
        )

    def project_namespace(self, name: str, *, deleting: bool = False, shoots: int = 0) -> str:
        """Namespace garden-NAME labelled for Project NAME (held by a finalizer when ``deleting``)."""
        ns = f"garden-{name}"
        labels = {"gardener.cloud/role": "project", "project.gardener.cloud/name": name}
        self.admin.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}}
        )
        meta: dict[str, Any] = {"name": name, "finalizers": ["test.gardener.cloud/hold"]}
        self.admin.create(
            {"apiVersion": CORE, "kind": "Project", "metadata": meta, "spec": {"namespace": ns}}
        )
        for i in range(shoots):
            self.admin.create(
                {"apiVersion": CORE, "kind": "Shoot", "metadata": {"name": f"s{i}", "namespace": ns}}
            )
        if deleting:
            self.admin.delete(CORE, "Project", name)
            wait_for(lambda: self._cached_deleting(name))
        wait_for(lambda: self._cached(ns))
        return ns

    def _cached(self, ns: str) -> bool:
        try:
            self.mgr.client.get("v1", "Namespace", ns)
            return True
        except NotFound:
            return False

    def _cached_deleting(self, name: str) -> bool:
        try:
            return bool(self.mgr.client.get(CORE, "Project", name)["metadata"].get("deletionTimestamp"))
        except NotFound:
            return False  # the cache has not seen the Project yet

    def phase(self, ns: str) -> str | None:
        try:
            return self.admin.get("v1", "Namespace", ns)["status"]["phase"]
        except NotFound:
            return None


def wait_for(fn, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def start_manager(mgr: Manager) -> threading.Thread:
    t = threading.Thread(target=mgr.start, name="gcm-test-manager", daemon=True)
    t.start()
    return t


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> Iterator[Env]:
    home = tmp_path_factory.mktemp("embedded")
    emb = embedded.start(0, home / "kubeconfig")
    cfg = default_config()
    embedded.enable_webhooks(emb, cfg, free_port())  # what `gcm --embedded` does (there on 2721)
    mgr = Manager(
        Client.from_kubeconfig(emb.gcm_kubeconfig, qps=0),
        webhook_server=webhook_server(cfg),
        health_probe_bind_address=f"127.0.0.1:{free_port()}",
    )
    registrar = namespacedeletion.add_to_manager(mgr, cfg)
    assert registrar is not None
    thread = start_manager(mgr)
    try:
        assert registrar.wait_registered(20)
        yield Env(emb, cfg, mgr, registrar)
    finally:
        mgr.stop()
        thread.join(20)
        emb.stop()


def test_registration_and_readiness(env):
    assert env.cfg.server.webhooks.tls.server_cert_dir  # a generated certificate
    vwc = env.admin.get(
        "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "validate-namespace-deletion"
    )
    (hook,) = vwc["webhooks"]
    assert hook["name"] == WEBHOOK_NAME and hook["failurePolicy"] == "Fail"
    assert hook["namespaceSelector"] == {"matchLabels": {"gardener.cloud/role": "project"}}
    assert base64.b64decode(hook["clientConfig"]["caBundle"]).startswith(b"-----BEGIN CERTIFICATE-----")
    assert env.emb.server.webhook_service_map[("garden", "gardener-controller-manager", 443)].startswith(
        "127.0.0.1:"
    )
    r = urllib3.PoolManager(retries=False).request("GET", f"{env.mgr.probe_server.url}/readyz?verbose")
    assert r.status == 200 and b"webhook-namespace-deletion" in r.data


def test_kubectl_direct_deletion_refused_with_the_spec_message(env):
    ns = env.project_namespace("alpha")
    out = env.kubectl("delete", "namespace", ns)
    assert out.returncode != 0
    assert out.stderr.strip() == (
        f'Error from server (Forbidden): admission webhook "{WEBHOOK_NAME}" denied the request: '
        + direct(ns, "alpha")
    )
    assert env.phase(ns) == "Active"  # not even marked Terminating


def test_official_client_direct_deletion_refused(env):
    ns = env.project_namespace("beta")
    with pytest.raises(k8s.ApiException) as e:
        env.core.delete_namespace(ns)
    assert e.value.status == 403
    status = json.loads(e.value.body)
    assert status["reason"] == "Forbidden"
    assert status["message"] == f'admission webhook "{WEBHOOK_NAME}" denied the request: {direct(ns, "beta")}'
    assert status["details"] == {"name": ns, "kind": "Namespace"}


def test_allowed_once_project_is_being_deleted_and_no_shoots_remain(env):
    ns = env.project_namespace("gamma", deleting=True, shoots=1)
    out = env.kubectl("delete", "namespace", ns, "--wait=false")
    assert out.returncode != 0
    assert out.stderr.strip().endswith(still_shoots(ns))
    with pytest.raises(k8s.ApiException) as e:
        env.core.delete_namespace(ns)
    assert e.value.status == 403 and "still contains Shoots" in json.loads(e.value.body)["message"]
    env.admin.delete(CORE, "Shoot", "s0", ns)
    out = env.kubectl("delete", "namespace", ns, "--wait=false")
    assert out.returncode == 0, out.stderr
    assert env.phase(ns) in ("Terminating", None)


def test_official_client_allowed_without_shoots(env):
    ns = env.project_namespace("delta", deleting=True)
    env.core.delete_namespace(ns)
    assert env.phase(ns) in ("Terminating", None)


def test_other_namespaces_unaffected(env):
    env.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "plain"}})
    out = env.kubectl("delete", "namespace", "plain", "--wait=false")
    assert out.returncode == 0, out.stderr
    # Labelled as a project namespace but naming no project: allowed by the handler.
    labels = {"gardener.cloud/role": "project"}
    env.admin.create(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "orphan", "labels": labels}}
    )
    env.core.delete_namespace("orphan")
    # Naming a project that does not exist: allowed.
    labels = {"gardener.cloud/role": "project", "project.gardener.cloud/name": "nobody"}
    env.admin.create(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "garden-nobody", "labels": labels}}
    )
    env.core.delete_namespace("garden-nobody")


def test_webhook_down_fail_refuses_and_ignore_allows(env):
    ns = env.project_namespace("epsilon")
    key = ("garden", "gardener-controller-manager", 443)
    address = env.emb.server.webhook_service_map[key]
    env.emb.server.webhook_service_map[key] = f"127.0.0.1:{free_port()}"  # nothing listens there
    vwc_path = (
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/validate-namespace-deletion"
    )
    try:
        out = env.kubectl("delete", "namespace", ns, "--wait=false")
        assert out.returncode != 0
        assert out.stderr.startswith(
            "Error from server (InternalError): Internal error occurred: failed calling webhook "
            f'"{WEBHOOK_NAME}": failed to call webhook: Post "https://gardener-controller-manager.garden.svc:443'
            '/webhooks/validate-namespace-deletion?timeout=10s": '
        )
        assert "connection refused" in out.stderr
        patch = [{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}]
        env.admin.request("PATCH", vwc_path, body=patch, content_type="application/json-patch+json")
        env.core.delete_namespace(ns)  # failing open
        assert env.phase(ns) in ("Terminating", None)
    finally:
        env.emb.server.webhook_service_map[key] = address
        patch = [{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Fail"}]
        env.admin.request("PATCH", vwc_path, body=patch, content_type="application/json-patch+json")


def test_a_standby_replica_serves_the_webhook(env, tmp_path):
    """Leader election held by someone else: the standby still registers and answers the webhook."""
    env.admin.create(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "gcm-webhook-test", "namespace": "garden"},
            "spec": {
                "holderIdentity": "someone-else",
                "leaseDurationSeconds": 3600,
                "acquireTime": "2030-01-01T00:00:00.000000Z",
                "renewTime": "2030-01-01T00:00:00.000000Z",
            },
        }
    )
    _, _, ca_pem = self_signed_cert(tmp_path)
    server = WebhookServer("127.0.0.1", 0, cert_dir=tmp_path)
    mgr = Manager(
        Client.from_kubeconfig(env.emb.gcm_kubeconfig, qps=0),
        leader_election=LeaderElectionOptions("garden", "gcm-webhook-test", retry_period=0.2),
        webhook_server=server,
    )
    registrar = namespacedeletion.add_to_manager(mgr, env.cfg)
    thread = start_manager(mgr)
    try:
        assert registrar.wait_registered(20)
        assert not mgr.is_leader()
        ns = env.project_namespace("zeta")
        review = {
            "apiVersion": V1,
            "kind": "AdmissionReview",
            "request": dict(request(name=ns).raw, uid="s-1"),
        }
        code, body = post((f"{server.url}{PATH}", ca_pem), orjson.dumps(review))
        assert code == 200 and body["response"]["uid"] == "s-1"
        assert body["response"]["status"]["message"] == direct(ns, "zeta")
    finally:
        mgr.stop()
        thread.join(20)


# --- registration, readiness and configuration --------------------------------------------------------------


class FakeInformer:
    def __init__(self) -> None:
        self.synced = False

    def has_synced(self) -> bool:
        return self.synced


def test_path_registered_only_after_caches_synced(tmp_path):
    self_signed_cert(tmp_path)
    server = WebhookServer("127.0.0.1", 0, cert_dir=tmp_path)
    informers = [FakeInformer(), FakeInformer()]
    registrar = WebhookRegistrar(server, PATH, handler({}), informers, poll=0.01)
    registrar.start()
    try:

        def unregistered() -> bool:
            return registrar.check() is not None and PATH not in server.webhooks

        consistently(unregistered, duration=0.05, message="not registered before any cache synced")
        informers[0].synced = True
        consistently(unregistered, duration=0.05, message="not registered before every cache synced")
        informers[1].synced = True
        assert registrar.wait_registered(2)
        assert registrar.check() is None and PATH in server.webhooks
    finally:
        registrar.stop(2)


def test_without_webhook_server_the_webhook_is_off_and_logged():
    class NoWebhooks:
        webhook_server = None

    with structlog.testing.capture_logs() as logs:
        assert namespacedeletion.add_to_manager(NoWebhooks(), default_config()) is None
    assert any(e["log_level"] == "info" and "webhook is off" in e["event"] for e in logs)


@pytest.mark.parametrize("legacy", [False, True])
def test_missing_certificates_exit_2_naming_the_setting(tmp_path, capsys, monkeypatch, legacy):
    import gcm.cmd.main as cli

    monkeypatch.setattr(cli, "configure_logging", lambda *a: None)  # keep the test's structlog setup

    if legacy:
        tls = {"serverCertPath": str(tmp_path / "c.crt"), "serverKeyPath": str(tmp_path / "c.key")}
        server = {"https": {"port": free_port(), "tls": tls}}
        setting = "server.https.tls.serverCertPath"
    else:
        server = {"webhooks": {"port": free_port(), "tls": {"serverCertDir": str(tmp_path / "none")}}}
        setting = "server.webhooks.tls.serverCertDir"
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "controllermanager.config.gardener.cloud/v1alpha1",
                "kind": "ControllerManagerConfiguration",
                "server": server,
            }
        )
    )
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    assert cli.main(["--config", str(cfg), "--kubeconfig", str(kubeconfig)]) == 2
    err = capsys.readouterr().err
    assert setting in err and "certificate files not found" in err


def test_webhook_server_without_tls_setting_is_a_config_error():
    cfg = default_config()
    cfg.server.webhooks = WebhookServerConfig("127.0.0.1", 0, WebhookTLS(""))
    with pytest.raises(ConfigError) as e:
        webhook_server(cfg)
    assert "server.webhooks.tls" in str(e.value.errors)


def test_certificates_reloaded_on_change(tmp_path):
    first, second = generate_ca("first"), generate_ca("second")
    issue_serving_cert(first).write(tmp_path, "tls")
    cfg = default_config()
    cfg.server.webhooks = WebhookServerConfig("127.0.0.1", free_port(), WebhookTLS(str(tmp_path)))
    server = webhook_server(cfg)
    assert server is not None
    server.register(PATH, handler({}))
    server.start()
    try:
        review = orjson.dumps({"apiVersion": V1, "kind": "AdmissionReview", "request": dict(request().raw)})
        assert post((f"{server.url}{PATH}", first.cert_pem), review)[0] == 200
        issue_serving_cert(second).write(tmp_path, "tls")
        assert post((f"{server.url}{PATH}", second.cert_pem), review)[0] == 200
        with pytest.raises(urllib3.exceptions.SSLError):
            post((f"{server.url}{PATH}", first.cert_pem), review)
    finally:
        server.stop(5)
