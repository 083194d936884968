"""The kubeconfig-secret webhook (Gardener's kubeconfigsecret admission handler and
``ValidateConfigWithAllowList``).

- reading a kubeconfig: Gardener's allow-list and texts, what client-go's decoding refuses, and the
  bounds (aliases, nesting, documents, tags) that keep a hostile document cheap;
- the handler behind gcm's webhook server over HTTPS (v1 and v1beta1 reviews, answered in kind);
- end to end: the RBAC-enforcing API server set up like ``gcm --embedded`` (``enable_webhooks``) with
  the webhook served by a Manager, driven through kubectl and the official client: every refused field,
  a valid kubeconfig, malformed ones, an update from valid to invalid, Secrets outside project
  namespaces, DELETE, the rejected-resources metric, the configuration switch (``python -m gcm
  --embedded`` with ``kubectl create secret generic --from-file=kubeconfig=...``:
  test_gcm_embedded_webhooks.py).
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import urllib3
import yaml
from kubernetes import client as k8s
from prometheus_client.parser import text_string_to_metric_families

from framework.client import Client, NotFound
from framework.manager import Manager
from framework.testing import free_port
from framework.webhook import self_signed_cert
from gcm import embedded
from gcm.cmd.app import webhook_server
from gcm.config import WebhooksConfiguration, WebhookSwitch, default_config, load_config
from gcm.config.types import WebhookServer as WebhookServerConfig
from gcm.config.types import WebhookTLS
from gcm.webhooks import kubeconfigsecret
from gcm.webhooks.kubeconfigsecret import PATH, WEBHOOK_NAME
from gcm.webhooks.kubeconfigsecret.kubeconfig import (
    MAX_ALIASES,
    MAX_BYTES,
    MAX_DEPTH,
    KubeconfigError,
    load_kubeconfig,
    validate_auth_infos,
)
from gcm.webhooks.namespacedeletion import WEBHOOK_NAME as NAMESPACE_WEBHOOK

ROOT = Path(__file__).resolve().parents[3]
V1 = "admission.k8s.io/v1"
V1BETA1 = "admission.k8s.io/v1beta1"
FIELDS = "[client-certificate-data client-key-data token username password]"
CORE = "core.gardener.cloud/v1beta1"
METRIC = "gardener_admission_controller_rejected_resources_total"


def kubeconfig(user: dict | None = None, name: str = "garden-user", **top: Any) -> str:
    """A complete kubeconfig whose one user has the auth info ``user`` (certificate data by default)."""
    info = (
        user if user is not None else {"client-certificate-data": "Y2VydAo=", "client-key-data": "a2V5Cg=="}
    )
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "garden",
        "clusters": [
            {
                "name": "garden",
                "cluster": {"server": "https://garden.example.com", "certificate-authority-data": "Y2EK"},
            }
        ],
        "contexts": [{"name": "garden", "context": {"cluster": "garden", "user": name}}],
        "users": [{"name": name, "user": info}],
        **top,
    }
    return yaml.safe_dump(doc, sort_keys=False)


EXEC = {
    "exec": {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": "/bin/sh",
        "args": ["-c", "touch /tmp/pwned"],
        "interactiveMode": "Never",
    }
}
# Every refused field: (auth info, Gardener's text for user "garden-user").
REFUSED = {
    "client-certificate": (
        {"client-certificate": "/etc/kubernetes/pki/admin.crt", "client-key-data": "a2V5Cg=="},
        'client certificate files are not supported (user "garden-user"), these are the valid fields: '
        + FIELDS,
    ),
    "client-key": (
        {"client-certificate-data": "Y2VydAo=", "client-key": "/root/.ssh/id_rsa"},
        f'client key files are not supported (user "garden-user"), these are the valid fields: {FIELDS}',
    ),
    "tokenFile": (
        {"tokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token"},
        f'token files are not supported (user "garden-user"), these are the valid fields: {FIELDS}',
    ),
    "act-as": (
        {"token": "t", "act-as": "system:admin"},
        f"impersonation is not supported, these are the valid fields: {FIELDS}",
    ),
    "act-as-groups": (
        {"token": "t", "act-as-groups": ["system:masters"]},
        f"impersonation is not supported, these are the valid fields: {FIELDS}",
    ),
    "auth-provider": (
        {"auth-provider": {"name": "oidc", "config": {"idp-issuer-url": "https://issuer.example.com"}}},
        f'auth provider configurations are not supported (user "garden-user"), these are the valid fields: '
        f"{FIELDS}",
    ),
    "exec": (
        EXEC,
        f'exec configurations are not supported (user "garden-user"), these are the valid fields: {FIELDS}',
    ),
}


def invalid_message(name: str, reason: str) -> str:
    return (
        f'Secret "{name}" is invalid: data.kubeconfig: Invalid value: "<redacted>": secret contains invalid '
        f"kubeconfig: {reason}"
    )


def denied(name: str, reason: str) -> str:
    return f'admission webhook "{WEBHOOK_NAME}" denied the request: {invalid_message(name, reason)}'


# --- reading a kubeconfig ---------------------------------------------------------------------------------


@pytest.mark.parametrize("field", sorted(REFUSED))
def test_every_refused_field_with_gardeners_text(field):
    user, text = REFUSED[field]
    assert validate_auth_infos(load_kubeconfig(kubeconfig(user).encode())) == text


@pytest.mark.parametrize(
    "user",
    [
        {"client-certificate-data": "Y2VydAo=", "client-key-data": "a2V5Cg=="},
        {"token": "abc"},
        {"username": "admin", "password": "secret"},
        {},
        {"exec": None, "auth-provider": None, "act-as-groups": []},
        {"auth-provider": {"name": "gcp"}},  # a provider without config: allowed, as in Gardener
        {"auth-provider": {"name": "gcp", "config": {}}},
        {"token": "2024-01-01"},  # a timestamp-looking token stays a string (no datetime)
    ],
)
def test_allowed_auth_infos(user):
    assert validate_auth_infos(load_kubeconfig(kubeconfig(user).encode())) is None


def test_every_user_is_checked_in_document_order():
    doc = yaml.safe_load(kubeconfig())
    doc["users"] += [
        {"name": "second", "user": {"token": "t"}},
        {"name": "third", "user": {"tokenFile": "/t"}},
        {"name": "fourth", "user": EXEC},
        {"name": "garden-user", "user": EXEC},  # a duplicate name: both entries are checked
    ]
    text = validate_auth_infos(load_kubeconfig(yaml.safe_dump(doc).encode()))
    assert text == f'token files are not supported (user "third"), these are the valid fields: {FIELDS}'
    doc["users"] = [doc["users"][0], {"name": "garden-user", "user": EXEC}]
    assert validate_auth_infos(load_kubeconfig(yaml.safe_dump(doc).encode())).startswith(
        'exec configurations are not supported (user "garden-user")'
    )


def test_extra_allowed_fields_as_gardeners_allow_list():
    config = load_kubeconfig(kubeconfig({"tokenFile": "/t"}).encode())
    assert validate_auth_infos(config, allowed=["tokenFile"]) is None
    config = load_kubeconfig(kubeconfig(EXEC).encode())
    assert validate_auth_infos(config, allowed=["tokenFile"]) == (
        'exec configurations are not supported (user "garden-user"), these are the valid fields: '
        "[client-certificate-data client-key-data token username password tokenFile]"
    )


@pytest.mark.parametrize(
    "data", [b"", b"\n  \n", b"# just a comment\n", b"---\n", b"{}", b"apiVersion: v1\nkind: Config\n"]
)
def test_empty_kubeconfigs_pass(data):
    assert validate_auth_infos(load_kubeconfig(data)) is None


def test_json_kubeconfig_is_read_as_yaml():
    doc = yaml.safe_load(kubeconfig(EXEC))
    assert "exec configurations" in validate_auth_infos(load_kubeconfig(json.dumps(doc).encode()))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            b"foobar",
            "couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value",
        ),
        (b"- a\n- b\n", "json parse error: json: cannot unmarshal array into Go value"),
        (b"users: [\n", "error converting YAML to JSON: yaml: line"),
        (b"apiVersion: v1\nkind: Pod\n", 'no kind "Pod" is registered for version "v1"'),
        (b"apiVersion: v2\n", 'no kind "Config" is registered for version "v2"'),
        (
            b"users: 5\n",
            "json: cannot unmarshal number into Go struct field Config.users of type []v1.NamedAuthInfo",
        ),
        (
            b"users: [x]\n",
            "cannot unmarshal string into Go struct field Config.users of type v1.NamedAuthInfo",
        ),
        (
            b"users:\n- name: [a]\n",
            "cannot unmarshal array into Go struct field Config.users.name of type string",
        ),
        (
            b"users:\n- name: u\n  user: [a]\n",
            "cannot unmarshal array into Go struct field Config.users.user",
        ),
        (
            b"users:\n- name: u\n  user:\n    token: 7\n",
            "cannot unmarshal number into Go struct field Config.users.user.token",
        ),
        (
            b"users:\n- name: u\n  user:\n    exec: sh\n",
            "cannot unmarshal string into Go struct field Config.users.user.exec",
        ),
        (
            b"users:\n- name: u\n  user:\n    act-as-groups: [1]\n",
            "Config.users.user.act-as-groups of type string",
        ),
        (b"users:\n- name: u\n  user:\n    auth-provider: {config: x}\n", "auth-provider.config of type map"),
        (b"\xff\xfe\xfd", "error converting YAML to JSON"),
    ],
)
def test_what_client_go_would_not_load_is_refused(data, expected):
    with pytest.raises(KubeconfigError) as e:
        load_kubeconfig(data)
    assert expected in str(e.value)
    assert "\n" not in str(e.value)


def test_decoding_never_constructs_or_runs_anything(tmp_path):
    marker = tmp_path / "ran"
    for tag in (
        "!!python/object/apply:os.system",
        "!!python/object/new:os.system",
        "!!python/name:os.system",
    ):
        data = f"users:\n- name: u\n  user:\n    token: {tag} ['touch {marker}']\n".encode()
        with pytest.raises(KubeconfigError) as e:
            load_kubeconfig(data)
        assert "could not determine a constructor" in str(e.value)
    assert not marker.exists()
    # Files a kubeconfig names are never opened: a path that does not exist is judged by the rule alone.
    config = load_kubeconfig(kubeconfig({"client-certificate": str(tmp_path / "missing.crt")}).encode())
    assert validate_auth_infos(config).startswith("client certificate files are not supported")


def test_alias_bomb_is_refused_before_anything_is_built():
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):  # nine levels of nine aliases: 9^9 strings if expanded
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    with pytest.raises(KubeconfigError) as e:
        load_kubeconfig("\n".join(lines).encode())
    assert str(e.value) == f"the kubeconfig uses more than {MAX_ALIASES} YAML aliases"
    # A few aliases (shared user entries) are fine.
    doc = kubeconfig() + "x-shared: &shared {token: t}\nx-again: *shared\n"
    assert validate_auth_infos(load_kubeconfig(doc.encode())) is None


def test_aliased_user_entries_are_checked():
    data = (
        b"bad: &bad {exec: {command: sh}}\nusers:\n- name: a\n  user: {token: t}\n- name: b\n  user: *bad\n"
    )
    assert validate_auth_infos(load_kubeconfig(data)).startswith(
        'exec configurations are not supported (user "b")'
    )


@pytest.mark.parametrize("style", ["flow", "block"])
def test_deep_nesting_is_refused(style):
    depth = MAX_DEPTH + 1
    if style == "flow":
        data = b"users: " + b"[" * depth + b"]" * depth
    else:
        data = "".join(f"{'  ' * i}k{i}:\n" for i in range(depth)).encode() + b"  " * depth + b"v\n"
    with pytest.raises(KubeconfigError) as e:
        load_kubeconfig(data)
    assert str(e.value) == f"the kubeconfig nests deeper than {MAX_DEPTH} levels"
    # Far beyond Python's recursion limit: still one cheap refusal.
    with pytest.raises(KubeconfigError):
        load_kubeconfig(b"[" * 100_000 + b"]" * 100_000)


def test_more_than_a_secret_can_hold_is_refused_unread():
    data = b"users: []\n" + b"#" * MAX_BYTES
    with pytest.raises(KubeconfigError) as e:
        load_kubeconfig(data)
    assert str(e.value) == f"the kubeconfig is larger than a Secret can be ({MAX_BYTES} bytes)"


def test_a_second_document_is_refused():
    data = (kubeconfig() + "---\n" + kubeconfig(EXEC)).encode()
    with pytest.raises(KubeconfigError) as e:
        load_kubeconfig(data)
    assert str(e.value) == "the kubeconfig holds more than one YAML document"


# --- the handler behind gcm's webhook server ----------------------------------------------------------------


def secret(
    name: str = "s", namespace: str = "garden-kc", data: dict[str, str] | None = None, **extra: Any
) -> dict:
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in (data or {}).items()}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "data": encoded,
        **extra,
    }


def review(
    version: str, operation: str, obj: dict | None, old: dict | None = None, uid: str = "u-1"
) -> bytes:
    meta = (obj or old or {}).get("metadata", {})
    request = {
        "uid": uid,
        "kind": {"group": "", "version": "v1", "kind": "Secret"},
        "resource": {"group": "", "version": "v1", "resource": "secrets"},
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", ""),
        "operation": operation,
        "userInfo": {"username": "alice"},
        "object": obj,
        "oldObject": old,
    }
    return orjson.dumps({"apiVersion": version, "kind": "AdmissionReview", "request": request})


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, bytes, Any]]:
    """gcm's webhook server (``gcm.cmd.app.webhook_server``) serving the validator on its own registry."""
    from prometheus_client import CollectorRegistry

    certs = tmp_path_factory.mktemp("kc-certs")
    _, _, ca_pem = self_signed_cert(certs)
    cfg = default_config()
    cfg.server.webhooks = WebhookServerConfig("127.0.0.1", free_port(), WebhookTLS(str(certs)))
    registry = CollectorRegistry()
    server = webhook_server(cfg, registry)
    assert server is not None

    class Mgr:
        webhook_server = server

    Mgr.registry = registry  # type: ignore[attr-defined]
    assert kubeconfigsecret.add_to_manager(Mgr(), cfg) is not None
    server.start()
    yield f"{server.url}{PATH}", ca_pem, registry
    server.stop(5)


def post(served: tuple[str, bytes, Any], body: bytes) -> dict:
    url, ca_pem, _ = served
    http = urllib3.PoolManager(ssl_context=ssl.create_default_context(cadata=ca_pem.decode()), retries=False)
    r = http.request("POST", url, body=body, headers={"Content-Type": "application/json"})
    assert r.status == 200
    return json.loads(r.data)


@pytest.mark.parametrize("version", [V1, V1BETA1])
def test_reviews_answered_in_kind(served, version):
    bad = secret(data={"kubeconfig": kubeconfig(EXEC)})
    doc = post(served, review(version, "CREATE", bad, uid="X-1"))
    assert doc["apiVersion"] == version and doc["response"]["uid"] == "X-1"
    status = doc["response"]["status"]
    assert doc["response"]["allowed"] is False
    assert status["code"] == 422 and status["reason"] == "Invalid"
    assert status["message"] == invalid_message("s", REFUSED["exec"][1])
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "<redacted>": secret contains invalid kubeconfig: '
            + REFUSED["exec"][1],
            "field": "data.kubeconfig",
        }
    ]
    assert "/bin/sh" not in json.dumps(doc)  # the kubeconfig itself never comes back
    good = secret(data={"kubeconfig": kubeconfig()})
    doc = post(served, review(version, "UPDATE", bad, old=good))
    assert doc["response"]["status"]["code"] == 422
    doc = post(served, review(version, "UPDATE", good, old=bad))
    assert doc["response"]["allowed"] is True


def test_served_malformed_kubeconfig_and_delete(served):
    doc = post(served, review(V1, "CREATE", secret(data={"kubeconfig": "foobar"})))
    status = doc["response"]["status"]
    assert doc["response"]["allowed"] is False and status["code"] == 400 and status["reason"] == "BadRequest"
    assert "json parse error" in status["message"]
    broken = secret()
    broken["data"] = {"kubeconfig": "not base64!"}
    doc = post(served, review(V1, "CREATE", broken))
    assert doc["response"]["status"]["code"] == 400 and "base64" in doc["response"]["status"]["message"]
    # DELETE is not checked, even of a Secret holding a refused kubeconfig.
    doc = post(served, review(V1, "DELETE", None, old=secret(data={"kubeconfig": kubeconfig(EXEC)})))
    assert doc["response"]["allowed"] is True
    # Another kind is a bad request (controller-runtime's decoder would not make a Secret of it).
    body = json.loads(review(V1, "CREATE", secret(data={"kubeconfig": kubeconfig(EXEC)})))
    body["request"]["kind"] = {"group": "", "version": "v1", "kind": "ConfigMap"}
    doc = post(served, orjson.dumps(body))
    assert doc["response"]["allowed"] is False and doc["response"]["status"]["code"] == 400


def test_without_data_kubeconfig_the_secret_passes(served):
    for obj in (secret(data={"token": "x"}), secret(), {**secret(), "data": None}):
        assert post(served, review(V1, "CREATE", obj))["response"]["allowed"] is True


# --- end to end ---------------------------------------------------------------------------------------------


class Env:
    def __init__(self, emb: embedded.Embedded, mgr: Manager) -> None:
        self.emb, self.mgr = emb, mgr
        self.admin = Client.from_kubeconfig(emb.admin_kubeconfig, qps=0)
        self.core = k8s.CoreV1Api(emb.server.api_client())
        self.kubectl_env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}

    def kubectl(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["kubectl", "--kubeconfig", self.emb.admin_kubeconfig, *args],
            capture_output=True, text=True, timeout=30, env=self.kubectl_env, input=stdin,
        )  # fmt: skip

    def namespace(self, name: str, **labels: str) -> str:
        self.admin.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
        )
        return name

    def project_namespace(self, name: str) -> str:
        return self.namespace(name, **{"gardener.cloud/role": "project"})

    def stored(self, namespace: str, name: str) -> dict | None:
        try:
            return self.admin.get("v1", "Secret", name, namespace)
        except NotFound:
            return None

    def rejected(self, namespace: str) -> dict[str, float]:
        """The metric's samples for ``namespace`` by operation, scraped from gcm's /metrics."""
        r = urllib3.PoolManager(retries=False).request("GET", f"{self.mgr.metrics_server.url}/metrics")
        assert r.status == 200
        out: dict[str, float] = {}
        for family in text_string_to_metric_families(r.data.decode()):
            for sample in family.samples:
                if sample.name == METRIC and sample.labels["namespace"] == namespace:
                    assert (
                        sample.labels["kind"] == "Secret" and sample.labels["reason"] == "Rejected Kubeconfig"
                    )
                    out[sample.labels["operation"]] = sample.value
        return out


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> Iterator[Env]:
    home = tmp_path_factory.mktemp("embedded-kc")
    emb = embedded.start(0, home / "kubeconfig", ephemeral=True)
    cfg = default_config()
    embedded.enable_webhooks(emb, cfg, free_port())  # what `gcm --embedded` does (there on 2721)
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    mgr = Manager(
        Client.from_kubeconfig(emb.gcm_kubeconfig, qps=0),
        webhook_server=webhook_server(cfg, registry),
        registry=registry,
        metrics_bind_address=f"127.0.0.1:{free_port()}",
    )
    assert kubeconfigsecret.add_to_manager(mgr, cfg) is not None
    thread = threading.Thread(target=mgr.start, name="gcm-test-manager", daemon=True)
    thread.start()
    try:
        assert mgr.webhook_server.wait_ready(20) and mgr.metrics_server.wait_ready(20)
        yield Env(emb, mgr)
    finally:
        mgr.stop()
        thread.join(20)
        emb.stop()


def test_registration(env):
    vwc = env.admin.get(
        "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "validate-kubeconfig-secrets"
    )
    (hook,) = vwc["webhooks"]
    assert hook["name"] == WEBHOOK_NAME
    assert hook["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    assert hook["rules"][0]["resources"] == ["secrets"] and hook["rules"][0]["apiGroups"] == [""]
    assert hook["namespaceSelector"] == {
        "matchExpressions": [
            {"key": "gardener.cloud/role", "operator": "In", "values": ["project"]},
            {"key": "app", "operator": "NotIn", "values": ["gardener"]},
        ]
    }
    assert hook["failurePolicy"] == "Fail" and hook["sideEffects"] == "None" and hook["timeoutSeconds"] == 10
    assert hook["admissionReviewVersions"] == ["v1", "v1beta1"]
    assert hook["clientConfig"]["service"]["path"] == PATH
    assert base64.b64decode(hook["clientConfig"]["caBundle"]).startswith(b"-----BEGIN CERTIFICATE-----")


@pytest.mark.parametrize("field", sorted(REFUSED))
def test_official_client_every_refused_field(env, field):
    ns = env.project_namespace(f"garden-f-{field.lower()}")
    user, text = REFUSED[field]
    body = {
        "metadata": {"name": "kc"},
        "data": {"kubeconfig": base64.b64encode(kubeconfig(user).encode()).decode()},
    }
    with pytest.raises(k8s.ApiException) as e:
        env.core.create_namespaced_secret(ns, body)
    assert e.value.status == 422
    status = json.loads(e.value.body)
    assert status["reason"] == "Invalid"
    assert status["message"] == denied("kc", text)
    assert status["details"]["causes"][0]["field"] == "data.kubeconfig"
    assert env.stored(ns, "kc") is None
    # stringData reaches the webhook as data (the API server merges it first): refused the same way.
    with pytest.raises(k8s.ApiException) as e:
        env.core.create_namespaced_secret(
            ns, {"metadata": {"name": "kc"}, "stringData": {"kubeconfig": kubeconfig(user)}}
        )
    assert e.value.status == 422 and json.loads(e.value.body)["message"] == denied("kc", text)
    assert env.stored(ns, "kc") is None


def test_kubectl_exec_kubeconfig_refused_and_certificate_data_accepted(env, tmp_path):
    ns = env.project_namespace("garden-kubectl")
    bad, good = tmp_path / "exec.kubeconfig", tmp_path / "cert.kubeconfig"
    bad.write_text(kubeconfig(EXEC))
    good.write_text(kubeconfig())
    out = env.kubectl("create", "secret", "generic", "x", "-n", ns, f"--from-file=kubeconfig={bad}")
    assert out.returncode != 0
    assert out.stderr.strip() == f"error: failed to create secret {denied('x', REFUSED['exec'][1])}"
    assert env.stored(ns, "x") is None
    out = env.kubectl("create", "secret", "generic", "x", "-n", ns, f"--from-file=kubeconfig={good}")
    assert out.returncode == 0, out.stderr
    assert base64.b64decode(env.stored(ns, "x")["data"]["kubeconfig"]).decode() == kubeconfig()


def test_malformed_kubeconfig_is_a_bad_request(env, tmp_path):
    ns = env.project_namespace("garden-malformed")
    with pytest.raises(k8s.ApiException) as e:
        env.core.create_namespaced_secret(
            ns, {"metadata": {"name": "m"}, "stringData": {"kubeconfig": "foobar"}}
        )
    assert e.value.status == 400
    message = json.loads(e.value.body)["message"]
    assert message.startswith(
        f'admission webhook "{WEBHOOK_NAME}" denied the request: couldn\'t get version/kind; json parse error'
    )
    path = tmp_path / "bomb"
    path.write_text(
        "a: &a [x,x,x,x,x,x,x,x]\n" + "".join(f"k{i}: [*a,*a,*a,*a,*a,*a,*a,*a]\n" for i in range(20))
    )
    out = env.kubectl("create", "secret", "generic", "m", "-n", ns, f"--from-file=kubeconfig={path}")
    assert out.returncode != 0 and f"the kubeconfig uses more than {MAX_ALIASES} YAML aliases" in out.stderr
    assert env.stored(ns, "m") is None
    # Malformed kubeconfigs are not counted as rejected kubeconfigs (Gardener counts the rule's refusals).
    assert env.rejected(ns) == {}


def test_update_from_valid_to_invalid_is_refused_and_nothing_changes(env, tmp_path):
    ns = env.project_namespace("garden-update")
    env.core.create_namespaced_secret(
        ns, {"metadata": {"name": "u"}, "stringData": {"kubeconfig": kubeconfig()}}
    )
    before = env.stored(ns, "u")
    # The official client: replace with a kubeconfig that runs a command.
    body = {"metadata": {"name": "u", "resourceVersion": before["metadata"]["resourceVersion"]},
            "stringData": {"kubeconfig": kubeconfig(EXEC)}}  # fmt: skip
    with pytest.raises(k8s.ApiException) as e:
        env.core.replace_namespaced_secret("u", ns, body)
    assert e.value.status == 422 and json.loads(e.value.body)["message"] == denied("u", REFUSED["exec"][1])
    # kubectl: a patch that adds a token file.
    patch = {"data": {"kubeconfig": base64.b64encode(kubeconfig(REFUSED["tokenFile"][0]).encode()).decode()}}
    out = env.kubectl("patch", "secret", "u", "-n", ns, "--type=merge", "-p", json.dumps(patch))
    assert out.returncode != 0 and REFUSED["tokenFile"][1] in out.stderr
    after = env.stored(ns, "u")
    assert after["data"] == before["data"]
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    # A change that keeps the kubeconfig valid goes through.
    out = env.kubectl("label", "secret", "u", "-n", ns, "team=a")
    assert out.returncode == 0, out.stderr
    assert env.rejected(ns) == {"UPDATE": 2.0}


def test_secrets_outside_project_namespaces_are_not_checked(env):
    body = {"metadata": {"name": "free"}, "stringData": {"kubeconfig": kubeconfig(EXEC)}}
    for ns in (
        env.namespace("plain"),
        env.namespace("garden-system-like", **{"gardener.cloud/role": "project", "app": "gardener"}),
        env.namespace("labelled-other", **{"gardener.cloud/role": "seed"}),
    ):
        env.core.create_namespaced_secret(ns, body)
        assert env.stored(ns, "free") is not None
        assert env.rejected(ns) == {}


def test_delete_is_not_checked(env):
    ns = env.namespace("garden-late")  # not yet a project namespace: the Secret is stored
    env.core.create_namespaced_secret(
        ns, {"metadata": {"name": "old"}, "stringData": {"kubeconfig": kubeconfig(EXEC)}}
    )
    env.admin.request(
        "PATCH",
        f"/api/v1/namespaces/{ns}",
        body={"metadata": {"labels": {"gardener.cloud/role": "project"}}},
        content_type="application/merge-patch+json",
    )
    out = env.kubectl("annotate", "secret", "old", "-n", ns, "x=y")
    assert out.returncode != 0 and REFUSED["exec"][1] in out.stderr  # now it is checked on UPDATE...
    out = env.kubectl("delete", "secret", "old", "-n", ns)
    assert out.returncode == 0, out.stderr  # ...but never on DELETE
    assert env.stored(ns, "old") is None


def test_the_metric_counts_each_refusal(env):
    ns = env.project_namespace("garden-metric")
    assert env.rejected(ns) == {}
    for i, field in enumerate(sorted(REFUSED)):
        body = {"metadata": {"name": f"m{i}"}, "stringData": {"kubeconfig": kubeconfig(REFUSED[field][0])}}
        with pytest.raises(k8s.ApiException):
            env.core.create_namespaced_secret(ns, body)
    env.core.create_namespaced_secret(
        ns, {"metadata": {"name": "ok"}, "stringData": {"kubeconfig": kubeconfig()}}
    )
    assert env.rejected(ns) == {"CREATE": float(len(REFUSED))}
    # Dry-run requests reach the webhook (sideEffects None) and are counted as in Gardener.
    out = env.kubectl(
        "create",
        "secret",
        "generic",
        "d",
        "-n",
        ns,
        "--dry-run=server",
        "--from-literal=kubeconfig=" + kubeconfig(EXEC),
    )
    assert out.returncode != 0 and "exec configurations are not supported" in out.stderr
    assert env.rejected(ns) == {"CREATE": float(len(REFUSED) + 1)}


# --- configuration ------------------------------------------------------------------------------------------


def test_switched_off_it_is_neither_served_nor_registered(tmp_path):
    cfg = load_config(
        "apiVersion: controllermanager.config.gardener.cloud/v1alpha1\n"
        "kind: ControllerManagerConfiguration\n"
        "webhooks:\n  kubeconfigSecrets:\n    enabled: false\n"
    )
    assert cfg.webhooks == WebhooksConfiguration(kubeconfig_secrets=WebhookSwitch(enabled=False))
    assert embedded.disabled_webhooks(cfg) == {WEBHOOK_NAME}
    emb = embedded.start(0, tmp_path / "kubeconfig", ephemeral=True)
    try:
        embedded.enable_webhooks(emb, cfg, free_port())
        admin = Client.from_kubeconfig(emb.admin_kubeconfig, qps=0)
        names = [
            h["name"]
            for c in admin.list("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")["items"]
            for h in c["webhooks"]
        ]
        assert names == [NAMESPACE_WEBHOOK]
        server = webhook_server(cfg)
        assert server is not None

        class Mgr:
            webhook_server = server
            registry = None

        assert kubeconfigsecret.add_to_manager(Mgr(), cfg) is None
        assert PATH not in server.webhooks
        # With nobody checking, a project namespace takes any kubeconfig (nothing refuses it).
        core = k8s.CoreV1Api(emb.server.api_client())
        core.create_namespace(
            {"metadata": {"name": "garden-off", "labels": {"gardener.cloud/role": "project"}}}
        )
        core.create_namespaced_secret(
            "garden-off", {"metadata": {"name": "x"}, "stringData": {"kubeconfig": kubeconfig(EXEC)}}
        )
    finally:
        emb.stop()


def test_on_by_default_and_off_without_a_webhook_server():
    cfg = default_config()
    assert cfg.webhook_enabled("kubeconfig_secrets") and embedded.disabled_webhooks(cfg) == set()

    class NoWebhooks:
        webhook_server = None

    assert kubeconfigsecret.add_to_manager(NoWebhooks(), cfg) is None
