"""Building clients: kubeconfig contexts, KUBECONFIG, exec plugins, in-cluster, per-request auth."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml
from kubernetes import client as k8s

from framework.client import Client, NetworkError


class Capture:
    """A plain-HTTP server answering every GET with ``{}`` and recording the request targets and
    headers."""

    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        capture = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                capture.paths.append(self.path)
                capture.headers.append(dict(self.headers))
                body = b'{"kind":"Status"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def capture() -> Iterator[Capture]:
    c = Capture()
    yield c
    c.close()


def test_kubeconfig_context_and_namespace(apiserver, tmp_path):
    cfg = apiserver.kubeconfig_dict(namespace="team-a")
    cfg["clusters"].append({"name": "nowhere", "cluster": {"server": "http://127.0.0.1:9"}})
    cfg["contexts"].append({"name": "broken", "context": {"cluster": "nowhere", "user": "admin"}})
    cfg["current-context"] = "broken"
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(cfg))

    good = Client.from_kubeconfig(path, context="gcm-testing", qps=0)
    assert good.namespace == "team-a"
    assert good.get("v1", "Namespace", "default")["metadata"]["name"] == "default"

    broken = Client.from_kubeconfig(str(path), qps=0)  # current-context
    with pytest.raises(NetworkError):
        broken.request("GET", "/version")


def test_kubeconfig_from_env_with_several_files(apiserver, tmp_path, monkeypatch):
    """``path=None`` reads KUBECONFIG at call time; several files are merged (first wins)."""
    extra = tmp_path / "extra"
    extra.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "preferences": {}}))
    monkeypatch.setenv("KUBECONFIG", f"{apiserver.kubeconfig}:{extra}")
    c = Client.from_kubeconfig(qps=0)
    assert c.request("GET", "/version")["major"] == "1"
    assert c.namespace == "default"


def test_authorization_header_read_at_request_time(capture):
    cfg = k8s.Configuration()
    cfg.host = capture.url
    cfg.api_key = {"authorization": "t1"}
    cfg.api_key_prefix = {"authorization": "Bearer"}
    c = Client.from_configuration(cfg, qps=0, user_agent="my-controller/1.0")
    c.request("GET", "/version")
    cfg.api_key["authorization"] = "t2"  # what a credential refresh does
    c.request("GET", "/version")
    assert [h["Authorization"] for h in capture.headers] == ["Bearer t1", "Bearer t2"]
    assert capture.headers[0]["User-Agent"] == "my-controller/1.0"
    assert capture.headers[0]["Accept"] == "application/json"


def test_server_url_path_prefix_and_query_are_kept(capture):
    """A server URL with a path (a cluster behind a path-routing proxy, as Rancher serves them) is the
    prefix of every request target, with the query after it."""
    cfg = k8s.Configuration()
    cfg.host = capture.url + "/k8s/clusters/c-1/"
    c = Client(cfg, qps=0)
    c.request("GET", "/version")
    c.request("GET", "/api/v1/namespaces", params={"limit": 5, "labelSelector": "a=b", "continue": None})
    assert capture.paths == [
        "/k8s/clusters/c-1/version",
        "/k8s/clusters/c-1/api/v1/namespaces?limit=5&labelSelector=a%3Db",
    ]


def test_http_proxy_gets_the_absolute_url(capture):
    """With ``Configuration.proxy`` set, requests go to the proxy in absolute form (the server named
    in the request line), never straight to the server."""
    cfg = k8s.Configuration()
    cfg.host = "http://apiserver.invalid:6443"
    cfg.proxy = capture.url
    c = Client(cfg, qps=0)
    assert c.request("GET", "/version", params={"timeout": "5s"}) == {"kind": "Status"}
    assert capture.paths == ["http://apiserver.invalid:6443/version?timeout=5s"]


def test_requests_after_close_reconnect(capture):
    """``close()`` drops the pooled connections; a later request opens a new one."""
    cfg = k8s.Configuration()
    cfg.host = capture.url
    c = Client(cfg, qps=0)
    c.request("GET", "/version")
    c.close()
    c.request("GET", "/version")
    assert capture.paths == ["/version", "/version"]


def test_exec_plugin_token_refreshes(capture, tmp_path):
    counter = tmp_path / "count"
    counter.write_text("0")
    script = tmp_path / "plugin.py"
    script.write_text(
        "import json, pathlib\n"
        f"p = pathlib.Path({str(counter)!r}); n = int(p.read_text()) + 1; p.write_text(str(n))\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',\n"
        "  'status': {'token': f'tok-{n}', 'expirationTimestamp': '2000-01-01T00:00:00Z'}}))\n"
    )
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": capture.url}}],
        "users": [
            {
                "name": "u",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": sys.executable,
                        "args": [str(script)],
                        "interactiveMode": "Never",
                    }
                },
            }
        ],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(kubeconfig))
    c = Client.from_kubeconfig(path, qps=0)
    c.request("GET", "/version")
    c.request("GET", "/version")
    tokens = [h["Authorization"] for h in capture.headers]
    # The credential is already expired, so each request re-ran the plugin and sent its new token.
    assert tokens[0].startswith("Bearer tok-") and tokens[0] != tokens[1]


def test_in_cluster(apiserver, tmp_path, monkeypatch):
    (tmp_path / "token").write_text(apiserver.token)
    (tmp_path / "namespace").write_text("kube-system")
    (tmp_path / "ca.crt").write_bytes(apiserver.ca_path.read_bytes())
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(apiserver.port))
    c = Client.in_cluster(tmp_path, qps=0)
    assert c.namespace == "kube-system"
    assert c.get("v1", "Namespace", "kube-system")["metadata"]["name"] == "kube-system"
