"""The event handler types; see the package docstring."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from framework.meta.object import get_metadata, get_namespace, get_owner_references
from framework.meta.schema import parse_group_version
from framework.reconcile import Request
from framework.reconcile.reconcile import callable_name, check_sync_callable, close_if_coroutine


class Queue(Protocol):
    def add(self, item: Any) -> None: ...


def unwrap(obj: Any) -> dict:
    """The object of a ``DeletedFinalStateUnknown`` tombstone, or the object itself."""
    inner = getattr(obj, "obj", None)
    return inner if isinstance(inner, dict) else obj


def request_for(obj: dict) -> Request:
    meta = get_metadata(obj)
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
        self.group = parse_group_version(owner_api_version).group
        self.kind = owner_kind
        self.owner_namespaced = owner_namespaced
        self.only_controller = only_controller

    def map(self, obj: dict) -> Iterable[Request]:
        namespace = get_namespace(obj) if self.owner_namespaced else ""
        out = []
        for ref in get_owner_references(obj):
            if self.only_controller and not ref.get("controller"):
                continue
            if ref.get("kind") != self.kind or _group_of(ref.get("apiVersion") or "") != self.group:
                continue
            out.append(Request(ref.get("name", ""), namespace))
        return out


class EnqueueRequestsFromMapFunc(EventHandler):
    """Enqueue whatever ``fn(obj)`` returns: an iterable of :class:`Request` (``None`` means none).

    ``fn`` must be a plain function (``TypeError`` at construction for an ``async def`` or a
    non-callable). Anything else it returns (a single Request, tuples, dicts, strings ...) raises
    ``TypeError`` naming the function and the type, and nothing of that event is enqueued; the
    controller logs and counts it.
    """

    def __init__(self, fn: Callable[[dict], Iterable[Request] | None]) -> None:
        check_sync_callable(fn, "map function")
        self.fn = fn

    def map(self, obj: dict) -> Iterable[Request]:
        out = self.fn(obj)
        if out is None:
            return ()
        fn = callable_name(self.fn)
        if isinstance(out, Request | str | bytes | Mapping) or not isinstance(out, Iterable):
            close_if_coroutine(out)
            raise TypeError(f"map function {fn} returned {type(out).__name__}, expected a list of Request")
        requests = list(out)
        for r in requests:
            if not isinstance(r, Request):
                raise TypeError(
                    f"map function {fn} returned a {type(r).__name__} item, expected Request"
                    f" (e.g. Request(name, namespace)), got {r!r:.200}"
                )
        return requests


def _group_of(api_version: str) -> str | None:
    """The group of an owner reference's ``apiVersion``; ``None`` when it does not parse."""
    try:
        return parse_group_version(api_version).group
    except ValueError:
        return None
