"""framework.meta.labels: label selectors as k8s.io/apimachinery/pkg/labels and metav1 helpers."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework.meta.labels import (
    NOTHING,
    Requirement,
    Selector,
    as_selector,
    format_label_selector,
    label_selector_as_selector,
    parse,
    selector_from_set,
    validate_label_selector,
)

NAME_REGEX_ERROR = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_REGEX_ERROR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
PREFIX_REGEX_ERROR = (
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    r"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def value_error(call: Any, *args: Any) -> str:
    with pytest.raises(ValueError) as exc:
        call(*args)
    return str(exc.value)


# --- label selector syntax and matching ---------------------------------------------------------

LABELS = {"app": "web", "tier": "front", "n": "7", "text": "seven", "empty": ""}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", True),
        ("app==web", True),
        ("app=db", False),
        ("missing=x", False),
        ("app!=db", True),
        ("app!=web", False),
        ("missing!=x", True),
        ("app in (db,web)", True),
        ("app in (db)", False),
        ("missing in (x)", False),
        ("app notin (db)", True),
        ("app notin (web,db)", False),
        ("missing notin (x)", True),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("empty=", True),
        ("empty in ()", True),
        ("empty", True),
        ("n>6", True),
        ("n>7", False),
        ("n<8", True),
        ("n<7", False),
        ("text>1", False),
        ("missing<100", False),
        ("app=web,tier=front,n>1", True),
        ("app=web,tier=back", False),
    ],
)
def test_label_selector_matches(selector: str, expected: bool) -> None:
    assert parse(selector).matches(LABELS) is expected


def test_label_selector_integer_comparison_is_numeric() -> None:
    selector = parse("n>9")
    assert selector.matches({"n": "10"})
    assert not selector.matches({"n": "9"})
    assert not selector.matches({"n": "1e3"})
    assert not selector.matches({"n": "99999999999999999999"})  # beyond int64, like strconv.ParseInt
    assert parse("n<0").matches({"n": "-5"})


def test_label_selector_tolerates_whitespace_and_keyword_values() -> None:
    selector = parse(" a = b ,\tc\tin\t( x ,y ) , ! d , e notin(in,notin) ")
    assert str(selector) == "a=b,c in (x,y),!d,e notin (in,notin)"
    assert selector.matches({"a": "b", "c": "y", "e": "z"})
    assert not selector.matches({"a": "b", "c": "y", "e": "in"})
    assert str(parse("in in (notin)")) == "in in (notin)"
    assert str(parse("a=in")) == "a=in"


def test_label_selector_string_form_is_sorted_by_key_and_canonical() -> None:
    selector = parse("z>1,y<2,x notin (b,a),w in (,),v!=1,u==2,t=3,s,!r")
    assert str(selector) == "!r,s,t=3,u==2,v!=1,w in (),x notin (a,b),y<2,z>1"
    assert str(parse("x in (foo,,baz)")) == "x in (,baz,foo)"
    assert parse("a in (a,,b)").requirements == (Requirement("a", "in", ("", "a", "b")),)
    assert parse("a in (,a)").requirements == (Requirement("a", "in", ("", "a")),)
    assert repr(parse("a")) == "Selector('a')"


@pytest.mark.parametrize("text", [None, "", "   "])
def test_empty_label_selector_matches_everything(text: str | None) -> None:
    selector = parse(text)
    assert selector.empty
    assert selector.matches(None)
    assert selector.matches({"a": "b"})
    assert str(selector) == ""


def test_label_selector_accepts_prefixed_keys() -> None:
    selector = parse("app.kubernetes.io/name=web,example.com/x_y.z-1")
    assert not selector.empty
    assert selector.matches({"app.kubernetes.io/name": "web", "example.com/x_y.z-1": ""})
    assert not selector.matches({"app.kubernetes.io/name": "web"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        ("a,,b", "found ',', expected: identifier after ','"),
        ("=a", "found '=', expected: !, identifier, or 'end of string'"),
        ("(a)", "found '(', expected: !, identifier, or 'end of string'"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("!!a", "unable to parse requirement: found '!', expected: identifier"),
        ("a in", "unable to parse requirement: found '' expected: '('"),
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("a in (", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
        ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("a in (b,", "unable to parse requirement: found '', expected: ',', or identifier"),
        ("a in (b,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
        ("a>=1", "unable to parse requirement: found '=', expected: identifier"),
        ("a=(", "unable to parse requirement: found '(', expected: identifier"),
        (
            "a>x",
            'unable to parse requirement: values[0]: Invalid value: "x": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        ("a$=b", f'unable to parse requirement: <nil>: Invalid value: "a$": {NAME_REGEX_ERROR}'),
        ("a=b$", f'unable to parse requirement: values[0][a]: Invalid value: "b$": {VALUE_REGEX_ERROR}'),
        ("/a", 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'),
        (
            "a/",
            'unable to parse requirement: <nil>: Invalid value: "a/": '
            f"name part must be non-empty; {NAME_REGEX_ERROR}",
        ),
        ("Ex.com/a", f'unable to parse requirement: <nil>: Invalid value: "Ex.com/a": {PREFIX_REGEX_ERROR}'),
        (
            "a/b/c",
            'unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')",
        ),
        (
            "k" * 64,
            f'unable to parse requirement: <nil>: Invalid value: "{"k" * 64}": '
            "name part must be no more than 63 characters",
        ),
        (
            "a" * 254 + "/k",
            f'unable to parse requirement: <nil>: Invalid value: "{"a" * 254}/k": '
            "prefix part must be no more than 253 characters",
        ),
        (
            "k=" + "v" * 64,
            f'unable to parse requirement: values[0][k]: Invalid value: "{"v" * 64}": '
            "must be no more than 63 characters",
        ),
        (
            "k in (-a,b-)",
            f'unable to parse requirement: [values[0][k]: Invalid value: "-a": {VALUE_REGEX_ERROR}, '
            f'values[1][k]: Invalid value: "b-": {VALUE_REGEX_ERROR}]',
        ),
    ],
)
def test_label_selector_syntax_errors(text: str, message: str) -> None:
    assert value_error(parse, text) == message


def test_label_selector_key_and_value_length_limits_are_inclusive() -> None:
    key = "a" * 253 + "/" + "k" * 63
    selector = parse(f"{key}={'v' * 63}")
    assert selector.matches({key: "v" * 63})


# --- metav1.LabelSelector -----------------------------------------------------------------------


def test_nil_label_selector_matches_nothing() -> None:
    # metav1.LabelSelectorAsSelector(nil) is labels.Nothing(); callers that mean "unset is all"
    # (webhook selectors, defaulted to {}) pass {}.
    assert label_selector_as_selector(None) is NOTHING
    assert not NOTHING.matches({}) and not NOTHING.empty


@pytest.mark.parametrize("selector", [{}, {"matchLabels": {}, "matchExpressions": []}, {"matchLabels": None}])
def test_label_selector_from_empty_dict_matches_everything(selector: dict[str, Any] | None) -> None:
    parsed = label_selector_as_selector(selector)
    assert parsed.empty
    assert parsed.matches({"any": "thing"})
    assert parsed.matches(None)


def test_label_selector_from_dict_operators() -> None:
    selector = label_selector_as_selector(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["front", "back"]},
                {"key": "env", "operator": "NotIn", "values": ["prod"]},
                {"key": "team", "operator": "Exists"},
                {"key": "legacy", "operator": "DoesNotExist", "values": []},
            ],
        }
    )
    assert str(selector) == "app=web,env notin (prod),!legacy,team,tier in (back,front)"
    assert selector.matches({"app": "web", "tier": "back", "team": "x"})
    assert selector.matches({"app": "web", "tier": "back", "team": "x", "env": "dev"})
    assert not selector.matches({"app": "web", "tier": "back", "team": "x", "env": "prod"})
    assert not selector.matches({"app": "web", "tier": "back"})
    assert not selector.matches({"app": "web", "tier": "mid", "team": "x"})
    assert not selector.matches({"app": "web", "tier": "back", "team": "x", "legacy": ""})
    assert not selector.matches(None)


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            {"matchExpressions": [{"key": "a", "operator": "Equals"}]},
            '"Equals" is not a valid label selector operator',
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "in"}]},
            '"in" is not a valid label selector operator',
        ),
        ({"matchExpressions": [{"key": "a"}]}, '"" is not a valid label selector operator'),
        ({"matchExpressions": [{"key": "a", "operator": 1}]}, "1 is not a valid label selector operator"),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
            "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist',
        ),
        ({"matchLabels": {"a$": "b"}}, f'key: Invalid value: "a$": {NAME_REGEX_ERROR}'),
        ({"matchLabels": {"a": "b c"}}, f'values[0][a]: Invalid value: "b c": {VALUE_REGEX_ERROR}'),
        ({"matchLabels": {"a": 1}}, "values[0][a]: Invalid value: 1: must be a string"),
    ],
)
def test_label_selector_from_invalid_dict_raises_value_error(selector: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as exc:
        label_selector_as_selector(selector)
    assert str(exc.value) == message


# --- properties ---------------------------------------------------------------------------------

label_names = st.from_regex(r"[a-z0-9]([-a-z0-9_.]{0,10}[a-z0-9])?", fullmatch=True)
label_keys = label_names | st.builds(
    lambda p, n: f"{p}.io/{n}", st.from_regex(r"[a-z]{1,8}", fullmatch=True), label_names
)
label_values = st.just("") | label_names
label_sets = st.dictionaries(label_keys, label_values, max_size=5)


@given(label_sets, label_sets)
def test_property_match_labels_select_exactly_the_supersets(
    match_labels: dict[str, str], labels: dict[str, str]
) -> None:
    selector = label_selector_as_selector({"matchLabels": match_labels})
    assert selector.matches(labels) == all(labels.get(k) == v for k, v in match_labels.items())
    assert selector.matches({**labels, **match_labels})


@given(label_keys, st.lists(label_values, min_size=1, max_size=4), label_sets)
def test_property_match_expressions_follow_their_operator(
    key: str, values: list[str], labels: dict[str, str]
) -> None:
    def check(operator: str, expected: bool) -> None:
        expression = {"key": key, "operator": operator, "values": [] if "Exist" in operator else values}
        assert label_selector_as_selector({"matchExpressions": [expression]}).matches(labels) is expected

    check("In", key in labels and labels[key] in values)
    check("NotIn", key not in labels or labels[key] not in values)
    check("Exists", key in labels)
    check("DoesNotExist", key not in labels)


@given(label_sets, label_sets)
def test_property_string_form_round_trips(match_labels: dict[str, str], labels: dict[str, str]) -> None:
    expressions = [{"key": k, "operator": "NotIn", "values": [v, "x"]} for k, v in labels.items()]
    selector = label_selector_as_selector({"matchLabels": match_labels, "matchExpressions": expressions})
    reparsed = parse(str(selector))
    assert str(reparsed) == str(selector)
    assert reparsed.requirements == selector.requirements
    assert reparsed.matches(labels) == selector.matches(labels)


@given(st.text(alphabet=st.sampled_from(list("ab1 =!(),<>-_./\tinot$")), max_size=30))
def test_property_label_selector_parse_only_fails_with_value_error(text: str) -> None:
    try:
        selector = parse(text)
    except ValueError:
        pass
    else:
        assert isinstance(selector, Selector)
        assert str(parse(str(selector))) == str(selector)


# --- other forms, formatting and validation ------------------------------------------------------


def test_selector_from_set_and_as_selector() -> None:
    assert str(selector_from_set({"b": "2", "a": "1"})) == "a=1,b=2"
    assert as_selector(None).empty and as_selector("a=1") == parse("a=1")
    assert as_selector({"a": "1"}) == selector_from_set({"a": "1"})
    assert as_selector({"matchLabels": {"a": "1"}}) == parse("a=1")
    assert as_selector({"matchLabels": "x"}) == parse("matchLabels=x")  # a label set, not a LabelSelector
    selector = parse("a")
    assert as_selector(selector) is selector
    with pytest.raises(TypeError):
        as_selector(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        selector_from_set({"a b": "c"})


def test_format_label_selector() -> None:
    assert format_label_selector({"matchLabels": {"app": "web"}}) == "app=web"
    assert format_label_selector({}) == "<none>"
    assert format_label_selector({"matchExpressions": [{"key": "a", "operator": "Bad"}]}) == "<error>"


def test_validate_label_selector_messages() -> None:
    errs = validate_label_selector(
        {
            "matchLabels": {"a$": "b"},
            "matchExpressions": [
                {"key": "k", "operator": "In"},
                {"key": "k", "operator": "Exists", "values": ["x"]},
                {"key": "k", "operator": "Equals"},
            ],
        },
        "spec.selector",
    )
    assert [str(e) for e in errs] == [
        f'spec.selector.matchLabels: Invalid value: "a$": {NAME_REGEX_ERROR}',
        "spec.selector.matchExpressions[0].values: Required value: "
        "must be specified when `operator` is 'In' or 'NotIn'",
        "spec.selector.matchExpressions[1].values: Forbidden: "
        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        'spec.selector.matchExpressions[2].operator: Invalid value: "Equals": not a valid selector operator',
    ]
    assert validate_label_selector(None, "x") == []
