"""yaml_decoding: sigs.k8s.io/yaml's values, goyaml.v2's alias budget and depth limit, exactly."""

from __future__ import annotations

import pytest

from framework.apiserver.encoding.yaml_decoding import YAMLDecodeError, decode


def aliases(k: int) -> bytes:
    """A 1,000-item anchored list and ``k`` aliases to it. goyaml.v2 counts 1,006 decodes before the
    aliases and 1 + 1,001 per alias (1,001 inside it): the share passes 99% from the 111th alias on."""
    items = ", ".join(["i"] * 1000)
    return f"x: &a [{items}]\ny: [{', '.join(['*a'] * k)}]\n".encode()


def test_alias_budget_boundary_is_goyaml_v2s():
    assert len(decode(aliases(110))["y"]) == 110
    with pytest.raises(YAMLDecodeError, match=r"^yaml: document contains excessive aliasing$"):
        decode(aliases(111))


def test_aliases_are_copies():
    doc = decode(b"a: &a {k: [1]}\nb: *a\n")
    doc["a"]["k"].append(2)
    assert doc["b"] == {"k": [1]}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (b"a: 2001-12-14t21:59:43.10-05:00\n", {"a": "2001-12-14t21:59:43.10-05:00"}),
        (b"1: a\ntrue: b\n1.5: c\n", {"1": "a", "true": "b", "1.5": "c"}),
        (b"a: yes\nb: '1'\nc: 0x10\nd: ~\n", {"a": True, "b": "1", "c": 16, "d": None}),
        (b"a: {p: 1}\nb: {<<: *x}\n".replace(b"{p", b"&x {p"), {"a": {"p": 1}, "b": {"p": 1}}),
        (b"m: {a: 1, <<: [{a: 2, b: 2}, {b: 3, c: 3}]}\n", {"m": {"a": 2, "b": 2, "c": 3}}),
        (b"a: 1\n---\nb: 2\n", {"a": 1}),
        (b"", None),
        (b"n: 123456789012345678901234567890\n", {"n": 1.2345678901234568e29}),
    ],
)
def test_values_as_sigs_k8s_io_yaml_gives_them(text, value):
    assert decode(text) == value


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (b"a: &a [*a]\n", "yaml: anchor 'a' value contains itself"),
        (b"a: *b\n", "yaml: unknown anchor 'b' referenced"),
        (b"a: .nan\n", "json: unsupported value: NaN"),
        (b"a: {<<: 1}\n", "yaml: map merge requires map or sequence of maps as the value"),
        (b"[" * 10_001 + b"]" * 10_001, "yaml: exceeded max depth of 10000"),
        (
            b"".join(b"  " * i + b"a:\n" for i in range(10_001)),
            "yaml: line 10001: exceeded max depth of 10000",
        ),
    ],
)
def test_refusals_in_goyaml_words(text, error):
    with pytest.raises(YAMLDecodeError) as e:
        decode(text)
    assert str(e.value) == error


def test_nesting_up_to_the_limit_in_flow_and_block_style():
    assert decode(b"[" * 10_000 + b"]" * 10_000) is not None
    doc = decode(b"".join(b"  " * i + b"a:\n" for i in range(10_000)))
    for _ in range(9_999):
        doc = doc["a"]
    assert doc == {"a": None}
