"""Fault injection reachable from outside the process, for chaos runs (``bench/chaos.py``).

:mod:`.faults` is the in-process kind tests use (``APIServer.inject_failure``); this one is set over
HTTP, matches by user too, can delay instead of failing, and expires by time.

Off unless ``python -m framework.apiserver --fault-injection`` (or ``APIServer(chaos=True)``).
When on, ``POST /debug/faults`` with a JSON body controls the server; only members of
``system:masters`` may call it (others get 403), and without the flag the path does not exist (404).

Actions (``{"action": ...}``):

* ``fail``: answer matching requests with ``status`` (e.g. 429 with ``retryAfter``, 500) for
  ``seconds`` (or the next ``count`` matches);
* ``delay``: hold matching requests ``delay`` seconds before serving them, for ``seconds``;
* ``clear``: drop every rule;
* ``drop-watches``: close every open watch stream;
* ``compact``: make every older resourceVersion too old (410 for watches and exact lists).

A rule matches on ``verbs`` (list, empty = all), ``resources`` (plural names, empty = all) and
``user_prefix`` (the authenticated user name starts with it; empty = everyone), so a chaos driver can
hit the controllers under test without hitting its own workload.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
import structlog
from aiohttp import web

from framework.apiserver.auth.authenticator import MASTERS
from framework.apiserver.faults.injection import REASONS
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError

if TYPE_CHECKING:
    from framework.apiserver.server import APIServer

log = structlog.get_logger("framework.apiserver.faults.control")

PATH = "/debug/faults"


@dataclass
class Rule:
    """One injected fault: fail with ``status`` or hold for ``delay`` seconds, while it lasts."""

    status: int = 0
    delay: float = 0.0
    verbs: frozenset[str] = frozenset()
    resources: frozenset[str] = frozenset()
    user_prefix: str = ""
    until: float = float("inf")  # monotonic deadline
    remaining: int | None = None
    retry_after: int | None = None
    hits: int = field(default=0, compare=False)

    def matches(self, user: str, verb: str, resource: str, now: float) -> bool:
        if now >= self.until or (self.remaining is not None and self.remaining <= 0):
            return False
        return (
            (not self.verbs or verb in self.verbs)
            and (not self.resources or resource in self.resources)
            and user.startswith(self.user_prefix)
        )


class FaultControl:
    """The rules and the admin endpoint; every method runs on the server's event loop."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.rules: list[Rule] = []
        self.injected = 0  # requests failed or delayed so far

    async def before(self, user: str, verb: str, resource: str) -> None:
        """Apply the rules to one resource request: sleep for delays, raise for failures."""
        now = time.monotonic()
        self.rules = [r for r in self.rules if now < r.until and (r.remaining is None or r.remaining > 0)]
        for rule in list(self.rules):
            if not rule.matches(user, verb, resource, now):
                continue
            rule.hits += 1
            self.injected += 1
            if rule.remaining is not None:
                rule.remaining -= 1
            if rule.delay > 0:
                await asyncio.sleep(rule.delay)
                continue
            headers, details = {}, {}
            if rule.retry_after is not None:
                headers["Retry-After"] = str(rule.retry_after)
                details["retryAfterSeconds"] = rule.retry_after
            reason = REASONS.get(rule.status, "InternalError")
            raise StatusError(rule.status, reason, f"injected fault for {verb} {resource}", details, headers)

    async def handle(self, request: web.Request, user: Any) -> web.Response:
        """``POST /debug/faults``: admins only, a JSON action; answers what is active now."""
        if user is None or MASTERS not in user.groups:
            raise StatusError(403, "Forbidden", f"forbidden: {PATH} is for {MASTERS} only", {})
        if request.method != "POST":
            raise StatusError(405, "MethodNotAllowed", f"{PATH} accepts POST only", {})
        try:
            body = orjson.loads(await request.read())
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
            self._apply(body)
        except (ValueError, TypeError, KeyError) as e:
            raise errors.bad_request(f"{PATH}: {e}") from None
        log.info("fault", **{k: v for k, v in body.items() if isinstance(v, str | int | float)})
        return web.Response(
            body=orjson.dumps({"rules": len(self.rules), "injected": self.injected}),
            content_type="application/json",
        )

    def _apply(self, body: dict) -> None:
        action = body.get("action")
        if action == "clear":
            self.rules.clear()
        elif action == "drop-watches":
            self.server.handler.drop_watches()
        elif action == "compact":
            self.server.storage.compact()
        elif action in ("fail", "delay"):
            status = int(body.get("status", 0))
            delay = float(body.get("delay", 0.0))
            if action == "fail" and not 400 <= status <= 599:
                raise ValueError(f"status must be 400-599, not {status}")
            if action == "delay" and not 0 < delay <= 60:
                raise ValueError(f"delay must be in (0, 60] seconds, not {delay}")
            seconds = body.get("seconds")
            count = body.get("count")
            if seconds is None and count is None:
                raise ValueError("one of seconds or count is required")
            self.rules.append(
                Rule(
                    status=status if action == "fail" else 0,
                    delay=delay if action == "delay" else 0.0,
                    verbs=frozenset(_strings(body, "verbs")),
                    resources=frozenset(_strings(body, "resources")),
                    user_prefix=str(body.get("user_prefix", "")),
                    until=time.monotonic() + float(seconds) if seconds is not None else float("inf"),
                    remaining=int(count) if count is not None else None,
                    retry_after=int(body["retryAfter"]) if body.get("retryAfter") is not None else None,
                )
            )
        else:
            raise ValueError(f"unknown action {action!r} (fail, delay, clear, drop-watches, compact)")


def _strings(body: dict, key: str) -> list[str]:
    value = body.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key} must be a list of strings")
    return value
