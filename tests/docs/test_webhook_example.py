"""docs/examples/memcached_webhook.py runs as the extension guide says: the manager writes both
webhook configurations, serves them with its self-signed certificate, defaults and validates."""

from __future__ import annotations

import json
import threading

import pytest
from kubernetes import client

from framework.testing import eventually
from tests.docs.examples import EXAMPLES, load_example

GROUP, VERSION, PLURAL = "cache.example.com", "v1alpha1", "memcacheds"


def test_memcached_webhook_example(apiserver, tmp_path):
    apiserver.install_crds(EXAMPLES / "memcached-crd.yaml")
    mgr = load_example("memcached_webhook").main(
        apiserver.kubeconfig, str(tmp_path / "certs"), host="127.0.0.1", port=0
    )
    t = threading.Thread(target=mgr.start, name="manager", daemon=True)
    t.start()
    try:
        port = eventually(lambda: mgr.webhook_server.port, timeout=30, message="webhook server bound")
        # What the Service would do in a cluster: route memcached-webhook-service:443 to the server.
        apiserver.map_webhook_service("memcached-system", "memcached-webhook-service", f"127.0.0.1:{port}")
        admission = client.AdmissionregistrationV1Api(apiserver.api_client())
        eventually(
            lambda: admission.read_validating_webhook_configuration("memcached").webhooks,
            timeout=30,
            ignore=(client.ApiException,),
            message="ValidatingWebhookConfiguration memcached",
        )
        eventually(
            lambda: admission.read_mutating_webhook_configuration("memcached").webhooks,
            timeout=30,
            ignore=(client.ApiException,),
            message="MutatingWebhookConfiguration memcached",
        )
        custom = client.CustomObjectsApi(apiserver.api_client())
        obj = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Memcached", "metadata": {"name": "m"}}
        created = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, obj)
        assert created["spec"] == {"size": 1}
        with pytest.raises(client.ApiException) as e:
            custom.patch_namespaced_custom_object(
                GROUP, VERSION, "default", PLURAL, "m", {"spec": {"size": 6}}
            )
        assert e.value.status == 422
        assert json.loads(e.value.body)["details"]["causes"] == [
            {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 6: must be at most 5",
                "field": "spec.size",
            }
        ]
    finally:
        mgr.stop()
        t.join(30)
    assert not t.is_alive()
