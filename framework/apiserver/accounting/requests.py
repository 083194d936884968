"""Request accounting: how many requests each user made, by verb, resource and response code.

Benchmarks and tests read :meth:`RequestAccounting.counts` in Python; the same counters are served in
the Prometheus text format at ``/metrics`` as ``apiserver_request_total`` (with a ``user`` label added
to kube-apiserver's usual ones).

A test that needs every single request (e.g. to check a ServiceAccount's RBAC against what it really
does) turns on :meth:`RequestAccounting.start_recording` and reads :class:`RequestRecord` entries:
user, verb, group, resource, subresource, namespace, name and whether the request was authorized.
Off by default: a benchmark's millions of requests are only counted.
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


class RequestRecord(NamedTuple):
    """One answered resource request, with the attributes its authorization saw.

    ``name`` is the URL's: empty for a create (POST to the collection) and for collection requests, as
    in kube-apiserver's RequestInfo (a list whose field selector pins ``metadata.name`` is authorized
    with that name, but recorded without it); ``code`` is 0 for a request the client gave up before
    its answer (a watch it closed); ``allowed`` is False only for a 403.
    """

    user: str
    verb: str
    group: str
    resource: str
    subresource: str
    namespace: str
    name: str
    code: int

    @property
    def allowed(self) -> bool:
        return self.code != 403


class RequestAccounting:
    def __init__(self) -> None:
        self._counts: Counter[RequestKey] = Counter()
        self._records: list[RequestRecord] | None = None
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(self)

    def record(self, info: Any, code: int) -> None:
        user = info.user.name if info.user is not None else ""
        self._counts[RequestKey(user, info.verb, info.resource, code)] += 1
        self._keep(info, user, code)

    def record_unanswered(self, info: Any) -> None:
        """A request the client gave up before its answer (a watch it closed): recorded as code 0 when
        recording, never counted."""
        self._keep(info, info.user.name if info.user is not None else "", 0)

    def _keep(self, info: Any, user: str, code: int) -> None:
        if self._records is None or info.resource.startswith("/"):  # off, or a path, not a resource
            return
        # ``plural[.group][/subresource]``: plurals hold no dot, groups no slash.
        qualified, _, subresource = info.resource.partition("/")
        resource, _, group = qualified.partition(".")
        ns, name = info.namespace or "", info.name or ""
        self._records.append(RequestRecord(user, info.verb, group, resource, subresource, ns, name, code))

    def start_recording(self) -> None:
        """Keep a :class:`RequestRecord` of every resource request from now on (clears earlier ones)."""
        self._records = []

    def records(self, user: str | None = None) -> list[RequestRecord]:
        """The requests recorded since :meth:`start_recording` (of ``user`` only, if given)."""
        return [r for r in self._records or () if user is None or r.user == user]

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
