"""Serving certificates read from files and re-read when the files change, without a restart
(controller-runtime's ``pkg/certwatcher``); the webhook server and the secure metrics server use it.

``CertWatcher.context()`` is called for every TLS handshake. It stats the certificate and key files
(inode, size, mtime, ctime: an in-place rewrite and a kubelet Secret-volume symlink swap both change
them) and builds a fresh ``ssl.SSLContext`` when they differ from what was loaded; a file written in the
same timestamp tick as the last load is caught by comparing contents while that tick is recent (git's
"racy" check). If the new files do not load (a half-written rotation, a key that does not match the
certificate), the previous certificate keeps being served and the failure is logged and counted
(``certwatcher_read_certificate_errors_total``) once per change of the files.

``framework.certs.self_signed_cert(directory)`` (re-exported by :mod:`framework.webhook`) writes
``tls.crt``/``tls.key`` signed by a fresh throwaway CA, for development and tests; the CA certificate
PEM it returns goes into a webhook configuration's ``caBundle``.
"""

from __future__ import annotations

import hashlib
import os
import ssl
import threading
import time
import weakref
from pathlib import Path

import structlog
from cryptography import x509
from prometheus_client import REGISTRY, CollectorRegistry, Counter

__all__ = ["CertWatcher"]

log = structlog.get_logger("framework.webhook")

# Files modified less than this long before they were loaded may be rewritten within the same mtime
# tick; their contents are compared until the window has passed.
_RACY_WINDOW_NS = 2_000_000_000

_Signature = tuple[int, ...]

_counters: weakref.WeakKeyDictionary[CollectorRegistry, tuple[Counter, Counter]] = weakref.WeakKeyDictionary()
_counters_lock = threading.Lock()


def _read_counters(registry: CollectorRegistry | None) -> tuple[Counter, Counter]:
    """``certwatcher_read_certificate_total`` and ``_errors_total`` of ``registry`` (made on first use;
    every watcher on one registry shares them, as controller-runtime's are global)."""
    registry = REGISTRY if registry is None else registry
    with _counters_lock:
        counters = _counters.get(registry)
        if counters is None:
            counters = _counters[registry] = (
                Counter(
                    "certwatcher_read_certificate_total",
                    "Total number of certificate reads",
                    registry=registry,
                ),
                Counter(
                    "certwatcher_read_certificate_errors_total",
                    "Total number of certificate read errors",
                    registry=registry,
                ),
            )
        return counters


class CertWatcher:
    """The current TLS server context for a certificate/key file pair."""

    def __init__(
        self,
        cert_path: str | os.PathLike[str],
        key_path: str | os.PathLike[str],
        *,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.cert_path = Path(cert_path)
        self.key_path = Path(key_path)
        #: Where ``certwatcher_read_certificate_*`` are counted (``None``: ``prometheus_client.REGISTRY``);
        #: a manager sets its own on the servers it runs before they start.
        self.registry = registry
        self._lock = threading.Lock()
        self._context: ssl.SSLContext | None = None
        self._loaded: _Signature | None = None
        self._digest = b""
        self._racy_until_ns = 0
        self._failed: _Signature | None = None
        self._serial: int | None = None

    @property
    def serial_number(self) -> int | None:
        """Serial number of the certificate being served (None before the first successful read)."""
        return self._serial

    def listener_context(self) -> ssl.SSLContext:
        """The context a TLS listener is made with: it only carries a callback that switches every
        handshake to :meth:`context`, so a rotated certificate reaches new connections while established
        ones keep theirs. Loads the files (raises if they cannot be loaded)."""
        base = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        base.minimum_version = ssl.TLSVersion.TLSv1_2
        base.set_alpn_protocols(["http/1.1"])
        base.load_cert_chain(self.cert_path, self.key_path)
        base.sni_callback = self._select_context
        return base

    def _select_context(self, connection: ssl.SSLObject, server_name: str | None, _: ssl.SSLContext) -> None:
        try:
            connection.context = self.context()
        except Exception:  # keep the listener's context; the watcher logged and counted the failure
            log.exception("cannot select the serving certificate", cert=str(self.cert_path))

    def read(self) -> None:
        """Load the files now; raises (OSError, ssl.SSLError, ValueError) if they cannot be loaded."""
        with self._lock:
            self._load(self._signature())

    def context(self) -> ssl.SSLContext:
        """The context to handshake with, reloaded first if the files changed since the last load."""
        if self._context is None:
            self.read()
        try:
            signature = self._signature()
        except OSError:  # a file is missing mid-rotation: keep serving what we have
            signature = None
        if signature is not None and self._changed(signature):
            with self._lock:
                if self._changed(signature):
                    try:
                        self._load(signature)
                    except (OSError, ssl.SSLError, ValueError) as error:
                        self._failed = signature
                        log.warning(
                            "cannot reload the serving certificate; still serving the previous one",
                            cert=str(self.cert_path),
                            key=str(self.key_path),
                            error=str(error),
                        )
        assert self._context is not None
        return self._context

    def _signature(self) -> _Signature:
        cert, key = os.stat(self.cert_path), os.stat(self.key_path)
        return tuple(
            value
            for st in (cert, key)
            for value in (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        )

    def _changed(self, signature: _Signature) -> bool:
        if signature == self._failed:
            return False
        if signature != self._loaded:
            return True
        if time.time_ns() >= self._racy_until_ns:
            return False
        try:
            return self._read_digest() != self._digest
        except OSError:
            return False

    def _read_digest(self) -> bytes:
        return hashlib.sha256(self.cert_path.read_bytes() + b"\0" + self.key_path.read_bytes()).digest()

    def _load(self, signature: _Signature) -> None:
        _read_counters(self.registry)[0].inc()
        try:
            digest = self._read_digest()
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            context.set_alpn_protocols(["http/1.1"])
            context.load_cert_chain(self.cert_path, self.key_path)
            serial = x509.load_pem_x509_certificate(self.cert_path.read_bytes()).serial_number
        except Exception:
            _read_counters(self.registry)[1].inc()
            raise
        reloaded = self._context is not None
        self._context, self._loaded, self._digest, self._failed = context, signature, digest, None
        self._serial = serial
        newest_mtime_ns = max(signature[3], signature[8])
        self._racy_until_ns = newest_mtime_ns + _RACY_WINDOW_NS
        log.info(
            "serving certificate reloaded" if reloaded else "serving certificate loaded",
            cert=str(self.cert_path),
            serial=f"{serial:x}",
        )
