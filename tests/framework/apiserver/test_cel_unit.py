"""The CEL engine (framework.apiserver.cel) and each Kubernetes library function, as
k8s.io/apiserver/pkg/cel/library's tests exercise them (values and error texts)."""

from __future__ import annotations

import datetime

import pytest

from framework.apiserver import cel
from framework.apiserver.cel import types as ct


def ev(expr: str, **variables):
    return cel.compile(expr, variables={k: None for k in variables}).evaluate(variables)


def fails(expr: str, **variables) -> str:
    with pytest.raises(cel.EvaluationError) as e:
        ev(expr, **variables)
    return e.value.message


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        # strings (ext.Strings v2)
        ("'hello'.charAt(1)", "e"),
        ("'hello'.charAt(5)", ""),
        ("'hello mellow'.indexOf('ello')", 1),
        ("'hello mellow'.indexOf('ello', 2)", 7),
        ("'hello mellow'.indexOf('')", 0),
        ("'hello mellow'.lastIndexOf('ello')", 7),
        ("'hello mellow'.lastIndexOf('ello', 6)", 1),
        ("'TacoCat'.lowerAscii()", "tacocat"),
        ("'TacoCÆt'.upperAscii()", "TACOCÆT"),
        ("'hello hello'.replace('he', 'we')", "wello wello"),
        ("'hello hello'.replace('he', 'we', 1)", "wello hello"),
        ("'hello hello'.replace('he', 'we', 0)", "hello hello"),
        ("'a,b,c'.split(',')", ["a", "b", "c"]),
        ("'a,b,c'.split(',', 2)", ["a", "b,c"]),
        ("'a,b,c'.split(',', 0)", []),
        ("'tacocat'.substring(4)", "cat"),
        ("'tacocat'.substring(0, 4)", "taco"),
        ("'  \\ttrim\\n '.trim()", "trim"),
        ("['a', 'b'].join()", "ab"),
        ("['a', 'b'].join('-')", "a-b"),
        ("strings.quote('first\\nsecond \"x\"')", '"first\\nsecond \\"x\\""'),
        (
            "'%s is %d years, %.2f%% sure, hex %x, bin %b, oct %o'.format(['Al', 30, 99.5, 255, 5, 8])",
            "Al is 30 years, 99.50% sure, hex ff, bin 101, oct 10",
        ),
        ("'%s'.format([[1, 'a', true]])", '[1, "a", true]'),
        ("'%e'.format([1234.5])", "1.234500e+03"),
        # lists
        ("[1, 2, 3].isSorted()", True),
        ("['b', 'a'].isSorted()", False),
        ("[1, 2, 3].sum()", 6),
        ("[1.5, 2.5].sum()", 4.0),
        ("[3, 1, 2].min()", 1),
        ("['b', 'c', 'a'].max()", "c"),
        ("[1, 2, 2, 3].indexOf(2)", 1),
        ("[1, 2, 2, 3].lastIndexOf(2)", 2),
        ("['a'].indexOf('b')", -1),
        # sets
        ("sets.contains([1, 2, 3], [3, 1])", True),
        ("sets.contains([1, 2], [4])", False),
        ("sets.equivalent([1, 2], [2, 1, 1])", True),
        ("sets.intersects([1, 2], [2, 5])", True),
        ("sets.intersects([1], [2])", False),
        # regex
        ("'abc 123'.find('[0-9]+')", "123"),
        ("'abc'.find('[0-9]+')", ""),
        ("'123 abc 456'.findAll('[0-9]+')", ["123", "456"]),
        ("'123 abc 456'.findAll('[0-9]+', 1)", ["123"]),
        # urls
        ("isURL('https://user:pass@example.com:80/path?query=val#fragment')", True),
        ("isURL('../relative-path')", False),
        ("url('https://example.com:80/').getScheme()", "https"),
        ("url('https://example.com:80/').getHost()", "example.com:80"),
        ("url('https://[::1]:80/').getHostname()", "::1"),
        ("url('https://example.com:80/').getPort()", "80"),
        ("url('https://example.com/path with spaces/').getEscapedPath()", "/path%20with%20spaces/"),
        ("url('https://example.com/?k=a&k=b&l=c').getQuery()", {"k": ["a", "b"], "l": ["c"]}),
        # quantity
        ("isQuantity('1.3G')", True),
        ("isQuantity('200K')", False),
        ("quantity('50k').add(20) == quantity('50020')", True),
        ("quantity('50k').sub(quantity('20k')) == quantity('30k')", True),
        ("quantity('50k').mul(2) == quantity('100k')", True),
        ("quantity('200M').compareTo(quantity('0.2G'))", 0),
        ("quantity('50M').compareTo(quantity('50Mi'))", -1),
        ("quantity('150Mi').isGreaterThan(quantity('100Mi'))", True),
        ("quantity('50M').isLessThan(quantity('100M'))", True),
        ("quantity('50k').isInteger()", True),
        ("quantity('50k').asInteger()", 50000),
        ("quantity('9999999999999999999999999999999999999G').isInteger()", False),
        ("quantity('50k').sub(20000).asApproximateFloat()", 30000.0),
        ("quantity('-5').sign()", -1),
        ("quantity('1') == quantity('1000m')", True),
        # ip and cidr
        ("isIP('1.2.3.4')", True),
        ("isIP('1.2.3.4%eth0')", False),
        ("ip('10.0.0.1').family()", 4),
        ("ip('::1').isLoopback()", True),
        ("ip('0.0.0.0').isUnspecified()", True),
        ("ip('fe80::1').isLinkLocalUnicast()", True),
        ("ip('ff02::1').isLinkLocalMulticast()", True),
        ("ip('192.168.0.1').isGlobalUnicast()", True),
        ("ip.isCanonical('2001:db8::abcd')", True),
        ("ip.isCanonical('2001:DB8::ABCD')", False),
        ("isCIDR('192.168.0.0/24')", True),
        ("isCIDR('192.168.0.0')", False),
        ("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", True),
        ("cidr('192.168.0.0/24').containsIP('192.168.1.1')", False),
        ("cidr('192.168.0.0/16').containsCIDR('192.168.10.0/24')", True),
        ("cidr('192.168.1.1/24').masked() == cidr('192.168.1.0/24')", True),
        ("cidr('192.168.0.1/24').ip() == ip('192.168.0.1')", True),
        ("cidr('::1/128').prefixLength()", 128),
        ("string(ip('2001:db8::1')) == '2001:db8::1'", True),
        ("string(cidr('10.1.2.3/8').masked())", "10.0.0.0/8"),
        # semver
        ("isSemver('1.0.0')", True),
        ("isSemver('v1.0')", False),
        ("isSemver('v1.0', true)", True),
        ("semver('1.2.3').major()", 1),
        ("semver('1.2.3').minor()", 2),
        ("semver('1.2.3').patch()", 3),
        ("semver('1.2.3').compareTo(semver('1.2.3'))", 0),
        ("semver('1.2.3').isLessThan(semver('1.10.0'))", True),
        ("semver('1.0.0-alpha').isLessThan(semver('1.0.0'))", True),
        ("semver('1.0.0-alpha.1').isGreaterThan(semver('1.0.0-alpha'))", True),
        ("semver('v01.02', true) == semver('1.2.0')", True),
        # format
        ("format.dns1123Label().validate('my-name').hasValue()", False),
        ("format.dns1123Label().validate('My_Name').hasValue()", True),
        ("format.named('dns1035Label').hasValue()", True),
        ("format.named('unknown').hasValue()", False),
        ("format.named('labelValue').value().validate('ok').hasValue()", False),
        ("format.dns1123LabelPrefix().validate('prefix-').hasValue()", False),
        ("format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()", False),
        ("format.byte().validate('aGVsbG8=').hasValue()", False),
        ("format.date().validate('2021-02-30').hasValue()", True),
        ("format.datetime().validate('2021-01-01T00:00:00Z').hasValue()", False),
        ("format.uri().validate('http://example.com').hasValue()", False),
        ("format.qualifiedName().validate('example.com/name').orValue([]).size()", 0),
        # the language itself (cel-cpp)
        ("[1, 2, 3].exists_one(x, x > 2)", True),
        ("[1, 2, 3].map(x, x * 2).filter(x, x > 2)", [4, 6]),
        ("{'a': 1}.all(k, k == 'a')", True),
        ("timestamp('2023-01-01T00:00:00Z') + duration('1h') > timestamp('2023-01-01T00:30:00Z')", True),
        ("duration('1h30m').getMinutes()", 90),
        ("b'ab' + b'c'", b"abc"),
        ("1u + 2u", 3),
        ("{'a': 1}.?b.orValue(7)", 7),
        ("cel.bind(x, 2, x * x)", 4),
        ("type(1) == int", True),
    ],
)
def test_functions(expr, want) -> None:
    assert ev(expr) == want


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("'abc'.charAt(4)", "index out of range: 4"),
        ("'abc'.substring(2, 1)", "invalid substring range. start: 2, end: 1"),
        ("[].min()", "min(list) argument must not be empty"),
        ("quantity('200K')", "unable to parse quantity's suffix"),
        ("quantity('9999999999999999999999999999999999999G').asInteger()", "cannot convert value to integer"),
        (
            "url('../relative')",
            'URL parse error during conversion from string: parse "../relative": invalid URI for request',
        ),
        ("ip('::ffff:1.2.3.4')", "IPv4-mapped IPv6 address is not allowed: ::ffff:1.2.3.4"),
        ("semver('1.2')", "could not parse semver: 1.2"),
        ("9223372036854775807 + 1", "integer overflow"),
        ("0u - 1u", "unsigned integer overflow"),
        ("1 / 0", "division by zero"),
        ("[1][2]", "index out of bounds: 2"),
        (
            "'%d'.format(['a'])",
            "error during formatting: decimal clause can only be used on integers, was given string",
        ),
    ],
)
def test_errors(expr, message) -> None:
    assert fails(expr) == message


def test_variables_and_runtime_errors() -> None:
    assert ev("self.a.b == 1", self={"a": {"b": 1}}) is True
    assert fails("self.a", self={}) == "no such key: a"
    assert fails("self.a > 1", self={"a": "x"}) == "no such overload: _>_(string, int)"


def test_compile_error_text() -> None:
    with pytest.raises(cel.CompileError) as e:
        cel.compile("x +", variables={"x": None})
    assert e.value.message.startswith("ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>'")
    with pytest.raises(cel.CompileError) as e:
        cel.compile("y == 1", variables={"x": None})
    assert (
        e.value.message
        == "ERROR: <input>:1:1: undeclared reference to 'y' (in container '')\n | y == 1\n | ^"
    )


def test_optional_variable() -> None:
    prog = cel.compile(
        "!oldSelf.hasValue() || oldSelf.value() <= self",
        variables={"self": None, "oldSelf": None},
        optional_variables=("oldSelf",),
    )
    assert prog.evaluate({"self": 1, "oldSelf": cel.ABSENT}) is True
    assert prog.evaluate({"self": 1, "oldSelf": 2}) is False
    assert prog.identifiers >= {"self"}
    with pytest.raises(cel.CompileError) as e:
        cel.compile("oldSelf.foo(", variables={"oldSelf": None}, optional_variables=("oldSelf",))
    assert e.value.message.startswith("ERROR: <input>:1:13: Syntax error")


def test_typed_variables_and_output_type() -> None:
    t = ct.DeclType.object_of({"n": ct.INT_TYPE, "l": ct.DeclType.list_of(ct.STRING_TYPE, 4)})
    assert cel.compile("self.l.size() > self.n", variables={"self": t}).output_type == "bool"
    assert cel.compile("self.l", variables={"self": t}).output_type == "dyn"
    assert cel.compile("[1]", variables={}).output_type == "list(int)"
    ts = cel.compile("self", variables={"self": ct.TIMESTAMP_TYPE})
    when = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    assert ts.evaluate({"self": when}) == when


def test_cost_estimates_follow_declared_bounds() -> None:
    bounded = ct.DeclType.object_of({"l": ct.DeclType.list_of(ct.DeclType.string(8), 10)})
    unbounded = ct.DeclType.object_of({"l": ct.DeclType.list_of(ct.STRING_TYPE)})
    rule = "self.l.all(x, self.l.exists(y, x == y))"
    small = cel.compile(rule, variables={"self": bounded}).estimated_cost
    big = cel.compile(rule, variables={"self": unbounded}).estimated_cost
    assert small.max < 10_000 < cel.PER_CALL_LIMIT * 100 < big.max
    prog = cel.compile(rule, variables={"self": unbounded})
    value, cost = prog.evaluate_with_cost({"self": {"l": ["a", "b", "c"]}})
    assert value is True and 0 < cost < 100
    with pytest.raises(cel.CostLimitExceeded) as e:
        prog.evaluate({"self": {"l": [str(i) for i in range(300)]}}, cost_limit=1000)
    assert e.value.message == "operation cancelled: actual cost limit exceeded"


def test_cost_error_message() -> None:
    assert cel.cost_error_message("estimated rule cost", 12_000_000, 10_000_000) == (
        "estimated rule cost exceeds budget by factor of 1.200000x (try simplifying the rule, or adding "
        "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
    assert "factor of 2.5x" in cel.cost_error_message("x", 25, 10)
    assert "factor of more than 100x" in cel.cost_error_message("x", 10**9, 10)


@pytest.mark.parametrize(
    ("expr", "report"),
    [
        (
            "duration('1x') > duration('1s')",
            "ERROR: <input>:1:10: invalid duration argument\n | duration('1x') > duration('1s')\n"
            " | .........^",
        ),
        (
            "timestamp('bad') == timestamp('2020-01-01T00:00:00Z')",
            "ERROR: <input>:1:11: invalid timestamp argument",
        ),
        ("'a'.matches('[')", "ERROR: <input>:1:13: invalid matches argument"),
        ("[1, 'a'].size() > 0", "ERROR: <input>:1:5: expected type 'int' but found 'string'"),
        ("{'a': 1, 'b': 'x'}.size() > 0", "ERROR: <input>:1:15: expected type 'int' but found 'string'"),
    ],
)
def test_literal_validators(expr, report) -> None:
    """cel-go's ASTValidators that Kubernetes enables (duration/timestamp/regex/homogeneous literals)."""
    with pytest.raises(cel.CompileError) as e:
        cel.compile(expr, variables={})
    assert e.value.message.startswith(report)


def test_format_lists_may_mix_types() -> None:
    assert ev("'%s %d'.format(['a', 1])") == "a 1"


def test_undefined_fields_of_declared_objects() -> None:
    t = ct.DeclType.object_of(
        {"spec": ct.DeclType.object_of({"replicas": ct.INT_TYPE, "dry-run": ct.BOOL_TYPE})}
    )
    with pytest.raises(cel.CompileError) as e:
        cel.compile("self.spec.replicsa > 0", variables={"self": t})
    assert e.value.message == (
        "ERROR: <input>:1:10: undefined field 'replicsa'\n | self.spec.replicsa > 0\n | .........^"
    )
    assert cel.compile("self.spec.dry__dash__run", variables={"self": t}).output_type == "dyn"
    with pytest.raises(cel.CompileError):
        cel.compile("self.spec.dry-run", variables={"self": t})


def test_absent_fields_cost_nothing_at_run_time() -> None:
    """A has() guard over an absent field: the guarded part, whose size is unknown, is not charged."""
    prog = cel.compile("!has(self.l) || self.l.all(x, x.size() > 0)", variables={"self": None})
    value, cost = prog.evaluate_with_cost({"self": {}})
    assert value is True and cost < 100


def test_a_comprehension_over_a_literal_list_costs_what_its_items_cost() -> None:
    # gcm's admission policy builds its role names this way; the items of a literal list are known,
    # so the runtime cost follows the actual strings (cel-go's tracked cost), not an unbounded size.
    prog = cel.compile(
        "['project', 'project-member'].map(r, 'gardener.cloud:system:' + r + ':' + p)",
        variables={"p": None},
        cost_limit=cel.PER_CALL_LIMIT,
    )
    value, cost = prog.evaluate_with_cost({"p": "dev"})
    assert value == ["gardener.cloud:system:project:dev", "gardener.cloud:system:project-member:dev"]
    assert 0 < cost < 100
    # ... while the estimate still assumes a `p` as large as a request allows.
    assert prog.estimated_cost.max > 100_000
