"""Resource locks for leader election: the election record and a ``coordination.k8s.io/v1`` Lease lock.

A lock is the object every candidate reads and writes. :class:`LeaseLock` keeps the
:class:`LeaderElectionRecord` in a Lease's ``spec`` and remembers the last Lease it read or wrote, so
every update carries that ``metadata.resourceVersion``: a concurrent writer turns the update into a
``Conflict`` instead of a lost write (client-go's ``resourcelock/leaselock.go``).

Timestamps are ``MicroTime`` values with exactly six fraction digits in UTC
(``2024-05-01T10:00:00.123456Z``), the only form the API server accepts for ``acquireTime`` and
``renewTime``.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from framework.client import Client
from framework.meta.object import get_metadata
from framework.meta.time import format_micro_time, parse_time_or_none

__all__ = [
    "LEASE_API_VERSION",
    "LEASE_KIND",
    "LeaderElectionRecord",
    "LeaseLock",
    "ResourceLock",
]

LEASE_API_VERSION = "coordination.k8s.io/v1"
LEASE_KIND = "Lease"

TimeoutSpec = float | tuple[float, float] | None


@dataclass(frozen=True)
class LeaderElectionRecord:
    """What a lock holds (client-go's ``LeaderElectionRecord``); immutable, compare with ``==``.

    An empty ``holder_identity`` means nobody holds the lock (it was released).
    """

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    lease_transitions: int = 0

    def to_lease_spec(self) -> dict[str, Any]:
        """The Lease ``spec`` for this record (timestamps as six-digit ``MicroTime``)."""
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": int(self.lease_duration_seconds),
            "leaseTransitions": int(self.lease_transitions),
        }
        if self.acquire_time is not None:
            spec["acquireTime"] = format_micro_time(self.acquire_time)
        if self.renew_time is not None:
            spec["renewTime"] = format_micro_time(self.renew_time)
        return spec

    @classmethod
    def from_lease_spec(cls, spec: Any) -> LeaderElectionRecord:
        """The record kept in a Lease ``spec`` (missing or malformed fields read as empty/zero)."""
        spec = spec if isinstance(spec, dict) else {}
        holder = spec.get("holderIdentity")
        duration = spec.get("leaseDurationSeconds")
        transitions = spec.get("leaseTransitions")
        return cls(
            holder_identity=holder if isinstance(holder, str) else "",
            lease_duration_seconds=duration if _is_int(duration) else 0,
            # Unparsable reads as unset: the elector relies on the record changing, not on these.
            acquire_time=parse_time_or_none(spec.get("acquireTime")),
            renew_time=parse_time_or_none(spec.get("renewTime")),
            lease_transitions=transitions if _is_int(transitions) else 0,
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@runtime_checkable
class ResourceLock(Protocol):
    """What :class:`~framework.leaderelection.LeaderElector` needs from a lock.

    ``get`` raises :class:`~framework.client.NotFound` when the object does not exist; ``update``
    must be optimistic (fail with :class:`~framework.client.Conflict` if the object changed since
    the last ``get``/``create``/``update``). ``timeout`` bounds each request, in seconds.
    """

    identity: str
    name: str

    def describe(self) -> str: ...

    def get(self, *, timeout: TimeoutSpec = None) -> tuple[LeaderElectionRecord, Any]: ...

    def create(self, record: LeaderElectionRecord, *, timeout: TimeoutSpec = None) -> Any: ...

    def update(self, record: LeaderElectionRecord, *, timeout: TimeoutSpec = None) -> Any: ...


class LeaseLock:
    """A leader-election lock kept in a ``coordination.k8s.io/v1`` Lease.

    Args:
        client: the :class:`~framework.client.Client` to read and write the Lease with.
        namespace: the Lease's namespace.
        name: the Lease's name (the election's name).
        identity: this candidate's unique identity (e.g. pod name + a random suffix).
        labels: labels put on the Lease when this lock creates or updates it.

    Not meant to be shared between electors: it remembers the last Lease seen, whose
    ``resourceVersion`` the next :meth:`update` sends.
    """

    def __init__(
        self,
        client: Client,
        namespace: str,
        name: str,
        identity: str,
        *,
        labels: dict[str, str] | None = None,
    ) -> None:
        if not namespace:
            raise ValueError("LeaseLock namespace must not be empty")
        if not name:
            raise ValueError("LeaseLock name must not be empty")
        if not identity:
            raise ValueError("LeaseLock identity must not be empty")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.labels = dict(labels or {})
        self._lock = threading.Lock()
        self._lease: dict[str, Any] | None = None

    def describe(self) -> str:
        """``namespace/name`` of the Lease."""
        return f"{self.namespace}/{self.name}"

    def __repr__(self) -> str:
        return f"LeaseLock({self.describe()!r}, identity={self.identity!r})"

    @property
    def lease(self) -> dict[str, Any] | None:
        """A copy of the last Lease read or written (``None`` before the first call)."""
        with self._lock:
            return copy.deepcopy(self._lease)

    def get(self, *, timeout: TimeoutSpec = None) -> tuple[LeaderElectionRecord, dict[str, Any]]:
        """Read the Lease: ``(record, lease)`` (the lease a copy). Raises ``NotFound`` if missing."""
        lease = self.client.get(LEASE_API_VERSION, LEASE_KIND, self.name, self.namespace, timeout=timeout)
        with self._lock:
            self._lease = lease
        return LeaderElectionRecord.from_lease_spec(lease.get("spec")), copy.deepcopy(lease)

    def create(self, record: LeaderElectionRecord, *, timeout: TimeoutSpec = None) -> dict[str, Any]:
        """Create the Lease holding ``record`` (``AlreadyExists`` if another candidate was first)."""
        metadata: dict[str, Any] = {"name": self.name, "namespace": self.namespace}
        if self.labels:
            metadata["labels"] = dict(self.labels)
        body = {
            "apiVersion": LEASE_API_VERSION,
            "kind": LEASE_KIND,
            "metadata": metadata,
            "spec": record.to_lease_spec(),
        }
        lease = self.client.create(body, timeout=timeout)
        with self._lock:
            self._lease = lease
        return copy.deepcopy(lease)

    def update(self, record: LeaderElectionRecord, *, timeout: TimeoutSpec = None) -> dict[str, Any]:
        """Replace the record, sending the ``resourceVersion`` last seen (``Conflict`` if it moved).

        Raises ``RuntimeError`` before the first :meth:`get` or :meth:`create`.
        """
        with self._lock:
            if self._lease is None:
                raise RuntimeError("lease not initialized, call get or create first")
            metadata = copy.deepcopy(dict(get_metadata(self._lease)))
        metadata.pop("managedFields", None)
        if self.labels:
            metadata["labels"] = {**(metadata.get("labels") or {}), **self.labels}
        body = {
            "apiVersion": LEASE_API_VERSION,
            "kind": LEASE_KIND,
            "metadata": metadata,
            "spec": record.to_lease_spec(),
        }
        lease = self.client.update(body, timeout=timeout)
        with self._lock:
            self._lease = lease
        return copy.deepcopy(lease)
