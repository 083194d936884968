"""Chaos and soak: gcm replicas under random faults, then an invariant checker (issue 19).

    python bench/chaos.py --seed 7 --minutes 10 --replicas 3 [--events K] [--convergence-s 180]

Starts ``python -m framework.apiserver`` (RBAC, Gardener's admission plugins, ``--fault-injection``,
``--request-log``) and ``--replicas`` real ``python -m gcm run`` processes with leader election, each
as its own ServiceAccount ``garden/gcm-<i>`` bound to gcm's RBAC from ``manifests/deploy``, so the
request log says which replica wrote what. For ``--minutes`` it interleaves a workload (Projects
created, members changed, namespaces labelled, Shoots added/removed, Projects confirmed and deleted,
trap namespaces that look almost like project namespaces, Events of all kinds) with faults chosen by
the seed (watch drops, compaction, 429/500 storms and slow responses on chosen verbs and resources
for gcm's identities only, API server SIGKILL + restart with its data, SIGKILL and SIGSTOP/SIGCONT of
the leader and of standbys, jumps of the stale controller's clock). Dead replicas are restarted as a
kubelet would. Then faults stop, gcm gets ``--convergence-s`` to converge, and the checker reads the
request log and the final state.

gcm's namespace-deletion webhook is registered (``manifests/deploy/webhook.yaml``, served by replica 0
behind the Service, a Service with one endpoint), and the workload tries to delete live Projects'
namespaces: the log must show no project namespace deleted while its Project lived. The stale clock is
moved through ``GCM_CLOCK_OFFSET_FILE`` and thread names are read through ``GCM_THREADS_FILE``
(:mod:`gcm.chaos_hooks`, off unless set): a Project deleted by gcm must be past its
``staleAutoDeleteTimestamp`` on the jumped clock, and each replica's threads at the end must be those
it had at the start in the same role (leader or standby), but for a delaying queue's timer, started
at its first delayed add.

The last line is the figure line; exit code 1 when any invariant was violated (the first violations
are printed with their request-log lines).
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from framework.client import Client, Conflict, NotFound
from framework.client.errors import APIError
from framework.meta.time import parse_time
from framework.testing.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = ROOT / "manifests"
SA_PREFIX = "system:serviceaccount:garden:gcm-"
LEASE = ("garden", "gardener-controller-manager-leader-election")
SYSTEM_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease", "garden"}
PROJECT = "core.gardener.cloud/v1beta1"
ROLE_LABEL, NAME_LABEL = "gardener.cloud/role", "project.gardener.cloud/name"
UID_ANNOTATION = "namespace.gardener.cloud/project"
QUOTA_HARD = {"count/shoots.core.gardener.cloud": "50", "count/secrets": "200"}
EVENT_TTL_S = 30
DAY = 86400.0
# Offsets of the stale clock a jump picks (days): past minimumLifetimeDays (30), then past
# staleExpirationTimeDays (90) after the stale mark, and back (a clock corrected backwards).
CLOCK_JUMPS_DAYS = [0, -1, 31, 45, 100, 130, 200, 400]
WEBHOOK_SERVICE = ("garden", "gardener-controller-manager", 443)
# What the request log records beyond who wrote what: Lease holders (which replica led), the stored
# labels of namespaces (which Project each belongs to) and a Project's stale auto-delete timestamp.
REQUEST_LOG_FIELDS = (
    "leases.coordination.k8s.io:holder=spec.holderIdentity",
    "leases.coordination.k8s.io:duration=spec.leaseDurationSeconds",
    "namespaces:labels=metadata.labels",
    "projects.core.gardener.cloud:staleAutoDelete=status.staleAutoDeleteTimestamp",
)
REQUEST_THREAD = re.compile(r"-handler_\d+$")
# A delaying queue starts its timer thread at its first add_after and keeps it for the queue's life
# (framework/workqueue/delaying_queue.py): the first one may come after the baseline, a second is a leak.
LAZY_THREAD = re.compile(r"^workqueue-delay-")
# Reads and writes gcm makes; a storm picks a few of each.
VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"]
RESOURCES = [
    "projects",
    "namespaces",
    "rolebindings",
    "clusterroles",
    "clusterrolebindings",
    "resourcequotas",
    "events",
    "leases",
    "shoots",
]


@dataclass
class Replica:
    index: int
    kubeconfig: Path
    config: Path
    log: Path
    proc: subprocess.Popen | None = None
    stopped_until: float = 0.0
    restarts: int = 0
    down_since: float | None = None
    started: float = 0.0
    probe_port: int = 0
    webhook_port: int = 0
    # Thread names of this process when first seen ready, per role ("leader" / "standby").
    baseline: dict[str, list[str]] = field(default_factory=dict)
    unready: str = ""  # the last /readyz failure seen while taking baselines

    @property
    def threads_file(self) -> Path:
        return self.log.with_suffix(".threads.json")

    @property
    def user(self) -> str:
        return f"{SA_PREFIX}{self.index}"


@dataclass
class World:
    """What the workload did, for the checker."""

    projects: dict[str, dict] = field(default_factory=dict)  # name -> {"state": live|trap|deleted, ...}
    traps: set[str] = field(default_factory=set)  # foreign namespaces gcm must never write
    shoot_events: set[tuple[str, str]] = field(default_factory=set)
    expiring_events: dict[tuple[str, str], float] = field(default_factory=dict)  # -> reference time
    clock_offsets: list[tuple[float, float]] = field(default_factory=list)  # (wall time set, offset s)
    # SIGSTOP / SIGCONT wall times per replica user (resumed = inf while still stopped).
    pauses: dict[str, list[list[float]]] = field(default_factory=dict)
    ops: int = 0
    op_errors: int = 0
    counter: int = 0


class Chaos:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.dir = Path(tempfile.mkdtemp(prefix=f"chaos-{args.seed}-"))
        self.port = free_port()
        self.webhook_port = free_port()  # replica 0 serves the webhook Service (its only endpoint)
        self.request_log = self.dir / "requests.jsonl"
        self.admin_kc = self.dir / "admin.kubeconfig"
        self.server: subprocess.Popen | None = None
        self.replicas: list[Replica] = []
        self.world = World()
        self.faults = 0
        self.violations: list[tuple[str, dict | None]] = []
        self.max_threads = 0
        self.clock_file = self.dir / "stale-clock-offset"
        self.cert_dir = self.dir / "webhook-certs"
        self.notes: list[str] = []
        self._auto_deleted_at: dict[str, float] = {}

    # -- processes --------------------------------------------------------------------------------

    def start_server(self) -> None:
        cmd = [
            sys.executable,
            "-m",
            "framework.apiserver",
            "--port",
            str(self.port),
            "--kubeconfig",
            str(self.admin_kc),
            "--data-dir",
            str(self.dir / "data"),
            "--crds",
            str(MANIFESTS / "crds"),
            "--authorization-mode",
            "RBAC",
            "--admission-plugin",
            "gcm.embedded.admission:plugins",
            "--fault-injection",
            "--request-log",
            str(self.request_log),
            *(arg for field in REQUEST_LOG_FIELDS for arg in ("--request-log-field", field)),
            "--webhook-service",
            f"{WEBHOOK_SERVICE[0]}/{WEBHOOK_SERVICE[1]}:{WEBHOOK_SERVICE[2]}=127.0.0.1:{self.webhook_port}",
        ]
        self.admin_kc.unlink(missing_ok=True)
        out = open(self.dir / "apiserver.log", "ab")  # noqa: SIM115 (the child keeps it)
        self.server = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        deadline = time.monotonic() + 120
        while not self.admin_kc.exists():
            if self.server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"chaos: the API server did not start (see {self.dir / 'apiserver.log'})")
            time.sleep(0.1)
        self.admin = Client.from_kubeconfig(self.admin_kc, qps=0)

    def bootstrap(self) -> None:
        from gcm.embedded import apply, load_documents

        a = self.admin
        apply(a, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "garden"}})
        for obj in load_documents(MANIFESTS / "global"):
            apply(a, obj)
        sas = [
            {"kind": "ServiceAccount", "name": f"gcm-{i}", "namespace": "garden"}
            for i in range(self.args.replicas)
        ]
        for obj in load_documents(MANIFESTS / "deploy"):
            if obj["kind"] not in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"):
                continue
            if "subjects" in obj:
                obj["subjects"] = sas
            apply(a, obj)
        from framework.certs import self_signed_cert

        self.cert_dir.mkdir()
        service = f"{WEBHOOK_SERVICE[1]}.{WEBHOOK_SERVICE[0]}.svc"
        _, _, ca_pem = self_signed_cert(self.cert_dir, ("127.0.0.1", "localhost", service))
        for obj in load_documents(MANIFESTS / "deploy"):
            if obj["kind"] == "ValidatingWebhookConfiguration":
                for hook in obj["webhooks"]:
                    hook["clientConfig"]["caBundle"] = base64.b64encode(ca_pem).decode()
                apply(a, obj)
        self.clock_file.write_text("0")
        self.world.clock_offsets.append((time.time(), 0.0))
        kc = yaml.safe_load(self.admin_kc.read_text())
        for i in range(self.args.replicas):
            apply(
                a,
                {
                    "apiVersion": "v1",
                    "kind": "ServiceAccount",
                    "metadata": {"name": f"gcm-{i}", "namespace": "garden"},
                },
            )
            token = a.request(
                "POST",
                f"/api/v1/namespaces/garden/serviceaccounts/gcm-{i}/token",
                body={
                    "apiVersion": "authentication.k8s.io/v1",
                    "kind": "TokenRequest",
                    "spec": {"expirationSeconds": 86400},
                },
            )["status"]["token"]
            mine = json.loads(json.dumps(kc))
            mine["users"] = [{"name": f"gcm-{i}", "user": {"token": token}}]
            mine["contexts"][0]["context"]["user"] = f"gcm-{i}"
            path = self.dir / f"gcm-{i}.kubeconfig"
            path.write_text(yaml.safe_dump(mine))
            r = Replica(i, path, self.dir / f"gcm-{i}.yaml", self.dir / f"gcm-{i}.log")
            r.probe_port = free_port()
            r.webhook_port = self.webhook_port if i == 0 else free_port()
            r.config.write_text(yaml.safe_dump(self.gcm_config(r)))
            self.replicas.append(r)

    def gcm_config(self, r: Replica) -> dict:
        return {
            "apiVersion": "controllermanager.config.gardener.cloud/v1alpha1",
            "kind": "ControllerManagerConfiguration",
            "controllers": {
                "project": {
                    "concurrentSyncs": 3,
                    "staleSyncPeriod": "20s",  # the stale reconciler runs often under the faults
                    "quotas": [
                        {
                            "projectSelector": {},
                            "config": {
                                "apiVersion": "v1",
                                "kind": "ResourceQuota",
                                "spec": {"hard": QUOTA_HARD},
                            },
                        }
                    ],
                },
                "event": {"concurrentSyncs": 3, "ttlNonShootEvents": f"{EVENT_TTL_S}s"},
            },
            "leaderElection": {
                "leaderElect": True,
                "leaseDuration": "15s",
                "renewDeadline": "10s",
                "retryPeriod": "2s",
            },
            "logLevel": "info",
            "server": {
                "healthProbes": {"bindAddress": "127.0.0.1", "port": r.probe_port},
                "metrics": {"bindAddress": "127.0.0.1", "port": free_port()},
                "webhooks": {
                    "bindAddress": "127.0.0.1",
                    "port": r.webhook_port,
                    "tls": {"serverCertDir": str(self.cert_dir)},
                },
            },
        }

    def start_replica(self, r: Replica) -> None:
        out = open(r.log, "ab")  # noqa: SIM115 (the child keeps it)
        r.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gcm",
                "run",
                "--config",
                str(r.config),
                "--kubeconfig",
                str(r.kubeconfig),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env={
                **os.environ,
                "GCM_CLOCK_OFFSET_FILE": str(self.clock_file),
                "GCM_THREADS_FILE": str(r.threads_file),
            },
        )
        r.stopped_until = 0.0
        r.down_since = None
        r.started = time.monotonic()
        r.baseline = {}

    def supervise(self) -> None:
        """Resume SIGSTOPped replicas when due; restart dead ones after a short back-off (kubelet)."""
        now = time.monotonic()
        for r in self.replicas:
            assert r.proc is not None
            if r.stopped_until and now >= r.stopped_until:
                self.resume(r)
            if r.proc.poll() is not None:
                if r.down_since is None:
                    r.down_since = now
                elif now - r.down_since >= 1.0:
                    r.restarts += 1
                    self.start_replica(r)
        if self.server is not None and self.server.poll() is not None:
            self.start_server()

    def thread_names(self, r: Replica, timeout: float = 3.0) -> list[str] | None:
        """The names of ``r``'s live threads (SIGUSR1, see gcm.chaos_hooks), None if it does not answer."""
        if r.proc is None or r.proc.poll() is not None or r.stopped_until:
            return None
        r.threads_file.unlink(missing_ok=True)
        r.proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                return json.loads(r.threads_file.read_text())
            except (OSError, ValueError):
                time.sleep(0.05)
        return None

    def ready(self, r: Replica) -> bool:
        """Whether ``r`` answers /readyz with 200; else its answer is kept in ``r.unready`` (the reason a
        role's thread baseline could not be taken, for the final note)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{r.probe_port}/readyz?verbose", timeout=2) as resp:
                return resp.status == 200
        except urllib.error.HTTPError as e:
            failed = [ln for ln in e.read().decode(errors="replace").splitlines() if ln.startswith("[-]")]
            r.unready = "; ".join(failed) or f"HTTP {e.code}"
        except (OSError, ValueError) as e:
            r.unready = f"{type(e).__name__}: {e}"
        return False

    def role(self, r: Replica) -> str:
        return "leader" if self.leader() is r else "standby"

    def take_baselines(self) -> None:
        """The first thread names of each process that is ready, per role (the start of the leak check)."""
        for r in self.replicas:
            if r.proc is None or r.stopped_until or time.monotonic() - r.started < 15:
                continue
            role = self.role(r)
            if role in r.baseline or not self.ready(r):
                continue
            names = self.thread_names(r)
            if names is None:
                r.unready = "ready, but no answer to SIGUSR1 within 3 s"
            elif self.role(r) == role:
                r.baseline[role] = names

    def leader(self) -> Replica | None:
        try:
            lease = self.admin.get("coordination.k8s.io/v1", "Lease", LEASE[1], LEASE[0])
        except APIError:
            return None
        holder = (lease.get("spec") or {}).get("holderIdentity") or ""
        for r in self.replicas:
            if r.proc is not None and r.proc.poll() is None and holder.startswith(f"{r.index}-"):
                return r
        return self._holder_replica(holder)

    def _holder_replica(self, holder: str) -> Replica | None:
        users = self.holders_to_users()
        user = users.get(holder)
        return next((r for r in self.replicas if r.user == user), None)

    def holders_to_users(self) -> dict[str, str]:
        out = {}
        for e in read_log(self.request_log):
            if e.get("holder") and e["resource"].startswith("leases.") and e["code"] < 300:
                out[e["holder"]] = e["user"]
        return out

    # -- faults -----------------------------------------------------------------------------------

    def fault(self) -> None:
        rng = self.rng
        kind = rng.choice(
            [
                "drop",
                "compact",
                "storm",
                "storm",
                "slow",
                "kill",
                "stop",
                "stop",
                "restart-apiserver",
                "clock-jump",
            ]
        )
        self.faults += 1
        if kind == "drop":
            self.control({"action": "drop-watches"})
        elif kind == "compact":
            self.control({"action": "compact"})
        elif kind in ("storm", "slow"):
            rule: dict[str, Any] = {
                "verbs": rng.sample(VERBS, rng.randint(1, 3)),
                "resources": rng.sample(RESOURCES, rng.randint(1, 3)),
                "user_prefix": SA_PREFIX,
                "seconds": rng.uniform(2, 20),
            }
            if kind == "storm":
                rule.update(action="fail", status=rng.choice([429, 500]))
                if rule["status"] == 429:
                    rule["retryAfter"] = 1
            else:
                rule.update(action="delay", delay=rng.uniform(0.2, 3.0))
            self.control(rule)
        elif kind == "clock-jump":
            self.set_clock_offset(rng.choice(CLOCK_JUMPS_DAYS) * DAY + rng.uniform(0, 3600))
        elif kind == "restart-apiserver":
            assert self.server is not None
            self.server.kill()
            self.server.wait()
            time.sleep(rng.uniform(0.5, 3))
            self.start_server()
        else:
            leader = self.leader()
            alive = [
                r
                for r in self.replicas
                if r.proc is not None and r.proc.poll() is None and not r.stopped_until
            ]
            if not alive:
                return
            target = leader if leader in alive and rng.random() < 0.6 else rng.choice(alive)
            assert target.proc is not None
            if kind == "kill":
                target.proc.kill()
            else:
                target.proc.send_signal(signal.SIGSTOP)
                target.stopped_until = time.monotonic() + rng.uniform(1, 25)
                self.world.pauses.setdefault(target.user, []).append([time.time(), math.inf])

    def resume(self, r: Replica) -> None:
        assert r.proc is not None
        r.proc.send_signal(signal.SIGCONT)
        r.stopped_until = 0.0
        pauses = self.world.pauses.get(r.user)
        if pauses and pauses[-1][1] == math.inf:
            pauses[-1][1] = time.time()

    def set_clock_offset(self, offset: float) -> None:
        """Jump the stale controller's clock of every replica (one clock, as after an NTP step)."""
        tmp = self.clock_file.with_suffix(".tmp")
        tmp.write_text(repr(offset))
        self.world.clock_offsets.append((time.time(), offset))
        tmp.replace(self.clock_file)

    def clock_offset_at(self, t: float, slack: float = 5.0) -> float:
        """The largest stale-clock offset gcm may have used at wall time ``t`` (a replica reads the file
        when it next asks the time, so a jump counts from ``slack`` seconds before ``t``)."""
        offsets = [off for at, off in self.world.clock_offsets if at <= t - slack]
        current = offsets[-1] if offsets else 0.0
        recent = [off for at, off in self.world.clock_offsets if t - slack < at <= t]
        return max([current, *recent])

    def control(self, body: dict) -> None:
        try:
            self.admin.request("POST", "/debug/faults", body=body)
        except APIError:
            pass  # the API server may be restarting: this fault is skipped

    # -- workload ---------------------------------------------------------------------------------

    def op(self) -> None:
        rng, w = self.rng, self.world
        live = [n for n, p in w.projects.items() if p["state"] == "live"]
        choice = rng.choices(
            ["create", "members", "label", "shoot", "unshoot", "delete", "trap", "event", "nsdelete"],
            weights=[4, 3, 2, 3, 2, 1.5, 1, 4, 1],
        )[0]
        if choice in ("members", "label", "shoot", "delete", "nsdelete") and not live:
            choice = "create"
        w.ops += 1
        try:
            getattr(self, f"op_{choice}")(live)
        except (APIError, OSError) as e:
            w.op_errors += 1
            if self.args.verbose:
                print(f"op {choice}: {e}", file=sys.stderr)

    def _name(self, prefix: str) -> str:
        self.world.counter += 1
        return f"{prefix}{self.world.counter}"

    def _members(self) -> list[dict]:
        users = [f"u{i}@example.com" for i in range(6)]
        return [
            {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "User",
                "name": u,
                "role": self.rng.choice(["admin", "viewer", "uam"]),
            }
            for u in self.rng.sample(users, self.rng.randint(0, 4))
        ]

    def op_create(self, _: list[str]) -> None:
        name = self._name("p")
        spec: dict[str, Any] = {"members": self._members()}
        if self.rng.random() < 0.5:
            spec["namespace"] = f"garden-{name}"
        if self.rng.random() < 0.15:  # adopt a namespace an admin pre-labelled
            ns = f"garden-{name}"
            spec["namespace"] = ns
            self.admin.create(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": ns, "labels": {ROLE_LABEL: "project", NAME_LABEL: name}},
                }
            )
        self.admin.create(
            {"apiVersion": PROJECT, "kind": "Project", "metadata": {"name": name}, "spec": spec}
        )
        self.world.projects[name] = {"state": "live", "shoots": set()}

    def op_trap(self, live: list[str]) -> None:
        """A foreign namespace that looks almost like a project namespace, and a Project pointing at it."""
        name = self._name("t")
        ns = f"garden-{name}"
        variant = self.rng.choice(["nolabels", "role-only", "other-name", "other-uid"])
        labels = {
            "nolabels": {},
            "role-only": {ROLE_LABEL: "project"},
            "other-name": {ROLE_LABEL: "project", NAME_LABEL: "someone-else"},
            "other-uid": {ROLE_LABEL: "project", NAME_LABEL: name},
        }[variant]
        annotations = (
            {UID_ANNOTATION: "0a0a0a0a-0000-4000-8000-000000000000"} if variant == "other-uid" else {}
        )
        self.admin.create(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": ns, "labels": labels, "annotations": annotations},
            }
        )
        self.world.traps.add(ns)
        self.admin.create(
            {"apiVersion": PROJECT, "kind": "Project", "metadata": {"name": name}, "spec": {"namespace": ns}}
        )
        self.world.projects[name] = {"state": "trap", "shoots": set()}

    def _update_project(self, name: str, change: Any) -> None:
        for _ in range(5):
            p = self.admin.get(PROJECT, "Project", name)
            change(p)
            try:
                self.admin.update(p)
                return
            except Conflict:
                continue

    def op_members(self, live: list[str]) -> None:
        name = self.rng.choice(live)
        members = self._members()
        self._update_project(name, lambda p: p["spec"].__setitem__("members", members))

    def op_label(self, live: list[str]) -> None:
        ns = self._namespace(self.rng.choice(live))
        if ns:
            self.admin.patch(
                "v1",
                "Namespace",
                ns,
                {"metadata": {"labels": {"chaos/touched": str(self.rng.randint(0, 9))}}},
            )

    def _namespace(self, project: str) -> str | None:
        return (self.admin.get(PROJECT, "Project", project).get("spec") or {}).get("namespace")

    def op_shoot(self, live: list[str]) -> None:
        name = self.rng.choice(live)
        ns = self._namespace(name)
        if not ns:
            return
        shoot = self._name("s")
        self.admin.create(
            {
                "apiVersion": PROJECT,
                "kind": "Shoot",
                "metadata": {
                    "name": shoot,
                    "namespace": ns,
                    "annotations": {"confirmation.gardener.cloud/deletion": "true"},
                },
                "spec": {},
            }
        )
        self.world.projects[name]["shoots"].add((ns, shoot))

    def op_unshoot(self, live: list[str]) -> None:
        with_shoots = [n for n, p in self.world.projects.items() if p["shoots"]]
        if with_shoots:
            p = self.world.projects[self.rng.choice(with_shoots)]
            ns, shoot = sorted(p["shoots"])[0]
            self._delete(PROJECT, "Shoot", shoot, ns)
            p["shoots"].discard((ns, shoot))

    def _delete(self, api_version: str, kind: str, name: str, ns: str | None = None) -> None:
        try:
            self.admin.delete(api_version, kind, name, ns)
        except NotFound:
            pass

    def op_delete(self, live: list[str]) -> None:
        candidates = live + [n for n, p in self.world.projects.items() if p["state"] == "trap"]
        name = self.rng.choice(candidates)
        self.admin.patch(
            PROJECT,
            "Project",
            name,
            {"metadata": {"annotations": {"confirmation.gardener.cloud/deletion": "true"}}},
        )
        self.world.projects[name]["state"] = "deleted"
        self.world.projects[name]["deleted_at"] = time.time()
        self._delete(PROJECT, "Project", name)
        # Its Shoots go later: until then the deletion waits (Terminating), as in a real garden.
        self.world.projects[name]["delete_shoots_at"] = time.monotonic() + self.rng.uniform(0, 20)

    def op_nsdelete(self, live: list[str]) -> None:
        """An admin deletes a live Project's namespace directly: the webhook must refuse it."""
        name = self.rng.choice(live)
        ns = self._namespace(name)
        if not ns or ns in self.world.traps:
            return
        try:
            self.admin.delete("v1", "Namespace", ns)
        except NotFound:
            return  # the Project controller has not created it yet
        except APIError as e:
            if e.status == 403:
                return  # refused by the webhook (the request log shows it)
            raise
        # Allowed: the checker flags it (the webhook was down and let it through, or allowed it wrongly).

    def reap_shoots(self) -> None:
        for p in self.world.projects.values():
            due = p.get("delete_shoots_at")
            if due is not None and time.monotonic() >= due:
                try:
                    for ns, shoot in sorted(p["shoots"]):
                        self._delete(PROJECT, "Shoot", shoot, ns)
                        p["shoots"].discard((ns, shoot))
                except (APIError, OSError):
                    continue  # next pass
                p.pop("delete_shoots_at")

    def op_event(self, live: list[str]) -> None:
        ns = self.rng.choice([self._namespace(n) for n in live[:3]] + ["default"]) if live else "default"
        ns = ns or "default"
        name = self._name("e")
        age = self.rng.choice([0, 0, 5, 7200])  # seconds; 7200: already expired
        ref = time.time() - age
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ref))
        kind = self.rng.choice(["Shoot", "Project", "Namespace", "none"])
        regarding = {
            "Shoot": {"apiVersion": PROJECT, "kind": "Shoot", "name": "x", "namespace": ns},
            "Project": {"apiVersion": PROJECT, "kind": "Project", "name": "x"},
            "Namespace": {"apiVersion": "v1", "kind": "Namespace", "name": ns},
            "none": None,
        }[kind]
        if self.rng.random() < 0.5:
            ev: dict[str, Any] = {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": ns},
                "eventTime": stamp + ".000000Z",
                "reportingController": "chaos",
                "reportingInstance": "chaos-1",
                "action": "Test",
                "reason": "Chaos",
                "type": "Normal",
            }
            if regarding:
                ev["regarding"] = regarding
        else:
            ev = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": ns},
                "involvedObject": {**(regarding or {}), "namespace": ns},
                "firstTimestamp": stamp + "Z",
                "lastTimestamp": stamp + "Z",
                "count": 1,
                "reason": "Chaos",
                "type": "Normal",
                "source": {"component": "chaos"},
            }
        self.admin.create(ev)
        key = (ns, name)
        if kind == "Shoot":
            self.world.shoot_events.add(key)
        else:
            self.world.expiring_events[key] = float(int(ref))

    # -- run --------------------------------------------------------------------------------------

    def run(self) -> int:
        args = self.args
        try:
            self.start_server()
            self.bootstrap()
            for r in self.replicas:
                self.start_replica(r)
            end = time.monotonic() + args.minutes * 60
            next_fault = time.monotonic() + self.rng.uniform(5, 15)
            next_baseline = time.monotonic() + 15
            events_left = args.events
            while time.monotonic() < end:
                self.supervise()
                if time.monotonic() >= next_baseline:
                    # Not from the seeded generator: the workload and the faults stay as the seed says.
                    self.take_baselines()
                    next_baseline = time.monotonic() + 5
                self.reap_shoots()
                if time.monotonic() >= next_fault:
                    self.fault()
                    next_fault = time.monotonic() + self.rng.expovariate(1 / args.fault_interval)
                self.op()
                if events_left:
                    for _ in range(min(events_left, 3)):
                        self.op_event([])
                    events_left = max(0, events_left - 3)
                time.sleep(self.rng.uniform(0.05, 0.5))
            return self.finish()
        finally:
            self.teardown()

    def finish(self) -> int:
        self.control({"action": "clear"})
        self.set_clock_offset(0.0)
        for r in self.replicas:
            if r.stopped_until and r.proc is not None:
                self.resume(r)
        for p in self.world.projects.values():
            p["delete_shoots_at"] = 0.0
        self.reap_shoots()
        quiet = time.monotonic()
        converged_at: float | None = None
        unconverged: list[str] = []
        while time.monotonic() - quiet < self.args.convergence_s:
            self.supervise()
            try:
                unconverged = self.check_state()
            except (APIError, OSError) as e:
                unconverged = [f"cannot read state: {e}"]
            if not unconverged:
                converged_at = time.monotonic()
                break
            time.sleep(2)
        max_conv = (converged_at - quiet) if converged_at is not None else float(self.args.convergence_s)
        for u in unconverged:
            self.violations.append((f"unconverged: {u}", None))
        self.check_replicas()
        writes = self.check_log()
        for text, entry in self.violations[:10]:
            print(f"VIOLATION {text}" + (f"\n    {json.dumps(entry)}" if entry else ""))
        for note in self.notes:
            print(f"NOTE {note}")
        n_viol = sum(1 for t, _ in self.violations if not t.startswith("unconverged"))
        print(
            f"workload ops={self.world.ops} op_errors={self.world.op_errors} "
            f"projects={len(self.world.projects)} "
            f"restarts={sum(r.restarts for r in self.replicas)} max_threads={self.max_threads} dir={self.dir}"
        )
        print(
            f"chaos seed={self.args.seed} minutes={self.args.minutes:g} faults={self.faults} writes={writes} "
            f"violations={n_viol} unconverged={len(unconverged)} max_convergence_s={max_conv:.1f}"
        )
        return 1 if self.violations else 0

    def teardown(self) -> None:
        for r in self.replicas:
            if r.proc is not None and r.proc.poll() is None:
                r.proc.send_signal(signal.SIGCONT)
                r.proc.terminate()
        for r in self.replicas:
            if r.proc is not None:
                try:
                    r.proc.wait(20)
                except subprocess.TimeoutExpired:
                    r.proc.kill()
                    r.proc.wait()
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(20)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()

    # -- checks -----------------------------------------------------------------------------------

    def check_state(self) -> list[str]:
        """What has not converged yet (empty: everything has)."""
        a, bad = self.admin, []
        projects = {p["metadata"]["name"]: p for p in a.list(PROJECT, "Project")["items"]}
        auto_deleted = self.auto_deleted()
        for name, want in self.world.projects.items():
            p = projects.get(name)
            if want["state"] == "deleted" or name in auto_deleted:
                if p is not None:
                    bad.append(f"project {name} not gone (phase {(p.get('status') or {}).get('phase')})")
                continue
            if p is None:
                bad.append(f"project {name} missing")
                continue
            status = p.get("status") or {}
            phase = "Failed" if want["state"] == "trap" else "Ready"
            if status.get("phase") != phase or status.get("observedGeneration") != p["metadata"].get(
                "generation"
            ):
                bad.append(
                    f"project {name}: phase {status.get('phase')} (want {phase}), observedGeneration "
                    f"{status.get('observedGeneration')} of {p['metadata'].get('generation')}"
                )
                continue
            if want["state"] == "live":
                bad += self._check_project_objects(p)
        events = {
            (e["metadata"]["namespace"], e["metadata"]["name"])
            for e in a.list("events.k8s.io/v1", "Event")["items"]
        }
        now = time.time()
        # Events go with their namespace (a deleted Project's): only gcm's own deletes count, and those
        # the request log shows (check_log).
        live_namespaces = {
            n["metadata"]["name"]
            for n in a.list("v1", "Namespace")["items"]
            if not n["metadata"].get("deletionTimestamp")
        }
        for key in self.world.shoot_events - events:
            if key[0] in live_namespaces:
                bad.append(f"shoot event {key[0]}/{key[1]} gone")
        for key, ref in self.world.expiring_events.items():
            if key in events and ref + EVENT_TTL_S < now - 1:
                bad.append(f"expired event {key[0]}/{key[1]} still there")
        return bad

    def auto_deleted(self) -> set[str]:
        """Projects gcm deleted (the stale controller, after a clock jump)."""
        return {
            e["name"]
            for e in read_log(self.request_log)
            if e["user"].startswith(SA_PREFIX)
            and e["resource"] == "projects.core.gardener.cloud"
            and e["verb"] == "delete"
            and e["code"] < 300
        }

    def _check_project_objects(self, p: dict) -> list[str]:
        a, name, spec = self.admin, p["metadata"]["name"], p.get("spec") or {}
        ns_name = spec.get("namespace")
        try:
            ns = a.get("v1", "Namespace", ns_name)
        except NotFound:
            return [f"project {name}: namespace {ns_name} missing"]
        labels = ns["metadata"].get("labels") or {}
        if labels.get(ROLE_LABEL) != "project" or labels.get(NAME_LABEL) != name:
            return [f"project {name}: namespace {ns_name} lacks the project labels"]
        members = spec.get("members") or []

        def subjects(roles: set[str]) -> list[tuple[str, str]]:
            out: list[tuple[str, str]] = []
            for m in members:
                if {m.get("role"), *(m.get("roles") or [])} & roles:
                    s = (m.get("kind", ""), m.get("name", ""))
                    if s not in out:
                        out.append(s)
            return out

        bad = []
        for rb, roles in (
            ("gardener.cloud:system:project-member", {"admin", "owner"}),
            ("gardener.cloud:system:project-viewer", {"viewer"}),
        ):
            try:
                got = a.get("rbac.authorization.k8s.io/v1", "RoleBinding", rb, ns_name)
            except NotFound:
                bad.append(f"project {name}: RoleBinding {ns_name}/{rb} missing")
                continue
            have = [(s.get("kind", ""), s.get("name", "")) for s in got.get("subjects") or []]
            if have != subjects(roles):
                bad.append(f"project {name}: RoleBinding {rb} subjects {have}, want {subjects(roles)}")
        try:
            uam = a.get(
                "rbac.authorization.k8s.io/v1",
                "ClusterRoleBinding",
                f"gardener.cloud:system:project-uam:{name}",
            )
            have = [(s.get("kind", ""), s.get("name", "")) for s in uam.get("subjects") or []]
            if have != subjects({"uam"}):
                bad.append(f"project {name}: uam subjects {have}, want {subjects({'uam'})}")
        except NotFound:
            bad.append(f"project {name}: uam ClusterRoleBinding missing")
        try:
            quota = a.get("v1", "ResourceQuota", "gardener", ns_name)
            if set((quota.get("spec") or {}).get("hard") or {}) != set(QUOTA_HARD):
                bad.append(f"project {name}: quota hard {quota['spec'].get('hard')}")
        except NotFound:
            bad.append(f"project {name}: quota missing")
        return bad

    def check_replicas(self) -> None:
        for r in self.replicas:
            assert r.proc is not None
            if r.proc.poll() is not None:
                # Died during convergence and not yet restarted: restarting is the kubelet's job.
                self.supervise()
                time.sleep(1.5)
                self.supervise()
            try:
                status = Path(f"/proc/{r.proc.pid}/status").read_text()
                threads = int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("Threads:")))
            except (OSError, StopIteration, ValueError):
                self.violations.append((f"replica gcm-{r.index} not alive at the end", None))
                continue
            self.max_threads = max(self.max_threads, threads)
            if threads > self.args.max_threads:
                self.violations.append(
                    (f"replica gcm-{r.index}: {threads} threads (> {self.args.max_threads})", None)
                )
            self.check_thread_names(r)

    def check_thread_names(self, r: Replica) -> None:
        """Threads at the end against the start of this process in the same role: one more of a name
        is a leak; one fewer is a thread that ended (noted, it may have finished its job)."""
        role = self.role(r)
        start = r.baseline.get(role)
        if start is None:  # restarted late, or never seen ready in this role: another replica's
            start = next((o.baseline[role] for o in self.replicas if role in o.baseline), None)
        end = self.thread_names(r)
        if start is None or end is None:
            missing = (
                f"never seen ready in this role; last /readyz failure: {r.unready or 'none seen'}"
                if start is None
                else "no answer to SIGUSR1"
            )
            self.notes.append(f"gcm-{r.index} ({role}): no thread names to compare ({missing})")
            return
        ended, started = Counter(lasting(end)), Counter(lasting(start))
        extra, gone = ended - started, Counter(start) - Counter(end)
        for name in [n for n in extra if LAZY_THREAD.match(n) and ended[n] == 1]:
            del extra[name]  # started late, once
        if extra:
            self.violations.append(
                (
                    f"replica gcm-{r.index} ({role}): threads not there at the start: "
                    f"{sorted(extra.elements())}",
                    None,
                )
            )
        if gone:
            self.notes.append(
                f"gcm-{r.index} ({role}): threads ended since the start: {sorted(gone.elements())}"
            )

    def check_log(self) -> int:
        """Invariants over the request log; returns how many writes gcm made."""
        entries = sorted(read_log(self.request_log), key=lambda e: e["t"])
        holder_user: dict[str, str] = {}
        for e in entries:
            if e.get("holder") and e["resource"].startswith("leases.") and e["code"] < 300:
                holder_user.setdefault(e["holder"], e["user"])
        # Project namespaces: which Project (by the stored labels) each namespace belongs to.
        ns_project: dict[str, str] = {}
        self._auto_deleted_at = {}
        self._stamps: dict[str, str | None] = {}  # Project -> staleAutoDeleteTimestamp as last answered
        for e in entries:
            if (
                e["user"].startswith(SA_PREFIX)
                and e["resource"] == "projects.core.gardener.cloud"
                and e["verb"] == "delete"
                and e["code"] < 300
            ):
                self._auto_deleted_at.setdefault(e["name"], e["t"])
        lease_user: str | None = None  # who holds the lease (as of the log so far)
        valid_until = 0.0
        last_valid: dict[str, float] = {}  # user -> end of the last lease term it held
        writes = 0
        for e in entries:
            user = e["user"]
            res = e["resource"].split("/")[0]
            if res == "leases.coordination.k8s.io" and (e["ns"], e["name"]) == LEASE:
                if e["code"] < 300:
                    holder = e.get("holder") or ""
                    lease_user = holder_user.get(holder) if holder else None
                    valid_until = e["end"] + float(e.get("duration") or 0) if holder else 0.0
                    if lease_user:
                        last_valid[lease_user] = valid_until
                continue
            if res == "namespaces" and e["code"] < 300:
                labels = e.get("labels") or {}
                if labels.get(ROLE_LABEL) == "project" and labels.get(NAME_LABEL):
                    ns_project[e["name"]] = labels[NAME_LABEL]
                if e["verb"] == "delete" and e["name"] not in self.world.traps:
                    self._check_namespace_delete(e, ns_project.get(e["name"]))
            if res == "projects.core.gardener.cloud" and e["code"] < 300 and "staleAutoDelete" in e:
                self._stamps[e["name"]] = e["staleAutoDelete"]  # as stored after this write
            if not user.startswith(SA_PREFIX) or res.endswith("reviews.authorization.k8s.io"):
                continue
            writes += 1
            late = None
            if lease_user != user:
                late = f"{user} wrote while {lease_user} held the lease"
            elif e["t"] > valid_until:
                late = f"{user} wrote {e['t'] - valid_until:.1f}s after its lease expired"
            if late and e["code"] >= 300 and self.paused_in_flight(user, last_valid.get(user, 0.0), e["t"]):
                # Passed the lease check in time, then the process was stopped before the request
                # reached the server; it was refused, so nothing was written. No client can close this
                # window (client-go's leader election has it too: the API server does not fence).
                self.notes.append(f"{late}, refused with {e['code']} (paused in flight): {json.dumps(e)}")
            elif late:
                self.violations.append((late, e))
            if e["code"] >= 300:
                continue  # refused: nothing was written (the leader check above counts attempts)
            if res == "namespaces" and (e["name"] in self.world.traps or e["name"] in SYSTEM_NAMESPACES):
                self.violations.append((f"{user} {e['verb']} on foreign namespace {e['name']}", e))
            if res == "events" or res == "events.events.k8s.io":
                if e["verb"] == "delete" and (e["ns"], e["name"]) in self.world.shoot_events:
                    self.violations.append((f"{user} deleted Shoot event {e['ns']}/{e['name']}", e))
                ref = self.world.expiring_events.get((e["ns"], e["name"]))
                if e["verb"] == "delete" and ref is not None and e["t"] < ref + EVENT_TTL_S - 1:
                    self.violations.append((f"{user} deleted event {e['name']} before its TTL", e))
            if res == "projects.core.gardener.cloud" and e["verb"] == "delete":
                self._check_auto_delete(e)
        return writes

    def paused_in_flight(self, user: str, term_end: float, t: float) -> bool:
        """Whether ``user`` was SIGSTOPped before its lease term ended (``term_end``) and resumed by
        ``t``: a request it sent then may reach the server after the term although it passed the
        lease check before the renew deadline."""
        return any(
            stopped <= term_end and t - 60 <= stopped and resumed <= t + 1
            for stopped, resumed in self.world.pauses.get(user, [])
        )

    def _check_namespace_delete(self, e: dict, project: str | None) -> None:
        """No project namespace deleted while its Project lives (not yet deleted by the workload)."""
        want = self.world.projects.get(project or "")
        if want is None or e["name"] in self.world.traps:
            return
        gone_at = [t for t in (want.get("deleted_at"), self._auto_deleted_at.get(project or "")) if t]
        if not gone_at or e["t"] < min(gone_at):
            self.violations.append(
                (f"{e['user']} deleted namespace {e['name']} while Project {project} lived", e)
            )

    def _check_auto_delete(self, e: dict) -> None:
        """A Project gcm deleted must be past its staleAutoDeleteTimestamp on the (jumped) stale clock."""
        # A delete that removed the Project at once answers a Status, which carries no timestamp: the
        # stored one is then the last a write answered (only gcm writes it, and every write is logged).
        stamp = e["staleAutoDelete"] if "staleAutoDelete" in e else self._stamps.get(e["name"])
        if not stamp:
            self.violations.append(
                (f"{e['user']} deleted Project {e['name']} without an auto-delete timestamp", e)
            )
            return
        due = parse_time(stamp)
        if due is None:
            self.violations.append((f"Project {e['name']}: auto-delete timestamp {stamp!r} unreadable", e))
            return
        early = due.timestamp() - (e["t"] + self.clock_offset_at(e["t"]))
        if early > 0:
            self.violations.append(
                (
                    f"{e['user']} deleted Project {e['name']} {early:.0f}s before its auto-delete timestamp",
                    e,
                )
            )


def lasting(names: list[str]) -> list[str]:
    """Thread names without the HTTP servers' per-request threads (``<server>-handler_<n>``), which
    come and go with the requests being served at the moment of the snapshot."""
    return [n for n in names if not REQUEST_THREAD.search(n)]


def read_log(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    with open(path, "rb") as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a line cut short by SIGKILL of the API server
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/chaos.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--minutes", type=float, default=1.0)
    p.add_argument("--replicas", type=int, default=3)
    p.add_argument("--events", type=int, default=0, help="extra Events created at the start (default 0)")
    p.add_argument("--fault-interval", type=float, default=6.0, help="mean seconds between faults")
    p.add_argument("--convergence-s", type=float, default=180.0, help="convergence bound after the workload")
    p.add_argument(
        "--max-threads", type=int, default=200, help="a replica with more threads at the end leaks"
    )
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args(argv)
    if args.replicas < 1 or args.minutes <= 0:
        p.error("--replicas must be >= 1 and --minutes > 0")
    return Chaos(args).run()


if __name__ == "__main__":
    sys.exit(main())
