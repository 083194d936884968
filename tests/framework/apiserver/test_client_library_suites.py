"""Three client libraries' own end-to-end suites against this server with simulated nodes: lightkube's
``e2e-tests``, kr8s's ``kr8s/tests`` and kubernetes_asyncio's ``kubernetes_asyncio/e2e_test``.

Each suite is taken from a checkout named by an environment variable (``LIGHTKUBE_SRC``, ``KR8S_SRC``,
``KUBERNETES_ASYNCIO_SRC``: the repository's root) and skipped without one; it runs unmodified, in a
subprocess of ``SUITES_PYTHON`` (a Python with the library from PyPI, pytest and the suite's plugins:
pytest-asyncio, pytest-timeout, and for kr8s pytest-kind, pytest-cov, pytest-rerunfailures, trio,
kubernetes, kubernetes_asyncio, lightkube; default: this Python), against a fresh
``APIServer(nodes=2)`` whose kubeconfig is the one their CI's kind cluster gives them (a client
certificate for ``kubernetes-admin``, no namespace) in ``~/.kube/config``. kr8s's conftest makes its
cluster with pytest-kind: a stand-in ``kind`` binary in pytest-kind's cache directory reports the
``pytest-kind`` cluster as existing, so pytest-kind uses the server's kubeconfig as is. Where a suite's
tests live in the library's package (kr8s, kubernetes_asyncio), the tests come from the checkout and
the library from the installed release (as ``test_client_e2e_suite.py`` does for the official client).

Every test must pass except the ones :data:`KNOWN` lists, each with its reason; a listed test that
passes fails this test too (the list is stale). Slow (minutes): not in CI; run with
``pytest -m slow tests/framework/apiserver/test_client_library_suites.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from framework.testing import APIServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

PYTHON = os.environ.get("SUITES_PYTHON") or sys.executable
EXEC = "execs into a container: simulated nodes run none (exec is 404)"
PORT_FORWARD = "port-forwards to a container: simulated nodes run none (portforward is 404)"
NEWER_KR8S = "tests a kr8s change newer than the release on PyPI"

# suite → test id (file::test) → why it fails against this server.
KNOWN: dict[str, dict[str, str]] = {
    "lightkube": {
        "test_client.py::test_pod_apis": "wants a metrics-server Pod in kube-system and a log line the "
        "container prints: simulated nodes run no metrics-server and their logs are empty",
        "test_client.py::test_exec_integration_ls_and_cat": EXEC,
        "test_client.py::test_exec_integration_container_selection": EXEC,
        "test_client.py::test_exec_integration_ls_and_cat_async": EXEC,
        "test_client.py::test_exec_integration_container_selection_async": EXEC,
        "test_client.py::test_load_in_cluster_generic_resources": "its fixture sets names.shortnames (for "
        "shortNames), which lightkube-models' slotted dataclasses refuse before any request",
        "test_client.py::test_load_in_cluster_generic_resources_async": "the same fixture",
    },
    "kr8s": {
        "test_api.py::test_httpx_ws_exceptions[0.8-False]": NEWER_KR8S + " (kr8s-org/kr8s#753)",
        "test_api.py::test_httpx_ws_exceptions[0.9-True]": NEWER_KR8S + " (kr8s-org/kr8s#753)",
        "test_auth.py::test_service_account": NEWER_KR8S + " (#741: the namespace file wins)",
        "test_auth.py::test_service_account_dns_fallback_no_env_vars": NEWER_KR8S + " (#742)",
        "test_auth.py::test_service_account_dns_fallback_only_host_set": NEWER_KR8S + " (#742)",
        "test_auth.py::test_service_account_dns_fallback_only_port_set": NEWER_KR8S + " (#742)",
        "test_objects.py::test_cast_to_from_kubernetes": "kubernetes 37's client.models no longer has the "
        "v1_pod submodule as an attribute (library release, before any request)",
        "test_objects.py::test_pod_tolerate": "appends to spec.tolerations, which kube-apiserver's "
        "DefaultTolerationSeconds admission fills in; this server does not yet (issue 34, deviations)",
        "test_objects.py::test_pod_exec": EXEC,
        "test_objects.py::test_pod_exec_timeout": EXEC,
        "test_objects.py::test_pod_exec_error": EXEC,
        "test_objects.py::test_pod_exec_to_file": EXEC,
        "test_objects.py::test_pod_exec_not_ready": EXEC,
        "test_objects.py::test_service_exec": EXEC,
        "test_objects.py::test_pod_port_forward_context_manager": PORT_FORWARD,
        "test_objects.py::test_pod_port_forward_context_manager_sync": PORT_FORWARD,
        "test_objects.py::test_pod_port_forward_start_stop": PORT_FORWARD,
        "test_objects.py::test_service_port_forward_context_manager": PORT_FORWARD,
        "test_objects.py::test_service_port_forward_start_stop": PORT_FORWARD,
        "test_objects.py::test_multiple_bind_addresses_port_forward": PORT_FORWARD,
        "test_objects.py::test_adoption": PORT_FORWARD + " (its fixture)",
    },
    "kubernetes_asyncio": {
        "test_client.py::TestClient::test_pod_apis": EXEC,
    },
}
# The fewest passing tests each suite had in the last full run (docs/apiserver.md).
MIN_PASSED = {"lightkube": 15, "kr8s": 276, "kubernetes_asyncio": 11}

# Tests living in the library's package: import them from the checkout, the library installed.
# "first": the checkout's modules win over the installed ones not yet imported (kr8s ships its tests in
# the wheel, of the release, not the checkout); "last": only what the release lacks (e2e_test).
PACKAGE_RUNNER = """
import importlib, sys
package = importlib.import_module(sys.argv[1])
package.__path__.insert(0 if sys.argv[3] == "first" else len(package.__path__), sys.argv[2])
import pytest
sys.exit(pytest.main(sys.argv[4:]))
"""
# pytest-kind's kind, as far as kr8s's conftest uses it: the cluster exists, its kubeconfig is in place.
FAKE_KIND = """#!/bin/sh
case "$1" in
  get) echo pytest-kind ;;
  *) echo "kind $*: not available against the test API server" >&2; exit 1 ;;
esac
"""


def _results(junit: Path) -> dict[str, str]:
    """file::[Class::]test → "passed" / "failed" / "skipped" from a JUnit report."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        # classname is "pkg.mod" or "pkg.mod.Class": keep the module (and class).
        if parts and parts[-1][:1].isupper():
            test_id = f"{parts[-2]}.py::{parts[-1]}::{case.get('name')}"
        else:
            test_id = f"{parts[-1]}.py::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            out[test_id] = "failed"
        elif case.find("skipped") is not None:
            out.setdefault(test_id, "skipped")
        else:
            out.setdefault(test_id, "passed")
    return out


def _kind_kubeconfig(server: APIServer, path: Path) -> str:
    """The kubeconfig a kind cluster gives: client certificate of kubernetes-admin, no namespace."""
    server.kubeconfig_for("kubernetes-admin", ["system:masters"], path, cert=True)
    config = yaml.safe_load(path.read_text())
    config["contexts"][0]["context"].pop("namespace", None)
    text = yaml.safe_dump(config)
    path.write_text(text)
    return text


def _run_suite(
    suite: str, tmp_path: Path, cwd: Path, args: list[str], record: Callable[[str, object], None]
) -> None:
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    junit = tmp_path / "junit.xml"
    with APIServer(nodes=2, min_request_timeout=5) as server:
        kubeconfig = _kind_kubeconfig(server, home / ".kube" / "config")
        kind_dir = cwd / ".pytest-kind" / "pytest-kind"
        if suite == "kr8s":
            kind_dir.mkdir(parents=True)
            (kind_dir / "kubeconfig").write_text(kubeconfig)
            (kind_dir / "kind-v0.17.0").write_text(FAKE_KIND)
            (kind_dir / "kind-v0.17.0").chmod(0o755)
            (kind_dir / "kubectl-v1.25.3").symlink_to(shutil.which("kubectl") or "/usr/bin/kubectl")
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(home)}
        args = [*args, "-p", "no:cacheprovider", "--timeout", "120", f"--junitxml={junit}", "-q"]
        proc = subprocess.run([PYTHON, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=3000)
    results = _results(junit) if junit.exists() else {}
    assert results, proc.stdout[-3000:] + proc.stderr[-3000:]
    known = KNOWN[suite]
    unexpected = sorted(t for t, r in results.items() if r == "failed" and t not in known)
    assert not unexpected, f"{suite}: failed unexpectedly: {unexpected}\n{proc.stdout[-6000:]}"
    stale = sorted(t for t in known if results.get(t) != "failed")
    assert not stale, f"{suite}: listed as failing but {[(t, results.get(t)) for t in stale]}"
    passed = sum(r == "passed" for r in results.values())
    # The counts go to the JUnit report of this run (``--junitxml``) for docs/apiserver.md.
    for outcome in ("passed", "failed", "skipped"):
        record(f"{suite}_{outcome}", sum(r == outcome for r in results.values()))
    assert passed >= MIN_PASSED[suite], (suite, passed)


def _source(variable: str, marker: str) -> Path:
    root = Path(os.environ.get(variable, ""))
    if not os.environ.get(variable) or not (root / marker).exists():
        pytest.skip(f"set {variable} to a checkout holding {marker}")
    return root


def test_lightkube_e2e_suite(
    tmp_path: Path, record_testsuite_property: Callable[[str, object], None]
) -> None:
    source = _source("LIGHTKUBE_SRC", "e2e-tests/test_client.py")
    # From the checkout's root, as lightkube's test.sh runs it.
    _run_suite("lightkube", tmp_path, source, ["-m", "pytest", "e2e-tests"], record_testsuite_property)


def test_kr8s_suite(tmp_path: Path, record_testsuite_property: Callable[[str, object], None]) -> None:
    source = _source("KR8S_SRC", "kr8s/tests/test_api.py")
    cwd = tmp_path / "run"
    cwd.mkdir()
    # With kr8s's own pytest options (pyproject.toml: asyncio_mode, --keep-cluster, coverage).
    args = ["-c", PACKAGE_RUNNER, "kr8s", str(source / "kr8s"), "first", str(source / "kr8s")]
    _run_suite("kr8s", tmp_path, cwd, args, record_testsuite_property)


def test_kubernetes_asyncio_e2e_suite(
    tmp_path: Path, record_testsuite_property: Callable[[str, object], None]
) -> None:
    source = _source("KUBERNETES_ASYNCIO_SRC", "kubernetes_asyncio/e2e_test/base.py")
    args = ["-c", PACKAGE_RUNNER, "kubernetes_asyncio", str(source / "kubernetes_asyncio"), "last"]
    args += ["kubernetes_asyncio/e2e_test", "-o", "addopts=", "--rootdir", str(source)]
    _run_suite("kubernetes_asyncio", tmp_path, source, args, record_testsuite_property)
