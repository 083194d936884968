"""The event handler types; see the package docstring."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from framework.reconcile import Request


class Queue(Protocol):
    def add(self, item: Any) -> None: ...


def unwrap(obj: Any) -> dict:
    """The object of a ``DeletedFinalStateUnknown`` tombstone, or the object itself."""
    inner = getattr(obj, "obj", None)
    return inner if isinstance(inner, dict) else obj


def request_for(obj: dict) -> Request:
    meta = obj.get("metadata") or {}
    return Request(meta.get("name", ""), meta.get("namespace") or "")


class EventHandler:
    """Maps events to requests; ``map`` gives the requests for one object."""

    def map(self, obj: dict) -> Iterable[Request]:
        raise NotImplementedError

    def create(self, obj: dict, queue: Queue) -> None:
        for r in self.map(obj):
            queue.add(r)

    def update(self, old: dict, new: dict, queue: Queue) -> None:
        for r in {*self.map(old), *self.map(new)}:
            queue.add(r)

    def delete(self, obj: Any, queue: Queue) -> None:
        for r in self.map(unwrap(obj)):
            queue.add(r)

    def generic(self, obj: dict, queue: Queue) -> None:
        for r in self.map(obj):
            queue.add(r)


class EnqueueRequestForObject(EventHandler):
    def map(self, obj: dict) -> Iterable[Request]:
        return (request_for(obj),)

    def update(self, old: dict, new: dict, queue: Queue) -> None:
        queue.add(request_for(new))


class EnqueueRequestForOwner(EventHandler):
    """Enqueue the owner named in ``ownerReferences`` whose group and kind match.

    ``owner_namespaced`` says whether the owner kind is namespaced: a namespaced owner lives in the
    dependent's namespace, a cluster-scoped one has no namespace. With ``only_controller`` (the
    default, as ``Builder.owns``) only the reference with ``controller: true`` counts.
    """

    def __init__(
        self,
        owner_api_version: str,
        owner_kind: str,
        owner_namespaced: bool = True,
        only_controller: bool = True,
    ) -> None:
        self.group = owner_api_version.rpartition("/")[0]
        self.kind = owner_kind
        self.owner_namespaced = owner_namespaced
        self.only_controller = only_controller

    def map(self, obj: dict) -> Iterable[Request]:
        meta = obj.get("metadata") or {}
        out = []
        for ref in meta.get("ownerReferences") or ():
            if self.only_controller and not ref.get("controller"):
                continue
            if ref.get("kind") != self.kind or ref.get("apiVersion", "").rpartition("/")[0] != self.group:
                continue
            out.append(
                Request(ref.get("name", ""), meta.get("namespace", "") if self.owner_namespaced else "")
            )
        return out


class EnqueueRequestsFromMapFunc(EventHandler):
    """Enqueue whatever ``fn(obj)`` returns (a list of :class:`Request`)."""

    def __init__(self, fn: Callable[[dict], Iterable[Request]]) -> None:
        self.fn = fn

    def map(self, obj: dict) -> Iterable[Request]:
        return list(self.fn(obj) or ())
