"""Go's strconv (ParseBool, Atoi, Quote) and the time package's quoting, with Go's expected texts."""

import pytest

from framework.meta.strconv import atoi, is_true, parse_bool, quote, time_quote

# Go's strconv quote_test.go quotetests (the Quote column), and the escapes field errors meet.
QUOTE = [
    ("\a\b\f\r\n\t\v", '"\\a\\b\\f\\r\\n\\t\\v"'),
    ("\\", '"\\\\"'),
    ('"', '"\\""'),
    ("abc\u00ffdef", '"abc\u00ffdef"'),  # printable: kept
    ("\u200b\ufeff", '"\\u200b\\ufeff"'),  # format characters (Cf): escaped
    ("\u263a", '"\u263a"'),
    ("\U0010ffff", '"\\U0010ffff"'),
    ("\x04", '"\\x04"'),
    ("\x7f", '"\\x7f"'),
    ("!\u00a0!\u2000!\u3000!", '"!\\u00a0!\\u2000!\\u3000!"'),
    ("héllo wörld", '"héllo wörld"'),
    ("", '""'),
]


@pytest.mark.parametrize(("text", "quoted"), QUOTE)
def test_quote_is_go_strconv_quote(text, quoted):
    assert quote(text) == quoted


# Go's time.quote: every byte of a control or non-ASCII character as \xNN, quotes and backslashes escaped.
TIME_QUOTE = [
    ("1d", '"1d"'),
    ('"1s"', '"\\"1s\\""'),
    ("a\\b", '"a\\\\b"'),
    ("\ufffd", '"\\xef\\xbf\\xbd"'),
    ("µs", '"\\xc2\\xb5s"'),
    ("\t1s\n", '"\\x091s\\x0a"'),
    ("\x7f", '"\x7f"'),
    (b"\xffh", '"\\xffh"'),
]


@pytest.mark.parametrize(("text", "quoted"), TIME_QUOTE)
def test_time_quote_is_go_time_quote(text, quoted):
    assert time_quote(text) == quoted


@pytest.mark.parametrize(
    ("text", "value"), [("1", True), ("t", True), ("TRUE", True), ("0", False), ("F", False)]
)
def test_parse_bool(text, value):
    assert parse_bool(text) is value
    assert is_true(text) is value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("yes", 'strconv.ParseBool: parsing "yes": invalid syntax'),
        ("tru\ne", 'strconv.ParseBool: parsing "tru\\ne": invalid syntax'),
    ],
)
def test_parse_bool_rejects_with_go_messages(text, message):
    with pytest.raises(ValueError, match="^" + message.replace("\\", "\\\\") + "$"):
        parse_bool(text)
    assert is_true(text) is False


def test_atoi():
    assert atoi("-42") == -42
    assert atoi("+7") == 7
    assert atoi(str(2**63 - 1)) == 2**63 - 1
    with pytest.raises(ValueError) as exc:
        atoi("4 2")
    assert str(exc.value) == 'strconv.Atoi: parsing "4 2": invalid syntax'
    with pytest.raises(ValueError) as exc:
        atoi(str(2**63))
    assert str(exc.value) == 'strconv.Atoi: parsing "9223372036854775808": value out of range'
