"""``APIServerConnection``: waits for the garden API server and says whether it has been reached.

A replica may start before its API server answers (a normal rollout order). Nothing in gcm fails for
that: the caches and leader election retry on their own. This runnable makes the wait visible: it asks
``/version`` with client-go's backoff (0.8 s doubling to 30 s, jittered) until the server answers,
logs every failed attempt as a warning with the error and the next retry, logs the first successful
contact, and backs the ``apiserver`` readiness check, which fails with the server's address and the
last error until then.
"""

from __future__ import annotations

import threading
from typing import Any

import structlog

from framework.cache import Backoff
from framework.client import APIError, Forbidden, Unauthorized

__all__ = ["APIServerConnection"]

log = structlog.get_logger("gcm")


class APIServerConnection:
    """A Runnable (``mgr.add(..., need_leader_election=False)``) and a readiness check (``check``)."""

    name = "apiserver-connection"

    def __init__(self, client: Any, backoff: Backoff | None = None) -> None:
        self._client = client
        self._backoff = backoff or Backoff()
        self._connected = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._last_error = "not contacted yet"
        self._thread: threading.Thread | None = None

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def check(self) -> str | None:
        """The readiness check: None once the API server answered, else what is wrong."""
        if self._connected.is_set():
            return None
        with self._lock:
            return f"API server {self._client.host} not reached yet: {self._last_error}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> bool:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def _run(self) -> None:
        attempts = 0
        while not self._stop.is_set():
            attempts += 1
            try:
                version = self._client.request("GET", "/version") or {}
            except (Unauthorized, Forbidden) as e:
                self._failed(f"the API server rejects gcm's credentials: {e}", attempts)
            except (APIError, OSError) as e:
                self._failed(str(e), attempts)
            else:
                self._connected.set()
                log.info(
                    "connected to the API server",
                    host=self._client.host,
                    version=version.get("gitVersion") if isinstance(version, dict) else None,
                    attempts=attempts,
                )
                return

    def _failed(self, error: str, attempts: int) -> None:
        with self._lock:
            self._last_error = error
        delay = self._backoff.next()
        log.warning(
            "API server not reachable, retrying",
            host=self._client.host,
            error=error,
            attempt=attempts,
            retry_in=round(delay, 1),
        )
        self._stop.wait(delay)
