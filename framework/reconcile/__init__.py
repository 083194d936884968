"""What a reconciler receives and returns (controller-runtime's ``pkg/reconcile``).

A leaf package: :mod:`framework.controller`, :mod:`framework.handler` and your code import it, and it
imports nothing of the framework. A reconciler is any object with ``reconcile(request)``, or a plain
function wrapped in :class:`Func`::

    from datetime import timedelta

    from framework.reconcile import Func, Request, Result, TerminalError

    class AppReconciler:
        def __init__(self, client):
            self.client = client

        def reconcile(self, request: Request) -> Result | None:
            app = self.client.get("apps/v1", "Deployment", request.name, request.namespace)
            ...
            return Result(requeue_after=timedelta(minutes=1))  # or seconds: 60.0

    def reconcile_configmap(request: Request) -> None: ...

    reconciler = Func(reconcile_configmap)  # Builder.complete() also wraps a plain function itself

Return ``None`` or :class:`Result`; raise to retry with backoff, raise :class:`TerminalError` to stop
retrying. Anything else returned is a bug the controller logs, counts and retries with backoff.
"""

from framework.reconcile.reconcile import Func, Reconciler, Request, Result, TerminalError

__all__ = ["Func", "Reconciler", "Request", "Result", "TerminalError"]
