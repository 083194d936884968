"""Unit tests for framework.apiserver.encoding.timefmt (spec 6-12)."""

from __future__ import annotations

import re

import pytest

from framework.apiserver.encoding.timefmt import (
    normalize_microtime,
    normalize_object_times,
    normalize_time,
    now_microtime,
    now_time,
)
from framework.apiserver.machinery.errors import StatusError

EVENT_PREFIX = 'Event in version "v1" cannot be handled as a Event: '
MICRO_LAYOUT = '"2006-01-02T15:04:05.000000Z07:00"'
TIME_LAYOUT = '"2006-01-02T15:04:05Z07:00"'


def _bad_request(fn, value, **ctx) -> str:
    with pytest.raises(StatusError) as info:
        fn(value, "spec.renewTime", **ctx)
    assert info.value.code == 400
    assert info.value.reason == "BadRequest"
    return info.value.message


def test_now_values_have_wire_format():
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", now_time())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", now_microtime())


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z"),
        ("2024-05-01T10:00:00.999999Z", "2024-05-01T10:00:00Z"),
        ("2024-05-01T10:00:00.5+02:00", "2024-05-01T08:00:00Z"),
        ("2024-05-01T00:30:00-01:00", "2024-05-01T01:30:00Z"),
        ("2024-05-01T10:00:00,25Z", "2024-05-01T10:00:00Z"),  # Go accepts a comma separator
        ("2024-02-29T10:00:00Z", "2024-02-29T10:00:00Z"),
    ],
)
def test_normalize_time_accepts_rfc3339_forms(value, expected):
    assert normalize_time(value, "metadata.creationTimestamp") == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01T10:00:00.123456Z", "2024-05-01T10:00:00.123456Z"),
        ("2024-05-01T10:00:00.000000+00:00", "2024-05-01T10:00:00.000000Z"),  # kopf's form
        ("2024-05-01T01:00:00.000001+02:00", "2024-04-30T23:00:00.000001Z"),
    ],
)
def test_normalize_microtime_accepts_six_digits(value, expected):
    assert normalize_microtime(value, "eventTime") == expected


@pytest.mark.parametrize(
    ("value", "tail"),
    [
        # Python's isoformat() drops a zero fraction: the real server rejects that (spec 6-12).
        ("2024-05-01T10:00:00Z", ': cannot parse "Z" as ".000000"'),
        ("2024-05-01T10:00:00+00:00", ': cannot parse "+00:00" as ".000000"'),
        ("2024-05-01T10:00:00.5Z", ': cannot parse ".5Z" as ".000000"'),
        ("2024-05-01T10:00:00.1234567Z", ': cannot parse "7Z" as "Z07:00"'),
        ("2024-05-01T10:00:00.12345xZ", ': cannot parse "Z" as ".000000"'),
        ("2024-05-01", ': cannot parse "" as "T"'),
        ("", ': cannot parse "" as "2006"'),
    ],
)
def test_normalize_microtime_rejects_like_go(value, tail):
    message = _bad_request(normalize_microtime, value, kind="Event", version="v1")
    assert message == f'{EVENT_PREFIX}parsing time "{value}" as {MICRO_LAYOUT}{tail}'


@pytest.mark.parametrize(
    ("value", "tail"),
    [
        ("2024-05-01 10:00:00Z", " as " + TIME_LAYOUT + ': cannot parse " 10:00:00Z" as "T"'),
        ("2024-05-01T10:00:00", " as " + TIME_LAYOUT + ': cannot parse "" as "Z07:00"'),
        ("2024-05-01T10:00:00z", " as " + TIME_LAYOUT + ': cannot parse "z" as "Z07:00"'),
        ("24-05-01T10:00:00Z", " as " + TIME_LAYOUT + ': cannot parse "24-05-01T10:00:00Z" as "2006"'),
        ("2024-13-01T10:00:00Z", ": month out of range"),
        ("2023-02-29T10:00:00Z", ": day out of range"),
        ("2024-05-01T24:00:00Z", ": hour out of range"),
        ("2024-05-01T10:00:00Z trailing", ': extra text: " trailing"'),
    ],
)
def test_normalize_time_rejects_like_go(value, tail):
    message = _bad_request(normalize_time, value, kind="Lease", version="v1")
    assert message == f'Lease in version "v1" cannot be handled as a Lease: parsing time "{value}"{tail}'


def test_error_without_kind_names_the_field():
    assert _bad_request(normalize_microtime, "2024-05-01T10:00:00Z") == (
        f'spec.renewTime: parsing time "2024-05-01T10:00:00Z" as {MICRO_LAYOUT}: '
        'cannot parse "Z" as ".000000"'
    )


def test_non_string_is_a_json_type_error():
    assert _bad_request(normalize_time, 1714557600, kind="Event", version="v1") == (
        EVENT_PREFIX + "json: cannot unmarshal number into Go value of type string"
    )
    assert _bad_request(normalize_time, {"a": 1}, kind="Event", version="v1") == (
        EVENT_PREFIX + "json: cannot unmarshal object into Go value of type string"
    )


def test_normalize_object_times_walks_paths_and_lists():
    obj = {
        "metadata": {"creationTimestamp": "2024-05-01T12:00:00.7+02:00"},
        "spec": {"renewTime": "2024-05-01T10:00:00.000001+00:00", "acquireTime": None},
        "status": {
            "conditions": [
                {"lastTransitionTime": "2024-05-01T10:00:00.5Z"},
                {"type": "NoTime"},
                {"lastTransitionTime": None},
            ]
        },
    }
    normalize_object_times(
        obj,
        [
            "metadata.creationTimestamp",
            "status.conditions[].lastTransitionTime",
            "metadata.deletionTimestamp",
        ],
        ["spec.renewTime", "spec.acquireTime", "series.lastObservedTime"],
    )
    assert obj == {
        "metadata": {"creationTimestamp": "2024-05-01T10:00:00Z"},
        "spec": {"renewTime": "2024-05-01T10:00:00.000001Z", "acquireTime": None},
        "status": {
            "conditions": [
                {"lastTransitionTime": "2024-05-01T10:00:00Z"},
                {"type": "NoTime"},
                {"lastTransitionTime": None},
            ]
        },
    }


def test_normalize_object_times_raises_with_kind_prefix():
    obj = {"spec": {"renewTime": "2024-05-01T10:00:00Z"}}
    with pytest.raises(StatusError) as info:
        normalize_object_times(obj, [], ["spec.renewTime"], kind="Lease", version="v1")
    assert info.value.message == (
        'Lease in version "v1" cannot be handled as a Lease: parsing time "2024-05-01T10:00:00Z" as '
        f'{MICRO_LAYOUT}: cannot parse "Z" as ".000000"'
    )
