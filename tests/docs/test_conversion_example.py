"""docs/examples/cronjob_conversion.py runs as the extension guide says: a CronJob created in v2 is
stored in v1 (the hub) through the framework's conversion webhook and read back in either version."""

from __future__ import annotations

import base64
import threading

import yaml
from kubernetes import client

from framework.certs import self_signed_cert
from framework.testing import eventually
from tests.docs.examples import EXAMPLES, load_example

GROUP = "batch.tutorial.kubebuilder.io"
SERVICE = ("cronjob-system", "cronjob-webhook-service")


def test_cronjob_conversion_example(apiserver, tmp_path):
    _, _, ca_pem = self_signed_cert(tmp_path / "certs", hosts=(f"{SERVICE[1]}.{SERVICE[0]}.svc",))
    mgr = load_example("cronjob_conversion").main(
        apiserver.kubeconfig, str(tmp_path / "certs"), host="127.0.0.1", port=0
    )
    t = threading.Thread(target=mgr.start, name="manager", daemon=True)
    t.start()
    try:
        port = eventually(lambda: mgr.webhook_server.port, timeout=30, message="webhook server bound")
        apiserver.map_webhook_service(*SERVICE, f"127.0.0.1:{port}")
        crd = yaml.safe_load((EXAMPLES / "cronjob-conversion-crd.yaml").read_text())
        crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = base64.b64encode(ca_pem).decode()
        apiserver.install_crds([crd])

        custom = client.CustomObjectsApi(apiserver.api_client())
        schedule = {"minute": "*/1", "hour": "*", "dayOfMonth": "*", "month": "*", "dayOfWeek": "*"}
        body = {
            "apiVersion": f"{GROUP}/v2",
            "kind": "CronJob",
            "metadata": {"name": "c"},
            "spec": {"schedule": schedule},
        }
        created = custom.create_namespaced_custom_object(GROUP, "v2", "default", "cronjobs", body)
        assert created["spec"]["schedule"] == schedule
        as_v1 = custom.get_namespaced_custom_object(GROUP, "v1", "default", "cronjobs", "c")
        assert as_v1["spec"]["schedule"] == "*/1 * * * *"
        as_v2 = custom.get_namespaced_custom_object(GROUP, "v2", "default", "cronjobs", "c")
        assert as_v2["spec"]["schedule"] == schedule and as_v2["apiVersion"] == f"{GROUP}/v2"
    finally:
        mgr.stop()
        t.join(30)
