"""Decoding ``Time`` / ``MicroTime`` fields of request bodies as kube-apiserver does (spec 6-12).

The parsing and formatting rules are :mod:`framework.meta.time`'s (Go's ``time.Parse`` with the
``RFC3339`` and ``RFC3339Micro`` layouts, error texts included). Here a decode failure becomes
``400 BadRequest`` behind the handler's ``KIND in version "V" cannot be handled as a KIND:`` prefix,
and a JSON ``""`` is an error (Go's ``Time.UnmarshalJSON`` only treats ``null`` as unset).
"""

from __future__ import annotations

from typing import Any

from framework.apiserver.machinery.errors import StatusError, bad_request
from framework.meta.time import (
    RFC3339,
    RFC3339_MICRO,
    TimeParseError,
    format_micro_time,
    format_time,
    now,
    parse_layout,
)

# encoding/json's names for the JSON types it refuses to put into a Go string.
_JSON_TYPES = {bool: "bool", list: "array", dict: "object"}


def _decode_error(field: str, kind: str, version: str, err: str) -> StatusError:
    """The handler's decode-failure text (``transformDecodeError``), or ``FIELD: ERR`` without a kind."""
    if kind:
        return bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {err}')
    return bad_request(f"{field}: {err}")


def _decode(value: Any, field: str, layout: str, kind: str, version: str) -> str:
    if not isinstance(value, str):
        json_type = _JSON_TYPES.get(type(value), "number")
        raise _decode_error(
            field, kind, version, f"json: cannot unmarshal {json_type} into Go value of type string"
        )
    try:
        parsed = parse_layout(layout, value)
    except TimeParseError as exc:
        raise _decode_error(field, kind, version, str(exc)) from None
    return format_micro_time(parsed) if layout == RFC3339_MICRO else format_time(parsed)


def now_time() -> str:
    """The current time as a ``Time`` string."""
    return format_time(now())


def now_microtime() -> str:
    """The current time as a ``MicroTime`` string."""
    return format_micro_time(now())


def normalize_time(value: Any, field: str, *, kind: str = "", version: str = "") -> str:
    """Decode a ``Time`` JSON value like the real server and return its canonical output form.

    Any RFC 3339 form is accepted (fraction optional, ``Z`` or an offset); the result is UTC,
    truncated to seconds. Failures raise ``400 BadRequest``; with ``kind`` the message carries the
    handler's ``KIND in version "VERSION" cannot be handled as a KIND:`` prefix, otherwise
    ``FIELD:`` (for callers outside a request body decode).
    """
    return _decode(value, field, RFC3339, kind, version)


def normalize_microtime(value: Any, field: str, *, kind: str = "", version: str = "") -> str:
    """Decode a ``MicroTime`` JSON value (exactly six fraction digits) and return it in UTC.

    Errors as :func:`normalize_time`; e.g. ``2024-05-01T10:00:00Z`` fails with
    ``cannot parse "Z" as ".000000"``.
    """
    return _decode(value, field, RFC3339_MICRO, kind, version)


def _walk(node: Any, parts: list[str], fn: Any) -> None:
    """Apply ``fn(container, key)`` at the end of a dotted path; ``name[]`` fans out over a list."""
    if not parts or not isinstance(node, dict):
        return
    head, rest = parts[0], parts[1:]
    if head.endswith("[]"):
        items = node.get(head[:-2])
        if isinstance(items, list):
            for item in items:
                _walk(item, rest, fn)
        return
    if not rest:
        if node.get(head) is not None:
            fn(node, head)
        return
    _walk(node.get(head), rest, fn)


def normalize_object_times(
    obj: dict,
    time_fields: list[str] | tuple[str, ...] = (),
    microtime_fields: list[str] | tuple[str, ...] = (),
    *,
    kind: str = "",
    version: str = "",
) -> None:
    """Normalize the ``Time``/``MicroTime`` fields of ``obj`` in place.

    Paths are dotted (``spec.renewTime``) and may fan out over lists with ``[]``
    (``status.conditions[].lastTransitionTime``); absent and ``null`` values are left alone.
    """

    def fix_time(container: dict, key: str) -> None:
        container[key] = normalize_time(container[key], key, kind=kind, version=version)

    def fix_micro(container: dict, key: str) -> None:
        container[key] = normalize_microtime(container[key], key, kind=kind, version=version)

    for path in time_fields:
        _walk(obj, path.split("."), fix_time)
    for path in microtime_fields:
        _walk(obj, path.split("."), fix_micro)
