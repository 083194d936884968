"""CRD conversion webhooks, in the manner of controller-runtime's ``pkg/webhook/conversion`` and
``pkg/conversion``: hub and spokes on plain JSON dicts.

One version of a kind is the **hub** (usually the storage version); every other version is a **spoke**
that knows how to convert itself to the hub and back (:class:`Convertible`). A conversion between two
spokes goes through the hub, so N versions need N-1 pairs of functions, not N². Register the kind on a
:class:`ConversionScheme` and serve the scheme at ``/convert`` (``WebhookServer.register_conversion``, or
``WebhookBuilder(mgr).for_(...).with_conversion(hub, spokes).complete()``, which does both)::

    class CronJobV1:
        def convert_to(self, obj: dict) -> dict:  # v1 -> v2 (the hub)
            spec = dict(obj["spec"])
            spec["schedule"] = {"cron": spec.pop("schedule")}
            return {**obj, "spec": spec}

        def convert_from(self, hub: dict) -> dict:  # v2 -> v1
            spec = dict(hub["spec"])
            spec["schedule"] = spec["schedule"]["cron"]
            return {**hub, "spec": spec}

    scheme.add("batch.example.com", "CronJob", hub="v2", spokes={"v1": CronJobV1()})

The functions get a deep copy of the object and return the converted one; the framework sets its
``apiVersion`` and ``kind`` (and keeps the source's ``metadata`` when the result has none). An exception
fails the whole review. The answer is a ``ConversionReview`` of the request's apiVersion
(``apiextensions.k8s.io/v1``, or ``v1beta1``) whose ``response.uid`` is the request's; a failure is
``result: {status: Failure, message}`` (kube-apiserver then reports ``conversion webhook for <gvk>
failed: <message>``). A body that is not a ConversionReview with a request gets HTTP 400, as
controller-runtime answers it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
import structlog

from framework.meta import jsoncodec
from framework.meta.schema import parse_group_version

__all__ = [
    "CONVERT_PATH",
    "ConversionError",
    "ConversionScheme",
    "Convertible",
    "Spoke",
    "review_conversion",
]

log = structlog.get_logger("framework.webhook")

CONVERT_PATH = "/convert"  # controller-runtime's path for every kind's conversion
V1 = "apiextensions.k8s.io/v1"
V1BETA1 = "apiextensions.k8s.io/v1beta1"


class ConversionError(Exception):
    """A conversion that cannot be done; its text is the review's failure message."""


class Convertible(Protocol):
    """A spoke version: converts its objects to the hub version and back (controller-runtime's
    ``conversion.Convertible``'s ``ConvertTo``/``ConvertFrom``, on dicts)."""

    def convert_to(self, obj: dict[str, Any]) -> dict[str, Any]:
        """This version's object as the hub's."""
        ...

    def convert_from(self, hub: dict[str, Any]) -> dict[str, Any]:
        """The hub's object as this version's."""
        ...


@dataclass(frozen=True)
class Spoke:
    """A :class:`Convertible` made of two functions."""

    to_hub: Callable[[dict[str, Any]], dict[str, Any]]
    from_hub: Callable[[dict[str, Any]], dict[str, Any]]

    def convert_to(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self.to_hub(obj)

    def convert_from(self, hub: dict[str, Any]) -> dict[str, Any]:
        return self.from_hub(hub)


@dataclass(frozen=True)
class _Kind:
    hub: str
    spokes: Mapping[str, Convertible]


class ConversionScheme:
    """The convertible kinds one conversion webhook serves, by group and kind (thread-safe)."""

    def __init__(self) -> None:
        self._kinds: dict[tuple[str, str], _Kind] = {}
        self._lock = threading.Lock()

    def add(self, group: str, kind: str, hub: str, spokes: Mapping[str, Convertible]) -> None:
        """Register ``kind`` of ``group``: ``hub`` and the ``spokes`` are version names (``v1``)."""
        if not spokes:
            raise ValueError(f"{kind}.{group}: a convertible kind needs at least one spoke version")
        if hub in spokes:
            raise ValueError(f"{kind}.{group}: version {hub} is the hub and cannot be a spoke too")
        for version, spoke in spokes.items():
            if not (
                callable(getattr(spoke, "convert_to", None))
                and callable(getattr(spoke, "convert_from", None))
            ):
                raise TypeError(
                    f"{kind}.{group} {version}: a spoke needs convert_to(obj) and convert_from(hub)"
                )
        with self._lock:
            if (group, kind) in self._kinds:
                raise ValueError(f"{kind}.{group} is already registered for conversion")
            self._kinds[(group, kind)] = _Kind(hub, dict(spokes))

    def kinds(self) -> list[tuple[str, str]]:
        """The registered (group, kind) pairs."""
        with self._lock:
            return list(self._kinds)

    def convert(self, obj: Any, desired: str) -> dict[str, Any]:
        """``obj`` converted to the apiVersion ``desired`` (controller-runtime's ``convertObject``)."""
        if not isinstance(obj, dict):
            raise ConversionError(f"expected an object to convert, got {type(obj).__name__}")
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
            raise ConversionError("Object 'Kind' is missing in the object to convert")
        src, dst = _group_version(api_version), _group_version(desired)
        with self._lock:
            entry = self._kinds.get((src[0], kind))
        if entry is None or not _knows(entry, src[1]) or src[0] != dst[0]:
            raise ConversionError(f'no kind "{kind}" is registered for version "{api_version}"')
        if not _knows(entry, dst[1]):
            raise ConversionError(f'no kind "{kind}" is registered for version "{desired}"')
        if src[1] == dst[1]:
            raise ConversionError(f"conversion is not allowed between same type {kind} ({api_version})")
        current = jsoncodec.copy(obj)
        if src[1] != entry.hub:
            current = _stamp(entry.spokes[src[1]].convert_to(current), obj, f"{src[0]}/{entry.hub}", kind)
        if dst[1] != entry.hub:
            current = _stamp(entry.spokes[dst[1]].convert_from(jsoncodec.copy(current)), obj, desired, kind)
        return current


def _group_version(api_version: str) -> tuple[str, str]:
    try:
        gv = parse_group_version(api_version)
    except ValueError as e:
        raise ConversionError(str(e)) from None
    return gv.group, gv.version


def _knows(entry: _Kind, version: str) -> bool:
    return version == entry.hub or version in entry.spokes


def _stamp(result: Any, source: dict, api_version: str, kind: str) -> dict[str, Any]:
    if not isinstance(result, dict):
        raise ConversionError(
            f"conversion of {kind} to {api_version} returned {type(result).__name__}, not an object"
        )
    result["apiVersion"], result["kind"] = api_version, kind
    if "metadata" not in result and "metadata" in source:
        result["metadata"] = jsoncodec.copy(source["metadata"])
    return result


def review_conversion(body: bytes, scheme: ConversionScheme, *, webhook: str = "") -> tuple[int, dict | str]:
    """``(HTTP status, answer)`` for one ConversionReview body: 200 and the ConversionReview answering it,
    or 400 and the reason when the body is not a review with a request. Never raises."""
    try:
        doc = jsoncodec.loads(body) if body else None
    except orjson.JSONDecodeError as e:
        return 400, f"couldn't decode the ConversionReview: {e}"
    if (
        not isinstance(doc, dict)
        or doc.get("kind") != "ConversionReview"
        or doc.get("apiVersion") not in (V1, V1BETA1)
    ):
        return 400, "expected a ConversionReview of apiextensions.k8s.io/v1 or v1beta1"
    request = doc.get("request")
    if not isinstance(request, dict):
        return 400, "conversion request is nil"
    uid = request.get("uid") if isinstance(request.get("uid"), str) else ""
    desired = request.get("desiredAPIVersion")
    objects = request.get("objects")
    bound = log.bind(webhook=webhook, uid=uid, desired=desired)
    response: dict[str, Any] = {"uid": uid}
    try:
        if not isinstance(desired, str) or not desired:
            raise ConversionError("request.desiredAPIVersion is missing")
        if not isinstance(objects, list):
            raise ConversionError("request.objects must be a list")
        response["convertedObjects"] = [scheme.convert(o, desired) for o in objects]
        response["result"] = {"metadata": {}, "status": "Success"}
    except ConversionError as e:
        bound.warning("conversion refused", error=str(e))
        response["convertedObjects"] = []
        response["result"] = {"metadata": {}, "status": "Failure", "message": str(e)}
    except Exception as e:
        bound.error("conversion function raised", exc_info=True)
        response["convertedObjects"] = []
        response["result"] = {
            "metadata": {},
            "status": "Failure",
            "message": f"conversion failed: {type(e).__name__}: {e}",
        }
    return 200, {"apiVersion": doc["apiVersion"], "kind": "ConversionReview", "response": response}
