"""Field errors in the wording of Kubernetes' ``field.Error`` and the :class:`ConfigError` that carries them.

``str(FieldError)`` renders like apimachinery's ``field.Error.Error()``::

    gardenClientConnection.burst: Invalid value: -1: must be non-negative
    leaderElection.resourceNamespace: Required value: resourceNamespace is required
    logLevel: Unsupported value: "warning": supported values: "debug", "info", "error"
    controllers.project.quotas[0].projectSelector.matchExpressions[0].values: Forbidden: may not be ...
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from gcm.config.duration import Duration

__all__ = [
    "ERROR_TYPE_FORBIDDEN",
    "ERROR_TYPE_INVALID",
    "ERROR_TYPE_NOT_SUPPORTED",
    "ERROR_TYPE_REQUIRED",
    "ConfigError",
    "FieldError",
    "forbidden",
    "format_value",
    "invalid",
    "not_supported",
    "required",
]

ERROR_TYPE_INVALID = "FieldValueInvalid"
ERROR_TYPE_REQUIRED = "FieldValueRequired"
ERROR_TYPE_NOT_SUPPORTED = "FieldValueNotSupported"
ERROR_TYPE_FORBIDDEN = "FieldValueForbidden"

_TYPE_TEXT = {
    ERROR_TYPE_INVALID: "Invalid value",
    ERROR_TYPE_REQUIRED: "Required value",
    ERROR_TYPE_NOT_SUPPORTED: "Unsupported value",
    ERROR_TYPE_FORBIDDEN: "Forbidden",
}
_NO_VALUE_TYPES = {ERROR_TYPE_REQUIRED, ERROR_TYPE_FORBIDDEN}


def format_value(value: Any) -> str:
    """A bad value as ``field.Error`` prints it: strings quoted, numbers bare, durations as Go strings."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Duration):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


@dataclass(frozen=True)
class FieldError:
    """One problem at one field path (``field.Error``): ``type``, ``field``, ``bad_value``, ``detail``."""

    type: str
    field: str
    bad_value: Any = None
    detail: str = ""

    def __str__(self) -> str:
        body = _TYPE_TEXT.get(self.type, self.type)
        if self.type not in _NO_VALUE_TYPES:
            body += ": " + format_value(self.bad_value)
        if self.detail:
            body += ": " + self.detail
        return f"{self.field}: {body}" if self.field else body


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(ERROR_TYPE_INVALID, path, value, detail)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(ERROR_TYPE_REQUIRED, path, None, detail)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(ERROR_TYPE_FORBIDDEN, path, None, detail)


def not_supported(path: str, value: Any, supported: Sequence[str]) -> FieldError:
    detail = "supported values: " + ", ".join(json.dumps(s) for s in supported) if supported else ""
    return FieldError(ERROR_TYPE_NOT_SUPPORTED, path, value, detail)


class ConfigError(ValueError):
    """The configuration cannot be used; ``errors`` lists every problem, each naming its field path.

    ``field_errors`` holds the structured :class:`FieldError` objects (empty for problems that are not
    about one field, such as a file that cannot be read or is not YAML); ``source`` names the file.
    """

    def __init__(self, errors: Iterable[FieldError | str], source: str | None = None):
        items = list(errors)
        self.field_errors: list[FieldError] = [e for e in items if isinstance(e, FieldError)]
        self.errors: list[str] = [str(e) for e in items]
        self.source = source
        where = f" in {source}" if source else ""
        if len(self.errors) == 1:
            message = f"invalid ControllerManagerConfiguration{where}: {self.errors[0]}"
        else:
            lines = "".join(f"\n  - {e}" for e in self.errors)
            message = f"invalid ControllerManagerConfiguration{where}: {len(self.errors)} errors:{lines}"
        super().__init__(message)
