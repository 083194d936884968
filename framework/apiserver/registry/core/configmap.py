"""core/v1 ConfigMap: keys, size and immutability (``pkg/registry/core/configmap/strategy.go``,
``ValidateConfigMap`` in ``pkg/apis/core/validation``)."""

from __future__ import annotations

from framework.apiserver.encoding import decoding
from framework.apiserver.machinery.errors import FieldError, invalid_value, too_long
from framework.apiserver.registry import printing
from framework.apiserver.registry.core.configdata import (
    MAX_SECRET_SIZE,
    decoded_sizes,
    immutable_data_errors,
    validate_data_keys,
)
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.validation import is_config_map_key


def validate_configmap(obj: dict, old: dict | None = None) -> list[FieldError]:
    """``ValidateConfigMap`` / ``ValidateConfigMapUpdate`` without the metadata part."""
    errs = immutable_data_errors(obj, old, ("data", "binaryData")) if old is not None else []
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    total = 0
    for key, value in data.items():
        errs.extend(invalid_value(f"data[{key}]", key, m) for m in is_config_map_key(key))
        if key in binary:
            errs.append(invalid_value(f"data[{key}]", key, "duplicate of key present in binaryData"))
        total += len(str(value or "").encode())
    errs.extend(validate_data_keys(binary, "binaryData"))
    binary_total, b64_errs = decoded_sizes(binary, "binaryData", redact=False)
    errs.extend(b64_errs)
    if total + binary_total > MAX_SECRET_SIZE:
        # Upstream reports this on the empty path: the whole object is too large.
        errs.append(too_long("", MAX_SECRET_SIZE))
    return errs


PRINTER: printing.Printer = (
    [
        printing.NAME,
        printing.col("Data", "Data contains the configuration data."),
        printing.AGE,
    ],
    lambda o, now: [
        printing.name(o),
        len(o.get("data") or {}) + len(o.get("binaryData") or {}),
        printing.age(o, now),
    ],
)


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "configmaps",
        "ConfigMap",
        True,
        "configmap",
        null_shape=decoding.shape(decoding.strings("data{}", "binaryData{}")),
        apply_maps=frozenset({"data", "binaryData"}),
        short_names=("cm",),
        validate=validate_configmap,
        printer=PRINTER,
        bytes_field="binaryData",
    ),
]
