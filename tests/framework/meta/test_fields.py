"""framework.meta.fields: field selectors as k8s.io/apimachinery/pkg/fields."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework.meta.fields import (
    Requirement,
    Selector,
    as_selector,
    escape_value,
    parse,
    selector_from_set,
    unescape_value,
)


def test_operators_sorting_and_matching():
    selector = parse("status.phase!=Failed,metadata.name==web,metadata.namespace=prod")
    assert selector.requirements == (
        Requirement("metadata.name", "=", "web"),
        Requirement("metadata.namespace", "=", "prod"),
        Requirement("status.phase", "!=", "Failed"),
    )
    assert selector.matches({"metadata.name": "web", "metadata.namespace": "prod"})
    assert not selector.matches(
        {"metadata.name": "web", "metadata.namespace": "prod", "status.phase": "Failed"}
    )
    assert selector.requires_exact_match("metadata.name") == "web"
    assert selector.requires_exact_match("status.phase") is None
    assert str(selector) == "metadata.name=web,metadata.namespace=prod,status.phase!=Failed"


def test_empty_selects_everything_and_a_missing_field_is_empty():
    for text in (None, "", ",", ",,"):
        assert parse(text).empty and parse(text).matches({"x": "y"})
    assert parse("status.phase=").matches({})
    assert not parse("status.phase=Active").matches({})


def test_escapes():
    selector = parse(r"metadata.name=a\,b\=c\\d")
    assert selector.requirements == (Requirement("metadata.name", "=", r"a,b=c\d"),)
    assert str(selector) == r"metadata.name=a\,b\=c\\d"
    assert parse("metadata.name=!x").requirements == (Requirement("metadata.name", "=", "!x"),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
        ("a=b=c", "invalid field selector: unescaped character in value: 61"),
        (r"a=b\x", r"invalid field selector: invalid escape sequence: \x"),
        ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
    ],
)
def test_errors_are_gos(text, message):
    with pytest.raises(ValueError) as exc:
        parse(text)
    assert str(exc.value) == message


def test_other_forms():
    assert selector_from_set({"b": "2", "a": "1"}) == parse("a=1,b=2")
    assert as_selector({"a": "1"}) == parse("a=1") and as_selector(None).empty
    selector = parse("a=1")
    assert as_selector(selector) is selector and as_selector("a=1") == selector
    with pytest.raises(TypeError):
        as_selector(1)  # type: ignore[arg-type]
    assert repr(Selector()) == "Selector('')"


@given(st.text(max_size=20))
def test_escaped_values_round_trip(value):
    assert unescape_value(escape_value(value)) == value
    selector = parse(f"metadata.name={escape_value(value)}")
    assert selector.requires_exact_match("metadata.name") == value
    assert parse(str(selector)) == selector
