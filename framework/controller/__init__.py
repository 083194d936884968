"""Controllers: a rate-limited work queue and N workers calling a reconciler (``pkg/controller``).

What a reconciler receives and returns lives in :mod:`framework.reconcile`; ``Request``, ``Result``,
``TerminalError`` and ``Reconciler`` are re-exported here too, as ``ctrl.Request`` is in Go.
Controllers are usually built with :class:`framework.builder.Builder`, which wires informers, handlers
and predicates.
"""

from framework.controller.controller import Controller
from framework.reconcile import Func, Reconciler, Request, Result, TerminalError

__all__ = ["Controller", "Func", "Reconciler", "Request", "Result", "TerminalError"]
