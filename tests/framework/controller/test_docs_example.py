"""The extension guide's example controller runs as documented."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

from kubernetes import client

from framework.testing import eventually

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "labeler.py"


def test_labeler_example(apiserver):
    spec = importlib.util.spec_from_file_location("labeler_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    mgr = module.main(apiserver.kubeconfig)
    mgr.probe_server = None  # the example binds :8081; tests must not depend on a fixed port
    t = threading.Thread(target=mgr.start, name="manager", daemon=True)
    t.start()
    core = client.CoreV1Api(apiserver.api_client())
    try:
        core.create_namespaced_config_map(
            "default", {"metadata": {"name": "cfg", "labels": {"mirror": "true"}}, "data": {"k": "v"}}
        )
        secret = eventually(
            lambda: core.read_namespaced_secret("cfg-mirror", "default"),
            message="mirrored Secret",
            ignore=(client.ApiException,),
        )
        assert secret.data == {"k": "dg=="}
        assert secret.metadata.owner_references[0].name == "cfg"
    finally:
        mgr.stop()
        t.join(15)
