"""A real Prometheus (Debian's package, see ``tools.py``) scraping a running ``gcm --embedded
--metrics-secure`` through its secure endpoint: every query of manifests/monitoring/grafana-dashboard.json
and every recording rule of the PrometheusRule returns data, and every rule evaluates without error.

gcm runs as a subprocess with the Event TTL controller on (TTL 1 s, so Events expire during the test);
the test creates Projects, a Secret through the kubeconfig webhook and a refused namespace deletion, so
that the series of controllers, work queues, webhooks, Projects and Events exist. Prometheus scrapes
every second over HTTPS with the token of a ServiceAccount bound to the metrics-reader ClusterRole (as
manifests/monitoring's ServiceMonitor does; the certificate is gcm's self-signed one, so not verified),
under the job name the rules and the ServiceMonitor use, and evaluates the rules (``gcm.rules.yaml``, the
PrometheusRule's groups) every second. Two more jobs scrape the same endpoint without a token and with
the token of a ServiceAccount without the binding: their targets are down with 401 and 403.
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml
from prometheus_client.parser import text_string_to_metric_families

from framework.client import Client, Forbidden, Invalid
from framework.testing import free_port
from tests.gcm import local_gcm
from tests.gcm.monitoring.tools import MONITORING, ROOT, binary

JOB = "gardener-controller-manager"
NAMESPACE = "garden"  # the namespace label a Prometheus Operator gives gcm's targets
CORE = "core.gardener.cloud/v1beta1"
DEADLINE = 45.0  # seconds for every query to have data, from Prometheus' first scrape


def dashboard_queries() -> list[tuple[str, str]]:
    """``(panel title, PromQL)`` of every dashboard target, the variables set as Grafana would."""
    board = json.loads((MONITORING / "grafana-dashboard.json").read_text())
    out = []
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"].replace("$job", JOB).replace("$namespace", NAMESPACE)
            out.append((panel["title"], expr))
    return out


def recorded_series() -> list[str]:
    rule = yaml.safe_load((MONITORING / "prometheusrule.yaml").read_text())
    return [r["record"] for g in rule["spec"]["groups"] for r in g["rules"] if "record" in r]


@dataclass
class Running:
    proc: subprocess.Popen
    log: Path

    def alive(self) -> None:
        assert self.proc.poll() is None, self.log.read_text()[-4000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def wait(condition: Any, what: str, *running: Running, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        for r in running:
            r.alive()
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


@dataclass
class Gcm:
    running: Running
    metrics_url: str
    admin: Client
    tokens: dict[str, Path]  # a ServiceAccount's token file: "reader" (may get /metrics), "nosy" (not)

    def scrape(self) -> str:
        """/metrics as the reader sees it."""
        headers = {"Authorization": f"Bearer {self.tokens['reader'].read_text()}"}
        http = urllib3.PoolManager(cert_reqs="CERT_NONE", retries=False)  # gcm's self-signed certificate
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
            r = http.request("GET", self.metrics_url, headers=headers, timeout=5)
        assert r.status == 200, r.data
        return r.data.decode()


READER_ROLE = "gardener-controller-manager-metrics-reader"  # manifests/deploy/metrics-reader-role.yaml


def service_account_token(admin: Client, name: str, directory: Path) -> Path:
    """A ServiceAccount ``garden/<name>`` and a token of it (TokenRequest), in a file of ``directory``."""
    admin.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": "garden"}}
    )
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    answer = admin.request("POST", f"/api/v1/namespaces/garden/serviceaccounts/{name}/token", body=request)
    path = directory / f"{name}.token"
    path.write_text(answer["status"]["token"])
    path.chmod(0o600)
    return path


@pytest.fixture(scope="module")
def gcm(tmp_path_factory) -> Iterator[Gcm]:
    home = tmp_path_factory.mktemp("gcm-monitored")
    config, ports = local_gcm.write_config(home, controllers={"event": {"ttlNonShootEvents": "1s"}})
    log = home / "gcm.log"
    args = ["--embedded", "--embedded-ephemeral", "--embedded-port", str(free_port()), "--metrics-secure"]
    args += ["--config", str(config)]
    proc = local_gcm.start(home, *args, log=log)
    running = Running(proc, log)
    try:
        wait(lambda: local_gcm.answers(f"http://127.0.0.1:{ports.probes}/readyz"), "gcm ready", running)
        admin = Client.from_kubeconfig(str(home / ".gcm" / "kubeconfig"), qps=0)
        tokens = {name: service_account_token(admin, name, home) for name in ("reader", "nosy")}
        admin.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "prometheus-metrics"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": READER_ROLE,
                },
                "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "garden"}],
            }
        )
        yield Gcm(running, f"https://127.0.0.1:{ports.metrics}/metrics", admin, tokens)
    finally:
        running.stop()


@dataclass
class Prometheus:
    running: Running
    url: str
    http: urllib3.PoolManager

    def api(self, path: str, **fields: str) -> Any:
        r = self.http.request("GET", f"{self.url}/api/v1/{path}", fields=fields, timeout=10)
        doc = json.loads(r.data)
        assert r.status == 200 and doc["status"] == "success", (path, fields, doc)
        return doc["data"]

    def query(self, expr: str) -> list[dict]:
        return self.api("query", query=expr)["result"]


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory, gcm) -> Iterator[Prometheus]:
    server = binary("prometheus")
    home = tmp_path_factory.mktemp("prometheus")
    rules = home / "gcm.rules.yaml"
    rules.write_text((MONITORING / "gcm.rules.yaml").read_text())
    target = gcm.metrics_url.removeprefix("https://").removesuffix("/metrics")

    def job(name: str, token: Path | None) -> dict:
        scrape = {
            "job_name": name,
            "scheme": "https",
            "metrics_path": "/metrics",
            "tls_config": {"insecure_skip_verify": True},  # gcm's self-signed certificate
            "static_configs": [{"targets": [target], "labels": {"namespace": NAMESPACE}}],
        }
        if token is not None:
            scrape["authorization"] = {"type": "Bearer", "credentials_file": str(token)}
        return scrape

    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules)],
        "scrape_configs": [
            job(JOB, gcm.tokens["reader"]),
            job("without-token", None),
            job("nosy", gcm.tokens["nosy"]),
        ],
    }
    (home / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    log = home / "prometheus.log"
    proc = subprocess.Popen(
        [server, f"--config.file={home / 'prometheus.yml'}", f"--storage.tsdb.path={home / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
        cwd=home, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    running = Running(proc, log)
    prom = Prometheus(running, f"http://127.0.0.1:{port}", urllib3.PoolManager(retries=False))

    try:
        wait(lambda: local_gcm.answers(f"{prom.url}/-/ready"), "prometheus ready", running)
        yield prom
    finally:
        running.stop()


def kubeconfig_secret(name: str, namespace: str, user: dict) -> dict:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://garden.example.com"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": user}],
    }
    data = base64.b64encode(yaml.safe_dump(config).encode()).decode()
    meta = {"name": name, "namespace": namespace}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "data": {"kubeconfig": data}}


def make_traffic(gcm: Gcm) -> None:
    """Projects (reconciles, events that expire), webhook decisions of both webhooks."""
    admin = gcm.admin
    for name in ("mon-a", "mon-b"):
        spec = {"namespace": f"garden-{name}"}
        admin.create({"apiVersion": CORE, "kind": "Project", "metadata": {"name": name}, "spec": spec})
    for name in ("mon-a", "mon-b"):
        wait(
            lambda name=name: (admin.get(CORE, "Project", name).get("status") or {}).get("phase") == "Ready",
            f"Project {name} Ready",
            gcm.running,
        )
    ns = "garden-mon-a"
    admin.create(kubeconfig_secret("ok", ns, {"token": "t"}))
    plugin = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "sh"}}
    with pytest.raises(Invalid, match="exec configurations are not supported"):
        admin.create(kubeconfig_secret("bad", ns, plugin))
    with pytest.raises(Forbidden):
        admin.delete("v1", "Namespace", ns)  # the namespace-deletion webhook refuses it


def no_data(prom: Prometheus, queries: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(title, expr) for title, expr in queries if not prom.query(expr)]


def test_every_dashboard_query_and_recording_rule_returns_data(gcm, prometheus):
    make_traffic(gcm)
    queries = dashboard_queries() + [("recording rule", name) for name in recorded_series()]
    assert len(queries) > 40
    deadline = time.monotonic() + DEADLINE
    missing = no_data(prometheus, queries)
    while missing and time.monotonic() < deadline:
        gcm.running.alive()
        prometheus.running.alive()
        time.sleep(1)
        missing = no_data(prometheus, missing)
    up = prometheus.query(f'up{{job="{JOB}"}}')
    assert missing == [], f"no data for {len(missing)} queries (up: {up}):\n" + "\n".join(
        f"  [{title}] {expr}" for title, expr in missing
    )


def test_every_rule_evaluates_without_error(gcm, prometheus):
    groups = prometheus.api("rules")["groups"]
    rules = {r.get("name"): r for g in groups for r in g["rules"]}
    expected = yaml.safe_load((MONITORING / "gcm.rules.yaml").read_text())
    names = {r.get("record") or r.get("alert") for g in expected["groups"] for r in g["rules"]}
    assert set(rules) == names

    def evaluated() -> bool:
        return all(r["health"] != "unknown" for r in rules.values())

    deadline = time.monotonic() + 10
    while not evaluated() and time.monotonic() < deadline:
        time.sleep(0.5)
        rules = {r.get("name"): r for g in prometheus.api("rules")["groups"] for r in g["rules"]}
    bad = {name: (r["health"], r.get("lastError")) for name, r in rules.items() if r["health"] != "ok"}
    assert bad == {}
    # A healthy gcm sets off no alert (the ones without a `for` would fire at once).
    assert prometheus.query('ALERTS{alertstate="firing"}') == []


def test_every_metric_gcm_serves_is_documented(gcm):
    """docs/operations.md names every family of a running gcm's /metrics."""
    names = {family.name for family in text_string_to_metric_families(gcm.scrape())}
    assert {
        "gcm_projects",
        "controller_runtime_reconcile",
        "rest_client_requests",
        "process_cpu_seconds",
    } <= names
    docs = (ROOT / "docs" / "operations.md").read_text()
    # prometheus_client's parser drops a counter's _total; the docs name the series as scraped.
    # A counter's or histogram's <name>_created comes with it (see the docs' note on them).
    bases = {n.removesuffix("_created") for n in names}
    undocumented = sorted(n for n in bases if f"`{n}`" not in docs and f"`{n}_total`" not in docs)
    assert undocumented == []


def test_a_query_without_data_is_reported(prometheus):
    """The check can fail: a series gcm does not export has no data."""
    assert prometheus.query(f'gcm_no_such_metric{{job="{JOB}"}}') == []


def test_scrapes_without_a_reader_token_are_refused(prometheus):
    """The secure endpoint lets Prometheus in only with a token allowed ``get`` on /metrics."""

    def errors() -> dict[str, str]:
        targets = prometheus.api("targets")["activeTargets"]
        return {t["labels"]["job"]: t["lastError"] for t in targets if t["health"] != "unknown"}

    seen = wait(lambda: len(errors()) == 3 and errors(), "every job scraped once", prometheus.running)
    assert seen[JOB] == ""
    assert "401" in seen["without-token"]
    assert "403" in seen["nosy"]
