"""``python -m gcm`` as a process, started the wrong way: one line naming what to fix, the documented
exit code, no traceback, and nothing changed in the cluster; an API server that answers late is waited
for, not a crash."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import urllib3
import yaml
from kubernetes import client as k8s

from framework.testing import APIServer, eventually, free_port

ROOT = Path(__file__).resolve().parents[3]
CRDS = ROOT / "manifests" / "crds"
HEADER = {
    "apiVersion": "controllermanager.config.gardener.cloud/v1alpha1",
    "kind": "ControllerManagerConfiguration",
}


def write_config(tmp_path: Path, name: str = "config.yaml", **fields) -> tuple[Path, int, int]:
    """A config on free loopback ports (fast leader election), with ``fields`` merged on top."""
    probes, metrics = free_port(), free_port()
    doc = {
        **HEADER,
        "logFormat": "json",
        "leaderElection": {"leaseDuration": "2s", "renewDeadline": "1500ms", "retryPeriod": "300ms"},
        "server": {
            "healthProbes": {"bindAddress": "127.0.0.1", "port": probes},
            "metrics": {"bindAddress": "127.0.0.1", "port": metrics},
        },
    }
    for key, value in fields.items():
        doc[key] = {**doc[key], **value} if isinstance(doc.get(key), dict) else value
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return path, probes, metrics


def clean_env(tmp_path: Path) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(tmp_path)}


def run_gcm(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gcm", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=clean_env(tmp_path),
    )


def message_lines(stderr: str) -> list[str]:
    """stderr without the JSON log lines: what gcm says to the operator."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("{")]


def log_entries(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def assert_one_line(res: subprocess.CompletedProcess, code: int, *parts: str) -> str:
    lines = message_lines(res.stderr)
    assert res.returncode == code, res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("gcm: "), lines
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


def cluster_revision(apiserver: APIServer) -> str:
    """The API server's current resourceVersion: any write anywhere moves it."""
    core = k8s.CoreV1Api(apiserver.api_client())
    return core.list_namespace(limit=1).metadata.resource_version


def lease_exists(apiserver: APIServer, namespace: str = "garden") -> bool:
    coord = k8s.CoordinationV1Api(apiserver.api_client())
    return bool(coord.list_namespaced_lease(namespace).items)


def kubeconfig_variant(apiserver: APIServer, tmp_path: Path, change) -> Path:
    doc = apiserver.kubeconfig_dict()
    change(doc)
    path = tmp_path / "variant.kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def garden(apiserver):
    """The API server with gcm's CRDs and the lease namespace ``garden``."""
    apiserver.install_crds(CRDS)
    k8s.CoreV1Api(apiserver.api_client()).create_namespace({"metadata": {"name": "garden"}})
    return apiserver


# --- kubeconfig mistakes: exit 2, the path and where it came from --------------------------------------


def test_missing_kubeconfig_file(garden, tmp_path):
    before = cluster_revision(garden)
    missing = tmp_path / "nope" / "kubeconfig"
    res = run_gcm(tmp_path, "--kubeconfig", str(missing))
    assert_one_line(res, 2, str(missing), "(from --kubeconfig)", "does not exist")
    assert cluster_revision(garden) == before


def test_kubeconfig_from_env_names_the_variable(garden, tmp_path):
    before = cluster_revision(garden)
    missing = tmp_path / "gone.kubeconfig"
    res = subprocess.run(
        [sys.executable, "-m", "gcm"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=clean_env(tmp_path) | {"KUBECONFIG": str(missing)},
    )
    assert_one_line(res, 2, str(missing), "(from $KUBECONFIG)", "does not exist")
    assert cluster_revision(garden) == before


def test_kubeconfig_that_is_not_yaml(garden, tmp_path):
    before = cluster_revision(garden)
    bad = tmp_path / "broken.kubeconfig"
    bad.write_text(Path(garden.kubeconfig).read_text().replace("clusters:", "clusters: [", 1))
    res = run_gcm(tmp_path, "--kubeconfig", str(bad))
    assert_one_line(res, 2, str(bad), "is not valid YAML at line")
    assert cluster_revision(garden) == before


def test_kubeconfig_without_current_context(garden, tmp_path):
    before = cluster_revision(garden)
    path = kubeconfig_variant(garden, tmp_path, lambda doc: doc.pop("current-context"))
    res = run_gcm(tmp_path, "--kubeconfig", str(path))
    assert_one_line(res, 2, str(path), "has no current-context", "kubectl config use-context")
    assert cluster_revision(garden) == before


def test_kubeconfig_naming_a_missing_context(garden, tmp_path):
    before = cluster_revision(garden)
    path = kubeconfig_variant(garden, tmp_path, lambda doc: doc.update({"current-context": "elsewhere"}))
    res = run_gcm(tmp_path, "--kubeconfig", str(path))
    assert_one_line(res, 2, str(path), "is not usable", "elsewhere")
    assert cluster_revision(garden) == before


def test_kubeconfig_with_malformed_contexts(garden, tmp_path):
    before = cluster_revision(garden)
    bad = tmp_path / "kubeconfig"
    bad.write_text("current-context: c\ncontexts: 7\n")
    res = run_gcm(tmp_path, "--kubeconfig", str(bad))
    assert_one_line(res, 2, str(bad), "is not usable")
    assert cluster_revision(garden) == before


# --- ports and TLS files: exit 2, the port and the config field ------------------------------------------


@pytest.mark.parametrize("server", ["healthProbes", "metrics"])
def test_port_in_use_names_the_port_and_the_field(garden, tmp_path, server):
    cfg, probes, metrics = write_config(tmp_path)
    port = probes if server == "healthProbes" else metrics
    before = cluster_revision(garden)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        res = run_gcm(tmp_path, "--kubeconfig", garden.kubeconfig, "--config", str(cfg))
    line = assert_one_line(res, 2, f"127.0.0.1:{port}", f"set server.{server}.port", "in use")
    assert "Task was destroyed" not in res.stderr
    assert line.startswith("gcm: health-probe-server" if server == "healthProbes" else "gcm: metrics-server")
    assert cluster_revision(garden) == before
    assert not lease_exists(garden)


def test_embedded_api_server_port_in_use(tmp_path):
    """A second ``--embedded`` (here: its API server port taken): one line, no asyncio noise, and no
    data directory, lock file or kubeconfig left behind."""
    port = free_port()
    for ephemeral in (("--embedded-ephemeral",), ()):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", port))
            taken.listen()
            res = run_gcm(tmp_path, "--embedded", *ephemeral, "--embedded-port", str(port))
        assert_one_line(res, 2, f"port {port}", "already in use", "--embedded-port-offset")
        assert "Task was destroyed" not in res.stderr
        assert not (tmp_path / ".gcm").exists(), sorted(map(str, (tmp_path / ".gcm").rglob("*")))


def test_embedded_with_kubeconfig_is_one_line(tmp_path):
    other = tmp_path / "other.kubeconfig"
    other.write_text("apiVersion: v1\nkind: Config\n")
    res = run_gcm(tmp_path, "--embedded", "--kubeconfig", str(other), "--embedded-port", str(free_port()))
    line = assert_one_line(res, 2, f"--kubeconfig {other} and --embedded conflict", "drop one of them")
    assert line.startswith("gcm: --kubeconfig")
    assert not (tmp_path / ".gcm").exists()  # nothing started, nothing written


def test_embedded_files_that_cannot_be_written(tmp_path):
    """gcm --embedded where it cannot write its default .gcm/ (a container's read-only root, another
    user's directory): one line naming the path and the flags that move it, exit 2."""
    base = Path(tempfile.mkdtemp(prefix="gcm-ro-"))  # tmp_path's parents are private to their owner
    try:
        base.chmod(0o755)
        workdir = base / "ro"
        workdir.mkdir(mode=0o555)
        cmd = [sys.executable, "-m", "gcm", "--embedded", "--embedded-port", str(free_port())]
        if os.geteuid() == 0:  # root writes anywhere: run as the image's user instead
            setpriv = shutil.which("setpriv")
            drop = [setpriv, "--reuid=65532", "--regid=65532", "--clear-groups"] if setpriv else []
            if (
                not drop
                or subprocess.run([*drop, sys.executable, "-c", "import gcm"], cwd=workdir).returncode
            ):
                pytest.skip("cannot run this checkout's Python as an unprivileged user")
            cmd = [*drop, *cmd]
        res = subprocess.run(
            cmd, capture_output=True, text=True, timeout=60, cwd=workdir, env=clean_env(tmp_path)
        )
        assert_one_line(
            res, 2, "cannot write .gcm", "Permission denied", "--embedded-data-dir", "--embedded-kubeconfig"
        )
        assert list(workdir.iterdir()) == []
    finally:
        workdir.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_embedded_probe_port_in_use_names_the_offset_flag(tmp_path):
    """...and leaves nothing behind: the garden was made before the probe server failed, and is gone
    again (data directory, database, lock file, admin kubeconfig)."""
    cfg, probes, _ = write_config(tmp_path)
    for ephemeral in (("--embedded-ephemeral",), ()):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", probes))
            taken.listen()
            res = run_gcm(
                tmp_path, "--embedded", *ephemeral, "--embedded-port", str(free_port()), "--config", str(cfg)
            )
        line = assert_one_line(res, 2, f"127.0.0.1:{probes}", "set server.healthProbes.port")
        assert line.endswith("or pass --embedded-port-offset N to move every embedded port")
        assert not (tmp_path / ".gcm").exists(), sorted(map(str, (tmp_path / ".gcm").rglob("*")))


def test_webhook_certificate_that_does_not_load(garden, tmp_path):
    certs = tmp_path / "certs"
    certs.mkdir()
    (certs / "tls.crt").write_text("not a certificate\n")
    (certs / "tls.key").write_text("not a key\n")
    cfg, _, _ = write_config(
        tmp_path, server={"webhooks": {"port": free_port(), "tls": {"serverCertDir": str(certs)}}}
    )
    before = cluster_revision(garden)
    res = run_gcm(tmp_path, "--kubeconfig", garden.kubeconfig, "--config", str(cfg))
    assert_one_line(
        res, 2, "server.webhooks.tls.serverCertDir", str(certs), "cannot load tls.crt and tls.key"
    )
    assert cluster_revision(garden) == before


# --- configuration: exit 2 for the leader-election relation, warnings for unknown fields -----------------


def test_metrics_certificates_that_do_not_load(garden, tmp_path):
    """--metrics-cert-dir without tls.crt/tls.key, or without --metrics-secure: exit 2, one line."""
    missing = tmp_path / "metrics-certs"
    res = run_gcm(
        tmp_path, "--kubeconfig", garden.kubeconfig, "--metrics-secure", "--metrics-cert-dir", str(missing)
    )
    assert_one_line(res, 2, f"--metrics-cert-dir {missing}", "cannot load tls.crt and tls.key")
    res = run_gcm(tmp_path, "--kubeconfig", garden.kubeconfig, "--metrics-cert-dir", str(missing))
    assert_one_line(res, 2, "--metrics-cert-dir is for the secure metrics endpoint: add --metrics-secure")


def test_leader_election_timings_that_cannot_work(garden, tmp_path):
    cfg, _, _ = write_config(
        tmp_path, leaderElection={"leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "20s"}
    )
    before = cluster_revision(garden)
    res = run_gcm(tmp_path, "--kubeconfig", garden.kubeconfig, "--config", str(cfg))
    assert_one_line(
        res,
        2,
        f"gcm: invalid configuration in {cfg}: leaderElection.renewDeadline: Invalid value: 10s: "
        "must be greater than 1.2 x retryPeriod (20s): a leader must be able to retry its renewal",
    )
    assert cluster_revision(garden) == before


def test_missing_config_file(tmp_path):
    missing = tmp_path / "nope.yaml"
    res = run_gcm(tmp_path, "--config", str(missing))
    assert_one_line(res, 2, f"invalid configuration in {missing}: cannot read config file", "No such file")


def test_every_bad_field_is_listed(tmp_path):
    """Several problems: a heading line naming the file, then one line per field."""
    cfg, _, _ = write_config(
        tmp_path, controllers={"project": {"concurrentSyncs": -1}}, leaderElection={"leaseDuration": "1d"}
    )
    res = run_gcm(tmp_path, "--config", str(cfg))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    lines = message_lines(res.stderr)
    assert lines[0] == f"gcm: invalid configuration in {cfg}:"
    assert any(line.startswith("  leaderElection.leaseDuration: Invalid value") for line in lines[1:])
    assert any(line.startswith("  controllers.project.concurrentSyncs: Invalid value") for line in lines[1:])


def test_unknown_field_is_a_warning_with_the_nearest_known_field(garden, tmp_path):
    """Logged after logging is configured (JSON here), before anything else can go wrong."""
    cfg, _, _ = write_config(tmp_path, controlers={"event": {"ttlNonShootEvents": "1h"}})
    before = cluster_revision(garden)
    res = run_gcm(tmp_path, "--kubeconfig", str(tmp_path / "missing"), "--config", str(cfg))
    assert res.returncode == 2
    warnings = [e for e in log_entries(res.stderr) if e["event"] == "ignoring unknown configuration field"]
    assert warnings == [
        {
            "field": "controlers",
            "did_you_mean": "controllers",
            "event": "ignoring unknown configuration field",
            "level": "warning",
            "timestamp": warnings[0]["timestamp"],
        }
    ]
    assert cluster_revision(garden) == before


def test_concurrent_syncs_zero_means_one_worker_for_every_controller(apiserver):
    from framework.client import Client
    from gcm.cmd.app import build_manager
    from gcm.config import load_config

    cfg = load_config(
        text=yaml.safe_dump(
            {**HEADER, "controllers": {"project": {"concurrentSyncs": 0}, "event": {"concurrentSyncs": 0}}}
        )
    )
    mgr = build_manager(cfg, Client.from_kubeconfig(apiserver.kubeconfig))
    workers = {
        sample.labels["controller"]: sample.value
        for metric in mgr.registry.collect()
        if metric.name == "controller_runtime_max_concurrent_reconciles"
        for sample in metric.samples
    }
    assert set(workers) >= {"project", "project-stale", "project-activity", "event"}
    assert set(workers.values()) == {1.0}, workers


# --- runtime trouble: a warning naming it, /readyz failing with the reason, no crash ---------------------


class Process:
    """A running ``python -m gcm`` with its log and probe ports."""

    def __init__(self, tmp_path: Path, kubeconfig: str, cfg: Path, probes: int, metrics: int) -> None:
        self.log = tmp_path / f"gcm-{probes}.log"
        self.probes, self.metrics = probes, metrics
        self.http = urllib3.PoolManager(retries=False, timeout=5.0)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gcm", "--kubeconfig", kubeconfig, "--config", str(cfg)],
            cwd=tmp_path,
            env=clean_env(tmp_path),
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )

    def entries(self) -> list[dict]:
        return log_entries(self.log.read_text())

    def logged(self, event: str, **fields) -> list[dict]:
        return [
            e
            for e in self.entries()
            if e.get("event") == event and all(e.get(k) == v for k, v in fields.items())
        ]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def get(self, path: str, port: int | None = None) -> tuple[int, str]:
        resp = self.http.request("GET", f"http://127.0.0.1:{port or self.probes}{path}")
        return resp.status, resp.data.decode()

    def wait_for(self, condition, what: str, timeout: float = 60.0):
        def check():
            assert self.alive(), f"gcm exited with {self.proc.returncode}: {self.log.read_text()[-3000:]}"
            return condition()

        return eventually(
            check,
            timeout=timeout,
            interval=0.1,
            message=lambda: f"{what}; log tail: {self.log.read_text()[-2000:]}",
            ignore=(urllib3.exceptions.HTTPError, OSError),
        )

    def stop(self, timeout: float = 40.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGUSR1)  # thread stacks into the log, for the failure report
            time.sleep(0.5)
            self.proc.kill()
            self.proc.wait()
            raise


@pytest.mark.timeout(120)
def test_missing_lease_namespace_is_a_warning_and_not_ready(apiserver, tmp_path):
    """No ``garden`` namespace: a warning saying so (not an info line every 2 s), /readyz names it."""
    apiserver.install_crds(CRDS)
    cfg, probes, metrics = write_config(tmp_path, logLevel="debug")  # to see the repeats demoted
    before = cluster_revision(apiserver)
    gcm = Process(tmp_path, apiserver.kubeconfig, cfg, probes, metrics)
    try:
        text = 'cannot take the lease: its namespace "garden" does not exist'
        gcm.wait_for(lambda: gcm.logged("lease request failed", level="warning", error=text), "lease warning")
        status, body = gcm.wait_for(
            lambda: (r := gcm.get("/readyz?verbose")) and "[-]leader-election failed" in r[1] and r,
            "readyz names the lease",
        )
        assert status == 500
        assert (
            "[-]leader-election failed: lease garden/gardener-controller-manager-leader-election: " + text
            in body
        )
        assert gcm.get("/healthz") == (200, "ok")
        # The same error is not repeated as a warning every retry period (300 ms here): at debug level.
        gcm.wait_for(lambda: len(gcm.logged("lease request failed", level="debug")) >= 3, "3 repeats")
        assert len(gcm.logged("lease request failed", level="warning")) == 1
        assert gcm.logged("lease request failed", level="info") == []
        assert cluster_revision(apiserver) == before  # nothing created: no lease, no namespace
        assert gcm.stop() == 0
    finally:
        if gcm.alive():
            gcm.proc.kill()


@pytest.mark.timeout(180)
def test_api_server_that_comes_up_later_is_waited_for(tmp_path):
    """gcm started before its API server (a normal rollout order): it serves /healthz, fails /readyz
    with the reason, retries with backoff, logs the first contact, reconciles a Project and never
    restarts; SIGTERM still stops it gracefully."""
    # The garden existed before this rollout: its CRDs and the garden namespace are in storage (as in
    # etcd), so the API server serves Projects from its first answer on. Installing the CRDs only after
    # gcm's first contact would test another case: a kind that is not served yet.
    data_dir, port = tmp_path / "data", free_port()
    before = APIServer(port=port, data_dir=data_dir)
    before.start()
    try:
        before.install_crds(CRDS)
        k8s.CoreV1Api(before.api_client()).create_namespace({"metadata": {"name": "garden"}})
    finally:
        before.stop()
    server = APIServer(port=port, data_dir=data_dir)
    kubeconfig = server.write_kubeconfig(tmp_path / "late.kubeconfig")  # the address is known up front
    cfg, probes, metrics = write_config(tmp_path)
    gcm = Process(tmp_path, kubeconfig, cfg, probes, metrics)
    try:
        gcm.wait_for(lambda: gcm.get("/healthz") == (200, "ok"), "healthz up while the server is down")
        status, body = gcm.get("/readyz?verbose")
        assert status == 500
        assert f"[-]apiserver failed: API server {server.url} not reached yet: " in body
        assert "[-]informer-sync failed: caches not synced: " in body
        assert "core.gardener.cloud/v1beta1 Project" in body
        # Retried with growing delays (client-go's 0.8 s doubling, jittered) while the server is down.
        retries = gcm.wait_for(
            lambda: (r := gcm.logged("API server not reachable, retrying")) and len(r) >= 3 and r, "3 retries"
        )
        delays = [e["retry_in"] for e in retries[:3]]
        assert (
            0.8 <= delays[0] < 1.6 + 0.05 and 1.6 <= delays[1] < 3.2 + 0.05 and 3.2 <= delays[2] < 6.4 + 0.05
        )
        assert all(e["level"] == "warning" and "Connection refused" in e["error"] for e in retries)

        server.start()
        api = server.api_client()
        k8s.CustomObjectsApi(api).create_cluster_custom_object(
            "core.gardener.cloud",
            "v1beta1",
            "projects",
            {
                "apiVersion": "core.gardener.cloud/v1beta1",
                "kind": "Project",
                "metadata": {"name": "late"},
                "spec": {"namespace": "garden-late"},
            },
        )

        def ready_project():
            p = k8s.CustomObjectsApi(api).get_cluster_custom_object(
                "core.gardener.cloud", "v1beta1", "projects", "late"
            )
            return (p.get("status") or {}).get("phase") == "Ready"

        gcm.wait_for(ready_project, "Project reconciled", timeout=120)
        assert k8s.CoreV1Api(api).read_namespace("garden-late").metadata.labels["project.gardener.cloud/name"]
        gcm.wait_for(lambda: gcm.get("/readyz") == (200, "ok"), "ready")
        connected = gcm.logged("connected to the API server")
        assert len(connected) == 1 and connected[0]["level"] == "info" and connected[0]["host"] == server.url
        assert len(gcm.logged("starting gcm")) == 1  # the same process all along
        errors = [e for e in gcm.entries() if e.get("level") == "error"]
        assert errors == []
        # The stale check that ran before the namespace existed waited for it: no reconcile errors.
        _, metrics_text = gcm.get("/metrics", port=gcm.metrics)
        for controller in ("project", "project-stale"):
            line = f'controller_runtime_reconcile_errors_total{{controller="{controller}"}} 0.0'
            assert line in metrics_text
        assert gcm.stop(timeout=40) == 0  # graceful (30 s bound): stop() fails after 40 s
        assert gcm.logged("released the lease")
    finally:
        if gcm.alive():
            gcm.proc.kill()
        server.stop()


def test_help_lists_the_subcommands(tmp_path):
    res = run_gcm(tmp_path, "--help")
    assert res.returncode == 0, res.stderr
    commands = res.stdout[res.stdout.index("commands:") :]
    assert "run " in commands and "stale-report " in commands
    assert "'run' is the default command" in res.stdout and "2 for anything configured wrong" in res.stdout
    res = run_gcm(tmp_path, "run", "--help")
    assert res.returncode == 0 and "--kubeconfig FILE" in res.stdout and "--log-level" in res.stdout


@pytest.mark.timeout(90)
def test_sigterm_while_waiting_for_the_api_server(tmp_path):
    """Waiting for an API server never blocks shutdown: SIGTERM ends gcm gracefully (exit 0)."""
    server = APIServer(port=free_port())  # never started
    kubeconfig = server.write_kubeconfig(tmp_path / "never.kubeconfig")
    cfg, probes, metrics = write_config(tmp_path)
    gcm = Process(tmp_path, kubeconfig, cfg, probes, metrics)
    try:
        gcm.wait_for(lambda: gcm.logged("API server not reachable, retrying"), "a failed contact")
        gcm.wait_for(lambda: gcm.logged("lease request failed", level="warning"), "the lease warning")
        assert gcm.stop(timeout=40) == 0
        assert gcm.logged("gcm stopped")
        assert not any(e.get("level") == "error" for e in gcm.entries())
    finally:
        if gcm.alive():
            gcm.proc.kill()
        server.stop()


@pytest.mark.timeout(150)
def test_api_server_answering_503_at_start_is_retried(garden, tmp_path):
    """Lists answered 503 at start: the cache logs a warning and retries with backoff, and the Project
    is reconciled once the server recovers; the process never restarts."""
    garden.inject_failure("list", "projects", 503, count=3)
    api = garden.api_client()
    k8s.CustomObjectsApi(api).create_cluster_custom_object(
        "core.gardener.cloud",
        "v1beta1",
        "projects",
        {
            "apiVersion": "core.gardener.cloud/v1beta1",
            "kind": "Project",
            "metadata": {"name": "flaky"},
            "spec": {"namespace": "garden-flaky"},
        },
    )
    cfg, probes, metrics = write_config(tmp_path)
    gcm = Process(tmp_path, garden.kubeconfig, cfg, probes, metrics)
    try:
        failed = gcm.wait_for(
            lambda: [
                e
                for e in gcm.logged("list/watch failed")
                if e.get("reflector") == "core.gardener.cloud/v1beta1/Project" and "503" in e["error"]
            ],
            "a 503 on the Project list",
        )
        assert failed[0]["level"] == "warning"

        def phase():
            p = k8s.CustomObjectsApi(api).get_cluster_custom_object(
                "core.gardener.cloud", "v1beta1", "projects", "flaky"
            )
            return (p.get("status") or {}).get("phase") == "Ready"

        gcm.wait_for(phase, "Project reconciled after the 503s", timeout=120)
        gcm.wait_for(lambda: gcm.get("/readyz") == (200, "ok"), "ready")
        assert len(gcm.logged("starting gcm")) == 1
        assert gcm.stop(timeout=40) == 0
    finally:
        if gcm.alive():
            gcm.proc.kill()
