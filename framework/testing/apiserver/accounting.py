"""Request accounting: how many requests each user made, by verb, resource and response code.

Benchmarks and tests read :meth:`RequestAccounting.counts` in Python; the same counters are served in
the Prometheus text format at ``/metrics`` as ``apiserver_request_total`` (with a ``user`` label added
to kube-apiserver's usual ones).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, NamedTuple

from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily


@dataclass
class RequestInfo:
    """Who asked for what, for request accounting (filled in while the request is handled)."""

    verb: str
    resource: str
    user: Any = None
    namespace: str | None = None
    name: str | None = None


REQUEST_INFO = web.RequestKey("k8s", RequestInfo)


class RequestKey(NamedTuple):
    user: str
    verb: str
    resource: str
    code: int


class RequestAccounting:
    def __init__(self) -> None:
        self._counts: Counter[RequestKey] = Counter()
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(self)

    def record(self, info: Any, code: int) -> None:
        user = info.user.name if info.user is not None else ""
        self._counts[RequestKey(user, info.verb, info.resource, code)] += 1

    def counts(self) -> dict[RequestKey, int]:
        return dict(self._counts)

    def reset(self) -> None:
        self._counts.clear()

    def collect(self):  # prometheus_client collector protocol
        family = CounterMetricFamily(
            "apiserver_request",
            "Requests served, by user, verb, resource and HTTP code.",
            labels=["user", "verb", "resource", "code"],
        )
        for key, n in sorted(self._counts.items()):
            family.add_metric([key.user, key.verb.upper(), key.resource, str(key.code)], n)
        yield family

    def render(self) -> bytes:
        return generate_latest(self.registry)
