"""``python -m gcm --embedded`` serves both of gcm's webhooks to its API server, seen through kubectl:
``kubectl delete namespace`` of a project namespace is refused (namespace deletion), and so is
``kubectl create secret generic --from-file=kubeconfig=...`` of a kubeconfig with an exec plugin in a
project namespace, with Gardener's text and nothing stored, while one with certificate data is accepted
(kubeconfig secrets). The webhooks in detail: test_namespace_deletion.py, test_kubeconfig_secrets.py."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import yaml

from framework.testing import free_port
from gcm.webhooks.kubeconfigsecret import WEBHOOK_NAME as KUBECONFIG_WEBHOOK
from gcm.webhooks.namespacedeletion import WEBHOOK_NAME as NAMESPACE_WEBHOOK
from tests.gcm import local_gcm

CORE = "core.gardener.cloud/v1beta1"
FIELDS = "[client-certificate-data client-key-data token username password]"


def kubeconfig(user: dict) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "garden",
            "clusters": [{"name": "garden", "cluster": {"server": "https://garden.example.com"}}],
            "contexts": [{"name": "garden", "context": {"cluster": "garden", "user": "u"}}],
            "users": [{"name": "u", "user": user}],
        }
    )


def test_gcm_embedded_serves_both_webhooks(tmp_path):
    cfg, ports = local_gcm.write_config(tmp_path)
    probes = ports.probes
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(tmp_path)}
    log = tmp_path / "gcm.log"
    args = ["--embedded", "--embedded-ephemeral", "--embedded-port", str(free_port()), "--config", str(cfg)]
    proc = local_gcm.start(tmp_path, *args, log=log)
    kubeconfig_path = tmp_path / ".gcm" / "kubeconfig"

    def kubectl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["kubectl", "--kubeconfig", str(kubeconfig_path), *args],
            capture_output=True, text=True, timeout=30, env=env, cwd=tmp_path, input=stdin,
        )  # fmt: skip

    def wait(fn, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not fn():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, what
            time.sleep(0.1)

    try:
        wait(lambda: local_gcm.answers(f"http://127.0.0.1:{probes}/readyz"), "gcm --embedded ready")
        project = {"apiVersion": CORE, "kind": "Project", "metadata": {"name": "demo"}, "spec": {}}
        project["spec"]["namespace"] = "garden-demo"
        out = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(project))
        assert out.returncode == 0, out.stderr
        wait(lambda: kubectl("get", "namespace", "garden-demo").returncode == 0, "gcm made the namespace")

        # Namespace deletion.
        out = kubectl("delete", "namespace", "garden-demo", "--wait=false")
        assert out.returncode != 0
        assert out.stderr.strip() == (
            f'Error from server (Forbidden): admission webhook "{NAMESPACE_WEBHOOK}" denied the request: '
            'Namespace "garden-demo" is forbidden: direct deletion of namespace "garden-demo" is not '
            'permitted (you must delete the corresponding project "demo")'
        )
        out = kubectl("create", "namespace", "scratch")
        assert out.returncode == 0, out.stderr
        out = kubectl("delete", "namespace", "scratch", "--wait=false")
        assert out.returncode == 0, out.stderr

        # Kubeconfig secrets.
        bad, good = tmp_path / "exec.kubeconfig", tmp_path / "cert.kubeconfig"
        bad.write_text(
            kubeconfig({"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "sh"}})
        )
        good.write_text(kubeconfig({"client-certificate-data": "Y2VydAo=", "client-key-data": "a2V5Cg=="}))

        def create_secret(name: str, namespace: str, path: Path) -> subprocess.CompletedProcess:
            return kubectl(
                "create", "secret", "generic", name, "-n", namespace, f"--from-file=kubeconfig={path}"
            )

        out = create_secret("x", "garden-demo", bad)
        assert out.returncode != 0
        assert out.stderr.strip() == (
            f'error: failed to create secret admission webhook "{KUBECONFIG_WEBHOOK}" denied the request: '
            'Secret "x" is invalid: data.kubeconfig: Invalid value: "<redacted>": secret contains invalid '
            'kubeconfig: exec configurations are not supported (user "u"), these are the valid fields: '
            + FIELDS
        )
        assert kubectl("get", "secret", "x", "-n", "garden-demo").returncode != 0  # nothing stored
        out = create_secret("x", "garden-demo", good)
        assert out.returncode == 0, out.stderr
        assert kubectl("create", "namespace", "plain").returncode == 0
        out = create_secret("y", "plain", bad)  # a namespace of no project: not checked
        assert out.returncode == 0, out.stderr
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
