"""``python -m gcm --embedded`` at its edges: a conflicting ``--kubeconfig``, starts that fail on a busy
port leave no data directory, lock file or kubeconfig behind, an ephemeral run leaves no data
directory, and ``stale-report`` started next to a running embedded garden finds its kubeconfig."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import yaml

from framework.testing import free_port

ROOT = Path(__file__).resolve().parents[3]
CORE = "core.gardener.cloud/v1beta1"


def clean_env(home: Path) -> dict[str, str]:
    # PYTHONPATH: this checkout's gcm, whatever the interpreter has installed.
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
    return env | {"HOME": str(home), "PYTHONPATH": str(ROOT)}


def gcm(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gcm", *args],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=home,
        env=clean_env(home),
    )


def operator_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("{")]


def write_config(home: Path, probes: int | None = None) -> Path:
    cfg = {
        "apiVersion": "controllermanager.config.gardener.cloud/v1alpha1",
        "kind": "ControllerManagerConfiguration",
        "logFormat": "json",
        "server": {
            "healthProbes": {"bindAddress": "127.0.0.1", "port": probes or free_port()},
            "metrics": {"bindAddress": "127.0.0.1", "port": free_port()},
            "webhooks": {"bindAddress": "127.0.0.1", "port": free_port()},
        },
    }
    path = home / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_embedded_with_kubeconfig_is_one_line_and_exit_2(tmp_path):
    other = tmp_path / "other.kubeconfig"
    other.write_text("apiVersion: v1\nkind: Config\n")
    res = gcm(tmp_path, "--embedded", "--kubeconfig", str(other), "--embedded-port", str(free_port()))
    assert res.returncode == 2, res.stderr
    (line,) = operator_lines(res.stderr)
    assert line.startswith(f"gcm: --kubeconfig {other} and --embedded conflict"), line
    assert "Traceback" not in res.stderr
    assert not (tmp_path / ".gcm").exists()  # nothing started, nothing written


def test_api_server_port_in_use_leaves_nothing_behind(tmp_path):
    port = free_port()
    for ephemeral in ((), ("--embedded-ephemeral",)):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", port))
            taken.listen()
            res = gcm(tmp_path, "--embedded", *ephemeral, "--embedded-port", str(port))
        assert res.returncode == 2, res.stderr
        (line,) = operator_lines(res.stderr)
        assert f"port {port}" in line and "already in use" in line
        assert not (tmp_path / ".gcm").exists(), sorted(map(str, (tmp_path / ".gcm").rglob("*")))


def test_probe_port_in_use_leaves_nothing_behind(tmp_path):
    probes = free_port()
    cfg = write_config(tmp_path, probes)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", probes))
        taken.listen()
        res = gcm(tmp_path, "--embedded", "--embedded-port", str(free_port()), "--config", str(cfg))
    assert res.returncode == 2, res.stderr
    (line,) = operator_lines(res.stderr)
    assert f"127.0.0.1:{probes}" in line and "server.healthProbes.port" in line
    # The garden was bootstrapped before the probe server failed: its directory, database, lock file
    # and admin kubeconfig are gone again.
    assert not (tmp_path / ".gcm").exists(), sorted(map(str, (tmp_path / ".gcm").rglob("*")))


class Garden:
    def __init__(self, home: Path, *extra: str) -> None:
        self.home = home
        self.log = home / "gcm.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gcm", "--embedded", "--embedded-port", str(free_port()), *extra],
            cwd=home,
            env=clean_env(home),
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )

    def ready(self, timeout: float = 90) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            assert self.proc.poll() is None, self.log.read_text()
            for entry in self.log.read_text().splitlines():
                if entry.startswith("{") and json.loads(entry)["event"] == "gcm --embedded ready":
                    return json.loads(entry)
            assert time.monotonic() < deadline, "gcm --embedded did not get ready"
            time.sleep(0.2)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=40)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def test_stale_report_finds_the_embedded_garden_and_ephemeral_leaves_no_data_dir(tmp_path):
    res = gcm(tmp_path, "stale-report")
    assert res.returncode == 2, res.stderr
    (line,) = operator_lines(res.stderr)
    assert ".gcm/kubeconfig" in line and "python -m gcm --embedded" in line, line
    garden = Garden(tmp_path, "--embedded-ephemeral", "--config", str(write_config(tmp_path)))
    try:
        garden.ready()
        kubeconfig = tmp_path / ".gcm" / "kubeconfig"
        project = {"apiVersion": CORE, "kind": "Project", "metadata": {"name": "demo"}, "spec": {}}
        out = subprocess.run(
            ["kubectl", "--kubeconfig", str(kubeconfig), "apply", "-f", "-"],
            input=yaml.safe_dump(project), capture_output=True, text=True, timeout=30,
            env=clean_env(tmp_path),
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        res = gcm(tmp_path, "stale-report", "-o", "json")
        assert res.returncode == 0, res.stderr
        assert [p["project"] for p in json.loads(res.stdout)["projects"]] == ["demo"]
        assert (tmp_path / ".gcm" / "data" / "lock").exists()
    finally:
        assert garden.stop() == 0
    # Ephemeral: no data directory and no lock file afterwards (the admin kubeconfig stays).
    assert sorted(p.name for p in (tmp_path / ".gcm").iterdir()) == ["kubeconfig"]
    # With the garden gone, the report says which kubeconfig it tried.
    res = gcm(tmp_path, "stale-report")
    assert res.returncode == 1
    (line,) = operator_lines(res.stderr)
    assert "kubeconfig .gcm/kubeconfig (from the garden of a gcm --embedded started here)" in line, line


def test_a_failed_start_keeps_an_existing_garden(tmp_path):
    """Only what the failed start made goes: the data of an earlier run stays, with its objects."""
    garden = Garden(tmp_path, "--config", str(write_config(tmp_path)))
    try:
        garden.ready()
        out = subprocess.run(
            ["kubectl", "--kubeconfig", str(tmp_path / ".gcm" / "kubeconfig"), "create", "namespace", "kept"],
            capture_output=True, text=True, timeout=30, env=clean_env(tmp_path),
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
    finally:
        assert garden.stop() == 0
    before = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / ".gcm").rglob("*"))
    probes = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", probes))
        taken.listen()
        res = gcm(tmp_path, "--embedded", "--embedded-port", str(free_port()),
                  "--config", str(write_config(tmp_path, probes)))  # fmt: skip
    assert res.returncode == 2, res.stderr
    after = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / ".gcm").rglob("*"))
    assert [p for p in after if not p.endswith(("-wal", "-shm"))] == [
        p for p in before if not p.endswith(("-wal", "-shm"))
    ]
    garden = Garden(tmp_path, "--config", str(write_config(tmp_path)))
    try:
        garden.ready()
        out = subprocess.run(
            ["kubectl", "--kubeconfig", str(tmp_path / ".gcm" / "kubeconfig"), "get", "namespace", "kept"],
            capture_output=True, text=True, timeout=30, env=clean_env(tmp_path),
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
    finally:
        assert garden.stop() == 0
