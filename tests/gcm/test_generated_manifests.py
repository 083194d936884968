"""gcm's generated manifests are current: ``python -m framework generate --check`` passes on the repository
(``[tool.framework]`` in pyproject.toml: the CRDs in ``manifests/crds``, the ClusterRole in
``manifests/deploy/role.yaml``), as ``.ci/run`` checks; and the hand-written webhook configurations agree
with the ``@webhook`` markers on gcm's handlers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from framework.markers.webhook import webhooks_of
from gcm.webhooks.kubeconfigsecret.handler import KubeconfigSecretValidator
from gcm.webhooks.namespacedeletion.handler import NamespaceDeletionHandler

ROOT = Path(__file__).resolve().parents[2]


def test_generate_check_passes_on_the_repository() -> None:
    # A subprocess, as in CI: the generator imports gcm afresh from the checkout and runs its setup.
    done = subprocess.run(
        [sys.executable, "-m", "framework", "generate", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"run `python -m framework generate`:\n{done.stderr}"
    assert done.stdout == "" and done.stderr == ""  # nothing written, nothing logged


def test_webhook_yaml_has_the_rules_of_the_handlers_markers() -> None:
    configurations = [
        d for d in yaml.safe_load_all((ROOT / "manifests/deploy/webhook.yaml").read_text()) if d
    ]
    deployed = {hook["name"]: hook for c in configurations for hook in c["webhooks"]}
    markers = [m for cls in (NamespaceDeletionHandler, KubeconfigSecretValidator) for m in webhooks_of(cls)]
    assert sorted(m.name for m in markers) == sorted(deployed)
    for marker in markers:
        hook = deployed[marker.name]
        want = marker.webhook({"namespace": "garden", "name": "gardener-controller-manager", "port": 443})
        assert {k: hook[k] for k in want} == want, marker.name
        kind = "MutatingWebhookConfiguration" if marker.mutating else "ValidatingWebhookConfiguration"
        assert [c["kind"] for c in configurations if hook in c["webhooks"]] == [kind]
