"""Project controller at scale: N Projects created at once, seconds until all are Ready.

    .venv/bin/python bench/project_bench.py            # 1,000 Projects, concurrentSyncs 5 and 20
    .venv/bin/python bench/project_bench.py --quick    # 100 Projects
    .venv/bin/python bench/project_bench.py --n 500 --syncs 5,10,20 --qps 50

Each measurement runs in its own child process (so peak RSS is its own) against its own API server
(``python -m framework.apiserver`` in a further process, RBAC on, so gcm and the server do not
share a GIL). The server is bootstrapped like ``python -m gcm --embedded``: CRDs, ``manifests/global``,
gcm's ServiceAccount and RBAC; gcm (``project`` and ``project-resourcequota`` controllers) runs in the
child as that ServiceAccount.

- **gcm**: N Projects (generated namespace, one admin and one viewer member) are created from 4 client
  threads; the clock stops when a Project watch has seen every one ``Ready`` at its current generation.
  Afterwards every Project is checked for its namespace, 4 ClusterRoles, 4 ClusterRoleBindings and 3
  RoleBindings. Requests per Project come from the server's ``apiserver_request_total`` (user
  ``system:serviceaccount:garden:gardener-controller-manager``), reads and watches included.
- **floor**: a plain client loop (1 thread, and 20 threads) without reads, cache or controller, sending
  for each Project its create and then the writes gcm makes (finalizer patch, Pending, namespace
  create, spec.namespace update, 11 RBAC creates, Ready, one Event) as gcm's ServiceAccount.

The gcm client is not throttled unless ``--qps`` is given (gcm's default config: 50 qps / burst 100,
which alone would need requests ÷ 50 seconds).

Figures (Python 3.11, 2-core VM shared with other jobs, load average 4-5; expect ±30 %):

    1000 Projects                      seconds  Projects/s  req/Project  peak RSS MB
    gcm, concurrentSyncs 5                24.9        40.1         17.3          112
    gcm, concurrentSyncs 20               18.7        53.5         17.3          116
    plain client loop, 1 thread           25.5        39.2         17.0           71
    plain client loop, 20 threads         13.6        73.7         17.1           78

gcm's requests per Project: 12 creates (namespace, 11 RBAC objects), 3 patches (finalizer, Pending,
Ready), 1 update (``spec.namespace``), up to 2 Event writes (the recorder's bounded queue drops some
in a burst of 1,000), ~0 reads (the cache). Before two fixes to the test API server (RBAC authorizer
stops at the first allowing binding; ClusterRole aggregation skips unlabelled roles) the same run took
220 s / 156 s: the server's per-request cost grew with the number of bindings and ClusterRoles.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("FRAMEWORK_NO_SIGNALS", "1")

P = "core.gardener.cloud/v1beta1"
RBAC = "rbac.authorization.k8s.io/v1"
GCM_USER = "system:serviceaccount:garden:gardener-controller-manager"


# --- server ---------------------------------------------------------------------------------------------


class Server:
    """The API server in its own process, bootstrapped like ``gcm --embedded``."""

    def __init__(self, workdir: Path) -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.kubeconfig = workdir / "admin.kubeconfig"
        self.log = (workdir / "apiserver.log").open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "framework.apiserver",
                "--port",
                str(port),
                "--kubeconfig",
                str(self.kubeconfig),
                "--crds",
                str(ROOT / "manifests" / "crds"),
                "--authorization-mode",
                "RBAC",
                "--watch-cache-size",
                "20000",
            ],
            cwd=ROOT,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while not self.kubeconfig.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("API server did not start")
            time.sleep(0.05)
        self.gcm_kubeconfig = self._bootstrap(workdir)

    def _bootstrap(self, workdir: Path) -> Path:
        import yaml

        from framework.client import Client
        from gcm import embedded

        admin = Client.from_kubeconfig(self.kubeconfig, qps=0)
        embedded.apply(admin, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "garden"}})
        for obj in embedded.load_documents(ROOT / "manifests" / "global"):
            embedded.apply(admin, obj)
        for obj in embedded.load_documents(ROOT / "manifests" / "deploy"):
            if obj["kind"] in embedded.IDENTITY_KINDS:
                embedded.apply(admin, obj)
        token = admin.request(
            "POST",
            "/api/v1/namespaces/garden/serviceaccounts/gardener-controller-manager/token",
            body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        )["status"]["token"]
        kc = yaml.safe_load(self.kubeconfig.read_text())
        kc["users"][0]["user"] = {"token": token}
        path = workdir / "gcm.kubeconfig"
        path.write_text(yaml.safe_dump(kc))
        return path

    def request_counts(self, admin: Any) -> dict[tuple[str, str, str], int]:
        text = admin.request("GET", "/metrics")
        text = text.decode() if isinstance(text, bytes) else str(text)
        out: dict[tuple[str, str, str], int] = {}
        for line in text.splitlines():
            if not line.startswith("apiserver_request_total{"):
                continue
            labels = dict(re.findall(r'(\w+)="([^"]*)"', line))
            value = float(line.rsplit(" ", 1)[1])
            key = (labels["user"], labels["verb"], labels["resource"])
            out[key] = out.get(key, 0) + int(value)
        return out

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


# --- children -------------------------------------------------------------------------------------------


def project_doc(name: str) -> dict:
    grp = "rbac.authorization.k8s.io"
    return {
        "apiVersion": P,
        "kind": "Project",
        "metadata": {"name": name},
        "spec": {
            "members": [
                {"apiGroup": grp, "kind": "User", "name": f"{name}-admin", "role": "admin"},
                {"apiGroup": grp, "kind": "User", "name": f"{name}-viewer", "role": "viewer"},
            ]
        },
    }


def create_projects(kubeconfig: Path, names: list[str], threads: int = 4) -> list[dict]:
    from framework.client import Client

    out: list[dict] = []
    lock = threading.Lock()

    def run(chunk: list[str]) -> None:
        client = Client.from_kubeconfig(kubeconfig, qps=0)
        for n in chunk:
            p = client.create(project_doc(n))
            with lock:
                out.append(p)

    ts = [threading.Thread(target=run, args=(names[i::threads],)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_gcm(n: int, syncs: int, qps: float) -> dict:
    import structlog

    from framework.client import Client
    from framework.manager import Manager
    from gcm.config import load_config
    from gcm.controllers.indexes import add_all_field_indexes
    from gcm.controllers.project import project as project_controller
    from gcm.controllers.project import resourcequota

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        try:
            admin = Client.from_kubeconfig(server.kubeconfig, qps=0)
            cfg = load_config(
                text=json.dumps(
                    {
                        "apiVersion": "controllermanager.config.gardener.cloud/v1alpha1",
                        "kind": "ControllerManagerConfiguration",
                        "leaderElection": {"leaderElect": False},
                        "controllers": {"project": {"concurrentSyncs": syncs}},
                    }
                )
            )
            kw = {"qps": qps, "burst": max(int(qps * 2), 1)} if qps else {"qps": 0}
            mgr = Manager(Client.from_kubeconfig(server.gcm_kubeconfig, **kw))
            add_all_field_indexes(mgr)
            project_controller.add_to_manager(mgr, cfg)
            resourcequota.add_to_manager(mgr, cfg)
            thread = threading.Thread(target=mgr.start, daemon=True)
            thread.start()
            while not mgr.is_leader():
                time.sleep(0.02)
            rss_idle = rss_mb()

            names = [f"b{i:04d}" for i in range(n)]
            wanted = set(names)
            ready: set[str] = set()
            all_ready = threading.Event()
            rv = admin.list(P, "Project", limit=1)["metadata"]["resourceVersion"]
            watch = admin.watch(P, "Project", resource_version=rv)

            def observe() -> None:
                for _, obj in watch:
                    meta, st = obj.get("metadata") or {}, obj.get("status") or {}
                    if st.get("phase") == "Ready" and st.get("observedGeneration") == meta.get("generation"):
                        ready.add(meta["name"])
                        if wanted <= ready:
                            all_ready.set()
                            return

            threading.Thread(target=observe, daemon=True).start()
            start = time.monotonic()
            create_projects(server.kubeconfig, names)
            created = time.monotonic() - start
            if not all_ready.wait(1800):
                raise RuntimeError(f"only {len(ready)} of {n} projects became Ready")
            elapsed = time.monotonic() - start
            watch.close()
            rss_peak = rss_mb()

            # Verify: namespace and complete RBAC for every Project.
            projects = {p["metadata"]["name"]: p for p in admin.list(P, "Project")["items"]}
            namespaces = {x["metadata"]["name"] for x in admin.list("v1", "Namespace")["items"]}
            crs = {x["metadata"]["name"] for x in admin.list(RBAC, "ClusterRole")["items"]}
            crbs = {x["metadata"]["name"] for x in admin.list(RBAC, "ClusterRoleBinding")["items"]}
            rbs = {
                (x["metadata"]["namespace"], x["metadata"]["name"])
                for x in admin.list(RBAC, "RoleBinding")["items"]
            }
            for name in names:
                ns = projects[name]["spec"]["namespace"]
                assert ns in namespaces, name
                for prefix in ("", "-uam", "-member", "-viewer"):
                    assert f"gardener.cloud:system:project{prefix}:{name}" in crs, name
                    assert f"gardener.cloud:system:project{prefix}:{name}" in crbs, name
                for rb in ("member", "viewer", "serviceaccountmanager"):
                    assert (ns, f"gardener.cloud:system:project-{rb}") in rbs, name
            time.sleep(1.0)  # let trailing event writes land before counting
            counts = server.request_counts(admin)
            mgr.stop()
            thread.join(30)
        finally:
            server.stop()
    by_verb: dict[str, int] = {}
    for (user, verb, res), v in counts.items():
        if user == GCM_USER:
            group = "events" if res.startswith("events") else verb.lower()
            by_verb[group] = by_verb.get(group, 0) + v
    return {
        "n": n,
        "syncs": syncs,
        "seconds": elapsed,
        "create_seconds": created,
        "requests_per_project": sum(by_verb.values()) / n,
        "by_verb_per_project": {k: v / n for k, v in sorted(by_verb.items())},
        "rss_idle_mb": rss_idle,
        "rss_peak_mb": rss_peak,
    }


def child_floor(n: int, threads: int) -> dict:
    import structlog

    from framework.client import Client
    from gcm.controllers.project.project.reconciler import (
        controller_reference,
        generated_namespace_name,
        project_labels,
    )
    from gcm.controllers.project.rbac import desired_objects

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        try:
            names = [f"b{i:04d}" for i in range(n)]

            def writes(creator: Any, client: Any, name: str) -> None:
                p = creator.create(project_doc(name))
                p = client.patch(
                    P,
                    "Project",
                    name,
                    {
                        "metadata": {
                            "finalizers": ["gardener"],
                            "resourceVersion": p["metadata"]["resourceVersion"],
                        }
                    },
                )
                p = client.patch(
                    P,
                    "Project",
                    name,
                    {"status": {"phase": "Pending", "observedGeneration": 1}},
                    subresource="status",
                )
                ns = generated_namespace_name(p)
                client.create(
                    {
                        "apiVersion": "v1",
                        "kind": "Namespace",
                        "metadata": {
                            "name": ns,
                            "labels": project_labels(p),
                            "annotations": {
                                "namespace.gardener.cloud/project": p["metadata"]["uid"],
                                "namespace.gardener.cloud/created-by-project-controller": "true",
                            },
                            "ownerReferences": [controller_reference(p)],
                        },
                    }
                )
                p["spec"]["namespace"] = ns
                p = client.update(p)
                for obj in desired_objects(p):
                    client.create(obj)
                client.patch(
                    P,
                    "Project",
                    name,
                    {"status": {"phase": "Ready", "observedGeneration": p["metadata"]["generation"]}},
                    subresource="status",
                )
                client.create(
                    {
                        "apiVersion": "events.k8s.io/v1",
                        "kind": "Event",
                        "metadata": {"name": f"{name}.floor", "namespace": "default"},
                        "eventTime": "2024-01-01T00:00:00.000000Z",
                        "reportingController": "project-controller",
                        "reportingInstance": "floor",
                        "action": "Reconcile",
                        "reason": "NamespaceReconcileSuccessful",
                        "type": "Normal",
                        "note": f'Successfully reconciled namespace "{ns}" for project',
                        "regarding": {
                            "apiVersion": P,
                            "kind": "Project",
                            "name": name,
                            "uid": p["metadata"]["uid"],
                        },
                    }
                )

            def run(chunk: list[str]) -> None:
                creator = Client.from_kubeconfig(server.kubeconfig, qps=0)
                client = Client.from_kubeconfig(server.gcm_kubeconfig, qps=0)
                for name in chunk:
                    writes(creator, client, name)

            start = time.monotonic()
            ts = [threading.Thread(target=run, args=(names[i::threads],)) for i in range(threads)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            elapsed = time.monotonic() - start
            admin = Client.from_kubeconfig(server.kubeconfig, qps=0)
            counts = server.request_counts(admin)
        finally:
            server.stop()
    total = sum(v for (user, _, _), v in counts.items() if user == GCM_USER)
    return {
        "n": n,
        "threads": threads,
        "seconds": elapsed,
        "requests_per_project": total / n,
        "rss_peak_mb": rss_mb(),
    }


# --- driver --------------------------------------------------------------------------------------------


def run_child(*args: str) -> dict:
    r = subprocess.run(
        [sys.executable, __file__, "--child", *args], cwd=ROOT, capture_output=True, text=True, timeout=3600
    )
    if r.returncode != 0:
        raise RuntimeError(f"child {args} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="100 Projects instead of 1,000")
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--syncs", default="5,20", help="concurrentSyncs values (comma separated)")
    p.add_argument("--qps", type=float, default=0.0, help="gcm client qps (0: unthrottled)")
    p.add_argument("--no-floor", action="store_true")
    p.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        kind, *rest = args.child
        result = (
            child_gcm(int(rest[0]), int(rest[1]), float(rest[2]))
            if kind == "gcm"
            else child_floor(int(rest[0]), int(rest[1]))
        )
        print(json.dumps(result))
        return
    n = args.n or (100 if args.quick else 1000)
    rows = []
    for s in [int(x) for x in args.syncs.split(",")]:
        r = run_child("gcm", str(n), str(s), str(args.qps))
        rows.append(
            (
                f"gcm, concurrentSyncs {s}",
                r["seconds"],
                r["requests_per_project"],
                r["rss_peak_mb"],
                ", ".join(f"{k} {v:.2f}" for k, v in r["by_verb_per_project"].items()),
            )
        )
    if not args.no_floor:
        for threads in (1, 20):
            r = run_child("floor", str(n), str(threads))
            rows.append(
                (
                    f"plain client loop, {threads} thread(s)",
                    r["seconds"],
                    r["requests_per_project"],
                    r["rss_peak_mb"],
                    "",
                )
            )
    print(f"{n} Projects created at once (4 creator threads), until all Ready with namespace and RBAC")
    print(
        f"{'variant':<34}{'seconds':>9}{'Projects/s':>12}{'req/Project':>13}{'peak RSS MB':>13}"
        "  requests by verb"
    )
    for name, secs, rpp, rss, detail in rows:
        print(f"{name:<34}{secs:>9.1f}{n / secs:>12.1f}{rpp:>13.1f}{rss:>13.0f}  {detail}")


if __name__ == "__main__":
    main()
