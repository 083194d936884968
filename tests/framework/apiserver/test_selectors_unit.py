"""Unit tests for framework.apiserver.machinery.selectors (spec 14-1, 14-2, 21-3)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.machinery.selectors import (
    FieldSelector,
    parse_field_selector,
    parse_label_selector,
    single_name,
)


def bad_request(call: Any, *args: Any) -> str:
    with pytest.raises(StatusError) as exc:
        call(*args)
    assert (exc.value.code, exc.value.reason) == (400, "BadRequest")
    return exc.value.message


# --- label selectors: the rules are framework.meta.labels' (tests/framework/meta/test_labels.py) ---


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a,", "found '', expected: identifier after ','"),
    ],
)
def test_label_selector_syntax_errors_are_400(text: str, message: str) -> None:
    assert bad_request(parse_label_selector, text) == message


def test_label_selector_query_parameter_parses() -> None:
    assert parse_label_selector("app=web").matches({"app": "web"})
    assert parse_label_selector(None).empty


# --- field selectors ----------------------------------------------------------------------------

ALLOWED = ("metadata.name", "metadata.namespace", "status.phase")


def test_field_selector_operators_and_matching() -> None:
    selector = parse_field_selector(
        "metadata.namespace!=kube-system,metadata.name==a,status.phase=Active", ALLOWED
    )
    assert selector.requirements == (
        ("metadata.name", "=", "a"),
        ("metadata.namespace", "!=", "kube-system"),
        ("status.phase", "=", "Active"),
    )
    assert not selector.empty
    assert selector.matches({"metadata.name": "a", "metadata.namespace": "default", "status.phase": "Active"})
    assert not selector.matches(
        {"metadata.name": "a", "metadata.namespace": "kube-system", "status.phase": "Active"}
    )
    assert not selector.matches(
        {"metadata.name": "b", "metadata.namespace": "default", "status.phase": "Active"}
    )


def test_field_selector_missing_field_compares_as_empty() -> None:
    assert parse_field_selector("status.phase=", ALLOWED).matches({})
    assert parse_field_selector("status.phase!=Active", ALLOWED).matches({})
    assert not parse_field_selector("status.phase=Active", ALLOWED).matches({})


def test_field_selector_escapes() -> None:
    selector = parse_field_selector(r"metadata.name=a\,b\=c\\d,metadata.namespace=x", ALLOWED)
    assert selector.requirements == (("metadata.name", "=", "a,b=c\\d"), ("metadata.namespace", "=", "x"))
    # The first operator in a term splits it; a value may contain "!" and "=" only when escaped.
    assert parse_field_selector("metadata.name=!x", ALLOWED).requirements == (("metadata.name", "=", "!x"),)
    assert parse_field_selector(r"metadata.name=\=\=", ALLOWED).requirements == (
        ("metadata.name", "=", "=="),
    )


@pytest.mark.parametrize("text", [None, "", ",", ",,"])
def test_empty_field_selector_matches_everything(text: str | None) -> None:
    selector = parse_field_selector(text, ALLOWED)
    assert selector.empty
    assert selector.requirements == ()
    assert selector.matches({})
    assert FieldSelector().matches({"x": "y"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("spec.x=1", "field label not supported: spec.x"),
        ("metadata.name=a,spec.x!=1", "field label not supported: spec.x"),
        ("metadata.name = a", "field label not supported: metadata.name "),
        ("=a", "field label not supported: "),
        ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
        ("metadata.name=a,b", "invalid selector: 'metadata.name=a,b'; can't understand 'b'"),
        ("a in (b,c)", "invalid selector: 'a in (b,c)'; can't understand 'a in (b'"),
        ("metadata.name=a=b", "invalid field selector: unescaped character in value: 61"),
        (r"metadata.name=a\x", r"invalid field selector: invalid escape sequence: \x"),
        ("metadata.name=a\\", "invalid field selector: invalid escape sequence: \\"),
    ],
)
def test_field_selector_errors_are_400(text: str, message: str) -> None:
    assert bad_request(parse_field_selector, text, ALLOWED) == message


def test_single_name() -> None:
    assert single_name(parse_field_selector("metadata.name=foo", ALLOWED)) == "foo"
    assert single_name(parse_field_selector("metadata.namespace=ns,metadata.name==foo", ALLOWED)) == "foo"
    assert single_name(parse_field_selector("metadata.name!=foo", ALLOWED)) is None
    assert single_name(parse_field_selector("metadata.namespace=foo", ALLOWED)) is None
    assert single_name(parse_field_selector("", ALLOWED)) is None


# --- properties ---------------------------------------------------------------------------------


@given(st.text(max_size=20))
def test_property_escaped_field_values_round_trip(value: str) -> None:
    escaped = value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
    selector = parse_field_selector(f"metadata.name={escaped}", ALLOWED)
    assert selector.requirements == (("metadata.name", "=", value),)
    assert single_name(selector) == value
    assert selector.matches({"metadata.name": value})
