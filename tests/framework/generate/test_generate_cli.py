"""``python -m framework generate [--check]``: webhook manifests, byte-identical reruns, ``--check``
naming stale files, and one-line errors (exit 2) for what cannot be generated."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from framework.__main__ import main
from framework.testing import Kubectl
from tests.framework.generate.projects import shop, write

ROOT = Path(__file__).resolve().parents[3]


def run_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "framework", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def in_project(tmp_path, monkeypatch):
    monkeypatch.chdir(shop(tmp_path))
    return tmp_path


def test_webhook_manifests_from_the_registered_webhooks(in_project, apiserver):
    assert main(["generate"]) == 0
    mutating, validating = yaml.safe_load_all((in_project / "config/webhook/manifests.yaml").read_text())
    assert mutating["kind"] == "MutatingWebhookConfiguration"
    assert mutating["metadata"] == {"name": "mutating-webhook-configuration"}
    assert mutating["webhooks"] == [
        {
            "admissionReviewVersions": ["v1"],
            "clientConfig": {
                "service": {"name": "webhook-service", "namespace": "system", "path": "/mutate--v1-configmap"}
            },
            "failurePolicy": "Fail",
            "name": "mconfigmap-v1.core.shop",
            "rules": [
                {
                    "apiGroups": [""],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": ["configmaps"],
                }
            ],
            "sideEffects": "None",
        }
    ]
    assert validating["kind"] == "ValidatingWebhookConfiguration"
    [hook] = validating["webhooks"]
    assert hook["clientConfig"]["service"]["path"] == "/validate--v1-configmap"
    assert hook["rules"][0]["operations"] == ["CREATE", "DELETE"]  # the callbacks it has
    # The API server accepts them as they are.
    kubectl = Kubectl(apiserver.kubeconfig, in_project)
    kubectl.ok("apply", "-f", str(in_project / "config/webhook/manifests.yaml"))
    stored = kubectl.json(
        "get", "validatingwebhookconfiguration", "validating-webhook-configuration", "-o", "json"
    )
    assert stored["webhooks"][0]["sideEffects"] == "None"


def test_a_rerun_is_byte_identical_and_check_passes(in_project, capsys):
    assert main(["generate"]) == 0
    first = {p: p.read_bytes() for p in (in_project / "config").rglob("*.yaml")}
    assert capsys.readouterr().out.splitlines() == [
        "wrote config/rbac/role.yaml",
        "wrote config/webhook/manifests.yaml",
    ]
    assert main(["generate"]) == 0
    assert capsys.readouterr().out == ""  # nothing changed, nothing written
    assert {p: p.read_bytes() for p in (in_project / "config").rglob("*.yaml")} == first
    assert main(["generate", "--check"]) == 0


def test_check_names_each_stale_or_missing_file_and_writes_nothing(in_project, capsys):
    assert main(["generate"]) == 0
    role = in_project / "config/rbac/role.yaml"
    role.write_text(role.read_text().replace("watch", "delete"))
    (in_project / "config/webhook/manifests.yaml").unlink()
    capsys.readouterr()
    assert main(["generate", "--check"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [
        "config/rbac/role.yaml: differs from what the code generates",
        "config/webhook/manifests.yaml: missing",
    ]
    assert "delete" in role.read_text()
    assert not (in_project / "config/webhook/manifests.yaml").exists()


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {
                "shop/controllers/mirror.py": "from framework import Builder\n\ndef setup(mgr):\n"
                "    Builder(mgr).for_('example.com/v1', 'Widget').complete(lambda r: None)\n"
            },
            "error: shop.controllers.setup(mgr): kind Widget of example.com/v1 is neither a built-in kind nor"
            " declared in the project's api package, so its resource name is unknown",
        ),
        (
            {"shop/controllers/mirror.py": "def setup(mgr):\n    mgr.client.get('v1', 'ConfigMap', 'x')\n"},
            "error: shop.controllers.setup(mgr) failed: ",
        ),
        (
            {"shop/controllers/mirror.py": "import no_such_module\n"},
            "error: cannot import shop.controllers: ModuleNotFoundError: No module named 'no_such_module'"
            " (shop/controllers/mirror.py:1)",
        ),
        (
            {"shop/webhooks/__init__.py": "def setup(mgr):\n    mgr.webhook_server.register('/r', print)\n"},
            "error: webhook /r: a plain admission handler names no kind to write a rule for "
            "(register it with WebhookBuilder(mgr).for_(...), or describe it with ",
        ),
        ({"shop/webhooks/__init__.py": "SETUP = None\n"}, "error: shop.webhooks has no setup(mgr) function"),
        ({"pyproject.toml": "[project]\nname = 'shop'\n"}, "error: "),
    ],
    ids=["unknown-kind", "setup-reads-the-cluster", "import-error", "raw-webhook", "no-setup", "no-table"],
)
def test_what_cannot_be_generated_is_one_line_and_exit_2(in_project, capsys, files, message):
    write(in_project, files)
    capsys.readouterr()
    assert main(["generate"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err
    assert not (in_project / "config").exists()  # nothing half-written


def test_the_command_line_exit_codes(tmp_path):
    """The real process: no traceback, one line, exit 2; then 0, and 1 for a stale file."""
    missing = run_cli(tmp_path, "generate")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr
    shop(tmp_path)
    failed = run_cli(tmp_path, "generate", "--check")
    assert failed.returncode == 1
    assert "config/rbac/role.yaml: missing" in failed.stderr
    assert run_cli(tmp_path, "generate").returncode == 0
