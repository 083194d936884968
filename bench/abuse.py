"""Replay the attacks of issue 31 against a running ``gcm --embedded`` and judge each by kube-apiserver.

    .venv/bin/python bench/abuse.py                    # starts its own gcm --embedded --embedded-ephemeral
    .venv/bin/python bench/abuse.py --quick            # CI sizes (a 5-level alias bomb; about a minute)
    .venv/bin/python bench/abuse.py --only yaml-alias-bomb,deep-nesting-shoot
    .venv/bin/python bench/abuse.py --kubeconfig .gcm/kubeconfig [--gcm-pid PID] [--webhook 127.0.0.1:2721]

An attacker holds a project member's credentials (a ServiceAccount made ``admin`` and
``serviceaccountmanager`` member of the Project ``abuse``) or, for the RBAC probes, a ServiceAccount
with only ``create clusterroles`` and ``create rolebindings``, or gcm's own ServiceAccount token. All
traffic stays on 127.0.0.1; every request has a client timeout and every wait a bound.

Each attack prints one line, ``PASS|FAIL <attack>: <observed> (expected <kube-apiserver's answer>)``,
then ``N passed, M failed``; the exit code is 1 on any failure. An attack passes only when the server
answered as kube-apiserver does *and* gcm is still well afterwards: its process alive, its Lease
``garden/gardener-controller-manager-leader-election`` held by the same holder with a ``renewTime``
that advances, and a new Project reaching ``Ready``. When gcm is not well after an attack (or died), a
gcm this script started is restarted from scratch, so the next attack meets a healthy one.

The two slow probes (an idle TLS connection to the API server, a slowloris against gcm's webhook
server) run in the background from the start and are judged at the end.
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import structlog
import urllib3
import yaml
from kubernetes import client as k8s

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from framework.testing.ports import free_offset  # noqa: E402

log = structlog.get_logger("bench.abuse")

CORE = "core.gardener.cloud"
CORE_V = f"{CORE}/v1beta1"
LEASE = ("garden", "gardener-controller-manager-leader-election")
GCM_SA = ("garden", "gardener-controller-manager")
GCM_ROLE = "gardener.cloud:system:controller-manager"
PROJECT = "abuse"
PROJECT_NS = f"garden-{PROJECT}"
USERS_NS = "abuse-users"  # the attackers' ServiceAccounts live outside the project
MEMBER = "member"
ESCALATOR = "escalator"
CONFIRM = {"confirmation.gardener.cloud/deletion": "true"}
# gcm --embedded's default ports, moved together by --embedded-port-offset.
EMBEDDED_PORTS = {"apiserver": 6443, "probes": 2718, "metrics": 2719, "webhook": 2721}
# kube-apiserver's http.Server (k8s.io/apiserver secure_serving.go) and controller-runtime's webhook
# server: ReadHeaderTimeout 32 s (also the TLS handshake bound), IdleTimeout 90 s between requests.
READ_HEADER_TIMEOUT_S = 32.0
# gcm's defaults but for a Lease renewed every 0.5 s instead of 2 s: the check after each attack waits
# for the next renewal.
GCM_CONFIG = {
    "apiVersion": "controllermanager.config.gardener.cloud/v1alpha1",
    "kind": "ControllerManagerConfiguration",
    "leaderElection": {"leaderElect": True, "retryPeriod": "500ms"},
}
IDLE_TIMEOUT_S = 90.0


@dataclass(frozen=True)
class Sizes:
    """How big each attack is; ``QUICK`` keeps every defect visible at CI cost."""

    alias_levels: int  # the bomb expands to 10**levels scalars; kube refuses from 4 levels on
    answer_timeout: float  # "at once": a client timeout on every attack request
    grace: float  # added to kube's connection timeouts before a connection counts as never closed
    keepalive_idle: bool  # also wait out kube's 90 s IdleTimeout on a connection that made a request
    reconcile_timeout: float  # a new Project must be Ready within this after each attack
    lease_timeout: float  # the Lease's renewTime must advance within this


FULL = Sizes(8, 10.0, 10.0, True, 30.0, 20.0)
QUICK = Sizes(5, 10.0, 8.0, False, 15.0, 10.0)


# -- HTTP ---------------------------------------------------------------------------------------------


@dataclass
class Answer:
    """One HTTP exchange as the client saw it (``status`` None: no answer, ``error`` says why)."""

    status: int | None
    body: bytes = b""
    content_type: str = ""
    seconds: float = 0.0
    error: str = ""

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError):
            return None

    @property
    def message(self) -> str:
        doc = self.json() if self.content_type.startswith("application/json") else None
        if isinstance(doc, dict) and doc.get("kind") == "Status":
            return str(doc.get("message", ""))
        return self.body[:120].decode(errors="replace").strip()

    def __str__(self) -> str:
        if self.status is None:
            return f"no answer ({self.error})"
        if self.status < 300:
            return str(self.status)
        return f"{self.status} {self.message[:100]!r}"


class Identity:
    """Who attacks (or observes): a bearer token against the API server, raw and through the client."""

    def __init__(self, name: str, url: str, ca_file: str, token: str) -> None:
        self.name = name
        self.url = url
        self.ca_file = ca_file
        self.token = token
        self.http = urllib3.PoolManager(ca_certs=ca_file, retries=False, maxsize=4)
        cfg = k8s.Configuration()
        cfg.host = url
        cfg.ssl_ca_cert = ca_file
        cfg.api_key = {"authorization": f"Bearer {token}"}
        cfg.retries = False
        self.api = k8s.ApiClient(cfg)

    def raw(
        self,
        method: str,
        path: str,
        body: bytes | str | dict | None = None,
        content_type: str = "application/json",
        timeout: float = 10.0,
    ) -> Answer:
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
            if isinstance(body, dict):
                body = json.dumps(body)
        start = time.monotonic()
        try:
            r = self.http.request(method, self.url + path, body=body, headers=headers, timeout=timeout)
        except urllib3.exceptions.HTTPError as e:
            reason = getattr(e, "reason", None) or e  # ProtocolError/MaxRetryError wrap the socket error
            error = f"{type(e).__name__}: {str(reason)[:80]}"
            return Answer(None, seconds=time.monotonic() - start, error=error)
        return Answer(r.status, r.data, r.headers.get("Content-Type", ""), time.monotonic() - start)

    def close(self) -> None:
        self.http.clear()
        self.api.close()


def status_of(call: Callable[[], Any]) -> tuple[int | None, Any]:
    """Run a ``kubernetes`` client call: (200 for any success, else the error status or None; the
    result or the error's body)."""
    try:
        return 200, call()
    except k8s.ApiException as e:
        return e.status, e.body
    except urllib3.exceptions.HTTPError as e:
        return None, type(e).__name__


def lists(answer: Answer, name: str) -> bool:
    """Whether a LIST answer names an object ``name`` (read as text: items may nest too deep to parse)."""
    return re.search(rb'"name":\s*"' + re.escape(name.encode()) + rb'"', answer.body) is not None


def nest(depth: int) -> str:
    return "[" * depth + "]" * depth


def apiserver_address(url: str) -> tuple[str, int]:
    host, _, port = url.removeprefix("https://").rpartition(":")
    return host.strip("[]"), int(port)


# -- gcm under attack ---------------------------------------------------------------------------------


class Garden:
    """The gcm under attack: one this script starts (``gcm --embedded --embedded-ephemeral`` in a
    temporary directory) or one already running (``kubeconfig``); the attackers' identities in it."""

    def __init__(
        self,
        sizes: Sizes,
        kubeconfig: str | None = None,
        gcm_pid: int | None = None,
        webhook: str | None = None,
        workdir: Path | None = None,
    ) -> None:
        self.sizes = sizes
        self.external = kubeconfig
        self.gcm_pid = gcm_pid
        self.dir = workdir or Path(tempfile.mkdtemp(prefix="abuse-"))
        self.proc: subprocess.Popen | None = None
        self.generation = 0  # counts (re)starts: a background probe measured across one is void
        self.webhook = webhook or ""
        self.url = ""
        self.ca_file = ""
        self.identities: list[Identity] = []
        self.holder = ""
        self.restarts = 0

    # -- lifecycle

    def start(self) -> Garden:
        if self.external:
            kc = yaml.safe_load(Path(self.external).read_text())
            self.webhook = self.webhook or f"127.0.0.1:{EMBEDDED_PORTS['webhook']}"
        else:
            kc = self._spawn()
        self.generation += 1
        cluster = kc["clusters"][0]["cluster"]
        self.url = cluster["server"]
        if cluster.get("certificate-authority-data"):
            ca = self.dir / "ca.crt"
            ca.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
            self.ca_file = str(ca)
        else:
            self.ca_file = cluster["certificate-authority"]
        self.admin = self._identity("admin", kc["users"][0]["user"]["token"])
        self._setup()
        return self

    def _spawn(self) -> dict:
        offset = free_offset(EMBEDDED_PORTS.values())
        self.webhook = f"127.0.0.1:{EMBEDDED_PORTS['webhook'] + offset}"
        home = self.dir / f"gcm-{self.generation}"
        home.mkdir()
        kubeconfig = home / "kubeconfig"
        self.log_path = home / "gcm.log"
        config = home / "config.yaml"
        config.write_text(yaml.safe_dump(GCM_CONFIG))
        self.proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "gcm", "--embedded", "--embedded-ephemeral"),
                *("--embedded-port-offset", str(offset), "--embedded-data-dir", str(home / "data")),
                *("--embedded-kubeconfig", str(kubeconfig), "--config", str(config)),
            ],
            cwd=home,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=self.log_path.open("wb"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 90
        while not self._ready_line():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"bench/abuse.py: gcm --embedded did not start (see {self.log_path})")
            time.sleep(0.2)
        log.info("gcm --embedded started", pid=self.proc.pid, log=str(self.log_path))
        return yaml.safe_load(kubeconfig.read_text())

    def _ready_line(self) -> bool:
        for line in self.log_path.read_text(errors="replace").splitlines():
            if '"gcm --embedded ready"' in line:
                return True
        return False

    def stop(self, graceful: bool = True) -> None:
        for ident in self.identities:
            ident.close()
        self.identities = []
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM if graceful else signal.SIGKILL)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def restart(self, why: str) -> bool:
        """Start a fresh gcm after one that is not well (only one this script started)."""
        if self.external:
            return False
        log.warning("restarting gcm --embedded", reason=why)
        self.stop(graceful=False)  # it is not well: it may not drain either
        self.restarts += 1
        self.start()
        return True

    def _identity(self, name: str, token: str) -> Identity:
        ident = Identity(name, self.url, self.ca_file, token)
        self.identities.append(ident)
        return ident

    def token(self, namespace: str, sa: str, seconds: int = 3600) -> str:
        body = k8s.AuthenticationV1TokenRequest(
            spec=k8s.V1TokenRequestSpec(audiences=[], expiration_seconds=seconds)
        )
        req = k8s.CoreV1Api(self.admin.api).create_namespaced_service_account_token(
            sa, namespace, body, _request_timeout=10
        )
        assert req.status is not None and req.status.token
        return req.status.token

    def _setup(self) -> None:
        """The attackers: ServiceAccounts in ``abuse-users``, one a member of Project ``abuse``."""
        core, rbac = k8s.CoreV1Api(self.admin.api), k8s.RbacAuthorizationV1Api(self.admin.api)
        meta = k8s.V1ObjectMeta
        _ensure(
            lambda: core.create_namespace(k8s.V1Namespace(metadata=meta(name=USERS_NS)), _request_timeout=10)
        )
        for sa in (MEMBER, ESCALATOR):
            account = k8s.V1ServiceAccount(metadata=meta(name=sa))
            _ensure(
                functools.partial(
                    core.create_namespaced_service_account, USERS_NS, account, _request_timeout=10
                )
            )
        # The escalation probe's principal: create clusterroles and rolebindings, nothing else.
        role = f"abuse:{ESCALATOR}"
        rule = k8s.V1PolicyRule(
            api_groups=["rbac.authorization.k8s.io"],
            resources=["clusterroles", "rolebindings"],
            verbs=["create"],
        )
        _ensure(
            lambda: rbac.create_cluster_role(
                k8s.V1ClusterRole(metadata=meta(name=role), rules=[rule]), _request_timeout=10
            )
        )
        binding = k8s.V1ClusterRoleBinding(
            metadata=meta(name=role),
            role_ref=k8s.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=role),
            subjects=[k8s.RbacV1Subject(kind="ServiceAccount", name=ESCALATOR, namespace=USERS_NS)],
        )
        _ensure(lambda: rbac.create_cluster_role_binding(binding, _request_timeout=10))
        member: dict[str, Any] = {"kind": "ServiceAccount", "name": MEMBER, "namespace": USERS_NS}
        member |= {"role": "admin", "roles": ["serviceaccountmanager"]}
        _ensure(
            lambda: k8s.CustomObjectsApi(self.admin.api).create_cluster_custom_object(
                CORE,
                "v1beta1",
                "projects",
                {
                    "apiVersion": CORE_V,
                    "kind": "Project",
                    "metadata": {"name": PROJECT},
                    "spec": {"namespace": PROJECT_NS, "members": [member]},
                },
                _request_timeout=10,
            )
        )
        self.member = self._identity("member", self.token(USERS_NS, MEMBER))
        self.escalator = self._identity("escalator", self.token(USERS_NS, ESCALATOR))
        self.gcm = self._identity("gcm", self.token(*GCM_SA))
        deadline = time.monotonic() + self.sizes.reconcile_timeout
        while self.member.raw("GET", f"/api/v1/namespaces/{PROJECT_NS}/configmaps").status != 200:
            if time.monotonic() > deadline:
                raise SystemExit(f"bench/abuse.py: Project {PROJECT}'s member has no access to {PROJECT_NS}")
            time.sleep(0.2)
        kc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "gcm", "cluster": {"server": self.url, "certificate-authority": self.ca_file}}
            ],
            "users": [{"name": MEMBER, "user": {"token": self.member.token}}],
            "contexts": [{"name": MEMBER, "context": {"cluster": "gcm", "user": MEMBER}}],
            "current-context": MEMBER,
        }
        self.member_kubeconfig = self.dir / f"member-{self.generation}.kubeconfig"
        self.member_kubeconfig.write_text(yaml.safe_dump(kc))
        self.member_kubeconfig.chmod(0o600)
        self.holder = self.lease()[0]

    # -- is gcm well?

    def alive(self) -> str:
        """'' while gcm's process runs, else what became of it."""
        if self.proc is not None:
            code = self.proc.poll()
            return "" if code is None else f"gcm exited with code {code}"
        if self.gcm_pid is not None:
            try:
                os.kill(self.gcm_pid, 0)
            except ProcessLookupError:
                return f"gcm (pid {self.gcm_pid}) is gone"
        return ""

    def lease(self, timeout: float = 5.0) -> tuple[str, datetime | None]:
        got = k8s.CoordinationV1Api(self.admin.api).read_namespaced_lease(
            LEASE[1], LEASE[0], _request_timeout=timeout
        )
        spec = got.spec or k8s.V1LeaseSpec()
        return spec.holder_identity or "", spec.renew_time

    def well(self, renewed_before: datetime | None) -> list[str]:
        """Problems with gcm after an attack: dead, not reconciling, lost or stale Lease."""
        gone = self.alive()
        if gone:
            return [gone]
        problems = self._reconciles()
        problems += self._holds_lease(renewed_before)
        gone = self.alive()
        return [*problems, gone] if gone else problems

    def _reconciles(self) -> list[str]:
        """A new Project reaches Ready within the bound (then it is deleted again)."""
        bound = self.sizes.reconcile_timeout
        timeout = min(5.0, bound)  # per request: a server that hangs must not stretch the bound
        # Project names have at most 10 characters; a new one each time (an external gcm may hold some)
        name = f"ab{uuid.uuid4().hex[:8]}"
        projects = k8s.CustomObjectsApi(self.admin.api)
        body = {"apiVersion": CORE_V, "kind": "Project", "metadata": {"name": name, "annotations": CONFIRM}}
        code, _ = status_of(
            lambda: projects.create_cluster_custom_object(
                CORE, "v1beta1", "projects", body, _request_timeout=timeout
            )
        )
        if code != 200:
            return [f"creating Project {name} answered {code}"]
        phase = None
        deadline = time.monotonic() + bound
        while phase != "Ready" and time.monotonic() < deadline:
            time.sleep(0.1)
            code, got = status_of(
                lambda: projects.get_cluster_custom_object(
                    CORE, "v1beta1", "projects", name, _request_timeout=timeout
                )
            )
            phase = (got.get("status") or {}).get("phase") if code == 200 else None
        status_of(
            lambda: projects.delete_cluster_custom_object(
                CORE, "v1beta1", "projects", name, _request_timeout=timeout
            )
        )
        return [] if phase == "Ready" else [f"Project {name} not Ready within {bound:.0f} s"]

    def _holds_lease(self, renewed_before: datetime | None) -> list[str]:
        """The Lease keeps its holder and its renewTime moves past ``renewed_before``."""
        bound = self.sizes.lease_timeout
        deadline = time.monotonic() + bound
        last = "not read"
        while time.monotonic() < deadline:
            try:
                holder, renewed = self.lease(min(5.0, bound))
            except (k8s.ApiException, urllib3.exceptions.HTTPError) as e:
                last = f"Lease unreadable ({getattr(e, 'status', None) or type(e).__name__})"
                time.sleep(0.2)
                continue
            if holder != self.holder:
                return [f"Lease holder {holder!r}, was {self.holder!r}"]
            if renewed is not None and (renewed_before is None or renewed > renewed_before):
                return []
            last = f"Lease not renewed since {renewed_before}"
            time.sleep(0.2)
        return [f"{last} within {bound:.0f} s"]

    def renewed(self) -> datetime | None:
        try:
            return self.lease()[1]
        except (k8s.ApiException, urllib3.exceptions.HTTPError):
            return None

    # -- clean-up helpers for attacks

    def delete_confirmed(self, path: str) -> Answer:
        """Delete an object whose deletion Gardener wants confirmed (Shoots, Projects), as admin."""
        self.admin.raw(
            "PATCH",
            path,
            {"metadata": {"annotations": CONFIRM}},
            "application/merge-patch+json",
            timeout=5,
        )
        return self.admin.raw("DELETE", path, timeout=5)


def _ensure(create: Callable[[], Any]) -> None:
    """Create, accepting that it exists (a restarted garden against an external server)."""
    try:
        create()
    except k8s.ApiException as e:
        if e.status != 409:
            raise


# -- attacks ------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    ok: bool
    observed: str


@dataclass
class Attack:
    """One attack: ``run`` sends it and judges the server's answers by kube-apiserver's (``expected``);
    a ``background`` attack's ``run`` returns at once with a function that waits for its verdict."""

    name: str
    expected: str
    run: Callable[[Garden], Any]
    background: bool = False


ATTACKS: list[Attack] = []


def attack(name: str, expected: str, background: bool = False) -> Callable:
    def register(fn: Callable[[Garden], Any]) -> Callable[[Garden], Any]:
        ATTACKS.append(Attack(name, expected, fn, background))
        return fn

    return register


@attack("baseline", "gcm well with nothing sent (checks the harness)")
def baseline(g: Garden) -> Outcome:
    return Outcome(True, "nothing sent")


def alias_bomb(levels: int) -> str:
    """ConfigMap whose ``data`` expands to 10**levels scalars from a few hundred bytes (YAML anchors)."""
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: bomb}"]
    lines.append("x0: &a0 [" + ", ".join(["lol"] * 10) + "]")
    for i in range(1, levels):
        lines.append(f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    lines.append(f"data: *a{levels - 1}")
    return "\n".join(lines) + "\n"


@attack("yaml-alias-bomb", "400 'excessive aliasing' at once (sigs.k8s.io/yaml's alias-expansion limit)")
def yaml_alias_bomb(g: Garden) -> Outcome:
    body = alias_bomb(g.sizes.alias_levels)
    path = f"/api/v1/namespaces/{PROJECT_NS}/configmaps"
    got = g.member.raw("POST", path, body, "application/yaml", timeout=g.sizes.answer_timeout)
    if got.status == 201:
        g.admin.raw("DELETE", f"{path}/bomb", timeout=5)
    seen = f"{len(body)}-byte body, {g.sizes.alias_levels} levels: {got} after {got.seconds:.1f} s"
    return Outcome(got.status == 400 and "excessive aliasing" in got.message, seen)


def _shoot(name: str, depth: int) -> str:
    head = {"apiVersion": CORE_V, "kind": "Shoot", "metadata": {"name": name}}
    return json.dumps(head)[:-1] + ', "spec": {"x": ' + nest(depth) + "}}"


def _deep_shoots(g: Garden, depths: tuple[int, ...], listed: tuple[int, ...]) -> Outcome:
    """Create a Shoot per depth; those in ``listed`` must be created and listed, the others refused
    with 400 and not stored."""
    base = f"/apis/{CORE}/v1beta1/namespaces/{PROJECT_NS}/shoots"
    seen, ok = [], True
    try:
        for depth in depths:
            got = g.member.raw("POST", base, _shoot(f"deep-{depth}", depth), timeout=g.sizes.answer_timeout)
            seen.append(f"{depth} levels: create {got}")
            ok &= got.status == (201 if depth in listed else 400)
            if depth not in listed and got.status != 201:
                stored = g.admin.raw("GET", f"{base}/deep-{depth}", timeout=5).status
                if stored != 404:
                    seen.append(f"GET {stored}")
                    ok = False
        lst = g.member.raw("GET", base, timeout=g.sizes.answer_timeout)
        missing = [d for d in listed if not lists(lst, f"deep-{d}")]
        seen.append(f"LIST {lst}" + (f", missing {missing}" if lst.status == 200 and missing else ""))
        ok &= lst.status == 200 and not missing
    finally:
        for depth in depths:
            g.delete_confirmed(f"{base}/deep-{depth}")
    return Outcome(ok, "; ".join(seen))


@attack(
    "deep-nesting-shoot", "201 for a Shoot with spec.x 251 and 252 arrays deep, and LIST 200 listing both"
)
def deep_nesting_shoot(g: Garden) -> Outcome:
    return _deep_shoots(g, (251, 252), (251, 252))


@attack(
    "deep-nesting-limit",
    "a body 10,000 levels deep (spec.x 9,998 arrays, inside the object and spec): 201 and listed; "
    "10,001 levels: 400 and not stored",
)
def deep_nesting_limit(g: Garden) -> Outcome:
    # Go's JSON scanner (maxNestingDepth) counts every object and array of the whole body.
    return _deep_shoots(g, (9_998, 9_999), (9_998,))


@attack("deep-nesting-project", "200 for the member's own Project with spec.x 251 arrays deep, LIST 200")
def deep_nesting_project(g: Garden) -> Outcome:
    path = f"/apis/{CORE}/v1beta1/projects/{PROJECT}"
    body = '{"spec": {"x": ' + nest(251) + "}}"
    try:
        got = g.member.raw("PATCH", path, body, "application/merge-patch+json", g.sizes.answer_timeout)
        lst = g.admin.raw("GET", f"/apis/{CORE}/v1beta1/projects", timeout=g.sizes.answer_timeout)
    finally:
        g.admin.raw("PATCH", path, {"spec": {"x": None}}, "application/merge-patch+json", timeout=5)
    ok = got.status == 200 and lst.status == 200 and lists(lst, PROJECT)
    return Outcome(ok, f"PATCH {got}; LIST {lst}")


@attack("deep-nesting-secretbinding", "201 for a top-level field 251 and 252 arrays deep, LIST 200")
def deep_nesting_secretbinding(g: Garden) -> Outcome:
    """An unknown top-level field: gardener-apiserver drops it, our CRD keeps unknown fields; either
    way the write and the LIST must work (whether ``x`` was kept is only reported)."""
    base = f"/apis/{CORE}/v1beta1/namespaces/{PROJECT_NS}/secretbindings"
    seen, ok = [], True
    try:
        for depth in (251, 252):
            head = {
                "apiVersion": CORE_V,
                "kind": "SecretBinding",
                "metadata": {"name": f"deep-{depth}"},
                "secretRef": {"name": "none"},
                "provider": {"type": "local"},
            }
            body = json.dumps(head)[:-1] + ', "x": ' + nest(depth) + "}"
            got = g.member.raw("POST", base, body, timeout=g.sizes.answer_timeout)
            kept = got.status == 201 and b'"x"' in got.body
            seen.append(f"{depth} levels: {got}" + (" (x kept)" if kept else ""))
            ok &= got.status == 201
        lst = g.member.raw("GET", base, timeout=g.sizes.answer_timeout)
        seen.append(f"LIST {lst}")
        ok &= lst.status == 200
    finally:
        for depth in (251, 252):
            g.admin.raw("DELETE", f"{base}/deep-{depth}", timeout=5)
    return Outcome(ok, "; ".join(seen))


@attack(
    "bind-missing-clusterrole",
    "404 for a RoleBinding to a ClusterRole that does not exist by a principal without 'bind' (kube cannot "
    "confirm the binder holds the role's rules)",
)
def bind_missing_clusterrole(g: Garden) -> Outcome:
    name = f"abuse-missing-{uuid.uuid4().hex[:6]}"
    path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{PROJECT_NS}/rolebindings"
    got = g.escalator.raw("POST", path, _binding(name), timeout=g.sizes.answer_timeout)
    g.admin.raw("DELETE", f"{path}/{name}", timeout=5)
    return Outcome(got.status == 404, f"create {got}")


def _binding(role: str) -> dict:
    """A RoleBinding of the escalator to the ClusterRole ``role`` (named like it)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": role},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": ESCALATOR, "namespace": USERS_NS}],
    }


@attack(
    "aggregation-escalation",
    "403 for the ClusterRole with an aggregationRule (must have cluster-admin privileges), Secrets 403",
)
def aggregation_escalation(g: Garden) -> Outcome:
    name = f"abuse-aggregated-{uuid.uuid4().hex[:6]}"
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    g.admin.raw(
        "POST",
        f"/api/v1/namespaces/{PROJECT_NS}/secrets",
        {"metadata": {"name": "abuse-target"}, "stringData": {"k": "v"}},
        timeout=5,
    )
    bind = _binding(name)
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "aggregationRule": {
            "clusterRoleSelectors": [
                {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}
            ]
        },
    }
    try:
        bound = g.escalator.raw("POST", f"{rbac}/namespaces/{PROJECT_NS}/rolebindings", bind, timeout=5)
        created = g.escalator.raw("POST", f"{rbac}/clusterroles", role, timeout=5)
        secrets = Answer(None, error="not tried")
        for _ in range(15):  # the aggregation controller fills the rules soon after
            secrets = g.escalator.raw("GET", f"/api/v1/namespaces/{PROJECT_NS}/secrets", timeout=5)
            if secrets.status != 403:
                break
            time.sleep(0.2)
    finally:
        g.admin.raw("DELETE", f"{rbac}/namespaces/{PROJECT_NS}/rolebindings/{name}", timeout=5)
        g.admin.raw("DELETE", f"{rbac}/clusterroles/{name}", timeout=5)
    seen = (
        f"RoleBinding to the missing role {bound.status}; aggregated ClusterRole {created}; Secrets {secrets}"
    )
    return Outcome(created.status == 403 and secrets.status == 403, seen)


def _review(g: Garden, token: str) -> bool | None:
    review = k8s.V1TokenReview(spec=k8s.V1TokenReviewSpec(token=token))
    code, got = status_of(
        lambda: k8s.AuthenticationV1Api(g.admin.api).create_token_review(review, _request_timeout=5)
    )
    return bool(got.status and got.status.authenticated) if code == 200 else None


def _bound_token(g: Garden, sa: str, kind: str, name: str, uid: str) -> Answer:
    return g.member.raw(
        "POST",
        f"/api/v1/namespaces/{PROJECT_NS}/serviceaccounts/{sa}/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {
                "expirationSeconds": 600,
                "boundObjectRef": {"apiVersion": "v1", "kind": kind, "name": name, "uid": uid},
            },
        },
        timeout=5,
    )


def _token_outlives(g: Garden, kind: str) -> Outcome:
    """A token bound to a Secret or Pod, then the object deleted: the token must stop working."""
    sa = f"bound-{kind.lower()}"
    name = f"abuse-{kind.lower()}"
    plural = f"{kind.lower()}s"
    ns_path = f"/api/v1/namespaces/{PROJECT_NS}"
    g.member.raw("POST", f"{ns_path}/serviceaccounts", {"metadata": {"name": sa}}, timeout=5)
    obj: dict[str, Any]
    if kind == "Secret":
        obj = {"metadata": {"name": name}, "stringData": {"k": "v"}}
    else:  # members may not create Pods; the admin plays the workload
        # kube binds a token to a Pod only if the Pod runs as that ServiceAccount
        spec = {"serviceAccountName": sa, "containers": [{"name": "c", "image": "busybox"}]}
        obj = {"metadata": {"name": name}, "spec": spec}
    creator = g.member if kind == "Secret" else g.admin
    made = creator.raw("POST", f"{ns_path}/{plural}", obj, timeout=5)
    try:
        if made.status != 201:
            return Outcome(False, f"could not create the {kind}: {made}")
        uid = made.json()["metadata"]["uid"]
        minted = _bound_token(g, sa, kind, name, uid)
        if minted.status != 201:
            return Outcome(False, f"TokenRequest bound to the {kind}: {minted}")
        token = minted.json()["status"]["token"]
        before = _review(g, token)
        gone = creator.raw("DELETE", f"{ns_path}/{plural}/{name}?gracePeriodSeconds=0", timeout=5)
        after, use = before, Answer(None)
        bound = Identity("bound", g.url, g.ca_file, token)
        try:
            for _ in range(25):  # kube reads the bound object through an informer: allow it to catch up
                after = _review(g, token)
                use = bound.raw("GET", "/apis", timeout=5)
                if after is False and use.status == 401:
                    break
                time.sleep(0.2)
        finally:
            bound.close()
        seen = (
            f"TokenReview authenticated={before} before, {kind} deleted {gone.status}, "
            f"TokenReview authenticated={after} after, a request with it {use.status}"
        )
        return Outcome(before is True and after is False and use.status == 401, seen)
    finally:
        g.admin.raw("DELETE", f"{ns_path}/{plural}/{name}?gracePeriodSeconds=0", timeout=5)
        g.admin.raw("DELETE", f"{ns_path}/serviceaccounts/{sa}", timeout=5)


@attack(
    "token-bound-secret-deleted",
    "the token unauthenticated (TokenReview false, requests 401) once its Secret is gone",
)
def token_bound_secret_deleted(g: Garden) -> Outcome:
    return _token_outlives(g, "Secret")


@attack(
    "token-bound-pod-deleted",
    "the token unauthenticated (TokenReview false, requests 401) once its Pod is gone",
)
def token_bound_pod_deleted(g: Garden) -> Outcome:
    return _token_outlives(g, "Pod")


@attack("token-bound-missing-object", "404 for a TokenRequest bound to a Secret that does not exist")
def token_bound_missing_object(g: Garden) -> Outcome:
    sa = "bound-missing"
    accounts = f"/api/v1/namespaces/{PROJECT_NS}/serviceaccounts"
    g.member.raw("POST", accounts, {"metadata": {"name": sa}}, timeout=5)
    try:
        got = _bound_token(g, sa, "Secret", "abuse-missing", str(uuid.uuid4()))
    finally:
        g.admin.raw("DELETE", f"{accounts}/{sa}", timeout=5)
    return Outcome(got.status == 404, f"TokenRequest {got}")


@attack("envelope-apiversion-number", "400 for a ConfigMap whose apiVersion is the number 123")
def envelope_apiversion_number(g: Garden) -> Outcome:
    path = f"/api/v1/namespaces/{PROJECT_NS}/configmaps"
    body = {"apiVersion": 123, "kind": "ConfigMap", "metadata": {"name": "envelope"}, "data": {"k": "v"}}
    got = g.member.raw("POST", path, body, timeout=g.sizes.answer_timeout)
    if got.status == 201:
        g.admin.raw("DELETE", f"{path}/envelope", timeout=5)
    return Outcome(got.status == 400, f"POST {got}")


@attack("envelope-project-name-number", "400 for a Project whose metadata.name is a number (PUT and POST)")
def envelope_project_name_number(g: Garden) -> Outcome:
    body = {
        "apiVersion": CORE_V,
        "kind": "Project",
        "metadata": {"name": 123},
        "spec": {"namespace": PROJECT_NS},
    }
    base = f"/apis/{CORE}/v1beta1/projects"
    put = g.member.raw("PUT", f"{base}/{PROJECT}", body, timeout=g.sizes.answer_timeout)
    post = g.admin.raw("POST", base, body, timeout=g.sizes.answer_timeout)
    if post.status == 201:
        g.delete_confirmed(f"{base}/123")
    return Outcome(put.status == 400 and post.status == 400, f"member PUT {put}; admin POST {post}")


def _rbac_dry_run(g: Garden, method: str, path: str, body: dict, ctype: str = "application/json") -> Answer:
    url = f"/apis/rbac.authorization.k8s.io/v1/{path}?dryRun=All"
    return g.gcm.raw(method, url, body, ctype, timeout=g.sizes.answer_timeout)


@attack(
    "gcm-sa-bind-cluster-admin", "403 for gcm's ServiceAccount creating a ClusterRoleBinding to cluster-admin"
)
def gcm_sa_bind_cluster_admin(g: Garden) -> Outcome:
    body = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "abuse-cluster-admin"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "abuse-attacker"}],
    }
    got = _rbac_dry_run(g, "POST", "clusterrolebindings", body)
    return Outcome(got.status == 403, f"dry-run create {got}")


@attack(
    "gcm-sa-escalate-own-clusterrole", "403 for gcm's ServiceAccount widening its own ClusterRole to */*/*"
)
def gcm_sa_escalate_own_clusterrole(g: Garden) -> Outcome:
    patch = {"rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}
    got = _rbac_dry_run(g, "PATCH", f"clusterroles/{quote(GCM_ROLE)}", patch, "application/merge-patch+json")
    return Outcome(got.status == 403, f"dry-run patch {got}")


@attack(
    "strict-unknown-metadata-field",
    "400 'strict decoding error' for metadata.foo under fieldValidation=Strict",
)
def strict_unknown_metadata_field(g: Garden) -> Outcome:
    base = f"/apis/{CORE}/v1beta1/namespaces/{PROJECT_NS}/secretbindings"
    body = {
        "apiVersion": CORE_V,
        "kind": "SecretBinding",
        "metadata": {"name": "strict", "foo": "bar"},
        "secretRef": {"name": "none"},
        "provider": {"type": "local"},
    }
    got = g.member.raw("POST", f"{base}?fieldValidation=Strict", body, timeout=g.sizes.answer_timeout)
    if got.status == 201:
        g.admin.raw("DELETE", f"{base}/strict", timeout=5)
    return Outcome(got.status == 400 and "strict decoding error" in got.message, f"POST {got}")


@attack("watch-negative-timeout", "the watch with timeoutSeconds=-1 ends at once (its timer fires at once)")
def watch_negative_timeout(g: Garden) -> Outcome:
    return watch_ends(g, "-1")


def watch_ends(g: Garden, timeout_seconds: str) -> Outcome:
    """Whether a watch with this ``timeoutSeconds`` ends within half the answer timeout."""
    bound = g.sizes.answer_timeout / 2
    url = f"{g.url}/api/v1/namespaces/{PROJECT_NS}/configmaps?watch=true&timeoutSeconds={timeout_seconds}"
    headers = {"Authorization": f"Bearer {g.member.token}", "Accept": "application/json"}
    start = time.monotonic()
    try:
        # One read timeout for the whole bound: urllib3 drops the connection after a read timeout,
        # which must not pass for the server ending the stream.
        r = g.member.http.request(
            "GET", url, headers=headers, preload_content=False, timeout=urllib3.Timeout(connect=5, read=bound)
        )
    except urllib3.exceptions.HTTPError as e:
        return Outcome(False, f"no answer ({type(e).__name__})")
    try:
        if r.status != 200:
            return Outcome(400 <= r.status < 500, f"{r.status} {r.read(200)!r}")
        while time.monotonic() - start < bound:
            if not r.read1(4096):
                return Outcome(True, f"200, stream ended after {time.monotonic() - start:.1f} s")
        return Outcome(False, f"200, stream still open after {bound:.0f} s")
    except urllib3.exceptions.ReadTimeoutError:
        return Outcome(False, f"200, stream still open after {bound:.0f} s")
    except urllib3.exceptions.HTTPError as e:
        return Outcome(True, f"200, stream cut after {time.monotonic() - start:.1f} s ({type(e).__name__})")
    finally:
        r.release_conn()
        r.close()


@attack(
    "long-query-string",
    "a JSON answer to a GET with a 70 KB query string (the list, or a Status), not plain text",
)
def long_query_string(g: Garden) -> Outcome:
    path = f"/api/v1/namespaces/{PROJECT_NS}/configmaps?limit=1&abuse=" + "a" * 70_000
    got = g.member.raw("GET", path, timeout=g.sizes.answer_timeout)
    doc = got.json() if got.content_type.startswith("application/json") else None
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if got.status is None:
        return Outcome(False, str(got))
    shown = f"{got.status} {got.content_type or 'no content type'}"
    shown += f" {kind}" if kind else f" {got.message[:60]!r}"
    return Outcome(kind in ("ConfigMapList", "Status"), shown)


@attack(
    "selfsubjectreview-basic-user",
    "kubectl auth whoami works for a non-admin (system:basic-user has selfsubjectreviews)",
)
def selfsubjectreview_basic_user(g: Garden) -> Outcome:
    user = f"system:serviceaccount:{USERS_NS}:{MEMBER}"
    kubectl = shutil.which("kubectl")
    if kubectl:
        try:
            proc = subprocess.run(
                [kubectl, "--kubeconfig", str(g.member_kubeconfig), "auth", "whoami", "-o", "json"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except subprocess.TimeoutExpired:
            return Outcome(False, "kubectl auth whoami did not finish in 30 s")
        said = (proc.stdout if proc.returncode == 0 else proc.stderr).strip().replace("\n", " ")
        return Outcome(
            proc.returncode == 0 and user in proc.stdout, f"kubectl exit {proc.returncode}: {said[:120]}"
        )
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    got = g.member.raw("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", review, timeout=5)
    return Outcome(
        got.status == 201 and user in got.body.decode(errors="replace"), f"SelfSubjectReview {got}"
    )


@attack(
    "auth-delegator-clusterrole",
    "ClusterRole system:auth-delegator: create tokenreviews and subjectaccessreviews",
)
def auth_delegator_clusterrole(g: Garden) -> Outcome:
    got = g.admin.raw(
        "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:auth-delegator", timeout=5
    )
    if got.status != 200:
        return Outcome(False, f"GET {got}")
    granted = {
        (group, res)
        for rule in got.json().get("rules") or []
        if "create" in rule.get("verbs", [])
        for group in rule.get("apiGroups", [])
        for res in rule.get("resources", [])
    }
    want = {("authentication.k8s.io", "tokenreviews"), ("authorization.k8s.io", "subjectaccessreviews")}
    return Outcome(want <= granted, f"GET 200, creates {sorted(granted)}")


class HeldConnection(threading.Thread):
    """A TLS connection held open by the attacker: idle, or trickling header bytes (slowloris); records
    when the server closed it, or that it was still open after ``limit`` seconds."""

    def __init__(
        self, name: str, address: tuple[str, int], limit: float, opening: bytes = b"", trickle: bytes = b""
    ) -> None:
        super().__init__(name=f"abuse-{name}", daemon=True)
        self.address = address
        self.limit = limit
        self.opening = opening
        self.trickle = trickle
        self.closed_after: float | None = None
        self.error = ""
        self.stopping = threading.Event()

    def run(self) -> None:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # the attacker does not care who answers
        start = time.monotonic()
        try:
            raw = socket.create_connection(self.address, timeout=5)
            conn = ctx.wrap_socket(raw, server_hostname=self.address[0])
        except OSError as e:
            self.error = f"could not connect: {type(e).__name__}: {e}"
            return
        with conn:
            try:
                if self.opening:
                    conn.sendall(self.opening)
                    _read_response(conn)
                start = time.monotonic()  # idle (or trickling) from here
                sent = 0
                while not self.stopping.is_set() and time.monotonic() - start < self.limit:
                    if self.trickle:
                        conn.sendall(self.trickle[sent % len(self.trickle) : sent % len(self.trickle) + 1])
                        sent += 1
                    conn.settimeout(1.0)
                    try:
                        if not conn.recv(4096):
                            break  # closed by the server
                        break  # the server answered (a 408/400): it cut the request
                    except TimeoutError:
                        continue
                else:
                    return  # still open at the limit (or stopped)
            except (OSError, ssl.SSLError):
                pass  # reset, broken pipe: closed by the server
            self.closed_after = time.monotonic() - start

    def verdict(self) -> tuple[bool, str]:
        self.join(self.limit + 15)
        self.stopping.set()
        self.join(5)
        if self.error:
            return False, self.error
        if self.closed_after is None:
            return False, f"still open after {self.limit:.0f} s"
        return True, f"closed by the server after {self.closed_after:.1f} s"


def _read_response(conn: ssl.SSLSocket) -> None:
    """Read one HTTP/1.1 response with a Content-Length body (keeping the connection for idling)."""
    conn.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            raise ConnectionError("closed before the response")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(4096)
        if not chunk:
            break
        body += chunk


@attack(
    "idle-tls-connection",
    f"an idle TLS connection closed by the API server within {READ_HEADER_TIMEOUT_S:.0f} s "
    f"(ReadHeaderTimeout; {IDLE_TIMEOUT_S:.0f} s IdleTimeout after a request, full run only)",
    background=True,
)
def idle_tls_connection(g: Garden) -> Callable[[], Outcome]:
    address = apiserver_address(g.url)
    held = [("no request", HeldConnection("idle-fresh", address, READ_HEADER_TIMEOUT_S + g.sizes.grace))]
    if g.sizes.keepalive_idle:
        request = (
            f"GET /version HTTP/1.1\r\nHost: {address[0]}\r\nAuthorization: Bearer {g.member.token}\r\n\r\n"
        )
        held.append(
            (
                "after a request",
                HeldConnection("idle-kept", address, IDLE_TIMEOUT_S + g.sizes.grace, request.encode()),
            )
        )
    for _, h in held:
        h.start()

    def verdict() -> Outcome:
        seen, ok = [], True
        for label, h in held:
            passed, text = h.verdict()
            ok &= passed
            seen.append(f"{label}: {text}")
        return Outcome(ok, "; ".join(seen))

    return verdict


@attack(
    "webhook-slowloris",
    f"gcm's webhook server cuts a request whose headers trickle in within {READ_HEADER_TIMEOUT_S:.0f} s "
    "(controller-runtime's ReadHeaderTimeout)",
    background=True,
)
def webhook_slowloris(g: Garden) -> Callable[[], Outcome]:
    host, _, port = g.webhook.rpartition(":")
    opening = f"POST /webhooks/abuse HTTP/1.1\r\nHost: {host}\r\n".encode()
    h = HeldConnection(
        "slowloris", (host, int(port)), READ_HEADER_TIMEOUT_S + g.sizes.grace, trickle=b"X-Slow: " + b"a" * 64
    )
    h.opening = b""
    h.trickle = opening + h.trickle  # the request line too, one byte a second
    h.start()

    def verdict() -> Outcome:
        passed, text = h.verdict()
        return Outcome(passed, f"{g.webhook}: {text}")

    return verdict


# -- running ------------------------------------------------------------------------------------------


@dataclass
class Result:
    attack: Attack
    ok: bool
    observed: str
    gcm_problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        observed = self.observed + (f"; gcm: {', '.join(self.gcm_problems)}" if self.gcm_problems else "")
        verdict = "PASS" if self.ok else "FAIL"
        return f"{verdict} {self.attack.name}: {observed} (expected {self.attack.expected})"


def _judge(g: Garden, a: Attack, send: Callable[[], Outcome]) -> Result:
    before = g.renewed()
    try:
        outcome = send()
    except Exception as e:  # an attack that breaks the client is reported, not fatal to the run
        outcome = Outcome(False, f"the attack raised {type(e).__name__}: {str(e)[:200]}")
    problems = g.well(before)
    result = Result(a, outcome.ok and not problems, outcome.observed, problems)
    if problems:
        g.restart(f"after {a.name}: {', '.join(problems)}")
    return result


def run_attacks(g: Garden, attacks: list[Attack], out: Any = None) -> list[Result]:
    """Run ``attacks`` against ``g`` (background ones from the start, judged last); one line each to
    ``out`` as it is judged."""
    started = {a.name: (g.generation, a.run(g)) for a in attacks if a.background}
    results = []

    def report(r: Result) -> None:
        results.append(r)
        log.info("attack judged", attack=r.attack.name, ok=r.ok)
        if out is not None:
            out.write(r.line() + "\n")
            out.flush()

    for a in attacks:
        if not a.background:
            report(_judge(g, a, functools.partial(a.run, g)))
    for a in attacks:
        if a.background:
            generation, verdict = started[a.name]

            def wait(a: Attack = a, generation: int = generation, verdict: Callable = verdict) -> Outcome:
                outcome = verdict()
                if g.generation != generation:  # the server it held a connection to was restarted
                    outcome = a.run(g)()
                return outcome

            report(_judge(g, a, wait))
    return results


def select(only: str | None) -> list[Attack]:
    if not only:
        return list(ATTACKS)
    names = [n.strip() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in {a.name for a in ATTACKS}]
    if unknown:
        raise SystemExit(f"bench/abuse.py: unknown attack(s) {unknown}; known: {[a.name for a in ATTACKS]}")
    return [a for a in ATTACKS if a.name in names]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/abuse.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="CI sizes (a 5-level alias bomb, no 90 s idle wait)")
    p.add_argument("--only", metavar="A,B", help="run only these attacks (names as printed)")
    p.add_argument("--list", action="store_true", help="list the attacks and exit")
    p.add_argument(
        "--kubeconfig", metavar="FILE", help="attack the gcm --embedded behind this admin kubeconfig"
    )
    p.add_argument("--gcm-pid", type=int, help="with --kubeconfig: the gcm process to check for liveness")
    p.add_argument(
        "--webhook", metavar="HOST:PORT", help="with --kubeconfig: gcm's webhook server (127.0.0.1:2721)"
    )
    p.add_argument("--keep", action="store_true", help="keep the temporary directory (gcm's log) afterwards")
    args = p.parse_args(argv)
    if args.list:
        for a in ATTACKS:
            print(f"{a.name}: expected {a.expected}")
        return 0
    from gcm.log import configure_logging

    configure_logging("info", "text")
    attacks = select(args.only)
    g = Garden(QUICK if args.quick else FULL, args.kubeconfig, args.gcm_pid, args.webhook)
    results: list[Result] = []
    try:
        g.start()
        results = run_attacks(g, attacks, sys.stdout)
    finally:
        g.stop()
        if args.keep or any(not r.ok for r in results):
            log.info("kept the run's files", directory=str(g.dir))
        else:
            shutil.rmtree(g.dir, ignore_errors=True)
    failed = sum(not r.ok for r in results)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
