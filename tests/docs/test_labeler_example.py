"""The extension guide's example controller (docs/examples/labeler.py) runs as documented."""

from __future__ import annotations

import base64
import threading

import urllib3
from kubernetes import client

from framework.testing import eventually
from tests.docs.examples import load_example


def test_labeler_example(apiserver):
    mgr = load_example("labeler").main(apiserver.kubeconfig)  # probes on 127.0.0.1:0, as the example binds
    t = threading.Thread(target=mgr.start, name="manager", daemon=True)
    t.start()
    core = client.CoreV1Api(apiserver.api_client())
    try:
        port = eventually(lambda: mgr.probe_server.port, message="probe server bound")
        ready = eventually(
            lambda: urllib3.request("GET", f"http://127.0.0.1:{port}/readyz", retries=False).status == 200,
            message="readyz",
            ignore=(urllib3.exceptions.HTTPError,),
        )
        assert ready
        cm = core.create_namespaced_config_map(
            "default", {"metadata": {"name": "cfg", "labels": {"mirror": "true"}}, "data": {"k": "v"}}
        )
        secret = eventually(
            lambda: core.read_namespaced_secret("cfg-mirror", "default"),
            message="mirrored Secret",
            ignore=(client.ApiException,),
        )
        assert secret.data == {"k": base64.b64encode(b"v").decode()}
        (owner,) = secret.metadata.owner_references
        assert (owner.kind, owner.name, owner.uid, owner.controller) == (
            "ConfigMap",
            "cfg",
            cm.metadata.uid,
            True,
        )

        # A change of the source is mirrored (create_or_update updates the Secret it owns).
        core.patch_namespaced_config_map("cfg", "default", {"data": {"k": "w"}})
        eventually(
            lambda: (
                core.read_namespaced_secret("cfg-mirror", "default").data
                == {"k": base64.b64encode(b"w").decode()}
            ),
            message="Secret follows the ConfigMap",
        )
        # A ConfigMap without the label gets no copy.
        core.create_namespaced_config_map("default", {"metadata": {"name": "plain"}, "data": {"k": "v"}})
        core.create_namespaced_config_map(
            "default", {"metadata": {"name": "marker", "labels": {"mirror": "true"}}, "data": {}}
        )
        eventually(
            lambda: core.read_namespaced_secret("marker-mirror", "default"), ignore=(client.ApiException,)
        )
        names = {s.metadata.name for s in core.list_namespaced_secret("default").items}
        assert "plain-mirror" not in names  # "marker" was reconciled after "plain" was created
    finally:
        mgr.stop()
        t.join(15)
    assert not t.is_alive()
