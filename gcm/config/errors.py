"""The :class:`ConfigError` that carries field errors (:mod:`framework.meta.field`'s ``field.Error``).

``str(FieldError)`` renders like apimachinery's ``field.Error.Error()``::

    gardenClientConnection.burst: Invalid value: -1: must be non-negative
    leaderElection.resourceNamespace: Required value: resourceNamespace is required
    logLevel: Unsupported value: "warning": supported values: "debug", "info", "error"
    controllers.project.quotas[0].projectSelector.matchExpressions[0].values: Forbidden: may not be ...
"""

from __future__ import annotations

from collections.abc import Iterable

from framework.meta.field import Error, ErrorType, forbidden, invalid, not_supported, required

__all__ = [
    "ERROR_TYPE_FORBIDDEN",
    "ERROR_TYPE_INVALID",
    "ERROR_TYPE_NOT_SUPPORTED",
    "ERROR_TYPE_REQUIRED",
    "ConfigError",
    "FieldError",
    "forbidden",
    "invalid",
    "not_supported",
    "required",
]

ERROR_TYPE_INVALID = ErrorType.INVALID
ERROR_TYPE_REQUIRED = ErrorType.REQUIRED
ERROR_TYPE_NOT_SUPPORTED = ErrorType.NOT_SUPPORTED
ERROR_TYPE_FORBIDDEN = ErrorType.FORBIDDEN

# The field errors are framework.meta.field's; a Duration prints as its Go string (a fmt.Stringer).
FieldError = Error


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
