"""``python -m gcm`` as a process: --embedded, probes, metrics, SIGTERM, bad config, two replicas."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import urllib3
import yaml

from framework.testing import consistently, free_port

ROOT = Path(__file__).resolve().parents[3]


def config(tmp_path: Path, embedded: bool = False, **extra) -> tuple[Path, int, int]:
    probes, metrics = free_port(), free_port()
    # Embedded mode serves the webhook (on 2721 by default): not there, tests run next to each other.
    webhooks = {"webhooks": {"bindAddress": "127.0.0.1", "port": free_port()}} if embedded else {}
    cfg = {
        "apiVersion": "controllermanager.config.gardener.cloud/v1alpha1",
        "kind": "ControllerManagerConfiguration",
        "logFormat": "json",
        "leaderElection": {
            "leaderElect": True,
            "leaseDuration": "2s",
            "renewDeadline": "1500ms",
            "retryPeriod": "300ms",
            "resourceNamespace": "garden",
        },
        "server": {
            "healthProbes": {"bindAddress": "127.0.0.1", "port": probes},
            "metrics": {"bindAddress": "127.0.0.1", "port": metrics},
            **webhooks,
        },
        **extra,
    }
    path = tmp_path / f"config-{probes}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path, probes, metrics


def gcm(*args: str, cwd: Path, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """``python -m gcm ARGS`` without the caller's KUBE* variables (``env`` adds variables)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(cwd)} | (env or {})
    return subprocess.Popen(
        [sys.executable, "-m", "gcm", *args],
        cwd=cwd,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )


def wait_for(fn, timeout: float = 30.0, proc: subprocess.Popen | None = None):
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = fn()
        except Exception:
            value = None
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"gcm exited early with {proc.returncode}")
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)


def stop(proc: subprocess.Popen, timeout: float = 40.0) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)  # every thread's stack into gcm's log, for the failure report
        time.sleep(0.5)
        proc.kill()
        proc.wait()
        raise


def test_embedded_comes_up_and_shuts_down(tmp_path):
    cfg, probes, metrics = config(tmp_path, embedded=True)
    log = tmp_path / "gcm.log"
    proc = gcm("--embedded", "--embedded-port", "0", "--config", str(cfg), cwd=tmp_path, log=log)
    http = urllib3.PoolManager(retries=False)
    try:
        kubeconfig = tmp_path / ".gcm" / "kubeconfig"
        wait_for(kubeconfig.exists, proc=proc)
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(tmp_path)}
        out = subprocess.run(
            [
                "kubectl",
                "--kubeconfig",
                str(kubeconfig),
                "get",
                "crd",
                "projects.core.gardener.cloud",
                "-o",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
            cwd=tmp_path,
        )
        assert out.returncode == 0, out.stderr
        conds = {c["type"]: c["status"] for c in json.loads(out.stdout)["status"]["conditions"]}
        assert conds["Established"] == "True"
        wait_for(lambda: http.request("GET", f"http://127.0.0.1:{probes}/readyz").status == 200, proc=proc)
        assert http.request("GET", f"http://127.0.0.1:{probes}/healthz").status == 200
        # The series shows 0.0 from the start and 1.0 once the lease is acquired, which may be after
        # /readyz answers 200 on a loaded machine: wait for the leader's value, not for the series.
        leading = 'leader_election_master_status{name="gardener-controller-manager-leader-election"} 1.0'
        wait_for(
            lambda: leading in http.request("GET", f"http://127.0.0.1:{metrics}/metrics").data.decode(),
            proc=proc,
        )
        # SIGUSR1 dumps every thread's stack (the main thread waits for stop) and gcm keeps running.
        proc.send_signal(signal.SIGUSR1)
        wait_for(lambda: "in _wait_for_stop" in log.read_text(), proc=proc)
        assert http.request("GET", f"http://127.0.0.1:{probes}/healthz").status == 200
        start = time.monotonic()
        assert stop(proc) == 0
        assert time.monotonic() - start < 35
        lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
        events = [entry["event"] for entry in lines]
        assert "gcm --embedded ready" in events and "released the lease" in events
        assert not [e for e in events if "kubeconfig is ignored" in e]  # none was set
        ready = next(entry for entry in lines if entry["event"] == "gcm --embedded ready")
        assert ready["hint"].startswith("try: kubectl --kubeconfig .gcm/kubeconfig")
        assert ready["kubeconfig"] == ".gcm/kubeconfig" and ready["data_dir"] == ".gcm/data"
        assert ready["healthz"] == f"http://127.0.0.1:{probes}/healthz"
        assert ready["metrics"] == f"http://127.0.0.1:{metrics}/metrics"
        assert ready["apiserver"].startswith("https://127.0.0.1:") and ready["webhook"].startswith("https://")
    finally:
        if proc.poll() is None:
            proc.kill()


def test_embedded_says_once_that_it_ignores_a_garden_kubeconfig(tmp_path):
    """$KUBECONFIG and gardenClientConnection.kubeconfig name a garden that --embedded does not use: one
    info line says so (and gcm runs against its own API server, which the ready line names)."""
    elsewhere = tmp_path / "elsewhere.kubeconfig"  # never read: its content does not matter
    cfg, _, _ = config(
        tmp_path, embedded=True, gardenClientConnection={"kubeconfig": str(tmp_path / "garden.kubeconfig")}
    )
    log = tmp_path / "gcm.log"
    args = ["--embedded", "--embedded-port", "0", "--embedded-ephemeral", "--config", str(cfg)]
    proc = gcm(*args, cwd=tmp_path, log=log, env={"KUBECONFIG": str(elsewhere)})
    try:
        wait_for(lambda: "gcm --embedded ready" in log.read_text(), proc=proc)
        assert stop(proc) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    ignored = [entry for entry in lines if "kubeconfig is ignored" in entry["event"]]
    assert len(ignored) == 1, ignored
    (entry,) = ignored
    assert entry["level"] == "info"
    assert (
        entry["event"] == "gcm --embedded runs against its own API server; the garden kubeconfig is ignored"
    )
    assert entry["ignored"] == {
        "$KUBECONFIG": str(elsewhere),
        "gardenClientConnection.kubeconfig": str(tmp_path / "garden.kubeconfig"),
    }
    starting = next(entry for entry in lines if entry["event"] == "starting gcm")
    assert starting["kubeconfig"].endswith("gcm.kubeconfig")  # gcm's ServiceAccount in the embedded garden


def test_bad_config_exits_2_naming_fields(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "controllermanager.config.gardener.cloud/v1alpha1",
                "kind": "ControllerManagerConfiguration",
                "controllers": {"project": {"concurrentSyncs": -1}},
                "leaderElection": {"leaseDuration": "forever"},
            }
        )
    )
    res = subprocess.run(
        [sys.executable, "-m", "gcm", "--config", str(bad)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert res.returncode == 2
    assert "controllers.project.concurrentSyncs" in res.stderr
    assert "leaderElection.leaseDuration" in res.stderr


def test_no_kubeconfig_exits_2_and_names_embedded(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(tmp_path)}
    res = subprocess.run(
        [sys.executable, "-m", "gcm"], capture_output=True, text=True, timeout=30, cwd=tmp_path, env=env
    )
    assert res.returncode == 2 and "--embedded" in res.stderr


@pytest.mark.timeout(90)
def test_two_replicas_elect_one_leader(apiserver, tmp_path):
    procs, logs = [], []
    core = apiserver.api_client()
    from kubernetes import client

    client.CoreV1Api(core).create_namespace({"metadata": {"name": "garden"}})
    apiserver.install_crds(ROOT / "manifests" / "crds")
    try:
        for i in range(2):
            cfg, _, _ = config(tmp_path)
            logs.append(tmp_path / f"gcm-{i}.log")
            procs.append(
                gcm("--kubeconfig", apiserver.kubeconfig, "--config", str(cfg), cwd=tmp_path, log=logs[i])
            )
        coord = client.CoordinationV1Api(core)
        lease = wait_for(
            lambda: (
                coord.read_namespaced_lease(
                    "gardener-controller-manager-leader-election", "garden"
                ).spec.holder_identity
            )
        )

        def acquired_by() -> list[int]:
            return [i for i, log in enumerate(logs) if "successfully acquired lease" in log.read_text()]

        consistently(
            lambda: len(acquired_by()) <= 1,
            duration=1.0,
            message=lambda: f"one leader: {[log.read_text()[-2000:] for log in logs]}",
        )
        acquired = acquired_by()
        assert len(acquired) == 1, [log.read_text()[-2000:] for log in logs]
        leader = acquired[0]
        assert stop(procs[leader]) == 0
        other = 1 - leader
        wait_for(lambda: "successfully acquired lease" in logs[other].read_text(), timeout=20)
        assert (
            coord.read_namespaced_lease(
                "gardener-controller-manager-leader-election", "garden"
            ).spec.holder_identity
            != lease
        )
    finally:
        for p in procs:
            if p.poll() is None:
                stop(p)


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
def test_embedded_secure_metrics_with_a_service_account_token(tmp_path):
    """docs/metrics.md's recipe: `gcm --embedded --metrics-secure`, a ServiceAccount bound to the
    metrics-reader ClusterRole, its token from `kubectl create token`, and a scrape with it."""
    from framework.client import Client

    cfg, _, metrics = config(tmp_path, embedded=True)
    log = tmp_path / "gcm.log"
    args = ["--embedded", "--embedded-port", "0", "--embedded-ephemeral", "--metrics-secure"]
    proc = gcm(*args, "--config", str(cfg), cwd=tmp_path, log=log)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(tmp_path)}
    kubeconfig = tmp_path / ".gcm" / "kubeconfig"

    def kubectl(*argv: str) -> str:
        out = subprocess.run(
            ["kubectl", "--kubeconfig", str(kubeconfig), *argv],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    try:
        wait_for(lambda: "gcm --embedded ready" in log.read_text(), proc=proc)
        ready = next(json.loads(x) for x in log.read_text().splitlines() if "gcm --embedded ready" in x)
        url = ready["metrics"]
        assert url == f"https://127.0.0.1:{metrics}/metrics"
        admin = Client.from_kubeconfig(kubeconfig, qps=0)
        for name in ("prometheus", "nosy"):
            sa = {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": name, "namespace": "garden"},
            }
            admin.create(sa)
        kubectl(
            "create",
            "clusterrolebinding",
            "prometheus-metrics",
            "--clusterrole=gardener-controller-manager-metrics-reader",
            "--serviceaccount=garden:prometheus",
        )
        allowed = {"Authorization": f"Bearer {kubectl('-n', 'garden', 'create', 'token', 'prometheus')}"}
        nosy = {"Authorization": f"Bearer {kubectl('-n', 'garden', 'create', 'token', 'nosy')}"}
        # Self-signed (no --metrics-cert-dir): not verified here, as `curl -k` in the recipe.
        http = urllib3.PoolManager(cert_reqs="CERT_NONE", retries=False)
        assert http.request("GET", url).status == 401
        denied = http.request("GET", url, headers=nosy)
        assert denied.status == 403 and b"system:serviceaccount:garden:nosy" in denied.data
        response = http.request("GET", url, headers=allowed)
        assert response.status == 200, response.data
        text = response.data.decode()
        for family in (
            "controller_runtime_reconcile_total",
            "workqueue_depth",
            "leader_election_master_status",
            "rest_client_requests_total",
            "process_cpu_seconds_total",
            "gcm_projects_stale",
        ):
            assert family in text, family
        assert stop(proc) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
