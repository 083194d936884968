"""``kubectl kustomize manifests/monitoring`` (no server needed): the ServiceMonitor selects the Service
of manifests/deploy and its metrics port, the PrometheusRule is the one the rules tests check, and the
dashboard ConfigMap carries the dashboard file unchanged with the label Grafana's sidecar looks for."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
import yaml

from tests.gcm.monitoring.tools import MONITORING, ROOT


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[str, dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not on PATH: it renders the kustomization")
    home = tmp_path_factory.mktemp("kustomize-monitoring")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(home)}
    out = subprocess.run(
        [kubectl, "kustomize", str(MONITORING)], env=env, cwd=home, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    assert len(docs) == 3
    return {d["kind"]: d for d in docs}


def test_servicemonitor_selects_the_metrics_port_of_gcms_service(rendered):
    service = yaml.safe_load((ROOT / "manifests" / "deploy" / "service.yaml").read_text())
    monitor = rendered["ServiceMonitor"]
    assert monitor["metadata"]["namespace"] == service["metadata"]["namespace"]
    labels = service["metadata"]["labels"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= labels.items()
    ports = {p["name"] for p in service["spec"]["ports"]}
    assert {e["port"] for e in monitor["spec"]["endpoints"]} <= ports
    # The rules' job label is the Service's name, which the Operator gives the scrape job.
    assert service["metadata"]["name"] == "gardener-controller-manager"
    # gcm serves /metrics secured (--metrics-secure): HTTPS, with the scraper's token.
    deployment = yaml.safe_load((ROOT / "manifests" / "deploy" / "deployment.yaml").read_text())
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert "--metrics-secure" in container["args"]
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["scheme"] == "https"
    assert endpoint["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token"


def test_prometheusrule_is_the_file(rendered):
    assert rendered["PrometheusRule"] == yaml.safe_load((MONITORING / "prometheusrule.yaml").read_text())


def test_dashboard_configmap_holds_the_dashboard_for_the_sidecar(rendered):
    cm = rendered["ConfigMap"]
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["namespace"] == "garden"
    board = cm["data"]["grafana-dashboard.json"]
    assert json.loads(board) == json.loads((MONITORING / "grafana-dashboard.json").read_text())
