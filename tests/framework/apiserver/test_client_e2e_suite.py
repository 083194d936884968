"""The official Python client's own end-to-end suite (``kubernetes/e2e_test``) against this server.

The suite is not shipped in the ``kubernetes`` wheel nor in its sdist, so it is taken from a checkout of
kubernetes-client/python named by ``KUBERNETES_CLIENT_PYTHON_SRC`` (the directory holding
``kubernetes/e2e_test``); without one the test is skipped. It runs unmodified, in a subprocess, with
``~/.kube/config`` pointing at a fresh server, exactly as the client project runs it against a cluster.

Every test must pass except the ones in :data:`NEEDS_A_KUBELET`: they need a Pod to run (exec,
port-forward, a Running phase), which no API server can give without a kubelet. Slow (minutes): not
in CI; run with ``pytest -m slow tests/framework/apiserver/test_client_e2e_suite.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from framework.testing import APIServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

SOURCE = os.environ.get("KUBERNETES_CLIENT_PYTHON_SRC", "")

# test id (file::Class::test) → why it cannot pass against any API server without a kubelet.
NEEDS_A_KUBELET = {
    "test_client.py::TestClient::test_pod_apis": "waits for the Pod to be Running and execs into it",
    "test_client.py::TestClient::test_exit_code": "execs commands in a running Pod",
    "test_client.py::TestClient::test_pod_exec_close_channel": "execs into a running Pod",
    "test_client.py::TestClient::test_portforward_raw": "port-forwards to a running Pod",
    "test_client.py::TestClient::test_portforward_http": "port-forwards to a running Pod",
}
# Not run: waits a minute for a Running Pod and for metrics-server, then skips itself.
DESELECTED = ["test_utils.py::TestUtils::test_metrics_utilities_integration"]

RUNNER = """
import sys
import kubernetes
kubernetes.__path__.append(sys.argv[1])  # kubernetes.e2e_test from the checkout, the rest installed
import pytest
sys.exit(pytest.main(sys.argv[2:]))
"""


def _results(junit: Path) -> dict[str, str]:
    """test id → "passed" / "failed" / "skipped" from a JUnit report."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "").split(".")
        test_id = f"{module[-2]}.py::{module[-1]}::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            out[test_id] = "failed"
        elif case.find("skipped") is not None:
            out[test_id] = "skipped"
        else:
            out[test_id] = "passed"
    return out


@pytest.mark.skipif(
    not (Path(SOURCE) / "kubernetes" / "e2e_test").is_dir(),
    reason="set KUBERNETES_CLIENT_PYTHON_SRC to a kubernetes-client/python checkout",
)
def test_official_client_e2e_suite(tmp_path):
    suite = Path(SOURCE) / "kubernetes"
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    junit = tmp_path / "junit.xml"
    # Quiet watches end after 5-10 s (kube-apiserver's --min-request-timeout): the client's
    # SharedInformer.stop() only returns once its watch yields or ends.
    with APIServer(min_request_timeout=5) as server:
        (home / ".kube" / "config").write_text(Path(server.kubeconfig).read_text())
        # From the checkout's root, as the client project runs it: test_utils reads its manifests
        # from kubernetes/e2e_test/test_yaml relative to there.
        args = [str(suite), "kubernetes/e2e_test", "-q", "-p", "no:cacheprovider", "-o", "addopts="]
        args += ["--timeout", "90", f"--junitxml={junit}", "--rootdir", SOURCE]
        for test_id in DESELECTED:
            args += ["--deselect", f"kubernetes/e2e_test/{test_id}"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(home)}
        proc = subprocess.run(
            [sys.executable, "-c", RUNNER, *args],
            cwd=SOURCE,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
    results = _results(junit)
    assert results, proc.stdout[-3000:] + proc.stderr[-3000:]
    unexpected = sorted(t for t, r in results.items() if r == "failed" and t not in NEEDS_A_KUBELET)
    assert not unexpected, f"failed on resources this server serves: {unexpected}\n{proc.stdout[-6000:]}"
    # The kubelet-bound tests really ran and failed; should one pass, the list above is stale.
    assert {t for t in NEEDS_A_KUBELET if results.get(t) != "failed"} == set(), results
    assert sum(r == "passed" for r in results.values()) >= 35
