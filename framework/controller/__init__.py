"""Controllers: requests, results and the worker loop (controller-runtime's ``reconcile``/``controller``).

A reconciler is any object with ``reconcile(request) -> Result | None``::

    from framework.controller import Request, Result, TerminalError

    class ProjectReconciler:
        def __init__(self, client):
            self.client = client

        def reconcile(self, request: Request) -> Result:
            project = self.client.get("core.gardener.cloud/v1beta1", "Project", request.name)
            ...
            return Result(requeue_after=60.0)

Raise to retry with backoff, raise ``TerminalError`` to stop retrying. Controllers are usually built
with :class:`framework.builder.Builder`, which wires informers, handlers and predicates.
"""

from framework.controller.controller import Controller
from framework.controller.types import Reconciler, Request, Result, TerminalError

__all__ = ["Controller", "Reconciler", "Request", "Result", "TerminalError"]
