"""framework.meta.time: metav1.Time / MicroTime with Go's empty-value rule and parse errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework.meta.time import (
    TimeParseError,
    format_micro_time,
    format_rfc3339_nano,
    format_time,
    go_time_string,
    parse_micro_time,
    parse_time,
    parse_time_or_none,
    rfc3339_copy,
)

WHEN = datetime(2024, 5, 1, 10, 0, 7, 123456, tzinfo=UTC)


def test_format_time_truncates_and_converts_to_utc():
    dt = datetime(2024, 5, 1, 12, 0, 7, 999999, tzinfo=timezone(timedelta(hours=2)))
    assert format_time(dt) == "2024-05-01T10:00:07Z"
    assert format_time(datetime(2024, 5, 1)) == "2024-05-01T00:00:00Z"  # naive is UTC


def test_format_micro_time_keeps_six_digits_even_when_zero():
    assert format_micro_time(datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)) == "2024-05-01T10:00:00.000000Z"
    assert format_micro_time(datetime(2024, 5, 1, 10, 0, 0, 42)) == "2024-05-01T10:00:00.000042Z"


def test_zero_time_marshals_as_null():
    # metav1.Time{}.MarshalJSON() is "null"; so None formats as None.
    assert format_time(None) is None
    assert format_micro_time(None) is None


@pytest.mark.parametrize("empty", [None, "", "null"])
def test_empty_values_parse_as_the_zero_time(empty):
    assert parse_time(empty) is None
    assert parse_micro_time(empty) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-01-01T12:00:00Z", datetime(2024, 1, 1, 12, tzinfo=UTC)),
        ("2024-01-01T14:00:00.123456789+02:00", datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)),
        ("2024-01-01T12:00:00.5Z", datetime(2024, 1, 1, 12, 0, 0, 500000, tzinfo=UTC)),
        ("2024-01-01T00:30:00-01:00", datetime(2024, 1, 1, 1, 30, tzinfo=UTC)),
        ("2024-02-29T10:00:00Z", datetime(2024, 2, 29, 10, tzinfo=UTC)),
    ],
)
def test_parse_time_accepts_rfc3339_forms(value, expected):
    assert parse_time(value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "yesterday",
            'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
        ),
        ("2024-02-30T10:00:00Z", 'parsing time "2024-02-30T10:00:00Z": day out of range'),
        (
            "2024-05-01T10:00:00",
            'parsing time "2024-05-01T10:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"',
        ),
        ("2024-05-01T10:00:00Zjunk", 'parsing time "2024-05-01T10:00:00Zjunk": extra text: "junk"'),
        ("2024-13-01T10:00:00Z", 'parsing time "2024-13-01T10:00:00Z": month out of range'),
    ],
)
def test_parse_time_errors_are_gos(value, message):
    with pytest.raises(TimeParseError) as exc:
        parse_time(value)
    assert str(exc.value) == message
    assert isinstance(exc.value, ValueError)


def test_parse_non_string_is_a_json_type_error():
    with pytest.raises(TimeParseError, match="json: cannot unmarshal number into Go value of type string"):
        parse_time(1714557600)


def test_micro_time_needs_six_fraction_digits():
    assert parse_micro_time("2024-05-01T10:00:00.000042Z") == datetime(2024, 5, 1, 10, 0, 0, 42, tzinfo=UTC)
    with pytest.raises(TimeParseError, match=r'cannot parse "Z" as "\.000000"'):
        parse_micro_time("2024-05-01T10:00:00Z")


def test_rfc3339_nano_and_go_string():
    assert format_rfc3339_nano(WHEN.replace(microsecond=0)) == "2024-05-01T10:00:07Z"
    assert format_rfc3339_nano(WHEN.replace(microsecond=120)) == "2024-05-01T10:00:07.00012Z"
    assert go_time_string(WHEN) == "2024-05-01 10:00:07.123456 +0000 UTC"
    assert go_time_string(None) == "0001-01-01 00:00:00 +0000 UTC"


_TIMES = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC))


@given(_TIMES)
def test_time_round_trip_truncates_to_seconds(dt):
    assert parse_time(format_time(dt)) == dt.replace(microsecond=0)


@given(_TIMES)
def test_micro_time_round_trip_is_exact(dt):
    assert parse_micro_time(format_micro_time(dt)) == dt
    assert parse_time(format_micro_time(dt)) == dt  # RFC3339 accepts any fraction


@given(_TIMES, st.integers(min_value=-23 * 60, max_value=23 * 60))
def test_offsets_are_converted_to_utc(dt, minutes):
    zone = timezone(timedelta(minutes=minutes))
    local = dt.astimezone(zone)
    text = local.replace(tzinfo=None).isoformat(timespec="microseconds") + _offset(minutes)
    assert parse_micro_time(text) == dt


def _offset(minutes: int) -> str:
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def test_parse_time_or_none_reads_unparsable_as_unset():
    assert parse_time_or_none("2024-05-01T10:00:07Z") == WHEN.replace(microsecond=0)
    assert parse_time_or_none("") is None and parse_time_or_none(None) is None
    assert parse_time_or_none("yesterday") is None and parse_time_or_none(17) is None
    with pytest.raises(TimeParseError):
        parse_time("yesterday")  # the strict one still raises


def test_rfc3339_copy_is_the_value_a_time_field_holds():
    copied = rfc3339_copy(WHEN.astimezone(timezone(timedelta(hours=2))))
    assert copied == WHEN.replace(microsecond=0) and copied.tzinfo is UTC
    assert rfc3339_copy(datetime(2024, 5, 1, 10, 0, 7, 5)) == WHEN.replace(microsecond=0)  # naive: UTC
    assert parse_time(format_time(WHEN)) == rfc3339_copy(WHEN)
