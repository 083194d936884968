"""Wiring of the Event TTL controller (gardener/gardener pkg/controllermanager/controller/event/add.go).

Watches ``events.k8s.io/v1`` Events in all namespaces (Events written through ``core/v1`` are the same
objects there), reacts to create events only (the informer's initial list delivers one per existing
Event, so events older than gcm are handled after a start), ``concurrentSyncs`` workers, 3 minutes per
reconcile.

Events are the highest-churn kind of a cluster, so the informer caches only what the reconciler reads
(:func:`slim_event`): name, namespace, resourceVersion, ``regarding.apiVersion``/``kind`` (one shared
dict per distinct pair) and the one timestamp that decides the reference time. The manager's
cache options are fixed when it is constructed: pass :data:`EVENT_CACHE_OPTIONS` to ``Manager(...,
cache_options=...)`` (``gcm.controllers.add.cache_options`` does when the controller is enabled).
"""

from __future__ import annotations

import sys
from typing import Any

import structlog

from framework.builder import Builder
from framework.controller import Controller
from framework.manager import CacheOptions, Manager
from framework.predicate import Funcs
from gcm.config import ControllerManagerConfiguration
from gcm.config.defaults import DEFAULT_TTL_NON_SHOOT_EVENTS
from gcm.controllers.event.metrics import EventTTLMetrics
from gcm.controllers.event.reconciler import (
    EVENT_API_VERSION,
    REFERENCE_FIELDS,
    Reconciler,
    is_shoot_event,
    reference_field,
)

log = structlog.get_logger("gcm.controllers.event")

CONTROLLER_NAME = "event"
EVENT_KIND = "Event"
RECONCILE_TIMEOUT = 180.0  # seconds (Gardener: 3 minutes)

# Create events only, as Gardener's add.go: updates (a series bump), deletes and generic events never
# enqueue.
CREATE_ONLY = Funcs(
    create=lambda obj: True,
    update=lambda old, new: False,
    delete=lambda obj: False,
    generic=lambda obj: False,
)

# No uid: the delete's resourceVersion precondition already refuses a recreated event (a new
# object always has a new resourceVersion), and a uid string costs ~85 bytes per cached event.
_META_KEYS = ("name", "namespace", "resourceVersion")
_SHARED_REGARDING_LIMIT = 4096  # distinct (apiVersion, kind) pairs shared; more are stored per event
_shared_regarding: dict[tuple[Any, Any], dict[str, Any]] = {}


def _regarding(api_version: Any, kind: Any) -> dict[str, Any]:
    """``{"apiVersion", "kind"}``, one dict per distinct pair (cached objects are never mutated)."""
    key = (api_version, kind)
    shared = _shared_regarding.get(key)
    if shared is not None:
        return shared
    ref: dict[str, Any] = {}
    if api_version is not None:
        ref["apiVersion"] = sys.intern(api_version) if type(api_version) is str else api_version
    if kind is not None:
        ref["kind"] = sys.intern(kind) if type(kind) is str else kind
    if len(_shared_regarding) < _SHARED_REGARDING_LIMIT:
        ref = _shared_regarding.setdefault(key, ref)
    return ref


def slim_event(obj: Any) -> Any:
    """Informer transform: an Event reduced to what :class:`Reconciler` reads (a new dict).

    Shoot events keep no timestamp (they are never deleted); every other event keeps only the field
    that decides its reference time (``series.lastObservedTime``, ``eventTime`` or
    ``deprecatedLastTimestamp``, per :func:`~gcm.controllers.event.reconciler.reference_field`), or
    none when all are zero. The reconciler's decision on the slim object is the one it would take on
    the full object.
    """
    if type(obj) is not dict:
        return obj
    meta = obj.get("metadata")
    if type(meta) is not dict:
        return obj
    slim_meta = {k: meta[k] for k in _META_KEYS if meta.get(k) is not None}
    namespace = slim_meta.get("namespace")
    if type(namespace) is str:
        slim_meta["namespace"] = sys.intern(namespace)
    api_version = obj.get("apiVersion", EVENT_API_VERSION)
    slim: dict[str, Any] = {
        "apiVersion": sys.intern(api_version) if type(api_version) is str else api_version,
        "kind": EVENT_KIND,
        "metadata": slim_meta,
    }
    regarding = obj.get("regarding")
    if type(regarding) is dict and ("apiVersion" in regarding or "kind" in regarding):
        slim["regarding"] = _regarding(regarding.get("apiVersion"), regarding.get("kind"))
    if is_shoot_event(slim):
        return slim
    try:
        fields = [reference_field(obj)]
    except (TypeError, ValueError):
        fields = list(REFERENCE_FIELDS)  # unparsable: keep every candidate, the reconciler reports it
    for field in fields:
        if field is None:
            continue
        top, nested = field
        value = obj.get(top)
        if nested is None:
            if value is not None:
                slim[top] = value
        elif type(value) is dict and value.get(nested) is not None:
            slim[top] = {nested: value[nested]}
    return slim


EVENT_CACHE_OPTIONS: dict[tuple[str, str], CacheOptions] = {
    (EVENT_API_VERSION, EVENT_KIND): CacheOptions(
        transform=slim_event, resync=False, unsafe_disable_deep_copy=True
    )
}
"""Cache options for ``Manager(..., cache_options=...)``: the Event informer keeps slim Events and does
not resync (the create-only predicate drops resync updates; a resync would queue every event at once);
reads are not copied (the reconciler only reads, and a copy per event is a JSON round trip)."""


def add_to_manager(mgr: Manager, cfg: ControllerManagerConfiguration) -> Controller | None:
    """Add the Event TTL controller (runs while leading) when ``controllers.event`` is set; returns it."""
    event = cfg.controllers.event
    if event is None:
        return None
    configured = event.ttl_non_shoot_events
    ttl = float(DEFAULT_TTL_NON_SHOOT_EVENTS if configured is None else configured)
    workers = event.workers  # 0 means one worker, as everywhere in gcm
    if mgr.cache.options.get((EVENT_API_VERSION, EVENT_KIND)) is None:
        log.warning(
            "the manager caches full Events; pass gcm.controllers.event.EVENT_CACHE_OPTIONS "
            "as Manager(cache_options=...) to cache only what the event controller needs"
        )
    reconciler = Reconciler(mgr.client, mgr.clock, ttl, metrics=EventTTLMetrics.create(mgr.registry))
    return (
        Builder(mgr)
        .named(CONTROLLER_NAME)
        .for_(EVENT_API_VERSION, EVENT_KIND, predicates=[CREATE_ONLY], inline=True)
        .with_options(max_concurrent_reconciles=workers, reconcile_timeout=RECONCILE_TIMEOUT)
        .complete(reconciler)
    )
