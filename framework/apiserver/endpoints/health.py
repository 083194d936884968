"""``/healthz``, ``/livez`` and ``/readyz``: kube-apiserver's health checks, all trivially passing here.

The check names are those k8s.io/apiserver's ``pkg/server/healthz`` and the post-start hooks kube-apiserver
registers report.
"""

from __future__ import annotations

from aiohttp import web

HEALTH_PATHS = ("/healthz", "/livez", "/readyz")

_CHECKS = [
    "ping",
    "log",
    "etcd",
    "poststarthook/start-apiserver-admission-initializer",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/start-apiextensions-informers",
    "poststarthook/start-apiextensions-controllers",
    "poststarthook/crd-informer-synced",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/bootstrap-controller",
    "poststarthook/aggregator-reload-proxy-client-cert",
]
_READY_ONLY = ["etcd-readiness", "informer-sync", "shutdown"]


def is_health_path(path: str) -> bool:
    """Whether ``path`` is one of the health endpoints or a single check below one."""
    return path in HEALTH_PATHS or path.startswith(tuple(p + "/" for p in HEALTH_PATHS))


def health(request: web.Request) -> web.Response:
    """``/healthz``, ``/livez``, ``/readyz`` (1-6): ``ok``; ``?verbose`` lists the checks; a single
    check is ``/livez/NAME``; ``?exclude=NAME`` leaves one out."""
    endpoint, _, check = request.path.strip("/").partition("/")
    checks = _CHECKS[:3] + (_READY_ONLY[:2] if endpoint == "readyz" else []) + _CHECKS[3:]
    if endpoint == "readyz":
        checks.append("shutdown")
    if check:
        if check not in checks:
            return web.Response(status=404, text="404 page not found\n", content_type="text/plain")
        return web.Response(text="ok", content_type="text/plain")
    if "verbose" not in request.query:
        return web.Response(text="ok", content_type="text/plain")
    excluded = set(request.query.getall("exclude", []))
    lines = [f"[+]{c} ok" for c in checks if c not in excluded]
    lines += [f"[+]{c} excluded: ok" for c in checks if c in excluded]
    lines.append(f"{endpoint} check passed")
    return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")
