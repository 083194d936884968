"""framework.meta.quantity: resource.Quantity parse, compare and canonical form.

The tables are cases of k8s.io/apimachinery/pkg/api/resource/quantity_test.go.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework.meta.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    ERR_FORMAT_WRONG,
    ERR_SUFFIX,
    Quantity,
    parse_quantity,
    quantity_from_json,
)


@pytest.mark.parametrize(
    ("text", "value", "fmt"),
    [
        ("0", 0, DECIMAL_SI),
        ("0Ki", 0, BINARY_SI),
        ("1Ki", 1024, BINARY_SI),
        ("3Ei", 3 * 2**60, BINARY_SI),
        ("5n", Fraction(5, 10**9), DECIMAL_SI),
        ("50k", 50_000, DECIMAL_SI),
        ("1E", 10**18, DECIMAL_SI),
        ("1E-3", Fraction(1, 1000), DECIMAL_EXPONENT),
        ("1e3", 1000, DECIMAL_EXPONENT),
        ("100.035k", 100035, DECIMAL_SI),
        ("0.0005k", Fraction(1, 2), DECIMAL_SI),
        ("1.3E+6", 1_300_000, DECIMAL_EXPONENT),
        ("3.001n", Fraction(4, 10**9), DECIMAL_SI),  # rounded up to nano
        ("0.0000000001", Fraction(1, 10**9), DECIMAL_SI),
        ("0.00000012345", Fraction(124, 10**9), DECIMAL_SI),
        ("9Ei", 2**63 - 1, BINARY_SI),  # capped at maxAllowed
        ("0.5Mi", 512 * 1024, BINARY_SI),
        ("0.000000000001Ki", Fraction(2, 10**9), DECIMAL_SI),  # rounds up, changes format
        (".001", Fraction(1, 1000), DECIMAL_SI),
        ("1.", 1, DECIMAL_SI),
        ("1.G", 10**9, DECIMAL_SI),
        ("-3", -3, DECIMAL_SI),
    ],
)
def test_parse(text, value, fmt):
    q = parse_quantity(text)
    assert (q.value, q.format) == (Fraction(value), fmt)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", ERR_FORMAT_WRONG),
        ("1.1.M", ERR_FORMAT_WRONG),
        ("1+1.0M", ERR_FORMAT_WRONG),
        ("0.1mi", ERR_SUFFIX),
        ("0.1am", ERR_FORMAT_WRONG),
        ("aoeu", ERR_FORMAT_WRONG),
        (".5i", ERR_SUFFIX),
        ("1i", ERR_SUFFIX),
        ("-3.01i", ERR_SUFFIX),
        ("-3.01e-", ERR_SUFFIX),
        (" 1", ERR_FORMAT_WRONG),
        ("1 ", ERR_FORMAT_WRONG),
    ],
)
def test_invalid(text, message):
    with pytest.raises(ValueError) as exc:
        parse_quantity(text)
    assert str(exc.value) == message


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1Ki", "1Ki"),
        ("1024Mi", "1Gi"),
        ("307200Ki", "300Mi"),
        ("1000M", "1G"),
        ("0.001T", "1G"),
        ("1000u", "1m"),
        ("1.08", "1080m"),
        ("1080000000n", "1080m"),
        ("5000m", "5"),
        ("0.5", "500m"),
        (".001e12", "1e9"),
        ("0.001e0", "1e-3"),
        ("1000e-12", "1e-9"),
        ("00", "0"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
        ("1.5Gi", "1536Mi"),
        ("1025Ki", "1025Ki"),
        ("-1024Mi", "-1Gi"),
        ("-.001Ki", "-1024m"),
    ],
)
def test_canonical_string(text, canonical):
    assert str(parse_quantity(text)) == canonical
    assert str(parse_quantity(canonical)) == canonical


def test_compare_by_value():
    assert parse_quantity("1k") == parse_quantity("1000") == 1000
    assert parse_quantity("1Ki") > parse_quantity("1k")
    assert parse_quantity("500m") < 1
    assert parse_quantity("1Gi").cmp(parse_quantity("1024Mi")) == 0
    assert len({parse_quantity("1k"), parse_quantity("1000")}) == 1
    assert parse_quantity("1500m").milli_value() == 1500 and parse_quantity("1500m").int_value() == 2


def test_arithmetic_keeps_the_format():
    assert str(parse_quantity("1k") * 2) == "2k"
    assert str(parse_quantity("1Gi") + parse_quantity("512Mi")) == "1536Mi"
    assert str(parse_quantity("1") - parse_quantity("250m")) == "750m"


def test_from_json_accepts_numbers_and_trims():
    assert quantity_from_json(10) == 10 and quantity_from_json(1.5) == Fraction(3, 2)
    assert quantity_from_json(" 2Ki ") == 2048 and quantity_from_json(1e21) == 10**21
    for bad in (True, None, [], float("inf")):
        with pytest.raises(ValueError):
            quantity_from_json(bad)


_SCALES = st.sampled_from(["", "n", "u", "m", "k", "M", "G", "T", "P", "Ki", "Mi", "Gi", "Ti", "e3", "e-6"])


@given(st.integers(min_value=-(10**12), max_value=10**12), st.integers(min_value=0, max_value=999), _SCALES)
def test_canonical_form_round_trips(whole, frac, suffix):
    q = parse_quantity(f"{whole}.{frac:03d}{suffix}")
    again = parse_quantity(str(q))
    assert again == q
    assert str(again) == str(q)  # canonical is a fixed point


@given(st.integers(min_value=0, max_value=2**62))
def test_integers_are_exact(n):
    assert parse_quantity(str(n)).value == n
    assert Quantity(Fraction(n)).int_value() == n
