"""``gcm_webhook_decisions_total{webhook,decision}``: what gcm's admission webhooks answered.

controller-runtime's ``controller_runtime_webhook_requests_total`` counts HTTP status codes, and a
webhook that denies a request still answers HTTP 200; this counts the verdicts. ``webhook`` is the
path the webhook is served at (as the ``webhook`` label of the ``controller_runtime_webhook_*``
series), ``decision`` one of:

- ``allowed``: the request was admitted;
- ``denied``: refused on its merits (the response's ``status.code`` below 500: 403, 400, 422);
- ``errored``: refused because the webhook could not decide (``status.code`` 500 or above, e.g. the
  API server did not answer a lookup in time, or the handler raised).

Both label sets are fixed (two webhooks, three decisions), all exported at zero from registration.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

from framework.metrics.collectors import PerRegistry
from framework.webhook import AdmissionHandler, AdmissionRequest, AdmissionResponse

__all__ = ["DECISIONS", "counted", "decision_of", "webhook_decisions"]

DECISIONS = ("allowed", "denied", "errored")
_NAME = "gcm_webhook_decisions"


def _new_counter() -> Counter:
    return Counter(
        _NAME,
        "Admission decisions of gcm's webhooks, by webhook path and decision (allowed, denied, errored).",
        ["webhook", "decision"],
        registry=None,  # registered by PerRegistry
    )


_per_registry: PerRegistry[Counter] = PerRegistry(_new_counter, _NAME)


def webhook_decisions(registry: CollectorRegistry) -> Counter:
    """The decisions counter of ``registry``, registered on first use."""
    return _per_registry.get(registry)


def decision_of(response: AdmissionResponse) -> str:
    """``allowed``, ``denied`` or ``errored`` (see the module docstring)."""
    if response.allowed:
        return "allowed"
    return "errored" if response.code >= 500 else "denied"


def counted(handler: AdmissionHandler, webhook: str, registry: CollectorRegistry) -> AdmissionHandler:
    """``handler``, counting each of its verdicts under ``webhook`` on ``registry``. A handler that
    raises is counted ``errored`` (the webhook server answers it with a 500 status)."""
    counter = webhook_decisions(registry)
    children = {decision: counter.labels(webhook, decision) for decision in DECISIONS}

    def count(request: AdmissionRequest) -> AdmissionResponse:
        try:
            response = handler(request)
        except Exception:
            children["errored"].inc()
            raise
        if isinstance(response, AdmissionResponse):
            children[decision_of(response)].inc()
        else:  # the server answers a non-response with a 500
            children["errored"].inc()
        return response

    return count
