"""Managed webhook configuration: the manager writes the Mutating/ValidatingWebhookConfiguration of its
typed webhooks and, if asked, serves a self-signed certificate that it rotates before expiry (what
kopf's ``settings.admission.managed`` and ``server = WebhookServer()`` do, and cert-controller's
rotator for controller-runtime).

Opt in with ``Manager(..., webhook_server=WebhookServer(...), webhook_configuration=
WebhookConfiguration(name="memcached-operator", service=ServiceReference("ns", "svc"),
self_signed=SelfSigned()))``. For every ``defaulter``/``validator`` registered on the server (by
``WebhookBuilder``) the configuration named ``name`` gets one webhook:

- name ``m<kind>-<version>.<group or core>.<name>`` (``v...`` for validators), clientConfig the
  service (with the webhook's path) or ``url`` + path, ``caBundle`` the serving certificate's CA;
- one rule: the kind's group, version and resource (from discovery), the operations served
  (CREATE and UPDATE for defaulters; those with a callback for validators), ``scope: "*"``;
- ``sideEffects: None`` (so dry-run requests are sent), ``admissionReviewVersions: [v1, v1beta1]``,
  ``matchPolicy: Equivalent``, ``failurePolicy`` and ``timeoutSeconds`` from the options.

Ownership: the annotation ``framework.webhook/managed-webhooks`` lists the webhooks this manager
wrote. Webhooks of other names in the same object are never changed or removed; a webhook listed there
that is no longer registered is removed; the objects are never deleted (a stopping replica must not
open the gate for the others). Drift (someone edits or deletes the object) is repaired within
``resync_period`` seconds.

Self-signed mode writes a fresh CA and serving certificate into the server's ``cert_dir`` before the
server starts, and ``rotate_before`` seconds before the certificate expires issues a new CA and
certificate: the configuration's caBundle first trusts both CAs, then the files are swapped (one
symlink rename, as kubelet updates Secret volumes), so the server's next handshake serves the new
certificate while open connections carry on. One replica per CA: several replicas each minting their
own CA overwrite each other's caBundle; use certificates from cert-manager (``ca.crt`` in the
``cert_dir``, or ``ca_bundle=``) for more.
"""

from __future__ import annotations

import base64
import datetime
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import structlog

from framework.certs import CertKeyPair, generate_ca, issue_serving_cert
from framework.client.errors import NotFound
from framework.meta.schema import GroupVersion
from framework.webhook.typed import CustomDefaulter, CustomValidator

__all__ = [
    "MANAGED_ANNOTATION",
    "SelfSigned",
    "ServiceReference",
    "WebhookConfiguration",
    "WebhookConfigurator",
]

log = structlog.get_logger("framework.webhook")

MANAGED_ANNOTATION = "framework.webhook/managed-webhooks"
ADMISSION_V1 = "admissionregistration.k8s.io/v1"
DAY = 86400.0
# After a failed write, retry sooner than the resync period.
_RETRY_SECONDS = 2.0


@dataclass(frozen=True)
class ServiceReference:
    """The Service in front of the webhook server (``clientConfig.service``)."""

    namespace: str
    name: str
    port: int = 443

    def hosts(self) -> tuple[str, ...]:
        """The names kube-apiserver verifies the serving certificate for."""
        return (
            f"{self.name}.{self.namespace}.svc",
            f"{self.name}.{self.namespace}.svc.cluster.local",
            f"{self.name}.{self.namespace}",
        )


@dataclass(frozen=True)
class SelfSigned:
    """A self-signed serving certificate managed by the manager.

    ``validity`` and ``rotate_before`` are seconds (90 days, renewed 30 days before expiry); ``hosts``
    are extra names or IPs for the certificate besides the service's names or the URL's host. A new
    certificate is served ``propagation_delay`` seconds after the configurations trust its CA (the
    API server's informers need a moment to see the new caBundle).
    """

    validity: float = 90 * DAY
    rotate_before: float = 30 * DAY
    hosts: tuple[str, ...] = ()
    propagation_delay: float = 10.0

    def __post_init__(self) -> None:
        if self.propagation_delay < 0:
            raise ValueError("SelfSigned: propagation_delay must not be negative")
        if not 0 < self.rotate_before < self.validity:
            raise ValueError(
                f"SelfSigned: rotate_before ({self.rotate_before:g}s) must be positive and less than "
                f"validity ({self.validity:g}s)"
            )


@dataclass(frozen=True)
class WebhookConfiguration:
    """What the manager writes; exactly one of ``service`` and ``url`` (the server's base URL as the
    API server reaches it, ``https://host:port``).

    The caBundle is ``ca_bundle`` (PEM) if given, else the self-signed CA with ``self_signed``, else
    ``ca.crt`` in the server's ``cert_dir`` if present (cert-manager writes it), else none (the API
    server's own trust roots).
    """

    name: str
    service: ServiceReference | None = None
    url: str | None = None
    ca_bundle: bytes | None = None
    self_signed: SelfSigned | None = None
    failure_policy: str = "Fail"
    timeout_seconds: int = 10
    resync_period: float = 60.0

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("WebhookConfiguration: name must not be empty")
        if (self.service is None) == (self.url is None):
            raise ValueError("WebhookConfiguration: give exactly one of service and url")
        if self.url is not None:
            parts = urlsplit(self.url)
            if parts.scheme != "https" or not parts.hostname or parts.query or parts.fragment:
                raise ValueError(f"WebhookConfiguration: url {self.url!r} must be https://host[:port][/path]")
        if self.failure_policy not in ("Fail", "Ignore"):
            raise ValueError(
                f"WebhookConfiguration: failure_policy {self.failure_policy!r} must be Fail or Ignore"
            )
        if not 1 <= self.timeout_seconds <= 30:
            raise ValueError("WebhookConfiguration: timeout_seconds must be between 1 and 30")
        if self.ca_bundle is not None and self.self_signed is not None:
            raise ValueError("WebhookConfiguration: give ca_bundle or self_signed, not both")
        if self.resync_period <= 0:
            raise ValueError("WebhookConfiguration: resync_period must be positive")

    def hosts(self) -> tuple[str, ...]:
        """Names the serving certificate must cover."""
        extra = self.self_signed.hosts if self.self_signed else ()
        if self.service is not None:
            return (*self.service.hosts(), *extra)
        assert self.url is not None
        return (urlsplit(self.url).hostname or "", *extra)


def webhook_name(handler: CustomDefaulter | CustomValidator, config_name: str) -> str:
    gvk = handler.gvk
    prefix = "m" if handler.mutating else "v"
    return f"{prefix}{gvk.kind.lower()}-{gvk.version}.{gvk.group or 'core'}.{config_name}"


class WebhookConfigurator:
    """Keeps the webhook configurations (and a self-signed certificate) up to date; a manager
    runnable. ``prepare()`` before the server starts, ``start()`` / ``stop()`` as any runnable."""

    name = "webhook-configuration"

    def __init__(self, client: Any, server: Any, options: WebhookConfiguration) -> None:
        self.client = client
        self.server = server
        self.options = options
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._ca: CertKeyPair | None = None
        self._previous_ca: CertKeyPair | None = None
        self._pending: tuple[CertKeyPair, CertKeyPair] | None = None  # (CA, serving pair)
        self._trusted_at: float | None = None  # when the configurations first trusted the pending CA
        self._rotate_at = 0.0
        self._expires_at = 0.0
        self._written: dict[str, bool] = {}
        self.last_error: str | None = "not written yet"
        self.rotations = 0

    # -- certificates ------------------------------------------------------------------------------

    def _cert_paths(self) -> tuple[Path, Path, Path]:
        d = Path(self.server.cert_dir)
        return d, Path(self.server.certs.cert_path), Path(self.server.certs.key_path)

    def _issue(self) -> tuple[CertKeyPair, CertKeyPair]:
        ss = self.options.self_signed
        assert ss is not None
        validity = datetime.timedelta(seconds=ss.validity)
        # The CA lives twice as long as its certificate: it stays valid while kept as the previous CA.
        ca = generate_ca(f"{self.options.name}-webhook-ca", 2 * validity)
        return ca, issue_serving_cert(ca, self.options.hosts(), validity)

    def _install(self, ca: CertKeyPair, pair: CertKeyPair) -> None:
        """Swap the serving files in one rename: ``tls.crt`` -> ``..data/tls.crt`` -> ``..<n>/``."""
        directory, cert_path, key_path = self._cert_paths()
        directory.mkdir(parents=True, exist_ok=True)
        stamp = f"..{time.time_ns()}"
        target = directory / stamp
        target.mkdir(mode=0o700)
        pair.write(target, "tls")
        os.replace(target / "tls.crt", target / cert_path.name)
        os.replace(target / "tls.key", target / key_path.name)
        (target / "ca.crt").write_bytes(ca.cert_pem)
        link = directory / "..data_tmp"
        link.unlink(missing_ok=True)
        link.symlink_to(stamp)
        os.replace(link, directory / "..data")
        for name in (cert_path.name, key_path.name, "ca.crt"):
            path = directory / name
            if not (path.is_symlink() and os.readlink(path) == f"..data/{name}"):
                tmp = directory / f".{name}.tmp"
                tmp.unlink(missing_ok=True)
                tmp.symlink_to(f"..data/{name}")
                os.replace(tmp, path)
        for old in directory.glob("..[0-9]*"):
            if old.name != stamp and old.is_dir():
                for f in old.iterdir():
                    f.unlink()
                old.rmdir()
        cert = pair.cert
        ss = self.options.self_signed
        assert ss is not None
        with self._lock:
            self._previous_ca, self._ca = self._ca, ca
            self._expires_at = cert.not_valid_after_utc.timestamp()
            self._rotate_at = self._expires_at - ss.rotate_before
        log.info(
            "serving certificate issued",
            serial=f"{cert.serial_number:x}",
            expires=cert.not_valid_after_utc.isoformat(),
            dir=str(directory),
        )

    def prepare(self) -> None:
        """Write the first self-signed certificate (no-op otherwise); before the server starts."""
        if self.options.self_signed is not None and self._ca is None:
            self._install(*self._issue())

    def rotate_now(self) -> None:
        """Rotate the self-signed certificate at once (as if it were due)."""
        with self._lock:
            self._rotate_at = 0.0
        self._wake.set()

    def ca_bundle(self) -> bytes | None:
        """The PEM the configurations trust (the pending CA too while a rotation is under way)."""
        if self.options.ca_bundle is not None:
            return self.options.ca_bundle
        if self.options.self_signed is not None:
            with self._lock:
                cas = [p[0] for p in (self._pending,) if p] + [c for c in (self._ca, self._previous_ca) if c]
            return b"".join(c.cert_pem for c in cas) or None
        ca_file = Path(self.server.cert_dir) / "ca.crt"
        try:
            return ca_file.read_bytes()
        except FileNotFoundError:
            return None

    # -- desired state -----------------------------------------------------------------------------

    def _client_config(self, path: str) -> dict[str, Any]:
        cc: dict[str, Any]
        if self.options.service is not None:
            s = self.options.service
            cc = {"service": {"namespace": s.namespace, "name": s.name, "port": s.port, "path": path}}
        else:
            assert self.options.url is not None
            cc = {"url": self.options.url.rstrip("/") + path}
        bundle = self.ca_bundle()
        if bundle:
            cc["caBundle"] = base64.b64encode(bundle).decode()
        return cc

    def desired(self) -> dict[bool, list[dict[str, Any]]]:
        """Webhooks by ``mutating``, for the typed handlers registered on the server."""
        out: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
        for path, handler in sorted(self.server.webhooks.items()):
            if not isinstance(handler, CustomDefaulter | CustomValidator):
                continue
            gvk = handler.gvk
            mapping = self.client.mapping(str(GroupVersion(gvk.group, gvk.version)), gvk.kind)
            operations = list(handler.operations)
            hook: dict[str, Any] = {
                "name": webhook_name(handler, self.options.name),
                "clientConfig": self._client_config(path),
                "rules": [
                    {
                        "operations": operations,
                        "apiGroups": [gvk.group],
                        "apiVersions": [gvk.version],
                        "resources": [mapping.resource],
                        "scope": "*",
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1", "v1beta1"],
                "matchPolicy": "Equivalent",
                "failurePolicy": self.options.failure_policy,
                "timeoutSeconds": self.options.timeout_seconds,
            }
            if handler.mutating:
                hook["reinvocationPolicy"] = "Never"
            out[handler.mutating].append(hook)
        return out

    # -- reconcile ---------------------------------------------------------------------------------

    def reconcile(self) -> None:
        """Create or update both configurations once; raises on API errors."""
        desired = self.desired()
        for mutating in (True, False):
            self._reconcile_one(mutating, desired[mutating])

    def _reconcile_one(self, mutating: bool, want: list[dict[str, Any]]) -> None:
        kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
        try:
            current = self.client.get(ADMISSION_V1, kind, self.options.name)
        except NotFound:
            current = None
        names = [h["name"] for h in want]
        if current is None:
            if not want:
                return
            self.client.create(
                {
                    "apiVersion": ADMISSION_V1,
                    "kind": kind,
                    "metadata": {
                        "name": self.options.name,
                        "annotations": {MANAGED_ANNOTATION: ",".join(sorted(names))},
                    },
                    "webhooks": want,
                }
            )
            log.info("webhook configuration created", kind=kind, name=self.options.name, webhooks=names)
            self._written[kind] = True
            return
        annotations = current["metadata"].get("annotations") or {}
        ours_before = {n for n in (annotations.get(MANAGED_ANNOTATION) or "").split(",") if n}
        wanted = {h["name"]: h for h in want}
        webhooks: list[dict[str, Any]] = []
        for hook in current.get("webhooks") or []:
            name = hook.get("name")
            if name in wanted:
                webhooks.append(_merged(hook, wanted.pop(name)))
            elif name not in ours_before:
                webhooks.append(hook)  # someone else's: kept as is
        webhooks.extend(wanted.values())
        managed = ",".join(sorted(names))
        if webhooks == (current.get("webhooks") or []) and annotations.get(MANAGED_ANNOTATION) == managed:
            self._written[kind] = True
            return
        if not webhooks and not (current.get("webhooks") or []) and not names:
            return
        current["webhooks"] = webhooks
        current["metadata"].setdefault("annotations", {})[MANAGED_ANNOTATION] = managed
        if not names:
            del current["metadata"]["annotations"][MANAGED_ANNOTATION]
        self.client.update(current)
        log.info("webhook configuration updated", kind=kind, name=self.options.name, webhooks=names)
        self._written[kind] = True

    # -- runnable ----------------------------------------------------------------------------------

    def readiness(self) -> str | None:
        """Why the configuration is not written yet (for ``/readyz``), or None."""
        return f"webhook configuration {self.options.name}: {self.last_error}" if self.last_error else None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="webhook-configuration", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        ss = self.options.self_signed
        while not self._stop.is_set():
            if ss is not None:
                self._maybe_rotate()
            try:
                self.reconcile()
            except Exception as error:  # an API error is retried; the reason shows on /readyz
                self.last_error = f"{type(error).__name__}: {error}"
                log.warning(
                    "cannot write the webhook configuration", name=self.options.name, error=str(error)
                )
                ok = False
            else:
                self.last_error = None
                ok = True
            wait = self.options.resync_period if ok else _RETRY_SECONDS
            if ss is not None:
                wait = min(wait, self._advance_rotation(ok, ss))
            self._wake.wait(wait)
            self._wake.clear()

    def _maybe_rotate(self) -> None:
        with self._lock:
            due = self._pending is None and time.time() >= self._rotate_at
        if due:
            pending = self._issue()
            with self._lock:
                self._pending, self._trusted_at = pending, None
            log.info("rotating the serving certificate: the new CA is trusted first", name=self.options.name)

    def _advance_rotation(self, written: bool, ss: SelfSigned) -> float:
        """Install a pending certificate once its CA has been trusted for ``propagation_delay``
        seconds (or the current one is about to expire); returns how long to sleep at most."""
        now = time.time()
        with self._lock:
            pending = self._pending
            if pending is None:
                return max(0.0, self._rotate_at - now)
            if written and self._trusted_at is None:
                self._trusted_at = now
            trusted_at = self._trusted_at
            expiring = now >= self._expires_at - min(60.0, ss.rotate_before / 2)
        if not expiring and (trusted_at is None or now < trusted_at + ss.propagation_delay):
            return _RETRY_SECONDS if trusted_at is None else trusted_at + ss.propagation_delay - now
        self._install(*pending)
        with self._lock:
            self._pending, self._trusted_at = None, None
            self.rotations += 1
            return max(0.0, self._rotate_at - time.time())


def _merged(current: dict[str, Any], want: dict[str, Any]) -> dict[str, Any]:
    """``current`` with the fields we set replaced; server-defaulted fields we do not set are kept."""
    merged = dict(current)
    merged.update(want)
    return merged
