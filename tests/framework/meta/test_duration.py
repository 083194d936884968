"""Go duration strings (framework.meta.duration): time.ParseDuration and Duration.String(), with Go's own
test tables."""

import pickle

import pytest

from framework.meta.duration import (
    HOUR,
    MICROSECOND,
    MILLISECOND,
    MINUTE,
    NANOSECOND,
    SECOND,
    Duration,
    DurationError,
    format_duration,
    format_duration_ns,
    parse_duration,
    parse_duration_ns,
)

# Go's time_test.go parseDurationTests (the cases expressible as Python str).
PARSE_OK = [
    ("0", 0),
    ("5s", 5 * SECOND),
    ("30s", 30 * SECOND),
    ("1478s", 1478 * SECOND),
    ("-5s", -5 * SECOND),
    ("+5s", 5 * SECOND),
    ("-0", 0),
    ("+0", 0),
    ("5.0s", 5 * SECOND),
    ("5.6s", 5 * SECOND + 600 * MILLISECOND),
    ("5.s", 5 * SECOND),
    (".5s", 500 * MILLISECOND),
    ("1.0s", 1 * SECOND),
    ("1.00s", 1 * SECOND),
    ("1.004s", 1 * SECOND + 4 * MILLISECOND),
    ("1.0040s", 1 * SECOND + 4 * MILLISECOND),
    ("100.00100s", 100 * SECOND + 1 * MILLISECOND),
    ("10ns", 10 * NANOSECOND),
    ("11us", 11 * MICROSECOND),
    ("12µs", 12 * MICROSECOND),  # U+00B5
    ("12μs", 12 * MICROSECOND),  # U+03BC
    ("13ms", 13 * MILLISECOND),
    ("14s", 14 * SECOND),
    ("15m", 15 * MINUTE),
    ("16h", 16 * HOUR),
    ("3h30m", 3 * HOUR + 30 * MINUTE),
    ("10.5s4m", 4 * MINUTE + 10 * SECOND + 500 * MILLISECOND),
    ("-2m3.4s", -(2 * MINUTE + 3 * SECOND + 400 * MILLISECOND)),
    ("1h2m3s4ms5us6ns", HOUR + 2 * MINUTE + 3 * SECOND + 4 * MILLISECOND + 5 * MICROSECOND + 6),
    ("39h9m14.425s", 39 * HOUR + 9 * MINUTE + 14 * SECOND + 425 * MILLISECOND),
    ("52763797000ns", 52763797000),
    ("0.3333333333333333333h", 20 * MINUTE),
    ("9007199254740993ns", (1 << 53) + 1),
    ("9223372036854775807ns", (1 << 63) - 1),
    ("9223372036854775.807us", (1 << 63) - 1),
    ("9223372036s854ms775us807ns", (1 << 63) - 1),
    ("-9223372036854775808ns", -(1 << 63)),
    ("-9223372036854775.808us", -(1 << 63)),
    ("-9223372036s854ms775us808ns", -(1 << 63)),
    ("-2562047h47m16.854775808s", -(1 << 63)),
    ("0.100000000000000000000h", 6 * MINUTE),
    ("0.830103483285477580700h", 49 * MINUTE + 48 * SECOND + 372539827),
    # the spec's examples
    ("1h", HOUR),
    ("12h", 12 * HOUR),
    ("90s", 90 * SECOND),
    ("1h30m", HOUR + 30 * MINUTE),
    ("500ms", 500 * MILLISECOND),
    ("300ms", 300 * MILLISECOND),
    ("1.5h", HOUR + 30 * MINUTE),
    ("-1s", -SECOND),
    ("2m", 2 * MINUTE),
    ("-1.5h", -(HOUR + 30 * MINUTE)),
    ("1µs", MICROSECOND),
    ("1us", MICROSECOND),
]

PARSE_ERRORS = [
    ("", 'time: invalid duration ""'),
    ("3", 'time: missing unit in duration "3"'),
    ("-", 'time: invalid duration "-"'),
    ("s", 'time: invalid duration "s"'),
    (".", 'time: invalid duration "."'),
    ("-.", 'time: invalid duration "-."'),
    (".s", 'time: invalid duration ".s"'),
    ("+.s", 'time: invalid duration "+.s"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("\ufffd", 'time: invalid duration "\\xef\\xbf\\xbd"'),
    ("\ufffd hello \ufffd world", 'time: invalid duration "\\xef\\xbf\\xbd hello \\xef\\xbf\\xbd world"'),
    ("9223372036854775810ns", 'time: invalid duration "9223372036854775810ns"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
    ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
    ("9223372036854776us", 'time: invalid duration "9223372036854776us"'),
    ("3000000h", 'time: invalid duration "3000000h"'),
    ("9223372036854775.808us", 'time: invalid duration "9223372036854775.808us"'),
    ("9223372036854ms775us808ns", 'time: invalid duration "9223372036854ms775us808ns"'),
    # beyond Go's table: what operators actually write by mistake
    ("10", 'time: missing unit in duration "10"'),
    ("1.5", 'time: missing unit in duration "1.5"'),
    ("2 h", 'time: unknown unit " h" in duration "2 h"'),
    ("1h 30m", 'time: unknown unit "h " in duration "1h 30m"'),
    ("1H", 'time: unknown unit "H" in duration "1H"'),
    ("7days", 'time: unknown unit "days" in duration "7days"'),
    ("1w", 'time: unknown unit "w" in duration "1w"'),
    ("h", 'time: invalid duration "h"'),
    ("1h-5m", 'time: unknown unit "h-" in duration "1h-5m"'),
    ("--1s", 'time: invalid duration "--1s"'),
    (' "1s"', 'time: invalid duration " \\"1s\\""'),
]


@pytest.mark.parametrize(("text", "ns"), PARSE_OK)
def test_parse_duration_accepts_go_syntax(text, ns):
    assert parse_duration_ns(text) == ns
    d = parse_duration(text)
    assert d.nanoseconds == ns
    assert d.original == text
    assert float(d) == ns / SECOND


@pytest.mark.parametrize(("text", "message"), PARSE_ERRORS)
def test_parse_duration_rejects_with_go_messages(text, message):
    with pytest.raises(DurationError) as exc:
        parse_duration(text)
    assert str(exc.value) == message


def test_parse_duration_rejects_non_strings():
    with pytest.raises(DurationError):
        parse_duration(10)  # type: ignore[arg-type]


# Go's time_test.go durationTests.
FORMAT = [
    ("0s", 0),
    ("1ns", 1 * NANOSECOND),
    ("1.1µs", 1100 * NANOSECOND),
    ("2.2ms", 2200 * MICROSECOND),
    ("3.3s", 3300 * MILLISECOND),
    ("4m5s", 4 * MINUTE + 5 * SECOND),
    ("4m5.001s", 4 * MINUTE + 5001 * MILLISECOND),
    ("5h6m7.001s", 5 * HOUR + 6 * MINUTE + 7001 * MILLISECOND),
    ("8m0.000000001s", 8 * MINUTE + 1 * NANOSECOND),
    ("2562047h47m16.854775807s", (1 << 63) - 1),
    ("-2562047h47m16.854775808s", -(1 << 63)),
    ("12h0m0s", 12 * HOUR),
    ("1h0m0s", HOUR),
    ("2m0s", 2 * MINUTE),
    ("1m30s", 90 * SECOND),
    ("15s", 15 * SECOND),
    ("-1s", -SECOND),
    ("500ms", 500 * MILLISECOND),
    ("999ns", 999),
    ("1µs", 1000),
]


@pytest.mark.parametrize(("text", "ns"), FORMAT)
def test_format_duration_like_go(text, ns):
    assert format_duration_ns(ns) == text
    assert str(Duration(nanoseconds=ns)) == text


def test_format_duration_from_seconds():
    assert format_duration(43200) == "12h0m0s"
    assert format_duration(5400.0) == "1h30m0s"
    assert format_duration(0.3) == "300ms"
    assert format_duration(1.5) == "1.5s"
    assert format_duration(0) == "0s"
    assert format_duration(-2.5) == "-2.5s"
    assert format_duration(parse_duration("9223372036854775807ns")) == "2562047h47m16.854775807s"


@pytest.mark.parametrize(("text", "ns"), PARSE_OK)
def test_round_trip(text, ns):
    assert parse_duration_ns(format_duration_ns(ns)) == ns


def test_duration_is_float_seconds_that_prints_as_go():
    d = parse_duration("1h30m")
    assert isinstance(d, float)
    assert d == 5400.0
    assert d.seconds == 5400.0
    assert d + 1 == 5401.0
    assert d > parse_duration("90m") - 1
    assert str(d) == "1h30m0s"
    assert f"{d}" == "1h30m0s"
    assert f"{d:.1f}" == "5400.0"
    assert repr(d) == "Duration('1h30m0s')"
    assert d.original == "1h30m"
    assert Duration(2.5).nanoseconds == 2_500_000_000
    assert Duration(2.5).original is None
    copy = pickle.loads(pickle.dumps(d))
    assert copy == d and copy.nanoseconds == d.nanoseconds and copy.original == "1h30m"
