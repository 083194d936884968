"""The API server's data directory: SQLite storage that survives restarts and kill -9."""

from __future__ import annotations

import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import urllib3
import yaml
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from framework.apiserver.storage.persistence import LOCK_NAME, DataDirError, lock_directory, unlock_directory
from framework.cache import SharedIndexInformer
from framework.client import Client
from framework.testing import APIServer, eventually, free_port

SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


CLI = [sys.executable, "-m", "framework.apiserver", "--port", "0"]


def configmap(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def core(server: APIServer) -> client.CoreV1Api:
    return client.CoreV1Api(server.api_client())


def test_objects_resource_versions_and_crds_survive_a_restart(tmp_path):
    with APIServer(data_dir=tmp_path) as server:
        v1 = core(server)
        v1.create_namespaced_config_map("default", {"metadata": {"name": "kept"}, "data": {"a": "1"}})
        v1.patch_namespaced_config_map("kept", "default", {"data": {"a": "2"}})
        v1.create_namespaced_config_map("default", {"metadata": {"name": "gone"}})
        v1.delete_namespaced_config_map("gone", "default")
        server.install_crds([CRD])
        custom = client.CustomObjectsApi(server.api_client())
        custom.create_namespaced_custom_object(
            "example.com", "v1", "default", "gadgets", {"metadata": {"name": "g"}, "spec": {"size": 3}}
        )
        before = v1.read_namespaced_config_map("kept", "default")
        last_rv = server.resource_version

    with APIServer(data_dir=tmp_path) as server:
        assert server.resource_version == last_rv
        v1 = core(server)
        after = v1.read_namespaced_config_map("kept", "default")
        assert after.data == {"a": "2"}
        assert after.metadata.uid == before.metadata.uid
        assert after.metadata.resource_version == before.metadata.resource_version
        with pytest.raises(ApiException) as e:
            v1.read_namespaced_config_map("gone", "default")
        assert e.value.status == 404
        # The CRD is served at once, without waiting for the CRD controller.
        custom = client.CustomObjectsApi(server.api_client())
        g = custom.get_namespaced_custom_object("example.com", "v1", "default", "gadgets", "g")
        assert g["spec"] == {"size": 3}
        created = v1.create_namespaced_config_map("default", {"metadata": {"name": "new"}})
        assert int(created.metadata.resource_version) == last_rv + 1


def test_the_deletion_resource_version_is_not_reused(tmp_path):
    """The last write before a stop is a delete: its resourceVersion stays taken after the restart."""
    with APIServer(data_dir=tmp_path) as server:
        v1 = core(server)
        v1.create_namespaced_config_map("default", {"metadata": {"name": "x"}})
        v1.delete_namespaced_config_map("x", "default")
        last_rv = server.resource_version
    with APIServer(data_dir=tmp_path) as server:
        created = core(server).create_namespaced_config_map("default", {"metadata": {"name": "x"}})
        assert int(created.metadata.resource_version) == last_rv + 1


def test_credentials_and_certificates_survive_a_restart(tmp_path):
    """A kubeconfig written before the restart still works: same CA, same admin token, same users."""
    with APIServer(data_dir=tmp_path) as server:
        admin_kc = yaml.safe_load(Path(server.kubeconfig).read_text())
        alice = server.add_user("alice", ["team"])
        v1 = core(server)
        v1.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
        sa_token = v1.create_namespaced_service_account_token("robot", "default", {"spec": {}}).status.token
        ca_path = Path(server.ca_path)
        ca_pem = ca_path.read_bytes()

    with APIServer(data_dir=tmp_path) as server:
        assert Path(server.ca_path).read_bytes() == ca_pem
        assert server.token == admin_kc["users"][0]["user"]["token"]
        http = urllib3.PoolManager(ca_certs=str(server.ca_path), retries=False)
        for token, user in ((alice, "alice"), (sa_token, "system:serviceaccount:default:robot")):
            resp = http.request(
                "POST",
                f"{server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews",
                body=b'{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}',
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )
            if resp.status == 404:  # no SelfSubjectReview: any authenticated request shows the token works
                resp = http.request("GET", f"{server.url}/api", headers={"Authorization": f"Bearer {token}"})
                assert resp.status == 200, resp.data
            else:
                assert resp.status == 201, resp.data
                assert user in resp.data.decode()
        bad = http.request("GET", f"{server.url}/api", headers={"Authorization": "Bearer nope"})
        assert bad.status == 401


def test_a_watch_from_before_the_restart_is_too_old(tmp_path):
    """No history survives: clients re-list as after a compaction (410), then watch from the new list."""
    with APIServer(data_dir=tmp_path) as server:
        v1 = core(server)
        old_rv = v1.list_namespaced_config_map("default").metadata.resource_version
        v1.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    with APIServer(data_dir=tmp_path) as server:
        v1 = core(server)
        stream = v1.list_namespaced_config_map(
            "default", watch=True, resource_version=old_rv, timeout_seconds=5, _preload_content=False
        )
        first = stream.readline()
        stream.release_conn()
        assert b'"ERROR"' in first and b'"code":410' in first.replace(b" ", b"")
        listed = v1.list_namespaced_config_map("default")
        assert "a" in [c.metadata.name for c in listed.items]
        seen: list[str] = []

        def watch_from_list() -> None:
            for ev in watch.Watch().stream(
                v1.list_namespaced_config_map,
                "default",
                resource_version=listed.metadata.resource_version,
                timeout_seconds=10,
            ):
                seen.append(f"{ev['type']} {ev['object'].metadata.name}")
                return

        t = threading.Thread(target=watch_from_list, name="test-watch")
        t.start()
        eventually(lambda: core(server).create_namespaced_config_map("default", {"metadata": {"name": "b"}}))
        t.join(timeout=15)
        assert seen == ["ADDED b"]


def test_namespace_termination_resumes_after_a_restart(tmp_path):
    """The namespace controller picks up a Terminating namespace from storage."""
    with APIServer(data_dir=tmp_path) as server:
        v1 = core(server)
        v1.create_namespace({"metadata": {"name": "doomed"}})
        v1.create_namespaced_config_map(
            "doomed", {"metadata": {"name": "held", "finalizers": ["example.com/x"]}}
        )
        v1.delete_namespace("doomed")
        eventually(lambda: v1.read_namespace("doomed").status.phase == "Terminating")
    with APIServer(data_dir=tmp_path) as server:
        v1 = core(server)
        assert v1.read_namespace("doomed").status.phase == "Terminating"
        held = eventually(lambda: v1.read_namespaced_config_map("held", "doomed").metadata.deletion_timestamp)
        assert held
        v1.patch_namespaced_config_map("held", "doomed", {"metadata": {"finalizers": None}})

        def gone() -> bool:
            try:
                v1.read_namespace("doomed")
            except ApiException as e:
                return e.status == 404
            return False

        eventually(gone, message="namespace doomed deleted")


def test_files_are_private(tmp_path):
    data = tmp_path / "data"
    with APIServer(data_dir=data) as server:
        server.kubeconfig_for("bob")
        paths = [data, *data.rglob("*")]
        for path in paths:
            mode = stat.S_IMODE(path.stat().st_mode)
            assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
        assert {p.name for p in data.iterdir()} >= {"storage.db", "pki", "kubeconfigs"}
    assert (data / "storage.db").exists()  # stop() keeps the data


def test_the_in_memory_server_leaves_no_files(tmp_path):
    with APIServer() as server:
        directory = Path(server.kubeconfig).parent
        assert directory.exists() and not (directory / "storage.db").exists()
    assert not directory.exists()


@pytest.mark.parametrize(
    "damage",
    ["garbage", "foreign-sqlite", "truncated", "foreign-file", "not-a-directory"],
)
def test_an_unusable_data_directory_is_refused_and_left_alone(tmp_path, damage):
    data = tmp_path / "data"
    if damage == "not-a-directory":
        data.write_text("x")
        culprit = data
    else:
        if damage == "truncated":
            with APIServer(data_dir=data) as server:
                for i in range(200):
                    core(server).create_namespaced_config_map("default", {"metadata": {"name": f"c{i}"}})
            culprit = data / "storage.db"
            raw = culprit.read_bytes()
            culprit.write_bytes(raw[: len(raw) // 2] + b"\xff" * 4096 + raw[len(raw) // 2 + 4096 :])
        elif damage == "garbage":
            data.mkdir()
            culprit = data / "storage.db"
            culprit.write_bytes(b"this is not a database\n" * 100)
        elif damage == "foreign-sqlite":
            data.mkdir()
            culprit = data / "storage.db"
            with sqlite3.connect(culprit) as db:
                db.execute("CREATE TABLE accounts (id INTEGER)")
            db.close()
        else:
            data.mkdir()
            culprit = data / "notes.txt"
            culprit.write_text("my notes")

    def contents() -> dict[Path, bytes]:
        paths = [culprit, *(data.rglob("*") if data.is_dir() else ())]
        return {p: p.read_bytes() for p in paths if p.is_file()}

    before = contents()
    with pytest.raises(DataDirError) as e:
        APIServer(data_dir=data)
    assert str(culprit) in str(e.value) and "\n" not in str(e.value)
    assert contents() == before

    # The CLI: one line naming the file, exit code 2, nothing written.
    kc = tmp_path / "kc"
    res = subprocess.run(
        [*CLI, "--kubeconfig", str(kc), "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and str(culprit) in lines[0], res.stderr
    assert not kc.exists()


def test_a_second_server_on_the_same_directory_is_refused(tmp_path):
    with APIServer(data_dir=tmp_path) as server:
        with pytest.raises(DataDirError, match="in use"):
            APIServer(data_dir=tmp_path)
        core(server).create_namespaced_config_map("default", {"metadata": {"name": "still-served"}})
    with APIServer(data_dir=tmp_path) as server:  # released on stop
        assert core(server).read_namespaced_config_map("still-served", "default")


def test_a_lock_file_removed_by_its_holder_never_lets_two_in(tmp_path):
    """Holders that remove the lock file when they let go (an ephemeral ``gcm --embedded``): a lock
    taken on the removed file locks nothing, so it is taken again on the new one; never two holders."""
    holders: list[int] = []
    overlaps: list[int] = []
    guard = threading.Lock()

    def contend(n: int) -> None:
        for _ in range(200):
            try:
                fd = lock_directory(tmp_path, "test")
            except DataDirError:
                continue
            with guard:
                holders.append(n)
                if len(holders) > 1:
                    overlaps.append(len(holders))
            time.sleep(0)  # hold it across a thread switch
            with guard:
                holders.remove(n)
            unlock_directory(tmp_path, fd, remove=True)

    threads = [threading.Thread(target=contend, args=(n,), name=f"locker-{n}") for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert overlaps == []
    assert not (tmp_path / LOCK_NAME).exists()  # the last holder removed it


def _start_cli(data: Path, kc: Path) -> subprocess.Popen:
    kc.unlink(missing_ok=True)
    proc = subprocess.Popen(
        [*CLI, "--kubeconfig", str(kc), "--data-dir", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    eventually(lambda: proc.poll() is None and kc.exists(), timeout=60, message="server started")
    return proc


def test_every_acknowledged_write_survives_kill_9(tmp_path):
    """SIGKILL in the middle of a burst of creates and updates from several clients."""
    data, kc = tmp_path / "data", tmp_path / "kubeconfig"
    proc = _start_cli(data, kc)
    acked: dict[str, str] = {}  # name -> the data value the server acknowledged last
    stop = threading.Event()
    lock = threading.Lock()

    def writer(n: int) -> None:
        from kubernetes import config

        v1 = client.CoreV1Api(config.new_client_from_config(config_file=str(kc)))
        i = 0
        while not stop.is_set():
            name = f"w{n}-{i}"
            try:
                v1.create_namespaced_config_map("default", {"metadata": {"name": name}, "data": {"v": "0"}})
                with lock:
                    acked[name] = "0"
                v1.patch_namespaced_config_map(name, "default", {"data": {"v": "1"}})
                with lock:
                    acked[name] = "1"
            except Exception:  # the server died mid-request: that write was not acknowledged
                return
            i += 1

    threads = [threading.Thread(target=writer, args=(n,), name=f"writer-{n}") for n in range(3)]
    for t in threads:
        t.start()
    eventually(lambda: len(acked) >= 150, timeout=60, message="writes acknowledged")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    stop.set()
    for t in threads:
        t.join(timeout=30)

    proc = _start_cli(data, kc)
    try:
        from kubernetes import config

        v1 = client.CoreV1Api(config.new_client_from_config(config_file=str(kc)))
        items = v1.list_namespaced_config_map("default").items
        stored = {c.metadata.name: (c.data or {}).get("v") for c in items}
        missing = {name: value for name, value in acked.items() if stored.get(name) not in (value, "1")}
        assert not missing, f"{len(missing)} of {len(acked)} acknowledged writes lost: {sorted(missing)[:5]}"
        rvs = [int(c.metadata.resource_version) for c in items]
        created = v1.create_namespaced_config_map("default", {"metadata": {"name": "after"}})
        assert int(created.metadata.resource_version) > max(rvs)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(timeout=20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_an_informer_carries_on_across_a_kill_9_and_restart(tmp_path):
    """A client keeps its kubeconfig (same CA, same token) and its informer re-lists after the 410."""

    port = free_port()  # the restarted server binds the same port again
    data, kc = tmp_path / "data", tmp_path / "kubeconfig"

    def start() -> subprocess.Popen:
        kc.unlink(missing_ok=True)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "framework.apiserver",
                "--port",
                str(port),
                "--kubeconfig",
                str(kc),
                "--data-dir",
                str(data),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        eventually(lambda: proc.poll() is None and kc.exists(), timeout=60, message="server started")
        return proc

    proc = start()
    c = Client.from_kubeconfig(kc, qps=0)
    informer = SharedIndexInformer(
        c, "v1", "ConfigMap", namespace="default", backoff_initial=0.05, backoff_cap=0.5
    )
    try:
        for name in ("before-1", "before-2"):
            c.create(
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}
            )
        informer.start()
        assert informer.wait_for_cache_sync(30)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        proc = start()
        c.delete("v1", "ConfigMap", "before-1", "default")
        c.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after", "namespace": "default"}}
        )

        def cached() -> set[str]:
            return {o["metadata"]["name"] for o in informer.indexer.list()}

        def listed() -> set[str]:
            return {o["metadata"]["name"] for o in c.list("v1", "ConfigMap", namespace="default")["items"]}

        eventually(
            lambda: cached() == listed(), timeout=60, message=lambda: f"cache {cached()} != {listed()}"
        )
        assert {"before-2", "after"} <= cached() and "before-1" not in cached()
    finally:
        assert informer.stop(10)
        c.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
