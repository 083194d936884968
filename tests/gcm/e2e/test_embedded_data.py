"""``python -m gcm --embedded`` keeps its garden in ``.gcm/data``: kill -9, restart, nothing lost."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import yaml
from kubernetes import client, config

from framework.testing import eventually, free_offset, free_port

CORE = "core.gardener.cloud"


def write_config(tmp_path: Path) -> Path:
    cfg = {
        "apiVersion": "controllermanager.config.gardener.cloud/v1alpha1",
        "kind": "ControllerManagerConfiguration",
        "logFormat": "json",
        "server": {
            "healthProbes": {"bindAddress": "127.0.0.1", "port": free_port()},
            "metrics": {"bindAddress": "127.0.0.1", "port": free_port()},
            "webhooks": {"bindAddress": "127.0.0.1", "port": free_port()},
        },
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


class Garden:
    """One ``gcm --embedded`` process in ``home`` (its cwd, so its data is ``home/.gcm/data``)."""

    def __init__(self, home: Path, *extra: str, ports: tuple[str, ...] | None = None) -> None:
        # An explicit port, not 0: the kernel may otherwise hand the API server a port the config's
        # servers were just given.
        ports = ports or ("--embedded-port", str(free_port()))
        self.home = home
        self.kubeconfig = home / ".gcm" / "kubeconfig"
        self.kubeconfig.unlink(missing_ok=True)
        self.log = home / f"gcm-{len(list(home.glob('gcm-*.log')))}.log"
        self.tmp = home / "systmp"  # the process's system temp directory
        self.tmp.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
        env |= {"HOME": str(home), "TMPDIR": str(self.tmp)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gcm", "--embedded", *ports, *extra],
            cwd=home,
            env=env,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )

    def ready(self) -> dict:
        def line() -> dict | None:
            assert self.proc.poll() is None, self.log.read_text()
            for entry in self.log.read_text().splitlines():
                if entry.startswith("{") and json.loads(entry)["event"] == "gcm --embedded ready":
                    return json.loads(entry)
            return None

        return eventually(line, timeout=90, interval=0.2, message="gcm --embedded ready")

    def api(self) -> client.ApiClient:
        return config.new_client_from_config(config_file=str(self.kubeconfig))

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=40)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def project(name: str) -> dict:
    return {
        "apiVersion": f"{CORE}/v1beta1",
        "kind": "Project",
        "metadata": {"name": name},
        "spec": {"namespace": f"garden-{name}"},
    }


def phase(api: client.ApiClient, name: str) -> str | None:
    p = client.CustomObjectsApi(api).get_cluster_custom_object(CORE, "v1beta1", "projects", name)
    return (p.get("status") or {}).get("phase")


def test_kill_9_in_a_burst_of_writes_loses_no_acknowledged_write(tmp_path):
    cfg = write_config(tmp_path)
    garden = Garden(tmp_path, "--config", str(cfg))
    try:
        garden.ready()
        api = garden.api()
        custom = client.CustomObjectsApi(api)
        custom.create_cluster_custom_object(CORE, "v1beta1", "projects", project("alpha"))
        eventually(lambda: phase(api, "alpha") == "Ready", timeout=60, message="Project alpha Ready")

        acked: dict[str, str] = {}  # "kind/name" -> what the server acknowledged last
        lock = threading.Lock()
        stop = threading.Event()

        def configmaps(n: int) -> None:
            v1 = client.CoreV1Api(garden.api())
            i = 0
            while not stop.is_set():
                name = f"cm-{n}-{i}"
                try:
                    v1.create_namespaced_config_map(
                        "default", {"metadata": {"name": name}, "data": {"v": "0"}}
                    )
                    with lock:
                        acked[f"cm/{name}"] = "0"
                    v1.patch_namespaced_config_map(name, "default", {"data": {"v": "1"}})
                    with lock:
                        acked[f"cm/{name}"] = "1"
                except Exception:  # killed mid-request: not acknowledged
                    return
                i += 1

        def projects() -> None:
            objs = client.CustomObjectsApi(garden.api())
            i = 0
            while not stop.is_set():
                try:
                    objs.create_cluster_custom_object(CORE, "v1beta1", "projects", project(f"burst-{i}"))
                except Exception:
                    return
                with lock:
                    acked[f"project/burst-{i}"] = "created"
                i += 1

        threads = [threading.Thread(target=configmaps, args=(n,), name=f"cm-writer-{n}") for n in range(2)]
        threads.append(threading.Thread(target=projects, name="project-writer"))
        for t in threads:
            t.start()
        eventually(lambda: len(acked) >= 60, timeout=90, message="writes acknowledged")  # kill mid-burst
        garden.kill()
        stop.set()
        for t in threads:
            t.join(timeout=60)
        # Nothing in the system temp directory: certificates and kubeconfigs live in .gcm/data.
        assert list(garden.tmp.iterdir()) == []
    finally:
        if garden.proc.poll() is None:
            garden.proc.kill()
            garden.proc.wait()

    garden = Garden(tmp_path, "--config", str(write_config(tmp_path)))
    try:
        garden.ready()
        api = garden.api()
        items = client.CoreV1Api(api).list_namespaced_config_map("default").items
        stored = {f"cm/{c.metadata.name}": (c.data or {}).get("v") for c in items}
        names = {
            p["metadata"]["name"]
            for p in client.CustomObjectsApi(api).list_cluster_custom_object(CORE, "v1beta1", "projects")[
                "items"
            ]
        }
        stored |= {f"project/{n}": "created" for n in names}
        lost = sorted(k for k, v in acked.items() if stored.get(k) not in (v, "1"))
        assert not lost, f"{len(lost)} of {len(acked)} acknowledged writes lost, e.g. {lost[:5]}"
        assert phase(api, "alpha") == "Ready"
        burst = sorted(k.split("/")[1] for k in acked if k.startswith("project/"))
        assert burst, "no Project was created in the burst"
        for name in (burst[-1], "alpha"):
            eventually(lambda name=name: phase(api, name) == "Ready", timeout=60, message=f"{name} Ready")
        # gcm reconciles new Projects after the restart too.
        client.CustomObjectsApi(api).create_cluster_custom_object(
            CORE, "v1beta1", "projects", project("after")
        )
        eventually(lambda: phase(api, "after") == "Ready", timeout=60, message="Project after Ready")
        assert garden.stop() == 0
    finally:
        if garden.proc.poll() is None:
            garden.proc.kill()
            garden.proc.wait()
    data = tmp_path / ".gcm" / "data"
    for path in [data, *data.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
    assert list(garden.tmp.iterdir()) == []


def stale_report(home: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m gcm stale-report`` started in ``home`` (no $KUBECONFIG, no ~/.kube/config)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "gcm", "stale-report", *args],
        capture_output=True, text=True, timeout=60, cwd=home, env=env,
    )  # fmt: skip


def test_ephemeral_keeps_nothing(tmp_path):
    """...not even its data directory or lock file; and stale-report started next to it finds its
    kubeconfig (.gcm/kubeconfig), as it finds $KUBECONFIG."""
    res = stale_report(tmp_path)
    assert res.returncode == 2 and ".gcm/kubeconfig" in res.stderr and "--embedded" in res.stderr, res.stderr
    cfg = write_config(tmp_path)
    garden = Garden(tmp_path, "--config", str(cfg), "--embedded-ephemeral")
    try:
        assert garden.ready()["data_dir"] == "(memory)"
        client.CoreV1Api(garden.api()).create_namespaced_config_map("default", {"metadata": {"name": "x"}})
        assert (tmp_path / ".gcm" / "data" / "ephemeral").is_dir()
        client.CustomObjectsApi(garden.api()).create_cluster_custom_object(
            CORE, "v1beta1", "projects", project("demo")
        )
        res = stale_report(tmp_path, "-o", "json")
        assert res.returncode == 0, res.stderr
        assert [p["project"] for p in json.loads(res.stdout)["projects"]] == ["demo"]
        assert garden.stop() == 0
    finally:
        if garden.proc.poll() is None:
            garden.proc.kill()
            garden.proc.wait()
    assert not (tmp_path / ".gcm" / "data").exists()  # no ephemeral/, apiserver/ or lock file
    # With the garden gone, the report names the kubeconfig it tried and where it came from.
    res = stale_report(tmp_path)
    assert res.returncode == 1
    assert "kubeconfig .gcm/kubeconfig (from the garden of a gcm --embedded started here)" in res.stderr
    garden = Garden(tmp_path, "--config", str(write_config(tmp_path)), "--embedded-ephemeral")
    try:
        garden.ready()
        names = [
            c.metadata.name
            for c in client.CoreV1Api(garden.api()).list_namespaced_config_map("default").items
        ]
        assert "x" not in names
    finally:
        garden.stop()


def test_a_failed_start_keeps_an_existing_garden(tmp_path):
    """A start that fails removes only what it made: the data of an earlier run stays, usable."""
    garden = Garden(tmp_path, "--config", str(write_config(tmp_path)))
    try:
        garden.ready()
        client.CoreV1Api(garden.api()).create_namespace({"metadata": {"name": "kept"}})
        assert garden.stop() == 0
    finally:
        if garden.proc.poll() is None:
            garden.proc.kill()
            garden.proc.wait()

    def files() -> list[str]:
        # SQLite's -wal/-shm come and go with the connection; Garden removes the admin kubeconfig.
        found = (str(p.relative_to(tmp_path)) for p in (tmp_path / ".gcm").rglob("*"))
        return sorted(p for p in found if not p.endswith(("-wal", "-shm", "/kubeconfig")))

    before = files()
    cfg = write_config(tmp_path)
    probes = yaml.safe_load(cfg.read_text())["server"]["healthProbes"]["port"]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", probes))
        taken.listen()
        garden = Garden(tmp_path, "--config", str(cfg))
        assert garden.proc.wait(timeout=60) == 2, garden.log.read_text()
    assert files() == before
    garden = Garden(tmp_path, "--config", str(write_config(tmp_path)))
    try:
        garden.ready()
        assert client.CoreV1Api(garden.api()).read_namespace("kept").metadata.name == "kept"
    finally:
        garden.stop()


def test_a_foreign_data_directory_is_refused(tmp_path):
    data = tmp_path / ".gcm" / "data"
    data.mkdir(parents=True)
    (data / "thesis.tex").write_text("precious")
    res = subprocess.run(
        [sys.executable, "-m", "gcm", "--embedded", "--embedded-port", "0"],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().count("\n") == 0 and ".gcm/data/thesis.tex" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert sorted(p.name for p in data.iterdir()) == ["thesis.tex"]
    assert (data / "thesis.tex").read_text() == "precious"


def listening_addresses(port: int) -> set[str]:
    """The local addresses of the listening TCP sockets on ``port`` (from /proc/net/tcp, tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, hexport = local.rsplit(":", 1)
                if state == "0A" and int(hexport, 16) == port:  # 0A: LISTEN
                    found.add(address)
    return found


def test_port_offset_moves_every_listener_all_on_loopback_and_the_gardener_rules_hold(tmp_path):
    ports = {"apiserver": 6443, "healthz": 2718, "metrics": 2719, "webhook": 2721}  # gcm's defaults
    offset = free_offset(ports.values())
    garden = Garden(tmp_path, ports=("--embedded-port-offset", str(offset)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(tmp_path)}
    try:
        ready = garden.ready()
        for name, base in ports.items():
            assert f"127.0.0.1:{base + offset}" in ready[name], ready
            # Bound to loopback only ("0100007F" is 127.0.0.1 in /proc/net/tcp).
            assert listening_addresses(base + offset) == {"0100007F"}, name
        api = garden.api()
        custom = client.CustomObjectsApi(api)
        custom.create_cluster_custom_object(CORE, "v1beta1", "projects", project("rules"))
        spec = custom.get_cluster_custom_object(CORE, "v1beta1", "projects", "rules")["spec"]
        admin = {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "admin"}
        assert spec["createdBy"] == admin and spec["owner"] == admin
        kubectl = ["kubectl", "--kubeconfig", str(garden.kubeconfig)]
        out = subprocess.run(
            [*kubectl, "delete", "project", "rules"], capture_output=True, text=True, env=env, timeout=60
        )
        assert out.returncode != 0
        assert 'must have a "confirmation.gardener.cloud/deletion" annotation to delete' in out.stderr
        assert phase(api, "rules") in (None, "Pending", "Ready")  # still there
        assert garden.stop() == 0
    finally:
        if garden.proc.poll() is None:
            garden.proc.kill()
            garden.proc.wait()
