"""framework.meta.field: field paths and errors with Go's texts (pkg/util/validation/field)."""

from __future__ import annotations

import pytest

from framework.meta import field
from framework.meta.field import ErrorList, GoText, go_float, go_value, new_path


def test_path_rendering():
    p = new_path("spec", "template").child("spec", "containers").index(0).child("env").key("FOO")
    assert str(p) == "spec.template.spec.containers[0].env[FOO]"
    assert str(field.Path().child("metadata")) == "metadata"
    assert new_path("a") == field.Path("a") and hash(new_path("a")) == hash(field.Path("a"))


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (
            field.required("metadata.name", "name or generateName is required"),
            "metadata.name: Required value: name or generateName is required",
        ),
        (field.required("spec.x"), "spec.x: Required value"),
        (
            field.invalid("spec.replicas", -1, "must be greater than or equal to 0"),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        (field.invalid("metadata.name", "A_b", "bad"), 'metadata.name: Invalid value: "A_b": bad'),
        (field.invalid("f", ["orphan", "x"], "d"), 'f: Invalid value: []string{"orphan", "x"}: d'),
        (field.invalid("f", {"a": 1}, "d"), 'f: Invalid value: {"a":1}: d'),
        (field.invalid("f", None, "d"), "f: Invalid value: null: d"),
        (field.invalid("f", True, ""), "f: Invalid value: true"),
        (
            field.invalid("f", GoText('v1.OwnerReference{Name:"x"}'), "d"),
            'f: Invalid value: v1.OwnerReference{Name:"x"}: d',
        ),
        (
            field.not_supported("logLevel", "warning", ["debug", "info"]),
            'logLevel: Unsupported value: "warning": supported values: "debug", "info"',
        ),
        (field.not_supported("x", "y", []), 'x: Unsupported value: "y"'),
        (
            field.forbidden("force", "may not be specified for non-apply patch"),
            "force: Forbidden: may not be specified for non-apply patch",
        ),
        (field.duplicate("spec.ports[1].port", 80), "spec.ports[1].port: Duplicate value: 80"),
        (
            field.too_long("metadata.annotations", 262144),
            "metadata.annotations: Too long: may not be more than 262144 bytes",
        ),
        (field.too_long("x", 1, "characters"), "x: Too long: may not be more than 1 character"),
        (field.too_many("spec.items", 5, 3), "spec.items: Too many: 5: must have at most 3 items"),
        (field.too_many("spec.items", 2, 1), "spec.items: Too many: 2: must have at most 1 item"),
        (field.not_found("spec.x", "y"), 'spec.x: Not found: "y"'),
        (field.type_invalid("spec.x", 1, "must be a string"), "spec.x: Invalid value: 1: must be a string"),
        (field.internal_error("spec", "boom"), "spec: Internal error: boom"),
    ],
)
def test_error_texts(error, text):
    assert str(error) == text == error.message()


def test_cause_and_path_objects():
    e = field.invalid(new_path("spec").child("x"), "v", "bad")
    assert e.cause() == {
        "reason": "FieldValueInvalid",
        "message": 'Invalid value: "v": bad',
        "field": "spec.x",
    }


def test_error_list_aggregate_drops_duplicates():
    errs = ErrorList([field.required("a"), field.required("a"), field.forbidden("b", "no")])
    assert errs.to_aggregate() == "[a: Required value, b: Forbidden: no]"
    assert ErrorList([field.required("a")]).to_aggregate() == "a: Required value"
    assert ErrorList().to_aggregate() is None
    assert errs.filter_type(field.ErrorType.FORBIDDEN) == [field.forbidden("b", "no")]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (1.5, "1.5"),
        (100000.0, "100000"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (-2.5e-7, "-2.5e-07"),
        (2e6, "2e+06"),
        (float("inf"), "+Inf"),
        (float("nan"), "NaN"),
        (-0.0, "-0"),
    ],
)
def test_go_float_is_percent_v(value, text):
    assert go_float(value) == text


def test_go_value_quotes_like_go():
    assert go_value('a"b\\c\n\x01') == '"a\\"b\\\\c\\n\\x01"'
    assert go_value("grüße") == '"grüße"'
    assert go_value(()) == "[]"  # only a list of strings is printed as a Go []string


class _Duration(float):
    def __str__(self) -> str:
        return "1m0s"


def test_stringers_print_their_text():
    assert go_value(_Duration(60)) == "1m0s"
