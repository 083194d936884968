"""Query parameters and DeleteOptions bodies decoded the way kube-apiserver decodes them.

kube-apiserver converts ``url.Values`` into its option structs with apimachinery's conversion
functions (``k8s.io/apimachinery/pkg/runtime/conversion.go``): a boolean is false only for ``0`` or
``false`` (any case) and true for anything else, integers go through ``strconv.ParseInt`` and a bad
one fails the whole request with ``400`` and Go's text. A DELETE takes its ``DeleteOptions`` from the
body when there is one and from the query only when the body is empty
(``k8s.io/apiserver/pkg/endpoints/handlers/delete.go``).
"""

from __future__ import annotations

import re
from typing import Any

from framework.apiserver.encoding import envelope, gojson
from framework.apiserver.endpoints.negotiation import BodyError, decode_body
from framework.apiserver.machinery import errors

_INT = re.compile(r"[+-]?[0-9]+")
INT64_MAX = 2**63 - 1


def go_bool(value: str) -> bool:
    """``Convert_Slice_string_To_bool``: everything but ``0`` and ``false`` is true."""
    return not (value == "0" or value.lower() == "false")


def query_bool(q: Any, name: str) -> bool | None:
    """The first value of ``name`` as a Go bool; None when the parameter is absent."""
    if name not in q:
        return None
    return go_bool(q.getall(name)[0])


def parse_int64(value: str) -> int:
    """``strconv.ParseInt(value, 10, 64)``, failing with its error text as a 400."""
    if not _INT.fullmatch(value):
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax')
    n = int(value)
    if not -INT64_MAX - 1 <= n <= INT64_MAX:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": value out of range')
    return n


def query_int(q: Any, name: str) -> int | None:
    """The first value of ``name`` as an int64; None when absent."""
    if name not in q:
        return None
    return parse_int64(q.getall(name)[0])


# DeleteOptions fields and their Go types, for the decoding errors of a body of the wrong shape.
_DELETE_FIELDS = {
    "gracePeriodSeconds": ("int64", int),
    "propagationPolicy": ("v1.DeletionPropagation", str),
    "orphanDependents": ("bool", bool),
    "dryRun": ("[]string", list),
    "preconditions": ("v1.Preconditions", dict),
    "ignoreStoreReadErrorWithClusterBreakingPotential": ("bool", bool),
}


# Preconditions' fields (``preconditions.uid`` is a ``types.UID``, a string).
_PRECONDITION_FIELDS = {"uid": "types.UID", "resourceVersion": "string"}


def _type_error(value: Any, field: str, go_type: str, struct: str = "DeleteOptions") -> errors.StatusError:
    """encoding/json's ``UnmarshalTypeError`` as a 400; a number an int64 cannot hold is named with its
    literal (``number 1.5``), as ``literalStore`` names it."""
    got = "number" if isinstance(value, _NumberLiteral) else gojson.json_type(value)
    if got == "number" and go_type == "int64":
        got = f"number {value!r}"
    return errors.bad_request(
        f"json: cannot unmarshal {got} into Go struct field {struct}.{field} of type {go_type}"
    )


class _NumberLiteral(str):
    """A JSON number as written in the body (Go's error quotes the literal)."""

    def __repr__(self) -> str:
        return str(self)


def _literal(body: bytes, key: str) -> str | None:
    """The number literal ``key`` has in a JSON ``body``, if it can be found."""
    m = re.search(rb'"' + re.escape(key.encode()) + rb'"\s*:\s*(-?[0-9][0-9.eE+-]*)', body)
    return m.group(1).decode() if m else None


def _check_preconditions(value: dict) -> None:
    for key, go_type in _PRECONDITION_FIELDS.items():
        got = value.get(key)
        if got is not None and not isinstance(got, str):
            raise _type_error(got, f"preconditions.{key}", go_type, "Preconditions")


async def delete_options(body: bytes, content_type: str, q: Any) -> dict:
    """The request's ``DeleteOptions``: the body's when it has one, else the query's (never both).

    ``null`` fields count as absent; unknown fields are dropped (the decoder is not strict).
    """
    if body.strip():
        ctype = content_type.split(";")[0].strip().lower()
        try:
            raw = await decode_body(body, ctype in ("application/yaml", "application/x-yaml"))
        except BodyError as e:
            raise errors.bad_request(f"couldn't get version/kind; json parse error: {e}") from None
        return _body_delete_options(raw, body)
    options: dict[str, Any] = {}
    if "gracePeriodSeconds" in q:
        options["gracePeriodSeconds"] = query_int(q, "gracePeriodSeconds")
    if "propagationPolicy" in q:
        options["propagationPolicy"] = q.getall("propagationPolicy")[0]
    if "orphanDependents" in q:
        options["orphanDependents"] = query_bool(q, "orphanDependents")
    if "dryRun" in q:
        options["dryRun"] = list(q.getall("dryRun"))
    return options


def _body_delete_options(raw: Any, body: bytes = b"") -> dict:
    try:  # the serializer reads apiVersion/kind first (SimpleMetaFactory.Interpret)
        envelope.check_type_meta(raw)
    except envelope.EnvelopeError as e:
        raise errors.bad_request(str(e)) from None
    if raw is None:
        return {}  # null decodes into the options as nothing
    kind = raw.get("kind")
    if kind not in (None, "", "DeleteOptions"):
        raise errors.bad_request("decoded object cannot be converted to DeleteOptions")
    options: dict[str, Any] = {}
    for key, value in raw.items():
        spec = _DELETE_FIELDS.get(key)
        if spec is None or value is None:
            continue
        go_type, py_type = spec
        ok = isinstance(value, py_type) and not (py_type is int and isinstance(value, bool))
        if py_type is int and isinstance(value, float) and value.is_integer() and abs(value) <= INT64_MAX:
            value, ok = int(value), True  # YAML's 1.0 reaches the decoder as JSON's 1
        if not ok or (py_type is int and not -INT64_MAX - 1 <= value <= INT64_MAX):
            if py_type is int and isinstance(value, int | float) and not isinstance(value, bool):
                value = _NumberLiteral(_literal(body, key) or repr(value))
            raise _type_error(value, key, go_type)
        if key == "dryRun":
            for item in value:
                if not isinstance(item, str):  # the element's error names the element's type
                    raise _type_error(item, key, "string")
        if key == "preconditions":
            _check_preconditions(value)
        options[key] = value
    return options
