"""One registry per manager: a single ``/metrics`` scrape of a manager running a controller, leader
election, a webhook server (made without a registry) and an event recorder shows every family, served
over the secure endpoint to a token allowed ``get /metrics``; a second manager's numbers stay apart."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from framework.builder import Builder
from framework.client import Client
from framework.manager import LeaderElectionOptions, Manager
from framework.testing import eventually
from framework.webhook import AdmissionRequest, WebhookServer, allowed, self_signed_cert

pytestmark = pytest.mark.usefixtures("no_leaked_threads")

WEBHOOK_PATH = "/validate-configmaps"


def admission_review(uid: str = "b1f0c3c2-7d4e-4d55-9a55-3f1c0c0e2a01") -> bytes:
    request = {
        "uid": uid,
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "name": "c1",
        "namespace": "default",
        "operation": "CREATE",
        "userInfo": {"username": "alice"},
        "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}},
    }
    return json.dumps(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    ).encode()


class Running:
    def __init__(self, apiserver, cert_dir: Path) -> None:
        self.webhooks = WebhookServer("127.0.0.1", 0, cert_dir=cert_dir)  # no registry: the manager's
        self.reconciled = threading.Event()
        self.mgr = Manager(
            Client.from_kubeconfig(apiserver.kubeconfig, qps=0),
            leader_election=LeaderElectionOptions(
                namespace="default",
                name="metrics-test",
                lease_duration=2.0,
                renew_deadline=1.5,
                retry_period=0.2,
            ),
            metrics_bind_address="127.0.0.1:0",
            metrics_secure=True,
            webhook_server=self.webhooks,
            sync_period=0,
        )
        recorder = self.mgr.event_recorder("configmap-controller")
        running = self

        class Reconciler:
            def reconcile(self, request):
                cm = running.mgr.client.get("v1", "ConfigMap", request.name, request.namespace)
                recorder.eventf(cm, "Normal", "Seen", "Reconcile", "reconciled")
                running.reconciled.set()

        Builder(self.mgr).named("configmap").for_("v1", "ConfigMap").complete(Reconciler())

        def validate(req: AdmissionRequest):
            return allowed()

        self.webhooks.register(WEBHOOK_PATH, validate)
        self.thread = threading.Thread(target=self.mgr.start, name="metrics-test-manager", daemon=True)
        self.thread.start()
        eventually(self.mgr.is_leader, timeout=30)

    def stop(self) -> None:
        self.mgr.stop()
        self.thread.join(30)
        assert not self.thread.is_alive()


@pytest.fixture
def running(apiserver, tmp_path) -> Iterator[tuple[Running, bytes]]:
    _, _, ca_pem = self_signed_cert(tmp_path / "webhook-certs")
    run = Running(apiserver, tmp_path / "webhook-certs")
    yield run, ca_pem
    run.stop()


def scrape(run: Running, token: str) -> dict[str, list]:
    server = run.mgr.metrics_server
    assert server is not None and server.ca_pem is not None
    with urllib3.PoolManager(ca_cert_data=server.ca_pem.decode(), retries=False) as http:
        response = http.request("GET", server.url + "/metrics", headers={"Authorization": f"Bearer {token}"})
    assert response.status == 200, response.data
    return {f.name: f.samples for f in text_string_to_metric_families(response.data.decode())}


def test_one_scrape_shows_every_family(apiserver, running):
    run, webhook_ca = running
    client = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1", "namespace": "default"}}
    )
    assert run.reconciled.wait(30)
    with urllib3.PoolManager(ca_cert_data=webhook_ca.decode(), retries=False) as http:
        answer = http.request(
            "POST",
            run.webhooks.url + WEBHOOK_PATH,
            body=admission_review(),
            headers={"Content-Type": "application/json"},
        )
    assert answer.status == 200 and json.loads(answer.data)["response"]["allowed"] is True

    families = scrape(run, apiserver.token)

    def value(family: str, sample: str, **labels: str) -> float:
        found = [s.value for s in families[family] if s.name == sample and labels.items() <= s.labels.items()]
        assert found, f"no {sample}{labels} in {family}"
        return sum(found)

    assert (
        value("controller_runtime_reconcile", "controller_runtime_reconcile_total", controller="configmap")
        >= 1
    )
    assert "controller_runtime_reconcile_time_seconds" in families
    assert value("workqueue_adds", "workqueue_adds_total", name="configmap") >= 1
    assert value("leader_election_master_status", "leader_election_master_status", name="metrics-test") == 1
    assert (
        value(
            "controller_runtime_webhook_requests",
            "controller_runtime_webhook_requests_total",
            webhook=WEBHOOK_PATH,
            code="200",
        )
        == 1
    )
    assert (
        value(
            "controller_runtime_webhook_latency_seconds", "controller_runtime_webhook_latency_seconds_count"
        )
        == 1
    )
    assert value("certwatcher_read_certificate", "certwatcher_read_certificate_total") >= 1
    host = client.host.removeprefix("https://")
    assert (
        value("rest_client_requests", "rest_client_requests_total", code="200", method="GET", host=host) >= 1
    )
    assert (
        value("rest_client_requests", "rest_client_requests_total", code="201", method="POST", host=host) >= 1
    )
    assert (
        value(
            "rest_client_request_duration_seconds", "rest_client_request_duration_seconds_count", verb="GET"
        )
        >= 1
    )
    assert (
        value("rest_client_rate_limiter_duration_seconds", "rest_client_rate_limiter_duration_seconds_count")
        >= 1
    )
    assert value("rest_client_response_size_bytes", "rest_client_response_size_bytes_count", verb="GET") >= 1
    buckets = [
        s.labels["le"] for s in families["rest_client_request_duration_seconds"] if s.name.endswith("_bucket")
    ]
    assert buckets[:13] == [
        "0.005",
        "0.025",
        "0.1",
        "0.25",
        "0.5",
        "1.0",
        "2.0",
        "4.0",
        "8.0",
        "15.0",
        "30.0",
        "60.0",
        "+Inf",
    ]
    sizes = [s.labels["le"] for s in families["rest_client_request_size_bytes"] if s.name.endswith("_bucket")]
    assert sizes[:12] == [
        "64.0",
        "256.0",
        "512.0",
        "1024.0",
        "4096.0",
        "16384.0",
        "65536.0",
        "262144.0",
        "1.048576e+06",
        "4.194304e+06",
        "1.6777216e+07",
        "+Inf",
    ]
    assert value("process_cpu_seconds", "process_cpu_seconds_total") > 0
    assert value("process_resident_memory_bytes", "process_resident_memory_bytes") > 0
    assert value("process_open_fds", "process_open_fds") > 0
    assert "python_info" in families and "python_gc_objects_collected" in families
    # The event recorder's counters are on the same registry (written by its own thread).
    assert "events_written" in families

    def event_written() -> bool:
        samples = scrape(run, apiserver.token)["events_written"]
        return any(s.labels.get("verb") == "create" and s.value >= 1 for s in samples)

    eventually(event_written, timeout=10)
    # Nothing of this manager leaked into prometheus_client's global registry.
    assert (
        REGISTRY.get_sample_value(
            "controller_runtime_webhook_requests_total", {"webhook": WEBHOOK_PATH, "code": "200"}
        )
        is None
    )


def test_managers_count_apart(apiserver):
    first = Manager(Client.from_kubeconfig(apiserver.kubeconfig, qps=0))
    second = Manager(Client.from_kubeconfig(apiserver.kubeconfig, qps=0))
    first.api_reader.list("v1", "ConfigMap", "default")
    host = first.api_reader.host.removeprefix("https://")
    labels = {"code": "200", "method": "GET", "host": host}
    assert first.registry.get_sample_value("rest_client_requests_total", labels) >= 1
    assert second.registry.get_sample_value("rest_client_requests_total", labels) is None
    # A client made outside a manager counts nothing; given a registry, there.
    from prometheus_client import CollectorRegistry

    loose = Client.from_kubeconfig(apiserver.kubeconfig, qps=0)
    assert loose.metrics_registry is None
    mine = CollectorRegistry()
    counted = Client.from_kubeconfig(apiserver.kubeconfig, qps=0, registry=mine)
    counted.list("v1", "ConfigMap", "default")
    assert mine.get_sample_value("rest_client_requests_total", labels) >= 1
