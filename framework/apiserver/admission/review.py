"""The admission state of one write: what is admitted (:class:`Attributes`) and the :class:`Review` the
REST layer consults at its two admission points (before validation, before persistence), which
captures the object in the dry phases and substitutes the mutated one afterwards."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from framework.apiserver.encoding import decoding, envelope, typed_decoding
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.registry.rest.objects import deep_copy
from framework.apiserver.registry.rest.options import WriteOptions
from framework.apiserver.registry.rest.typed import builtin_model, decode_model
from framework.apiserver.registry.strategy import ResourceType, normalize_times

if TYPE_CHECKING:
    from framework.apiserver.registry.rest.api import API

# Server-owned metadata a mutating webhook cannot change (the REST operation's values are kept).
_SYSTEM_META = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


# The requester of the DELETE being served (auth.UserInfo), for the in-process admission of a delete,
# which the REST layer calls without options; unset (None) in the in-process controllers' tasks.
DELETE_REQUESTER: ContextVar[Any] = ContextVar("delete_requester", default=None)


class Captured(Exception):
    """Stops a dry phase of a REST operation at an admission point, carrying the object there."""

    def __init__(self, stored: dict | None, old: dict | None) -> None:
        super().__init__("captured")
        self.stored = stored
        self.old = old


class Retry(Exception):
    """The stored object changed while webhooks were called: run the request again."""


@dataclass
class Attributes:
    """What is being admitted (``admission.Attributes``); objects in stored form."""

    rt: ResourceType
    subresource: str
    operation: str
    name: str
    namespace: str
    obj: dict | None
    old: dict | None
    user: Any
    dry_run: bool
    options: dict


@dataclass
class Review:
    """The admission state of one write request, handed to the REST layer as ``WriteOptions.admission``.

    ``mode`` is ``mutate`` (capture before validation), ``validate`` (capture before persistence) or
    ``commit``; ``mutated`` is the object the mutating webhooks produced (stored form), substituted in
    the later phases.
    """

    mode: str
    request_name: str = ""
    pinned_name: str = ""
    mutated: dict | None = None
    old_rv: str | None = None
    final: dict | None = None

    def mutate(
        self,
        api: API,
        rt: ResourceType,
        stored: dict,
        old: dict | None,
        opts: WriteOptions,
        errs: list[FieldError],
        warnings: list[str],
    ) -> tuple[dict, list[FieldError]]:
        if self.mode == "mutate":
            raise Captured(deep_copy(stored), old)
        self._check_old(old)
        if self.mutated is None:
            return stored, errs
        return _substitute(api, rt, stored, old, self.mutated, opts, warnings)

    def validate(
        self, api: API, rt: ResourceType, stored: dict, old: dict | None, opts: WriteOptions
    ) -> None:
        if self.mode == "validate":
            raise Captured(deep_copy(stored), old)
        self._check_old(old)
        if old is None and self.final is not None:
            # The object the validating webhooks saw is the one created.
            for k in ("uid", "creationTimestamp"):
                if k in self.final["metadata"]:
                    stored["metadata"][k] = self.final["metadata"][k]

    def _check_old(self, old: dict | None) -> None:
        rv = old["metadata"].get("resourceVersion") if old is not None else None
        if self.mode != "mutate" and rv != self.old_rv:
            raise Retry()


def _substitute(
    api: API,
    rt: ResourceType,
    stored: dict,
    old: dict | None,
    mutated: dict,
    opts: WriteOptions,
    warnings: list[str],
) -> tuple[dict, list[FieldError]]:
    """The mutated object in place of the REST operation's own, re-defaulted for validation.

    Server-owned metadata stays the operation's. The errors found so far are replaced by those of the
    custom-resource schema on the mutated object (built-in validation follows in the REST layer).
    """
    obj = api.external(rt, deep_copy(mutated))
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise errors.internal_error("a mutating webhook made metadata not an object")
    current = stored["metadata"]
    for k in _SYSTEM_META:
        if k in current:
            meta[k] = current[k]
        else:
            meta.pop(k, None)
    if "managedFields" in current and old is None:
        meta["managedFields"] = current["managedFields"]
    obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
    decoding.decode(rt.null_shape, obj, custom=rt.is_custom)  # the patched JSON is decoded anew
    model = None if rt.is_custom else builtin_model(rt)
    try:
        if model:
            decode_model(model, obj)
        elif rt.is_custom:
            envelope.check_custom_metadata(obj)
    except (envelope.EnvelopeError, typed_decoding.DecodeError) as e:
        # The mutating dispatcher's decode of the patched object fails: an internal error.
        raise errors.internal_error(str(e)) from None
    errs: list[FieldError] = []
    if rt.is_custom:
        errs += api._custom_schema(rt, obj, opts, warnings)
    new = api._to_stored(rt, obj)
    normalize_times(rt, new)
    if rt.normalize:
        rt.normalize(new, old)
    return new, errs
