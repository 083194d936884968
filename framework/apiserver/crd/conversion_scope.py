"""Webhook conversion inside the synchronous REST layer.

The REST operations run synchronously on the event loop, but a conversion webhook is an HTTP call. A
request for a webhook-converted CRD therefore runs its operation inside a :class:`ConversionScope`
(a context variable, so only that request's task sees it): the codec (``RESTBase.external`` /
``_to_stored``) answers conversions it already has, and for one it lacks either records it and goes on
with the object under the new apiVersion only (a read) or stops the operation (:class:`NeedsConversion`,
before anything is written). :meth:`ConversionScope.run` then calls the webhook for what was missing and
runs the operation again, until it completes without a miss; reads are re-run, writes that completed
get the objects they answered converted afterwards.

Conversions are kept for the request only (keyed by the object's content, see
``conversion.content_key``), so every request asks the webhook anew, as kube-apiserver does. A write
also remembers the reverse of each conversion it asked for: the object it stores reads back as what the
client sent, as the request's version saw it before storage.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from framework.apiserver.crd import conversion
from framework.apiserver.crd.conversion import ConversionError
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry.rest.objects import deep_copy

if TYPE_CHECKING:
    from framework.apiserver.crd.conversion_webhook import WebhookConverter

T = TypeVar("T")

# Rounds of "run, convert what was missing" one request may take (a write whose stored object keeps
# changing under it is refused like one that keeps conflicting).
MAX_ROUNDS = 8


class NeedsConversion(Exception):
    """Raised by the codec inside a scope: ``obj`` must be converted to ``target`` before the write."""

    def __init__(self, obj: dict, target: str) -> None:
        super().__init__(target)
        self.obj = obj
        self.target = target


@dataclass
class _Miss:
    original: dict
    target: str


@dataclass
class ConversionScope:
    """The conversions of one request to a webhook-converted CRD."""

    crd: dict
    converter: WebhookConverter
    as_list: bool = False  # reads convert as one list (one review, the list's kind in errors)
    cache: dict[bytes, dict] = field(default_factory=dict)
    misses: list[_Miss] = field(default_factory=list)
    # Objects answered under a new apiVersion only, by identity, to be replaced once converted.
    provisional: dict[int, _Miss] = field(default_factory=dict)

    # -- the codec's side (synchronous) ------------------------------------------------------------

    def to_version(self, obj: dict, target: str) -> dict:
        """``obj`` as apiVersion ``target`` shows it: converted if known, provisional otherwise."""
        if obj.get("apiVersion") == target:
            return obj
        hit = self.cache.get(conversion.content_key(obj, target))
        if hit is not None:
            return conversion.restore_metadata(obj, hit)
        miss = _Miss(obj, target)
        self.misses.append(miss)
        out = conversion.naive(obj, target)
        self.provisional[id(out)] = miss
        return out

    def to_storage(self, obj: dict, target: str) -> dict:
        """``obj`` in the storage version ``target``; raises :class:`NeedsConversion` if not known yet."""
        if self.misses:
            # Never write while this round answered provisional objects: what is written may have
            # been computed from one (a status copied from the old object).
            raise NeedsConversion(deep_copy(obj), target)
        if obj.get("apiVersion") == target:
            return obj
        hit = self.cache.get(conversion.content_key(obj, target))
        if hit is not None:
            return conversion.restore_metadata(obj, hit)
        raise NeedsConversion(deep_copy(obj), target)

    # -- the request's side (asynchronous) -----------------------------------------------------------

    async def run(self, op: Callable[[], Awaitable[T]], rerun: bool) -> T:
        """Run ``op`` until no conversion is missing; ``rerun``: a read, run again rather than fixed up."""
        for _ in range(MAX_ROUNDS):
            self.misses.clear()
            self.provisional.clear()
            token = SCOPE.set(self)
            try:
                result = await op()
            except NeedsConversion as e:
                if self.misses:
                    await self._convert_misses()
                else:
                    await self._convert_write(e.obj, e.target)
                continue
            except StatusError:
                if not self.misses:
                    raise
                # The failure may come from a provisional object: convert, then try again.
                await self._convert_misses()
                continue
            finally:
                SCOPE.reset(token)
            if not self.misses:
                return result
            await self._convert_misses()
            if rerun:
                continue
            return self._fix(result)
        raise StatusError(500, None, "conversion did not settle: the object kept changing during the request")

    async def ensure(self, objs: list[dict | None], target: str) -> None:
        """Convert ``objs`` to ``target`` now, so the codec has them (what an admission webhook of
        another version of the resource is about to be sent)."""
        todo: dict[bytes, dict] = {}
        for o in objs:
            if o is not None and o.get("apiVersion") != target:
                key = conversion.content_key(o, target)
                if key not in self.cache:
                    todo.setdefault(key, o)
        for o in todo.values():
            [converted] = await self._call([o], target, conversion.gvk_text(o), as_list=False)
            self._remember(o, converted, target)

    async def _convert_write(self, obj: dict, target: str) -> None:
        subject = conversion.gvk_text(obj)
        [converted] = await self._call([obj], target, subject, as_list=False)
        self._remember(obj, converted, target)

    async def _convert_misses(self) -> None:
        by_target: dict[str, list[dict]] = {}
        for m in self.misses:
            by_target.setdefault(m.target, []).append(m.original)
        for target, objs in by_target.items():
            # Each object once (an operation may read one twice), every object sent (as a list is).
            unique: dict[tuple[bytes, Any, Any], dict] = {}
            for o in objs:
                meta = as_dict(o.get("metadata"))
                unique.setdefault(
                    (conversion.content_key(o, target), meta.get("namespace"), meta.get("name")), o
                )
            todo = list(unique.values())
            if self.as_list:
                # The list itself is already of the request's version (the per-version storage's
                # NewListFunc); only its items are converted.
                kind = self.crd["spec"]["names"].get("listKind") or self.crd["spec"]["names"]["kind"] + "List"
                subject = conversion.gvk_text({"apiVersion": target}, kind)
            else:
                subject = conversion.gvk_text(todo[0])
            converted = await self._call(todo, target, subject, as_list=self.as_list)
            for o, c in zip(todo, converted, strict=True):
                self._remember(o, c, target)

    async def _call(self, objs: list[dict], target: str, subject: str, as_list: bool) -> list[dict]:
        try:
            return await self.converter.convert(self.crd, objs, target, subject, as_list)
        except ConversionError as e:
            raise StatusError(500, None, str(e)) from None

    def _remember(self, original: dict, converted: dict, target: str) -> None:
        self.cache[conversion.content_key(original, target)] = converted
        source = original.get("apiVersion")
        if isinstance(source, str):
            # The reverse: the stored object reads back as what was sent (kube never converts it back
            # before answering a write, it answers the object it encoded).
            self.cache.setdefault(conversion.content_key(converted, source), original)

    def _fix(self, result: Any) -> Any:
        """Replace the provisional objects a completed write answered by their conversions."""
        body = getattr(result, "body", result)
        if isinstance(body, dict):
            fixed = self._fixed(body)
            if fixed is not body and hasattr(result, "body"):
                result.body = fixed
                return result
            if fixed is not body:
                return fixed
            items = body.get("items")
            if isinstance(items, list):
                body["items"] = [self._fixed(i) if isinstance(i, dict) else i for i in items]
        return result

    def _fixed(self, obj: dict) -> dict:
        miss = self.provisional.get(id(obj))
        if miss is None:
            return obj
        hit = self.cache.get(conversion.content_key(miss.original, miss.target))
        return conversion.restore_metadata(miss.original, hit) if hit is not None else obj


SCOPE: contextvars.ContextVar[ConversionScope | None] = contextvars.ContextVar("crd_conversion", default=None)


def active(crd: dict | None) -> ConversionScope | None:
    """The current request's scope when it converts objects of ``crd``."""
    scope = SCOPE.get()
    if scope is None or crd is None or scope.crd["metadata"].get("uid") != crd["metadata"].get("uid"):
        return None
    return scope
