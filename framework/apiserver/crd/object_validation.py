"""Validation of custom resources against their version's schema (16-5): kube-openapi's ``validate``
package as apiextensions-apiserver's ``pkg/apiserver/validation`` wraps it, plus the embedded-resource
checks of ``schema/objectmeta``.

Error texts are upstream's, including its quirks (a type error reports the JSON type of the bad value,
not the value; ``maximum`` is truncated to an integer when the value is an integer). Of the string
formats only ``date-time`` and ``date`` are checked; Go regexp (RE2) patterns are run with Python's
``re`` (ASCII classes). CEL ``x-kubernetes-validations`` are ``cel_validation``'s.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

from framework.apiserver.crd.values import (
    EMBEDDED,
    INT_OR_STRING,
    is_json_integer,
    join_path,
    json_text,
    schema_type,
)
from framework.apiserver.machinery.errors import (
    FieldError,
    invalid_value,
    not_supported,
    required,
    type_invalid,
)
from framework.apiserver.machinery.jsonvalues import as_dict, as_list
from framework.meta import jsoncodec
from framework.meta.field import go_float, too_long, too_many
from framework.meta.validation import is_dns1035_label


def validate_object(obj: Any, schema: dict) -> list[FieldError]:
    """Validate a defaulted, pruned custom resource against its version's schema (16-5).

    Root ``metadata`` is left to the server's ObjectMeta validation. Embedded resources
    (``x-kubernetes-embedded-resource``) additionally need a valid ``apiVersion`` and ``kind``.
    """
    errs: list[FieldError] = []
    SchemaValidator("", errs, skip_root_metadata=True).run(obj, schema, "")
    _validate_embedded(obj, schema, "", errs, root=True)
    return errs


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    # Go's RE2 classes (\d, \w, \s) are ASCII-only.
    return re.compile(pattern, re.ASCII)


def _is_date(s: str) -> bool:
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", s)
    if not m:
        return False
    y, mo, d = map(int, m.groups())
    if not 1 <= mo <= 12 or d < 1:
        return False
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    return d <= (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[mo - 1]


_TIME_RE = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")


def _is_date_time(s: str) -> bool:
    """``strfmt.IsDateTime``: RFC 3339, case-insensitive ``T``/``Z``, checked field by field."""
    if len(s) < 4:
        return False
    parts = s.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _TIME_RE.match(parts[1])
    return m is not None and m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


# Formats kept by StripUnsupportedFormatsPostProcess (normalized: lower case, alphanumerics only);
# only the ones with a checker are actually validated.
_SUPPORTED_FORMATS = {
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3", "uuid4",
    "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor", "byte", "password",
    "date", "duration", "datetime",
}  # fmt: skip
_FORMAT_CHECKS = {"date": _is_date, "datetime": _is_date_time}


def _format_of(s: dict) -> str:
    fmt = s.get("format")
    if not isinstance(fmt, str) or not fmt:
        return ""
    return fmt if re.sub(r"[^a-z0-9]", "", fmt.lower()) in _SUPPORTED_FORMATS else ""


def _json_kind(v: Any) -> tuple[str, str]:
    """The JSON type and Go format kube-openapi infers for a decoded value."""
    if isinstance(v, bool):
        return "boolean", ""
    if isinstance(v, str):
        return "string", ""
    if isinstance(v, int):
        return "integer", "int64"
    if isinstance(v, float):
        return "number", "float64"
    if isinstance(v, list):
        return "array", ""
    return "object", ""


def _values_equal(a: Any, b: Any) -> bool:
    """JSON equality where booleans are not numbers and 1 equals 1.0 (enum matching)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_values_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_values_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


class SchemaValidator:
    """kube-openapi's SchemaValidator converted to field errors (``kubeOpenAPIResultToFieldErrors``).

    ``name`` is the go-openapi path used inside messages (``spec.size``); the field path is ``base``
    plus that name, so default values can be validated under ``...properties[x].default``.
    """

    def __init__(self, base: str, errs: list[FieldError], skip_root_metadata: bool = False) -> None:
        self.base = base
        self.errs = errs
        self.skip_root_metadata = skip_root_metadata

    def field(self, name: str) -> str:
        if not name:
            return self.base
        return f"{self.base}.{name}" if self.base else name

    def type_error(self, name: str, type_name: str, got: str) -> None:
        # InvalidType carries the JSON type (or Go format) of the bad value, not the value itself.
        self.errs.append(
            type_invalid(self.field(name), got, f'{name} in body must be of type {type_name}: "{got}"')
        )

    def invalid(self, name: str, value: Any, message: str) -> None:
        self.errs.append(invalid_value(self.field(name), value, f"{name} in body {message}"))

    def run(self, data: Any, s: Any, name: str) -> None:
        if not isinstance(s, dict):
            return
        types = (
            ["integer", "string"]
            if s.get(INT_OR_STRING) is True
            else ([schema_type(s)] if schema_type(s) else [])
        )
        if data is None:
            if types and s.get("nullable") is not True:
                self.type_error(name, ",".join(types), "null")
            self.check_enum(data, s, name)
            return
        self.check_type(data, s, types, name)
        if isinstance(data, str):
            self.check_string(data, s, name)
            fmt = _format_of(s)
            check = _FORMAT_CHECKS.get(re.sub(r"[^a-z0-9]", "", fmt.lower()))
            if check is not None and not check(data):
                self.errs.append(
                    type_invalid(
                        self.field(name),
                        data,
                        f"{name} in body must be of type {fmt}: {jsoncodec.dumps(data).decode()}",
                    )
                )
        elif isinstance(data, int | float) and not isinstance(data, bool):
            self.check_number(data, s, name)
        elif isinstance(data, list):
            self.check_array(data, s, name)
        self.check_enum(data, s, name)
        if isinstance(data, dict):
            self.check_object(data, s, name)

    def check_type(self, data: Any, s: dict, types: list[str], name: str) -> None:
        fmt = _format_of(s)
        if not types and not fmt:
            return
        kind, go_format = _json_kind(data)
        float_int = kind == "number" and is_json_integer(data) and "integer" in types
        int_float = kind == "integer" and "number" in types
        scalar_like = isinstance(data, str | list)
        if not scalar_like and fmt and not (kind in types or go_format == fmt or float_int or int_float):
            self.type_error(name, fmt, go_format)
            return
        # Upstream quirk: a formatted non-numeric type accepts any string or array.
        if fmt and scalar_like and "number" not in types and "integer" not in types:
            return
        if not (kind in types or float_int or int_float):
            self.type_error(name, ",".join(types), kind)

    def check_string(self, data: str, s: dict, name: str) -> None:
        # Only the first failing check is reported (stringValidator returns early).
        max_len, min_len, pattern = s.get("maxLength"), s.get("minLength"), s.get("pattern")
        if isinstance(max_len, int) and len(data) > max_len:
            self.errs.append(too_long(self.field(name), max_len))
        elif isinstance(min_len, int) and len(data) < min_len:
            self.invalid(name, data, f"should be at least {min_len} chars long")
        elif isinstance(pattern, str) and pattern:
            try:
                matched = compile_pattern(pattern).search(data) is not None
            except re.error as e:
                self.invalid(name, data, f"should match '{pattern}, but pattern is invalid: {e}'")
                return
            if not matched:
                self.invalid(name, data, f"should match '{pattern}'")

    def check_number(self, data: float, s: dict, name: str) -> None:
        # Integers are checked against int64(bound): fractional bounds are truncated, as upstream does.
        as_int = isinstance(data, int)
        value = data if as_int else float(data)
        multiple = s.get("multipleOf")
        if isinstance(multiple, int | float) and not isinstance(multiple, bool):
            shown = str(math.trunc(multiple)) if as_int else go_float(float(multiple))
            if multiple < 0:
                self.errs.append(
                    invalid_value(
                        self.field(name),
                        multiple,
                        f"factor MultipleOf declared for {name} must be positive: {shown}",
                    )
                )
            elif as_int and math.trunc(multiple) != 0:
                if data % math.trunc(multiple):
                    self.invalid(name, data, f"should be a multiple of {shown}")
            elif multiple > 0:
                mult = (1 / multiple * value) if multiple < 1 else value / multiple
                if not is_json_integer(float(mult)):
                    self.invalid(name, data, f"should be a multiple of {shown}")
        for key, excl_key, below in (
            ("minimum", "exclusiveMinimum", True),
            ("maximum", "exclusiveMaximum", False),
        ):
            bound = s.get(key)
            if not isinstance(bound, int | float) or isinstance(bound, bool):
                continue
            excl = s.get(excl_key) is True
            limit = math.trunc(bound) if as_int else float(bound)
            shown = str(limit) if as_int else go_float(limit)
            if below:
                failed = value <= limit if excl else value < limit
                text = (
                    f"should be greater than {shown}"
                    if excl
                    else f"should be greater than or equal to {shown}"
                )
            else:
                failed = value >= limit if excl else value > limit
                text = f"should be less than {shown}" if excl else f"should be less than or equal to {shown}"
            if failed:
                self.invalid(name, data, text)

    def check_array(self, data: list, s: dict, name: str) -> None:
        items = s.get("items")
        if isinstance(items, dict):
            for i, v in enumerate(data):
                self.run(v, items, f"{name}[{i}]")
        min_items, max_items = s.get("minItems"), s.get("maxItems")
        if isinstance(min_items, int) and len(data) < min_items:
            self.invalid(name, len(data), f"should have at least {min_items} items")
        if isinstance(max_items, int) and len(data) > max_items:
            self.errs.append(too_many(self.field(name), len(data), max_items))

    def check_enum(self, data: Any, s: dict, name: str) -> None:
        enum = s.get("enum")
        if not isinstance(enum, list) or not enum:
            return
        if data is not None and any(e is not None and _values_equal(data, e) for e in enum):
            return
        allowed = [e if isinstance(e, str) else json_text(e) for e in enum]
        self.errs.append(not_supported(self.field(name), data, allowed))

    def check_object(self, data: dict, s: dict, name: str) -> None:
        n = len(data)
        min_props, max_props = s.get("minProperties"), s.get("maxProperties")
        if isinstance(min_props, int) and n < min_props:
            self.invalid(name, n, f"should have at least {min_props} properties")
            return
        if isinstance(max_props, int) and n > max_props:
            self.errs.append(too_many(self.field(name), n, max_props))
            return
        props = as_dict(s.get("properties"))
        addl = s.get("additionalProperties")
        if addl is False:
            for k in data:
                if k not in props:
                    self.errs.append(
                        invalid_value(self.field(name), k, f"{name}.{k} in body is a forbidden property")
                    )
        elif isinstance(addl, dict):
            for k, v in data.items():
                if k not in props:
                    self.run(v, addl, join_path(name, k))
        for k, sub in props.items():
            if k not in data or (self.skip_root_metadata and not name and k == "metadata"):
                continue
            self.run(data[k], sub, join_path(name, k))
        for k in as_list(s.get("required")):
            if k not in data:
                self.errs.append(required(self.field(join_path(name, k))))


def _validate_embedded(x: Any, s: Any, path: str, errs: list[FieldError], root: bool = False) -> None:
    """apiVersion/kind checks for nested ``x-kubernetes-embedded-resource`` objects (schema/objectmeta)."""
    if not isinstance(s, dict):
        return
    if isinstance(x, dict):
        if s.get(EMBEDDED) is True and not root:
            errs.extend(_embedded_type_meta(x, path))
        props = as_dict(s.get("properties"))
        addl = s.get("additionalProperties")
        for k, v in x.items():
            if root and k == "metadata":
                continue
            if k in props:
                _validate_embedded(v, props[k], join_path(path, k), errs)
            elif isinstance(addl, dict):
                _validate_embedded(v, addl, f"{path}[{k}]", errs)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            _validate_embedded(v, s.get("items"), f"{path}[{i}]", errs)


def _embedded_type_meta(x: dict, path: str) -> list[FieldError]:
    errs = []
    for key in ("apiVersion", "kind"):
        if key not in x:
            errs.append(required(join_path(path, key), "must not be empty"))
    for key, value in x.items():
        if key not in ("apiVersion", "kind"):
            continue
        fpath = join_path(path, key)
        if not isinstance(value, str):
            errs.append(invalid_value(fpath, value, "must be a string"))
        elif not value:
            errs.append(invalid_value(fpath, value, "must not be empty"))
        elif key == "apiVersion" and value != "/" and value.count("/") > 1:
            errs.append(invalid_value(fpath, value, f"unexpected GroupVersion string: {value}"))
        elif key == "kind" and (msgs := is_dns1035_label(value.lower())):
            errs.append(
                invalid_value(
                    fpath, value, "may have mixed case, but should otherwise match: " + ",".join(msgs)
                )
            )
    return errs
