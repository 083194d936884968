"""The Builder; see the package docstring."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from framework.client import Client
from framework.controller import Controller, Reconciler
from framework.controller.controller import check_event_handler, check_predicate
from framework.handler import EnqueueRequestForObject, EnqueueRequestForOwner, EventHandler
from framework.predicate import Predicate
from framework.reconcile import Request, Result
from framework.reconcile.reconcile import as_reconciler

if TYPE_CHECKING:  # the manager imports the servers; a Builder module needs only its type
    from framework.manager import Manager


@dataclass
class _Watch:
    api_version: str
    kind: str
    handler: EventHandler | None  # None: owner handler, resolved at complete()
    predicates: tuple[Predicate, ...]
    metadata_only: bool = False
    inline: bool = False


@dataclass
class _Options:
    max_concurrent_reconciles: int = 1
    rate_limiter: Any = None
    reconcile_timeout: float | None = None
    skip_name_validation: bool = False


def _check_kind(api_version: Any, kind: Any) -> None:
    if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
        raise TypeError(f"apiVersion and kind must be non-empty strings, got {api_version!r}, {kind!r}")


def _predicates(predicates: Any) -> tuple[Predicate, ...]:
    if isinstance(predicates, Predicate) or not isinstance(predicates, tuple | list):
        raise TypeError(f"predicates must be a list of Predicate, got {type(predicates).__name__}")
    for p in predicates:
        check_predicate(p)
    return tuple(predicates)


class _LazyOwnerHandler(EventHandler):
    """``EnqueueRequestForOwner`` whose owner scope is looked up in discovery at the first event.

    ``complete()`` needs no API server then: a manager built before its API server answers (a normal
    rollout order) starts, and the informers retry until it does; events only arrive after that.
    """

    def __init__(self, client: Client, owner_api_version: str, owner_kind: str) -> None:
        self._client = client
        self._owner = (owner_api_version, owner_kind)
        self._handler: EnqueueRequestForOwner | None = None

    def map(self, obj: dict) -> Iterable[Request]:
        handler = self._handler
        if handler is None:
            namespaced = self._client.mapping(*self._owner).namespaced
            handler = self._handler = EnqueueRequestForOwner(*self._owner, namespaced)
        return handler.map(obj)


class Builder:
    """Collects watches and options; :meth:`complete` builds the controller.

    What can never work fails here with ``TypeError``/``ValueError`` rather than in a worker later: a
    reconciler that is ``async`` or not callable, a handler or predicate of the wrong type, a second
    ``for_``, neither ``for_`` nor ``named``, ``owns`` without ``for_``, or a controller name already
    taken in this manager (names label the controllers' metrics;
    ``with_options(skip_name_validation=True)`` allows a duplicate, as controller-runtime's
    ``SkipNameValidation``).

    A controller without ``for_`` (only ``watches``, each mapping its events to requests) is named with
    :meth:`named`, as controller-runtime's ``Named`` + ``Watches``.
    """

    def __init__(self, manager: Manager) -> None:
        self.manager = manager
        self._name: str | None = None
        self._for: _Watch | None = None
        self._watches: list[_Watch] = []
        self._filters: tuple[Predicate, ...] = ()
        self._options = _Options()

    def named(self, name: str) -> Builder:
        """The controller's name (its metrics' ``controller`` label); default: the ``for_`` kind in lower
        case. Required without ``for_``."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"a controller name must be a non-empty string, got {name!r}")
        self._name = name
        return self

    def for_(
        self, api_version: str, kind: str, predicates: tuple | list = (), *, inline: bool = False
    ) -> Builder:
        """The kind this controller reconciles: its events enqueue the object itself.

        ``inline=True``: predicates and the enqueue run on the informer's thread (see
        :meth:`Controller.watch`), for a kind with many events and cheap predicates.
        """
        if self._for is not None:
            raise ValueError("for_() may only be called once")
        _check_kind(api_version, kind)
        self._for = _Watch(
            api_version, kind, EnqueueRequestForObject(), _predicates(predicates), inline=inline
        )
        return self

    def owns(self, api_version: str, kind: str, predicates: tuple | list = ()) -> Builder:
        """A kind this controller creates: its events enqueue the controlling owner (the for_ kind)."""
        _check_kind(api_version, kind)
        self._watches.append(_Watch(api_version, kind, None, _predicates(predicates)))
        return self

    def watches(
        self,
        api_version: str,
        kind: str,
        handler: EventHandler,
        predicates: tuple | list = (),
        metadata_only: bool = False,
    ) -> Builder:
        """Any other kind, mapped to requests by ``handler``."""
        _check_kind(api_version, kind)
        check_event_handler(handler)
        self._watches.append(_Watch(api_version, kind, handler, _predicates(predicates), metadata_only))
        return self

    def with_event_filter(self, *predicates: Predicate) -> Builder:
        """Predicates applied to every watched kind."""
        self._filters += _predicates(predicates)
        return self

    def with_options(
        self,
        max_concurrent_reconciles: int = 1,
        rate_limiter: Any = None,
        reconcile_timeout: float | None = None,
        skip_name_validation: bool = False,
    ) -> Builder:
        self._options = _Options(
            max_concurrent_reconciles, rate_limiter, reconcile_timeout, skip_name_validation
        )
        return self

    def complete(self, reconciler: Reconciler | Callable[[Request], Result | None]) -> Controller:
        """Create the controller, wire its watches and add it to the manager (runs while leading).

        ``reconciler`` has a ``reconcile(request)`` method or is a plain function (wrapped in
        :class:`~framework.reconcile.Func`).
        """
        primary = self._for
        if primary is None and self._name is None:
            raise ValueError("for_() or named() must be called before complete()")
        if primary is None and any(w.handler is None for w in self._watches):
            raise ValueError("owns() needs for_(): the owner kind whose requests its events enqueue")
        if primary is None and not self._watches:
            raise ValueError("a controller without for_() needs watches() to be triggered by anything")
        reconciler = as_reconciler(reconciler)
        mgr = self.manager
        name = self._name or (primary.kind.lower() if primary is not None else "")
        if not self._options.skip_name_validation:
            mgr.check_controller_name(name)
        ctrl = Controller(
            name,
            reconciler,
            max_concurrent_reconciles=self._options.max_concurrent_reconciles,
            rate_limiter=self._options.rate_limiter,
            reconcile_timeout=self._options.reconcile_timeout,
            skip_name_validation=self._options.skip_name_validation,
            clock=mgr.clock,
            registry=mgr.registry,
        )
        for w in (*((primary,) if primary is not None else ()), *self._watches):
            handler = w.handler
            if handler is None:
                assert primary is not None  # owns() without for_() was refused above
                handler = _LazyOwnerHandler(mgr.api_reader, primary.api_version, primary.kind)
            informer = mgr.cache.informer(w.api_version, w.kind, metadata_only=w.metadata_only or None)
            ctrl.watch(informer, handler, (*self._filters, *w.predicates), inline=w.inline)
        mgr.add(ctrl, need_leader_election=True)
        return ctrl
