"""A controller using the whole toolbox: a finalizer, an owned object kept by create_or_update, status
conditions, Events, a field index and structlog.

Every Widget (``docs/examples/widget.yaml``) gets a ConfigMap ``<name>-config`` holding the data of
the ConfigMap named in ``spec.source`` plus ``size``; ``status.conditions`` says whether that worked.
"""

import structlog

from framework.builder import Builder
from framework.client import Client, NotFound, ReaderWriter, get_config
from framework.controllerutil import (
    OperationResult,
    add_finalizer,
    contains_finalizer,
    create_or_update,
    remove_finalizer,
    set_controller_reference,
)
from framework.handler import EnqueueRequestsFromMapFunc
from framework.manager import Manager
from framework.meta.conditions import set_status_condition
from framework.reconcile import Request, Result
from framework.record import NORMAL, WARNING, EventRecorder

WIDGET = ("example.com/v1", "Widget")
FINALIZER = "example.com/widget-cleanup"
SOURCE_INDEX = "spec.source"  # field index: Widgets by the ConfigMap they copy

log = structlog.get_logger("widget-controller")


class WidgetReconciler:
    def __init__(self, client: ReaderWriter, recorder: EventRecorder) -> None:
        self.client = client
        self.recorder = recorder

    def reconcile(self, request: Request) -> Result | None:
        try:
            widget = self.client.get(*WIDGET, request.name, request.namespace)
        except NotFound:
            return None
        if widget["metadata"].get("deletionTimestamp"):
            return self.finalize(widget)
        if add_finalizer(widget, FINALIZER):
            widget = self.client.update(widget)  # before anything exists that needs cleaning up

        spec = widget.get("spec") or {}
        try:
            source = self.client.get("v1", "ConfigMap", spec.get("source", ""), request.namespace)
        except NotFound:
            self.recorder.eventf(
                widget, WARNING, "SourceMissing", "Reconcile", "no ConfigMap %s", spec.get("source")
            )
            return self.set_ready(
                widget, "False", "SourceMissing", f"ConfigMap {spec.get('source')} not found"
            )

        def mutate(cm: dict) -> None:
            cm["data"] = {**(source.get("data") or {}), "size": str(spec.get("size", 1))}
            set_controller_reference(widget, cm)  # deleted with the Widget; its events map back to it

        config = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{request.name}-config", "namespace": request.namespace},
        }
        _, operation = create_or_update(self.client, config, mutate)
        if operation is not OperationResult.UNCHANGED:
            log.info("config written", operation=operation)  # carries controller, namespace, name
            self.recorder.eventf(widget, NORMAL, "ConfigWritten", "Reconcile", "ConfigMap %s", operation)
        return self.set_ready(widget, "True", "ConfigWritten", "the ConfigMap holds the source's data")

    def set_ready(self, widget: dict, status: str, reason: str, message: str) -> None:
        conditions = widget.setdefault("status", {}).setdefault("conditions", [])
        ready = {
            "type": "Ready",
            "status": status,
            "reason": reason,
            "message": message,
            "observedGeneration": widget["metadata"].get("generation", 0),
        }
        if set_status_condition(conditions, ready):  # False: nothing changed, nothing to write
            self.client.update_status(widget)  # a Conflict is retried with backoff

    def finalize(self, widget: dict) -> None:
        if contains_finalizer(widget, FINALIZER):
            # Release what lives outside the cluster here; owned objects go with the garbage collector.
            self.recorder.eventf(widget, NORMAL, "CleanedUp", "Delete", "released the widget")
            remove_finalizer(widget, FINALIZER)
            self.client.update(widget)


def setup(mgr: Manager) -> None:
    """Register the controller with ``mgr`` (the CRD must be installed)."""
    mgr.add_field_index(*WIDGET, SOURCE_INDEX, lambda w: [(w.get("spec") or {}).get("source", "")])

    def widgets_using(cm: dict) -> list[Request]:
        meta = cm["metadata"]
        widgets = mgr.client.list(*WIDGET, meta["namespace"], field_selector={SOURCE_INDEX: meta["name"]})
        return [Request(w["metadata"]["name"], meta["namespace"]) for w in widgets["items"]]

    Builder(mgr).named("widget").for_(*WIDGET).owns("v1", "ConfigMap").watches(
        "v1", "ConfigMap", EnqueueRequestsFromMapFunc(widgets_using)
    ).complete(WidgetReconciler(mgr.client, mgr.event_recorder("widget-controller")))


if __name__ == "__main__":
    mgr = Manager(Client.from_config(get_config()), health_probe_bind_address=":8081")
    setup(mgr)
    mgr.start()
