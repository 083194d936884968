"""core/v1 Secret: type defaulting, data keys, size, per-type rules, immutability
(``pkg/registry/core/secret/strategy.go``, ``ValidateSecret`` in ``pkg/apis/core/validation``)."""

from __future__ import annotations

from base64 import b64encode

from framework.apiserver.encoding import decoding
from framework.apiserver.machinery.errors import FieldError, invalid_value, too_long
from framework.apiserver.machinery.validation import FIELD_IMMUTABLE
from framework.apiserver.registry import printing
from framework.apiserver.registry.core.configdata import (
    MAX_SECRET_SIZE,
    decoded_sizes,
    immutable_data_errors,
    validate_data_keys,
)
from framework.apiserver.registry.strategy import ResourceType


def normalize_secret(obj: dict) -> None:
    """Merge ``stringData`` into ``data`` (base64; stringData wins) and default ``type`` (spec 17)."""
    string_data = obj.pop("stringData", None) or {}
    if string_data:
        data = obj["data"] = obj.get("data") or {}
        for key, value in string_data.items():
            data[key] = b64encode(str(value).encode()).decode()
    if not obj.get("type"):
        obj["type"] = "Opaque"


def validate_secret(obj: dict, old: dict | None = None) -> list[FieldError]:
    """``ValidateSecret`` / ``ValidateSecretUpdate`` without metadata and type-specific rules.

    Call after :func:`normalize_secret`. Upstream rejects bad base64 while decoding (400); here it
    is a field error at ``data[KEY]`` carrying Go's ``illegal base64 data at input byte N`` text.
    """
    errs: list[FieldError] = []
    if old is not None:
        if (obj.get("type") or "") != (old.get("type") or ""):
            errs.append(invalid_value("type", obj.get("type") or "", FIELD_IMMUTABLE))
        errs.extend(immutable_data_errors(obj, old, ("data",)))
    errs.extend(validate_data_keys(obj.get("data"), "data"))
    total, b64_errs = decoded_sizes(obj.get("data"), "data", redact=True)
    errs.extend(b64_errs)
    if total > MAX_SECRET_SIZE:
        errs.append(too_long("data", MAX_SECRET_SIZE))
    return errs


def fields(obj: dict) -> dict[str, str]:
    return {"type": obj.get("type", "")}


def normalize(obj: dict, old: dict | None) -> None:
    normalize_secret(obj)


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Type", "Used to facilitate programmatic handling of secret data."),
        printing.col("Data", "Data contains the secret data."),
        printing.AGE,
    ],
    lambda o, now: [printing.name(o), o.get("type", ""), len(o.get("data") or {}), printing.age(o, now)],
)


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "secrets",
        "Secret",
        True,
        "secret",
        null_shape=decoding.shape(decoding.strings("data{}", "stringData{}")),
        apply_maps=frozenset({"data", "stringData"}),
        normalize=normalize,
        validate=validate_secret,
        fields=fields,
        field_names=("type",),
        own_field_labels=True,
        printer=PRINTER,
        bytes_field="data",
    ),
]
