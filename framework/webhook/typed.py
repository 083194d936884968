"""Typed admission: defaulters and validators for one kind, as controller-runtime's
``admission.CustomDefaulter`` / ``CustomValidator`` (pkg/webhook/admission/defaulter_custom.go,
validator_custom.go).

``defaulter(api_version, kind, fn)`` calls ``fn(obj)`` with a copy of the object being created or
updated; ``fn`` changes it in place and the framework answers with the JSON Patch from the object as
received to the changed copy (:func:`framework.webhook.jsonpatch.create_patch`). DELETE is admitted
without calling ``fn``.

``validator(api_version, kind, on_create, on_update, on_delete)`` calls ``on_create(obj)``,
``on_update(old, new)`` or ``on_delete(old)``; each returns warnings (None, a string or strings) and
raises :class:`AdmissionDenied` (403 Forbidden) or :class:`Invalid` (422 with field causes, as
``apierrors.NewInvalid``) to refuse. A callback left out admits its operation; CONNECT is admitted.

Any other exception is a bug in the webhook: the request is refused with code 500 and the exception is
logged. While a function runs, :func:`current_request` is the :class:`AdmissionRequest` (user info,
``dry_run``, operation, options), as ``admission.RequestFromContext`` in Go.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable
from typing import Any

from framework.meta import field, jsoncodec
from framework.meta.object import get_metadata
from framework.meta.schema import GroupKind, GroupVersionKind, parse_group_version
from framework.webhook.admission import (
    AdmissionRequest,
    AdmissionResponse,
    allowed,
    denied,
    errored,
    patched,
)
from framework.webhook.jsonpatch import create_patch

__all__ = [
    "AdmissionDenied",
    "CustomDefaulter",
    "CustomValidator",
    "DefaultFunc",
    "Invalid",
    "Warnings",
    "current_request",
    "defaulter",
    "validator",
]

Warnings = None | str | Iterable[str]
DefaultFunc = Callable[[dict[str, Any]], None]

_request: contextvars.ContextVar[AdmissionRequest] = contextvars.ContextVar("admission_request")


def current_request() -> AdmissionRequest:
    """The request whose object a defaulter or validator function is looking at.

    ``current_request().user_info["username"]``, ``.dry_run``, ``.operation``. Raises LookupError
    outside such a function.
    """
    try:
        return _request.get()
    except LookupError:
        raise LookupError("current_request() is only set while a defaulter or validator runs") from None


class AdmissionDenied(Exception):
    """Refuse the request: ``status`` Failure with ``code`` (403, reason ``Forbidden``) and ``message``.

    ``warnings`` go out with the refusal (kubectl prints them before the error). ``causes`` are
    ``StatusCause`` dicts (``reason``, ``message``, ``field``) put into ``status.details``.
    """

    code = 403

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        reason: str | None = None,
        causes: Iterable[dict[str, str]] = (),
        warnings: Warnings = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.reason = reason
        self.causes = list(causes)
        self.warnings = _warnings(warnings)

    def response(self, gk: GroupKind, name: str) -> AdmissionResponse:
        details: dict[str, Any] | None = None
        if self.causes:
            details = {"name": name, "group": gk.group, "kind": gk.kind, "causes": self.causes}
        return denied(self.message, self.code, self.reason, details=details, warnings=self.warnings)


class Invalid(AdmissionDenied):
    """Refuse the object for field errors: 422 ``Invalid`` with one cause per error, as
    ``apierrors.NewInvalid(gk, name, errs)``: ``Memcached.cache.example.com "m" is invalid:
    spec.size: Invalid value: 9: must be at most 5``. Give one or more :mod:`framework.meta.field`
    errors (``field.invalid(path, value, detail)``, ``field.required(path)``, ...) or an ErrorList."""

    code = 422

    def __init__(self, *errors: field.Error | Iterable[field.Error], warnings: Warnings = None) -> None:
        flat = field.ErrorList()
        for e in errors:
            if isinstance(e, field.Error):
                flat.append(e)
            else:
                flat.extend(e)
        if not flat:
            raise ValueError("Invalid needs at least one field error")
        self.errors = flat
        super().__init__(
            flat.to_aggregate() or "", reason="Invalid", causes=[e.cause() for e in flat], warnings=warnings
        )

    def response(self, gk: GroupKind, name: str) -> AdmissionResponse:
        message = f'{gk} "{name}" is invalid: {self.message}'
        details = {"name": name, "group": gk.group, "kind": gk.kind, "causes": self.causes}
        return denied(message, self.code, self.reason, details=details, warnings=self.warnings)


def _warnings(value: Warnings) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    out = tuple(value)
    for w in out:
        if not isinstance(w, str):
            raise TypeError(f"a warning must be a string, got {type(w).__name__}: {w!r}")
    return out


def _gvk(api_version: str, kind: str) -> GroupVersionKind:
    if not kind:
        raise ValueError("kind must not be empty")
    gv = parse_group_version(api_version)
    if not gv.version:
        raise ValueError(f"apiVersion {api_version!r} has no version")
    return gv.with_kind(kind)


def _object_name(req: AdmissionRequest, obj: dict[str, Any] | None) -> str:
    meta = get_metadata(obj)
    return req.name or str(meta.get("name") or meta.get("generateName") or "")


class _Typed:
    """What defaulters and validators share: the kind they serve and the request's checks."""

    mutating = False

    def __init__(self, api_version: str, kind: str) -> None:
        self.gvk = _gvk(api_version, kind)
        self.group_kind = GroupKind(self.gvk.group, self.gvk.kind)

    def _wrong_kind(self, req: AdmissionRequest) -> AdmissionResponse | None:
        if (req.kind.group, req.kind.kind) != self.group_kind:
            got = GroupKind(req.kind.group, req.kind.kind)
            return errored(400, f"this webhook serves {self.group_kind}, got a request for {got}")
        return None

    def __call__(self, req: AdmissionRequest) -> AdmissionResponse:
        refusal = self._wrong_kind(req)
        if refusal is not None:
            return refusal
        token = _request.set(req)
        try:
            return self.handle(req)
        except AdmissionDenied as e:
            return e.response(self.group_kind, _object_name(req, req.object or req.old_object))
        finally:
            _request.reset(token)

    def handle(self, req: AdmissionRequest) -> AdmissionResponse:
        raise NotImplementedError


class CustomDefaulter(_Typed):
    """The admission handler :func:`defaulter` returns (``mutating``; ``gvk`` is the served kind)."""

    mutating = True
    operations = ("CREATE", "UPDATE")  # DELETE is admitted without calling fn: no need to send it

    def __init__(self, api_version: str, kind: str, fn: DefaultFunc) -> None:
        super().__init__(api_version, kind)
        if not callable(fn):
            raise TypeError(f"the defaulter for {self.group_kind} is not callable")
        self.fn = fn

    def handle(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.operation == "DELETE":
            return allowed()
        if req.object is None:
            return errored(400, f"{req.operation} request has no object to default")
        original = req.object
        obj = jsoncodec.copy(original)  # a deep copy of plain JSON, faster than deepcopy
        returned = self.fn(obj)
        if returned is not None:
            raise TypeError(
                f"the defaulter for {self.group_kind} returned {type(returned).__name__}; it must change "
                "the object it is given in place and return None"
            )
        ops = create_patch(original, obj)
        return patched(ops) if ops else allowed()


class CustomValidator(_Typed):
    """The admission handler :func:`validator` returns (``operations`` it has a callback for)."""

    def __init__(
        self,
        api_version: str,
        kind: str,
        on_create: Callable[[dict[str, Any]], Warnings] | None = None,
        on_update: Callable[[dict[str, Any], dict[str, Any]], Warnings] | None = None,
        on_delete: Callable[[dict[str, Any]], Warnings] | None = None,
    ) -> None:
        super().__init__(api_version, kind)
        for name, fn in (("on_create", on_create), ("on_update", on_update), ("on_delete", on_delete)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{name} of the validator for {self.group_kind} is not callable")
        if on_create is None and on_update is None and on_delete is None:
            raise ValueError(f"the validator for {self.group_kind} needs on_create, on_update or on_delete")
        self.on_create, self.on_update, self.on_delete = on_create, on_update, on_delete

    @property
    def operations(self) -> list[str]:
        """The operations with a callback (what a generated configuration's rule lists)."""
        pairs = (("CREATE", self.on_create), ("UPDATE", self.on_update), ("DELETE", self.on_delete))
        return [op for op, fn in pairs if fn is not None]

    def handle(self, req: AdmissionRequest) -> AdmissionResponse:
        op = req.operation
        if op == "CONNECT":
            return allowed()
        if op not in ("CREATE", "UPDATE", "DELETE"):
            return errored(400, f'unknown operation "{op}"')
        obj = req.old_object if op == "DELETE" else req.object
        if obj is None:
            which = "oldObject" if op == "DELETE" else "object"
            return errored(400, f"{op} request has no {which}")
        if op == "CREATE":
            warnings = self.on_create(obj) if self.on_create else None
        elif op == "UPDATE":
            if req.old_object is None:
                return errored(400, "UPDATE request has no oldObject")
            warnings = self.on_update(req.old_object, obj) if self.on_update else None
        else:
            warnings = self.on_delete(obj) if self.on_delete else None
        return allowed(warnings=_warnings(warnings))


def defaulter(api_version: str, kind: str, fn: DefaultFunc) -> CustomDefaulter:
    """A mutating admission handler for ``kind`` that applies ``fn(obj)`` (see the module docstring)."""
    return CustomDefaulter(api_version, kind, fn)


def validator(
    api_version: str,
    kind: str,
    on_create: Callable[[dict[str, Any]], Warnings] | None = None,
    on_update: Callable[[dict[str, Any], dict[str, Any]], Warnings] | None = None,
    on_delete: Callable[[dict[str, Any]], Warnings] | None = None,
) -> CustomValidator:
    """A validating admission handler for ``kind`` (see the module docstring)."""
    return CustomValidator(api_version, kind, on_create, on_update, on_delete)
