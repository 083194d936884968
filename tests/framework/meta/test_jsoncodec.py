"""jsoncodec: orjson's answers, at Go's nesting limit rather than orjson's."""

from __future__ import annotations

import orjson
import pytest

from framework.meta import jsoncodec


def nested(levels: int, leaf: str = "1") -> bytes:
    return ("[" * levels + leaf + "]" * levels).encode()


@pytest.mark.parametrize("levels", [1024, 1025, 10_000])
def test_loads_decodes_up_to_go_limit(levels):
    assert jsoncodec.dumps(jsoncodec.loads(nested(levels))) == nested(levels)


@pytest.mark.parametrize("levels", [10_001, 2_000_000])
def test_loads_refuses_beyond_with_go_text(levels):
    with pytest.raises(jsoncodec.DepthError, match=r"^invalid character '\[' exceeded max depth"):
        jsoncodec.loads(nested(levels))


def test_brackets_in_strings_do_not_count_and_objects_do():
    assert jsoncodec.too_deep(b'["' + b"[" * 20 + b'"]', 2) is None
    assert jsoncodec.too_deep(b'{"a":{"b":[1]}}', 2) == "["
    assert jsoncodec.too_deep(b'[{"a":1}]', 1) == "{"


@pytest.mark.parametrize(
    "text",
    [
        b"NaN",
        b"[" * 1100 + b"NaN" + b"]" * 1100,
        b"[" * 1100 + b"1e400" + b"]" * 1100,
        b"[" * 1100 + b'"\\ud800"' + b"]" * 1100,
        b"[" * 1100 + b'"\xff"' + b"]" * 1100,
        b"[" * 1100 + b"1,]" + b"]" * 1099,
    ],
)
def test_deep_path_refuses_what_orjson_refuses(text):
    with pytest.raises(orjson.JSONDecodeError):
        jsoncodec.loads(text)


def test_deep_path_numbers_and_surrogate_pairs_as_orjson():
    leaf_text = b'[123456789012345678901234567890, 18446744073709551615, "\\ud83d\\ude00"]'
    deep = jsoncodec.loads(b"[" * 1100 + leaf_text + b"]" * 1100)
    leaf = deep
    while isinstance(leaf[0], list):
        leaf = leaf[0]
    assert leaf == orjson.loads(leaf_text)


def test_dumps_and_copy_beyond_orjson_encoder():
    value = jsoncodec.loads(nested(10_000))
    text = jsoncodec.dumps({"b": value, "a": 1}, sort_keys=True, newline=True)
    assert text.startswith(b'{"a":1,"b":[[') and text.endswith(b"]]}\n")
    copied = jsoncodec.copy(value)
    assert copied == value and copied is not value
    assert jsoncodec.dumps({"a": [1.5, "é"]}) == orjson.dumps({"a": [1.5, "é"]})
