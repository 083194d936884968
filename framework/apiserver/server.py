"""``APIServer``: the in-process Kubernetes API server, its lifecycle, kubeconfig and fault injection."""

from __future__ import annotations

import asyncio
import base64
import functools
import os
import secrets
import shutil
import ssl
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import structlog
import yaml
from aiohttp import web

from framework import certs
from framework.apiserver.accounting.request_log import RequestLog
from framework.apiserver.accounting.requests import RequestAccounting, RequestKey, RequestRecord
from framework.apiserver.admission import Admission
from framework.apiserver.admission.plugins import (
    AdmissionPlugin,
    admit,
    admit_delete,
    default_plugins,
)
from framework.apiserver.admission.plugins import mutate as admit_mutate
from framework.apiserver.auth import tokens
from framework.apiserver.auth.authenticator import MASTERS, RBAC_GROUP, Authenticator, UserInfo
from framework.apiserver.auth.authorizer import RBACAuthorizer
from framework.apiserver.auth.bootstrap_policy import bootstrap_policy, reconcile
from framework.apiserver.controllers.manager import CRD_STORAGE, Controllers
from framework.apiserver.controllers.simulated import SimulatedCluster, SimulationPolicy
from framework.apiserver.crd.conversion_webhook import WebhookConverter
from framework.apiserver.crd.install import install_crds
from framework.apiserver.endpoints.connections import DEFAULT_LIMITS, REFUSAL_STATUS, status_answer
from framework.apiserver.endpoints.http import Handler
from framework.apiserver.faults.control import FaultControl
from framework.apiserver.faults.injection import Fault
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.registry.core import allocators
from framework.apiserver.registry.rest.api import API
from framework.apiserver.registry.served import Registry
from framework.apiserver.storage.persistence import SQLiteStore
from framework.apiserver.storage.store import Storage
from framework.meta import jsoncodec
from framework.server.address import bind_socket
from framework.server.connections import ConnectionLimits, GuardedAppRunner, GuardedSockSite

log = structlog.get_logger("framework.apiserver")

T = TypeVar("T")
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class APIServer:
    """A pure-Python kube-apiserver for tests, the embedded run mode and benchmarks.

    Use as a context manager or call :meth:`start` / :meth:`stop`. All state lives on one asyncio
    event loop in a background thread named ``apiserver``; public methods are thread-safe.

    ``admission_plugins`` are run on every write after the built-in ones (kube-apiserver's
    ``--enable-admission-plugins``, see :mod:`framework.apiserver.admission.plugins`).
    ``request_log`` appends one JSON line per write to that file, with the extra fields
    ``request_log_fields`` names per resource (see :mod:`framework.apiserver.accounting.request_log`).
    ``nodes`` > 0 simulates that many Ready nodes, with a scheduler, their kubelets and the workload
    controllers (as KWOK does), timed by ``simulation`` (:class:`SimulationPolicy`); off by default
    (docs/apiserver.md, "Simulated nodes").
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        scheme: str = "https",
        watch_cache_size: int = 1000,
        kubeconfig: str | os.PathLike | None = None,
        bookmark_interval: float = 60.0,
        min_request_timeout: float = 1800.0,
        watch_buffer: int = 10_000,
        future_rv_wait: float = 3.0,
        authorization: str = "AlwaysAllow",
        anonymous: bool = False,
        disabled_groups: Iterable[str] = (),
        data_dir: str | os.PathLike | None = None,
        files_dir: str | os.PathLike | None = None,
        admission_plugins: Iterable[AdmissionPlugin] = (),
        fault_injection: bool = False,
        request_log: str | os.PathLike | None = None,
        request_log_fields: Mapping[str, Mapping[str, str]] | None = None,
        connection_limits: ConnectionLimits | None = None,
        nodes: int = 0,
        simulation: SimulationPolicy | None = None,
    ) -> None:
        if nodes < 0:
            raise ValueError(f"nodes must not be negative, not {nodes}")
        if scheme not in ("https", "http"):
            raise ValueError(f"scheme must be https or http, not {scheme!r}")
        if authorization not in ("AlwaysAllow", "RBAC"):
            raise ValueError(f"authorization must be AlwaysAllow or RBAC, not {authorization!r}")
        self.authorization = authorization
        # Objects may nest up to Go's 10,000 levels (jsoncodec.MAX_DEPTH); the recursive code that
        # stores, copies, walks and encodes them needs a higher recursion limit (see its docstring).
        jsoncodec.allow_deep_values()
        self.host = host
        self.port = port
        self.scheme = scheme
        self.bookmark_interval = bookmark_interval
        self.min_request_timeout = min_request_timeout
        self.watch_buffer = watch_buffer
        self.future_rv_wait = future_rv_wait
        # Idle and request-head deadlines, head size and open connections (connections.py).
        self.connection_limits = DEFAULT_LIMITS if connection_limits is None else connection_limits
        # With a data directory objects, tokens and certificates survive restarts (and kill -9);
        # without one everything lives in memory, and certificates and kubeconfigs in ``files_dir``
        # (default: a new temporary directory), removed on stop.
        self.store = SQLiteStore(data_dir) if data_dir is not None else None
        try:
            self.storage = Storage(watch_cache_size, self.store)
        except BaseException:
            if self.store is not None:
                self.store.close()
            raise
        new_token = f"gcm-testing-{secrets.token_hex(16)}"
        self.token = self._secret("admin-token", new_token.encode).decode()
        # Groups not to serve, e.g. ("events.k8s.io",) to test clients against an older cluster.
        self.registry = Registry(tuple(disabled_groups))
        self.api = API(self.storage, self.registry)
        # In-process admission (kube-apiserver's --enable-admission-plugins): the built-in plugins,
        # then the ones this server is built with (an application's own kinds' rules).
        self.admission_plugins = [*default_plugins(), *admission_plugins]
        self.api.admit_mutate = functools.partial(admit_mutate, self)
        self.api.admit = functools.partial(admit, self)
        self.api.admit_delete = functools.partial(admit_delete, self)
        self.authenticator = Authenticator(self.storage, anonymous)
        self.authorizer = RBACAuthorizer(self.storage)
        self.accounting = RequestAccounting()
        self.authenticator.add_token(UserInfo("admin", "", (MASTERS,)), self.token)
        if self.store is not None:
            self._load_tokens(self.store)
            self._dir = self.store.directory / "kubeconfigs"
            pki = self.store.directory / "pki"
            self._dir.mkdir(mode=0o700, exist_ok=True)
        elif files_dir is not None:
            self._dir = pki = Path(files_dir)
            self._dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        else:
            self._dir = pki = Path(tempfile.mkdtemp(prefix="gcm-apiserver-"))
        self._kubeconfig_path = Path(kubeconfig) if kubeconfig else self._dir / "kubeconfig"
        self._ca_file = kubeconfig is None and (data_dir is not None or files_dir is not None)
        self.ca = self._key_pair("ca", lambda: certs.generate_ca("gcm-testing-ca"))
        self.serving = self._key_pair("serving", lambda: certs.issue_serving_cert(self.ca))
        pki.mkdir(mode=0o700, exist_ok=True)
        self.ca_path, _ = self.ca.write(pki, "ca")
        self._cert_path, self._key_path = self.serving.write(pki, "serving")
        for path in (self.ca_path, self._cert_path):
            path.chmod(0o600)  # only the user who runs the server reads its files
        self.controllers = Controllers(self.storage, self.registry, self.api, self.ca.cert_pem)
        self.simulated = (
            SimulatedCluster(self.storage, self.registry, self.api, nodes, simulation or SimulationPolicy())
            if nodes
            else None
        )
        # Admission webhooks (21-6): where a ``clientConfig.service`` is reachable, as
        # ``{(namespace, name, port): "host:port"}`` (see :meth:`map_webhook_service`).
        self.webhook_service_map: dict[tuple[str, str, int], str] = {}
        self.admission = Admission(self)
        # CRD conversion webhooks, called with the admission webhooks' HTTP client.
        self.conversion = WebhookConverter(self)
        self.handler = Handler(self)
        # Chaos runs (bench/chaos.py): faults set over HTTP, writes logged to a file; both off by default.
        self.fault_control = FaultControl(self) if fault_injection else None
        self.request_log = RequestLog(request_log, request_log_fields) if request_log is not None else None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: GuardedAppRunner | None = None
        self._started = False

    # -- durable state (data_dir) ---------------------------------------------------------------------

    def _secret(self, name: str, make: Callable[[], bytes]) -> bytes:
        """A value kept in the store across restarts (made once), or a fresh one without a store."""
        value = self.store.secret(name) if self.store is not None else None
        if value is None:
            value = make()
            if self.store is not None:
                self.store.set_secret(name, value)
        return value

    def _key_pair(self, stem: str, make: Callable[[], certs.CertKeyPair]) -> certs.CertKeyPair:
        """The stored certificate and key ``stem`` while valid for 30 more days, else new ones."""
        if self.store is not None:
            cert, key = self.store.secret(f"{stem}.crt"), self.store.secret(f"{stem}.key")
            if cert and key:
                pair = certs.CertKeyPair(cert, key)
                if pair.cert.not_valid_after_utc > datetime.now(UTC) + timedelta(days=30):
                    return pair
        pair = make()
        if self.store is not None:
            self.store.set_secret(f"{stem}.crt", pair.cert_pem)
            self.store.set_secret(f"{stem}.key", pair.key_pem)
        return pair

    def _load_tokens(self, store: SQLiteStore) -> None:
        for token, kind, value in store.tokens():
            if kind == "user":
                assert isinstance(value, dict)
                user = UserInfo(value["name"], value.get("uid", ""), tuple(value.get("groups") or ()))
                self.authenticator.add_token(user, token)
            elif kind == "serviceaccount":  # claims; a [namespace, name, uid] list from older stores
                self.authenticator.sa_tokens[token] = tokens.TokenClaims.from_stored(value)

    def _serve_stored_crds(self) -> None:
        """After loading a store: serve the Established CRDs at once, before any request comes in."""
        for crd in self.storage.table(CRD_STORAGE).objects.values():
            conditions = (crd.get("status") or {}).get("conditions") or []
            if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
                self.registry.set_crd(crd)

    # -- lifecycle -----------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def kubeconfig(self) -> str:
        """Path of a kubeconfig for this server (cluster CA, bearer token, namespace ``default``)."""
        return str(self._kubeconfig_path)

    def start(self) -> APIServer:
        if self._started:
            return self
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._start_async())
            except BaseException as e:
                failure.append(e)
                # The controllers' tasks already run: end them, or closing the loop prints
                # "Task was destroyed but it is pending!" for each, burying the cause (a port in use).
                pending = asyncio.all_tasks(loop)
                for task in pending:
                    task.cancel()
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown_async())
            loop.close()

        self._thread = threading.Thread(target=run, name="apiserver", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        self._started = True
        # With a data or files directory the server's own kubeconfig lives beside the CA file.
        self.write_kubeconfig(self._kubeconfig_path, ca_file=self._ca_file)
        return self

    async def _start_async(self) -> None:
        # Slow request decoding (YAML bodies, deep JSON) runs on the loop's default executor: its
        # threads are named, and joined by ``_shutdown_async``.
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=4, thread_name_prefix="apiserver-worker")
        )
        if self.store is not None:
            self._serve_stored_crds()
            # The controllers resume where they were: terminating namespaces, CRDs, owner references.
            self.storage.replay()
        self.controllers.start()
        namespaces = self.registry.get("", "v1", "namespaces")
        assert namespaces is not None  # a built-in type, always registered
        for name in SYSTEM_NAMESPACES:
            if self.storage.get("namespaces", ("", name)) is None:
                self.api.create(namespaces, None, {"metadata": {"name": name}})
        roles, bindings = bootstrap_policy()
        for resource, objs in (("clusterroles", roles), ("clusterrolebindings", bindings)):
            rt = self.registry.get(RBAC_GROUP, "v1", resource)
            assert rt is not None
            for obj in objs:
                name = obj["metadata"]["name"]
                stored = self.storage.get(rt.storage, ("", name))
                if stored is None:
                    self.api.create(rt, None, obj)
                elif (updated := reconcile(self.api.external(rt, stored), obj)) is not None:
                    self.api.update(rt, None, name, updated)  # a store of an older release (autoupdate)
        if self.simulated is not None:
            self.simulated.start()  # after kube-node-lease exists
        await self._start_site()
        self._kubernetes_service()

    def _kubernetes_service(self) -> None:
        """``default/kubernetes``, the Service kube-apiserver keeps for itself (its first cluster IP)."""
        rt = self.registry.get("", "v1", "services")
        if rt is None or self.storage.get(rt.storage, ("default", "kubernetes")) is not None:
            return
        self.api.create(
            rt,
            "default",
            {
                "metadata": {
                    "name": "kubernetes",
                    "namespace": "default",
                    "labels": {"component": "apiserver", "provider": "kubernetes"},
                },
                "spec": {
                    "clusterIP": allocators.KUBERNETES_SERVICE_IP,
                    "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": self.port}],
                },
            },
        )

    async def _settle_controllers(self, timeout: float = 5.0) -> None:
        """Let the in-process controllers finish what startup gave them (the system namespaces'
        ServiceAccounts and ``kube-root-ca.crt``, aggregated ClusterRoles) before serving: as
        kube-apiserver is ready only after its post-start hooks, a client's first request finds them
        done. Bounded: a controller that keeps failing does not hold the server back."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while any(q.pending for q in self.controllers.queues) and loop.time() < deadline:
            await asyncio.sleep(0)

    async def _start_site(self) -> None:
        await self._settle_controllers()
        app = web.Application(client_max_size=4 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self.handler.handle)
        # handler_cancellation: a client that disconnects cancels its handler, releasing watches (15-10).
        self._runner = GuardedAppRunner(
            app,
            name="apiserver",
            limits=self.connection_limits,
            answer=status_answer,
            refusal_status=REFUSAL_STATUS,
            handler_cancellation=True,
            access_log=None,
            shutdown_timeout=1.0,
        )
        await self._runner.setup()
        ctx = None
        if self.scheme == "https":
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ctx.load_cert_chain(self._cert_path, self._key_path)
            # Client certificates are optional and, when sent, must be signed by our CA (22-1).
            ctx.verify_mode = ssl.CERT_OPTIONAL
            ctx.load_verify_locations(cafile=str(self.ca_path))
        sock = bind_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        # Go gives the TLS handshake the header time (net/http's tlsHandshakeTimeout).
        site = GuardedSockSite(
            self._runner, sock, ssl_context=ctx, handshake_timeout=self.connection_limits.read_header_timeout
        )
        try:
            await site.start()
        except BaseException:
            sock.close()
            raise

    async def _stop_site(self) -> None:
        self.handler.drop_watches()
        if self._runner:
            await self._runner.cleanup()
            self._runner = None

    async def _shutdown_async(self) -> None:
        await self._stop_site()
        await self.admission.close()
        self.controllers.stop()
        if self.simulated is not None:
            self.simulated.stop()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.get_running_loop().shutdown_default_executor()

    def stop(self) -> None:
        if not self._started or self._loop is None:
            if self.store is not None and not self._started:
                self.store.close()  # never started (or failed to): release the data directory
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        assert self._thread is not None
        self._thread.join(timeout=10)
        self._started = False
        if self.request_log is not None:
            self.request_log.close()
        if self.store is not None:
            self.store.close()
        else:
            shutil.rmtree(self._dir, ignore_errors=True)

    def restart(self) -> None:
        """Stop serving and serve again on the same address, keeping all data (open watches end)."""
        self._run(self._stop_site())
        self._run(self._start_site())

    def __enter__(self) -> APIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self, coro: Any) -> Any:
        assert self._loop is not None, "APIServer is not started"
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the server's event loop (where all state lives) and return its result."""

        async def wrapper() -> T:
            return fn()

        return self._run(wrapper())

    # -- clients -------------------------------------------------------------------------------------

    def kubeconfig_dict(self, namespace: str = "default", ca_file: bool = False) -> dict:
        """A kubeconfig; ``ca_file`` names the CA file instead of embedding it (the ``kubernetes``
        client copies embedded data to a temporary file, which a kill -9 leaves behind)."""
        ca = (
            {"certificate-authority": str(Path(self.ca_path).resolve())}
            if ca_file
            else {"certificate-authority-data": base64.b64encode(self.ca.cert_pem).decode()}
        )
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "gcm-testing", "cluster": {"server": self.url, **ca}}],
            "users": [{"name": "admin", "user": {"token": self.token}}],
            "contexts": [
                {
                    "name": "gcm-testing",
                    "context": {"cluster": "gcm-testing", "user": "admin", "namespace": namespace},
                }
            ],
            "current-context": "gcm-testing",
            "preferences": {},
        }

    def write_kubeconfig(
        self, path: str | os.PathLike, namespace: str = "default", ca_file: bool = False
    ) -> str:
        """Write a kubeconfig atomically (a reader never sees half a file) and return its path."""
        return _write_private(Path(path), yaml.safe_dump(self.kubeconfig_dict(namespace, ca_file)))

    def api_client(self) -> Any:
        """An official ``kubernetes.client.ApiClient`` configured for this server."""
        from kubernetes import client

        cfg = client.Configuration()
        cfg.host = self.url
        cfg.ssl_ca_cert = str(self.ca_path)
        cfg.api_key = {"authorization": self.token}
        cfg.api_key_prefix = {"authorization": "Bearer"}
        return client.ApiClient(cfg)

    # -- users, authentication and authorization ---------------------------------------------------

    def add_user(self, name: str, groups: Iterable[str] = ()) -> str:
        """Register a static token user and return the token."""
        groups = tuple(groups)
        user = UserInfo(name, "", groups)

        def add() -> str:
            token = self.authenticator.add_token(user)
            if self.store is not None:
                self.store.add_token(token, "user", {"name": name, "groups": list(groups)})
            return token

        return self.call(add)

    def kubeconfig_for(
        self, user: str, groups: Iterable[str] = (), path: str | os.PathLike | None = None, cert: bool = False
    ) -> str:
        """Write a kubeconfig that authenticates as ``user`` (bearer token, or a client certificate)."""
        kc = self.kubeconfig_dict()
        if cert:
            pair = certs.issue_client_cert(self.ca, user, tuple(groups))
            kc["users"][0]["user"] = {
                "client-certificate-data": base64.b64encode(pair.cert_pem).decode(),
                "client-key-data": base64.b64encode(pair.key_pem).decode(),
            }
        else:
            kc["users"][0]["user"] = {"token": self.add_user(user, groups)}
        kc["users"][0]["name"] = kc["contexts"][0]["context"]["user"] = user
        target = Path(path) if path else self._dir / f"kubeconfig-{secrets.token_hex(4)}"
        return _write_private(target, yaml.safe_dump(kc))

    def map_webhook_service(self, namespace: str, name: str, address: str, port: int = 443) -> None:
        """Send admission and CRD conversion webhook calls for Service ``namespace/name`` port ``port`` to
        ``address`` (``host:port``); TLS still verifies the name ``name.namespace.svc`` (21-6)."""
        self.webhook_service_map[(namespace, name, port)] = address

    def request_counts(self) -> dict[RequestKey, int]:
        """Requests served so far by (user, verb, resource, code)."""
        return self.call(self.accounting.counts)

    def reset_request_counts(self) -> None:
        self.call(self.accounting.reset)

    def record_requests(self) -> None:
        """Record every resource request from now on (:meth:`recorded_requests`); off by default."""
        self.call(self.accounting.start_recording)

    def recorded_requests(self, user: str | None = None) -> list[RequestRecord]:
        """The requests recorded since :meth:`record_requests`, of ``user`` only if given."""
        return self.call(lambda: self.accounting.records(user))

    # -- CRDs ----------------------------------------------------------------------------------------

    def install_crds(self, source: str | os.PathLike | Iterable[dict], timeout: float = 10.0) -> list[str]:
        """Create or update the CRDs of a YAML directory or file (or dicts); wait until Established."""
        return install_crds(self, source, timeout)

    # -- fault injection -----------------------------------------------------------------------------

    def drop_watches(self) -> None:
        """Close every open watch stream (clients see a clean end of stream and re-watch)."""
        self.call(self.handler.drop_watches)

    def compact(self) -> None:
        """Make every resourceVersion older than now too old: watches, exact lists and continues get 410."""
        self.call(self.storage.compact)

    def inject_failure(
        self,
        verb: str,
        resource: str,
        status: int,
        count: int | None = 1,
        retry_after: int | None = None,
        namespace: str | None = None,
    ) -> None:
        """Fail the next ``count`` matching requests (``None``: until :meth:`clear_failures`)."""
        plural, _, group = resource.partition(".")
        fault = Fault(verb, plural, group if "." in resource else None, namespace, status, count, retry_after)
        self.call(lambda: self.handler.faults.append(fault))

    def clear_failures(self) -> None:
        self.call(self.handler.faults.clear)

    @property
    def resource_version(self) -> int:
        return self.storage.rv


def _write_private(path: Path, text: str) -> str:
    """Write a file only its owner can read, atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        os.fchmod(fd, 0o600)  # an existing .tmp keeps its mode through O_CREAT
        f.write(text)
    tmp.replace(path)
    return str(path)


__all__ = ["APIServer", "StatusError"]
