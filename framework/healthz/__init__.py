"""Liveness and readiness probes with named checks, answered like controller-runtime's pkg/healthz.

A check is a function of no arguments: it passes by returning None (or True) and fails by raising, or
by returning an error string, an exception or False. ``ping`` is always registered::

    from framework.healthz import HealthProbeServer

    probes = HealthProbeServer("127.0.0.1:8081")  # ":8081" = all interfaces; port 0 = a free port
    probes.add_readyz_check("informers", lambda: None if cache.has_synced() else "caches not synced")
    probes.start()
    ...
    probes.stop()

Endpoints (``<endpoint>`` is ``healthz`` or ``readyz``):

- ``/<endpoint>``: 200 ``ok`` when every check passes; else 500 with one line per check
  (``[+]ping ok``, ``[-]informers failed: reason withheld``) and ``healthz check failed``;
  ``?verbose`` lists the lines on success too (ending ``healthz check passed``) and shows each failure's
  reason instead of withholding it; ``?exclude=<check>`` (repeatable) skips checks;
- ``/<endpoint>/<check>``: that check alone, 200 ``ok`` or 500 ``internal server error: <reason>``;
  404 for unknown checks.

Failed checks are logged with their reasons. ``Checks`` is the per-endpoint handler, for mounting on
another ``framework.server.HTTPServer``.
"""

from framework.healthz.healthz import Checker, Checks, HealthProbeServer, ping, run_check

__all__ = ["Checker", "Checks", "HealthProbeServer", "ping", "run_check"]
