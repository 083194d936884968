"""The Builder; see the package docstring."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from framework.controller import Controller, Reconciler
from framework.handler import EnqueueRequestForObject, EnqueueRequestForOwner, EventHandler
from framework.predicate import Predicate


@dataclass
class _Watch:
    api_version: str
    kind: str
    handler: EventHandler | None  # None: owner handler, resolved at complete()
    predicates: tuple[Predicate, ...]
    metadata_only: bool = False


@dataclass
class _Options:
    max_concurrent_reconciles: int = 1
    rate_limiter: Any = None
    reconcile_timeout: float | None = None


class Builder:
    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self._name: str | None = None
        self._for: _Watch | None = None
        self._watches: list[_Watch] = []
        self._filters: tuple[Predicate, ...] = ()
        self._options = _Options()

    def named(self, name: str) -> Builder:
        self._name = name
        return self

    def for_(self, api_version: str, kind: str, predicates: tuple | list = ()) -> Builder:
        """The kind this controller reconciles: its events enqueue the object itself."""
        if self._for is not None:
            raise ValueError("for_() may only be called once")
        self._for = _Watch(api_version, kind, EnqueueRequestForObject(), tuple(predicates))
        return self

    def owns(self, api_version: str, kind: str, predicates: tuple | list = ()) -> Builder:
        """A kind this controller creates: its events enqueue the controlling owner (the for_ kind)."""
        self._watches.append(_Watch(api_version, kind, None, tuple(predicates)))
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
        self._watches.append(_Watch(api_version, kind, handler, tuple(predicates), metadata_only))
        return self

    def with_event_filter(self, *predicates: Predicate) -> Builder:
        """Predicates applied to every watched kind."""
        self._filters += predicates
        return self

    def with_options(
        self,
        max_concurrent_reconciles: int = 1,
        rate_limiter: Any = None,
        reconcile_timeout: float | None = None,
    ) -> Builder:
        self._options = _Options(max_concurrent_reconciles, rate_limiter, reconcile_timeout)
        return self

    def complete(self, reconciler: Reconciler) -> Controller:
        """Create the controller, wire its watches and add it to the manager (runs while leading)."""
        if self._for is None:
            raise ValueError("for_() must be called before complete()")
        mgr = self.manager
        name = self._name or self._for.kind.lower()
        ctrl = Controller(
            name,
            reconciler,
            max_concurrent_reconciles=self._options.max_concurrent_reconciles,
            rate_limiter=self._options.rate_limiter,
            reconcile_timeout=self._options.reconcile_timeout,
            clock=mgr.clock,
            registry=mgr.registry,
        )
        owner_namespaced = mgr.api_reader.mapping(self._for.api_version, self._for.kind).namespaced
        for w in (self._for, *self._watches):
            handler = w.handler or EnqueueRequestForOwner(
                self._for.api_version, self._for.kind, owner_namespaced
            )
            informer = mgr.cache.informer(w.api_version, w.kind, metadata_only=w.metadata_only or None)
            ctrl.watch(informer, handler, (*self._filters, *w.predicates))
        mgr.add(ctrl, need_leader_election=True)
        return ctrl
