"""A client-go-style controller framework for Python.

This package is the face a controller author needs, as controller-runtime's ``alias.go`` is::

    import framework
    from framework import Builder, Manager, Request, Result

    mgr = Manager(framework.Client.from_config(framework.get_config()))  # ctrl.GetConfigOrDie()
    Builder(mgr).for_("example.com/v1", "Widget").owns("v1", "ConfigMap").complete(
        WidgetReconciler(mgr.client)
    )
    mgr.start()

The names are loaded when first used (``import framework`` imports nothing else, so
``import framework.client`` stays as cheap as the client itself); each lives in the module named in
``_EXPORTS``, which documents it. ``framework.handler`` and ``framework.predicate`` are reachable as
attributes too.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# name -> the module that defines it (the names' home; their docs live there).
_EXPORTS: dict[str, str] = {
    # manager and builder (controller-runtime's NewManager, NewControllerManagedBy)
    "Manager": "framework.manager",
    "LeaderElectionOptions": "framework.manager",
    "CacheOptions": "framework.manager",
    "Builder": "framework.builder",
    "Controller": "framework.controller",
    # reconcile
    "Request": "framework.reconcile",
    "Result": "framework.reconcile",
    "Reconciler": "framework.reconcile",
    "Func": "framework.reconcile",
    "TerminalError": "framework.reconcile",
    # the client and its contract
    "Client": "framework.client",
    "Reader": "framework.client",
    "Writer": "framework.client",
    "ReaderWriter": "framework.client",
    "APIError": "framework.client",
    "AlreadyExists": "framework.client",
    "Conflict": "framework.client",
    "NotFound": "framework.client",
    "get_config": "framework.client",
    # controllerutil
    "OperationResult": "framework.controllerutil",
    "create_or_update": "framework.controllerutil",
    "create_or_patch": "framework.controllerutil",
    "set_controller_reference": "framework.controllerutil",
    "set_owner_reference": "framework.controllerutil",
    "add_finalizer": "framework.controllerutil",
    "remove_finalizer": "framework.controllerutil",
    "contains_finalizer": "framework.controllerutil",
    # events
    "EventRecorder": "framework.record",
}

_SUBMODULES = ("handler", "predicate")

# Spelled out for linters; tests/framework/test_alias.py checks it matches _EXPORTS and _SUBMODULES.
__all__ = [
    "APIError",
    "AlreadyExists",
    "Builder",
    "CacheOptions",
    "Client",
    "Conflict",
    "Controller",
    "EventRecorder",
    "Func",
    "LeaderElectionOptions",
    "Manager",
    "NotFound",
    "OperationResult",
    "Reader",
    "ReaderWriter",
    "Reconciler",
    "Request",
    "Result",
    "TerminalError",
    "Writer",
    "add_finalizer",
    "contains_finalizer",
    "create_or_patch",
    "create_or_update",
    "get_config",
    "handler",
    "predicate",
    "remove_finalizer",
    "set_controller_reference",
    "set_owner_reference",
]

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ loads them on first use
    from framework import handler, predicate
    from framework.builder import Builder
    from framework.client import (
        AlreadyExists,
        APIError,
        Client,
        Conflict,
        NotFound,
        Reader,
        ReaderWriter,
        Writer,
        get_config,
    )
    from framework.controller import Controller
    from framework.controllerutil import (
        OperationResult,
        add_finalizer,
        contains_finalizer,
        create_or_patch,
        create_or_update,
        remove_finalizer,
        set_controller_reference,
        set_owner_reference,
    )
    from framework.manager import CacheOptions, LeaderElectionOptions, Manager
    from framework.reconcile import Func, Reconciler, Request, Result, TerminalError
    from framework.record import EventRecorder


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"framework.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'framework' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
