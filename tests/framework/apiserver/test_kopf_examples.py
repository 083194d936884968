"""kopf's own examples (``examples/*/example.py`` of nolar/kopf) against this server, as kopf's
``tests/e2e/test_examples.py`` runs them against a cluster.

The examples are not in the ``kopf`` wheel: they come from a checkout named by ``KOPF_SRC`` (the
directory holding ``examples/``); without one the test is skipped. Each example operator runs
unmodified in ``kopf.testing.KopfRunner`` (``kopf run --all-namespaces --standalone --verbose``), then
``kubectl apply``/``delete`` of ``examples/obj.yaml`` drive it, and kopf's own checks are made on its
log: no crash, the finalizer added, creation and deletion handled, every handler succeeding exactly
once (or as often as the example's ``E2E_SUCCESS_COUNTS`` says), no failures unless declared, no
traceback unless ``E2E_ALLOW_TRACEBACKS``. kopf's harness reads those ``E2E_*`` settings with
astpath/lxml; here they are read with :mod:`ast`. Examples that ship their own tests are skipped, as
kopf's harness skips them. Slow: ``pytest -m slow tests/framework/apiserver/test_kopf_examples.py``.
"""

from __future__ import annotations

import ast
import collections
import os
import re
import time
from pathlib import Path

import pytest

from framework.testing import APIServer
from framework.testing.kubectl import KUBECTL, Kubectl

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SOURCE = Path(os.environ.get("KOPF_SRC", "/nonexistent"))
EXAMPLES = sorted(
    p
    for p in (SOURCE / "examples").glob("*/")
    if (p / "example.py").exists() and not list(p.glob("test*.py"))
)
# example → why it cannot run against a kubelet-less test server (none so far).
CANNOT_RUN: dict[str, str] = {}


def _e2e_settings(source: str) -> dict:
    out = {}
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for t in targets:
            if isinstance(t, ast.Name) and t.id.startswith("E2E_") and node.value is not None:
                out[t.id] = ast.literal_eval(node.value)
    return out


def _has_handler(source: str, name: str) -> bool:
    return re.search(rf"@kopf\.(on\.)?{name}\(", source) is not None


def _mandatory_on_delete(source: str) -> bool:
    calls = re.findall(r"@kopf\.on\.delete\(([^)]*)\)", source)
    return bool(calls) and not all("optional=True" in c for c in calls)


def _wait_for(caplog, patterns: list[str], delay: float | None = None) -> bool:
    """Until a log message matches (kopf's ``_sleep_till_stopword``: 10 s for patterns, else 3 s)."""
    deadline = time.monotonic() + (delay or (10.0 if patterns else 3.0))
    while time.monotonic() < deadline:
        if any(re.search(p, m) for m in list(caplog.messages) for p in patterns):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.skipif(not EXAMPLES, reason="set KOPF_SRC to a nolar/kopf checkout")
@pytest.mark.skipif(not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed")
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_kopf_example(example: Path, tmp_path, monkeypatch, caplog):
    import kopf

    if example.name in CANNOT_RUN:
        pytest.skip(CANNOT_RUN[example.name])
    source = (example / "example.py").read_text()
    if re.search(r"^import pykube|^from pykube", source, re.M):
        pytest.importorskip("pykube", reason="the example uses pykube-ng (examples/requirements.txt)")
    if "WebhookAutoServer" in source:
        pytest.importorskip(
            "certvalidator", reason="kopf's WebhookAutoServer needs certvalidator (kopf[dev])"
        )
    # Each example registers its handlers in kopf's default registry: a fresh one per example, as
    # kopf's own test fixtures give it.
    from kopf._core.intents.registries import SmartOperatorRegistry

    previous = kopf.get_default_registry()
    kopf.set_default_registry(SmartOperatorRegistry())
    try:
        _run_example(example, source, tmp_path, monkeypatch, caplog)
    finally:
        kopf.set_default_registry(previous)


def _run_example(example: Path, source: str, tmp_path: Path, monkeypatch, caplog) -> None:
    import kopf
    from kopf.testing import KopfRunner

    e2e = _e2e_settings(source)
    with APIServer() as server:
        import kubernetes.config.kube_config as kube_config

        # kopf logs in through the kubernetes client's default kubeconfig location, which that library
        # takes from $KUBECONFIG once, at import: point it at this server's kubeconfig.
        monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", server.kubeconfig)
        monkeypatch.setenv("KUBECONFIG", server.kubeconfig)
        monkeypatch.chdir(SOURCE)  # examples refer to files relative to the checkout
        kubectl = Kubectl(server.kubeconfig, tmp_path)
        kubectl.ok("apply", "-f", str(SOURCE / "examples" / "crd.yaml"))
        kubectl.ok("wait", "--for=condition=Established", "crd/kopfexamples.kopf.dev", "--timeout=30s")
        settings = kopf.OperatorSettings()
        settings.execution.default_backoff = 1
        settings.watching.server_timeout = 10
        caplog.set_level("DEBUG")
        with KopfRunner(
            ["run", "--all-namespaces", "--standalone", "--verbose", str(example / "example.py")],
            timeout=60,
            settings=settings,
        ) as runner:
            _wait_for(
                caplog,
                e2e.get("E2E_STARTUP_STOP_WORDS") or ["Client is configured"],
                e2e.get("E2E_STARTUP_TIME_LIMIT"),
            )
            kubectl.ok("apply", "-f", str(SOURCE / "examples" / "obj.yaml"))
            _wait_for(
                caplog, e2e.get("E2E_CREATION_STOP_WORDS") or [], e2e.get("E2E_CREATION_TIME_LIMIT") or 10
            )
            kubectl.ok("delete", "-f", str(SOURCE / "examples" / "obj.yaml"), "--timeout=60s")
            _wait_for(
                caplog, e2e.get("E2E_DELETION_STOP_WORDS") or [], e2e.get("E2E_DELETION_TIME_LIMIT") or 10
            )
        _wait_for(
            caplog,
            e2e.get("E2E_CLEANUP_STOP_WORDS") or ["Hung tasks", "Root tasks"],
            e2e.get("E2E_CLEANUP_TIME_LIMIT"),
        )
        kubectl.close()
    out = runner.output
    assert runner.exception is None, out[-3000:]
    assert runner.exit_code == 0, out[-3000:]
    if _mandatory_on_delete(source):
        assert "[default/kopf-example-1] Adding the finalizer" in out
        assert "[default/kopf-example-1] Deletion is in progress:" in out
    if _has_handler(source, "create"):
        assert "[default/kopf-example-1] Creation is in progress:" in out
    if any(_has_handler(source, h) for h in ("create", "update", "delete")):
        assert "[default/kopf-example-1] Deleted, really deleted" in out
    if not e2e.get("E2E_ALLOW_TRACEBACKS"):
        assert "Traceback (most recent call last):" not in out
    succeeded = collections.Counter(re.findall(r"'(.+?)' succeeded", out))
    if "E2E_SUCCESS_COUNTS" in e2e:
        expected = e2e["E2E_SUCCESS_COUNTS"]
        assert {k: v for k, v in succeeded.items() if k in expected} == expected
    else:
        # A timer fires every interval: how often depends on how long the deletion took, not on
        # the server (kopf's harness counts them too and is as timing-bound), so timers are not counted.
        timers = set(re.findall(r"@kopf\.timer\([^)]*\)\s*(?:async\s+)?def\s+(\w+)", source))
        assert {v for k, v in succeeded.items() if k not in timers} <= {1}
    failed = collections.Counter(
        re.findall(r"'(.+?)' failed (?:permanently|with an exception and will stop)", out)
    )
    if "E2E_FAILURE_COUNTS" in e2e:
        expected = e2e["E2E_FAILURE_COUNTS"]
        assert {k: v for k, v in failed.items() if k in expected} == expected
    else:
        assert not failed
