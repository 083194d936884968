"""Named health checks and the probe server; see ``framework.healthz``."""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Callable

import structlog

from framework.server import ConnectionLimits, HTTPServer, Request, Response, parse_bind_address

__all__ = ["Checker", "Checks", "HealthProbeServer", "ping", "run_check"]

log = structlog.get_logger("framework.healthz")

Checker = Callable[[], object]


def ping() -> None:
    """The always-passing check registered as ``ping``."""


def run_check(check: Checker) -> str | None:
    """None if ``check`` passes, else its failure reason."""
    try:
        result = check()
    except Exception as error:
        return str(error) or type(error).__name__
    if result is None or result is True:
        return None
    if result is False:
        return "check failed"
    if isinstance(result, BaseException):
        return str(result) or type(result).__name__
    return str(result) or "check failed"


class Checks:
    """The named checks of one endpoint (``healthz`` or ``readyz``), served as controller-runtime does."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint.strip("/")
        self._lock = threading.Lock()
        self._checks: dict[str, Checker] = {"ping": ping}

    def add(self, name: str, check: Checker) -> None:
        """Register ``check`` as ``name`` (unique, no ``/``)."""
        if not name or "/" in name:
            raise ValueError(f"invalid {self.endpoint} check name {name!r}")
        if not callable(check):
            raise TypeError(f"{self.endpoint} check {name!r} is not callable")
        with self._lock:
            if name in self._checks:
                raise ValueError(f"{self.endpoint} check with name {name!r} already exists")
            self._checks[name] = check

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._checks)

    def results(self, exclude: frozenset[str] = frozenset()) -> dict[str, str | None]:
        """Failure reason (None = passed) of every check not in ``exclude``, by name, sorted."""
        with self._lock:
            checks = sorted(self._checks.items())
        return {name: run_check(check) for name, check in checks if name not in exclude}

    def serve(self, request: Request) -> Response:
        """Handle ``/<endpoint>`` and ``/<endpoint>/<check>``."""
        path = posixpath.normpath(request.path)
        base = "/" + self.endpoint
        if path == base:
            return self._aggregate(request)
        name = path[len(base) + 1 :] if path.startswith(base + "/") else ""
        with self._lock:
            check = self._checks.get(name)
        if check is None:
            return Response(404, b"404 page not found\n")
        reason = run_check(check)
        if reason is None:
            return Response(200, b"ok")
        log.info(f"{self.endpoint} check failed", checker=name, error=reason)
        return Response(500, f"internal server error: {reason}\n".encode())

    def _aggregate(self, request: Request) -> Response:
        requested = request.query.get("exclude", [])
        with self._lock:
            known = set(self._checks)
        unknown = sorted(set(requested) - known)
        results = self.results(frozenset(requested))
        failed = {name: reason for name, reason in results.items() if reason is not None}
        verbose = "verbose" in request.query
        if not failed and not verbose:
            return Response(200, b"ok")
        entries = [(name, f"[+]{name} excluded: ok") for name in known & set(requested)]
        for name, reason in results.items():
            if reason is None:
                entries.append((name, f"[+]{name} ok"))
            else:
                entries.append((name, f"[-]{name} failed: {reason if verbose else 'reason withheld'}"))
        lines = [line for _, line in sorted(entries)]
        if unknown:
            quoted = ", ".join(f'"{name}"' for name in unknown)
            lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
        if failed:
            log.info(f"{self.endpoint} check failed", failed=failed)
            lines.append("healthz check failed")
        else:
            lines.append("healthz check passed")
        return Response(500 if failed else 200, ("\n".join(lines) + "\n").encode())


class HealthProbeServer(HTTPServer):
    """Plain-HTTP server for ``/healthz`` and ``/readyz`` on a controller-runtime style bind address."""

    def __init__(
        self,
        bind_address: str = ":8081",
        *,
        name: str = "health-probe-server",
        shutdown_timeout: float = 5.0,
        limits: ConnectionLimits | None = None,
    ) -> None:
        parsed = parse_bind_address(bind_address)
        if parsed is None:
            raise ValueError(f"health probe bind address {bind_address!r} disables the server")
        super().__init__(*parsed, name=name, shutdown_timeout=shutdown_timeout, limits=limits)
        self.healthz = Checks("healthz")
        self.readyz = Checks("readyz")
        for checks in (self.healthz, self.readyz):
            self.route("/" + checks.endpoint, checks.serve, prefix=True)

    def add_healthz_check(self, name: str, check: Checker) -> None:
        """Add a liveness check (``/healthz``, ``/healthz/<name>``)."""
        self.healthz.add(name, check)

    def add_readyz_check(self, name: str, check: Checker) -> None:
        """Add a readiness check (``/readyz``, ``/readyz/<name>``)."""
        self.readyz.add(name, check)
