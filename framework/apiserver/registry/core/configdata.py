"""The data rules ConfigMap and Secret share (``pkg/apis/core/validation``): keys, the 1 MiB size
limit, base64 of ``[]byte`` maps and ``immutable: true``."""

from __future__ import annotations

from framework.apiserver.encoding.gobase64 import CorruptInputError, go_base64_decode
from framework.apiserver.machinery.errors import FieldError, forbidden, invalid_value
from framework.meta.validation import is_config_map_key

IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"
MAX_SECRET_SIZE = 1024 * 1024  # also the ConfigMap limit


def validate_data_keys(data: dict | None, field: str) -> list[FieldError]:
    return [invalid_value(f"{field}[{k}]", k, m) for k in (data or {}) for m in is_config_map_key(k)]


def decoded_sizes(data: dict | None, field: str, redact: bool) -> tuple[int, list[FieldError]]:
    """Total decoded size of a ``map[string][]byte`` and the base64 errors in it."""
    total, errs = 0, []
    for key, value in (data or {}).items():
        if value is None:
            continue
        shown = "<secret contents redacted>" if redact else value
        if not isinstance(value, str):
            errs.append(invalid_value(f"{field}[{key}]", shown, "must be a base64-encoded string"))
            continue
        try:
            total += len(go_base64_decode(value))
        except CorruptInputError as exc:
            errs.append(invalid_value(f"{field}[{key}]", shown, str(exc)))
    return total, errs


def immutable_data_errors(obj: dict, old: dict, fields: tuple[str, ...]) -> list[FieldError]:
    """The ``immutable: true`` rules shared by ConfigMap and Secret updates."""
    if old.get("immutable") is not True:
        return []
    errs = []
    if obj.get("immutable") is not True:
        errs.append(forbidden("immutable", IMMUTABLE_WHEN_SET))
    for key in fields:
        if (obj.get(key) or {}) != (old.get(key) or {}):
            errs.append(forbidden(key, IMMUTABLE_WHEN_SET))
    return errs
