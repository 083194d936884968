"""Label and field selectors (spec 14-1, 14-2; webhook ``namespaceSelector``/``objectSelector``, 21-3).

Parsing, validation and error texts follow ``k8s.io/apimachinery`` ``pkg/labels/selector.go``,
``pkg/fields/selector.go`` and ``pkg/apis/meta/v1/helpers.go`` (``LabelSelectorAsSelector``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any, NamedTuple

from framework.meta.validation import is_qualified_name, is_valid_label_value
from framework.testing.apiserver.errors import bad_request, go_value, invalid_value

# --- validation (the rules are framework.meta.validation's) -------------------------------------------

_INT64 = re.compile(r"[+-]?[0-9]+")


def _key_errors(key: Any) -> list[str]:
    """``validation.IsQualifiedName``; a non-string key (from a JSON selector) is reported, not raised."""
    return is_qualified_name(key) if isinstance(key, str) else ["must be a string"]


def _value_errors(value: Any) -> list[str]:
    """``validation.IsValidLabelValue``; a non-string value is reported, not raised."""
    return is_valid_label_value(value) if isinstance(value, str) else ["must be a string"]


def _int64(text: Any) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``, or ``None`` where it fails."""
    if isinstance(text, str) and _INT64.fullmatch(text) and -(2**63) <= int(text) < 2**63:
        return int(text)
    return None


# --- label selectors ------------------------------------------------------------------------------

_OPERATOR_SYMBOLS = {"gt": ">", "lt": "<"}


class LabelRequirement(NamedTuple):
    """One requirement; ``operator`` is a Go ``selection.Operator`` (``=``, ``==``, ``!=``, ``in``,
    ``notin``, ``exists``, ``!`` for does-not-exist, ``gt``, ``lt``); ``values`` are sorted."""

    key: str
    operator: str
    values: tuple[str, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        op, present = self.operator, self.key in labels
        if op in ("=", "==", "in"):
            return present and labels[self.key] in self.values
        if op in ("!=", "notin"):
            return not present or labels[self.key] not in self.values
        if op == "exists":
            return present
        if op == "!":
            return not present
        have, want = _int64(labels.get(self.key)), _int64(self.values[0])
        return have is not None and want is not None and (have > want if op == "gt" else have < want)

    def __str__(self) -> str:
        op = self.operator
        if op == "exists":
            return self.key
        if op == "!":
            return "!" + self.key
        values = ",".join(self.values)
        if op in ("in", "notin"):
            return f"{self.key} {op} ({values})"
        return f"{self.key}{_OPERATOR_SYMBOLS.get(op, op)}{values}"


def _aggregate(messages: list[str]) -> str:
    """``utilerrors.Aggregate.Error()``: duplicates dropped, several messages bracketed."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _requirement(key: Any, operator: str, values: list[Any]) -> LabelRequirement:
    """``labels.NewRequirement``: validate, or raise :class:`ValueError` with the field errors."""
    errors = []
    if key_errors := _key_errors(key):
        errors.append(invalid_value("key", key, "; ".join(key_errors)).message())
    if operator in ("in", "notin") and not values:
        detail = "for 'in', 'notin' operators, values set can't be empty"
        errors.append(invalid_value("values", values, detail).message())
    if operator in ("exists", "!") and values:
        detail = "values set must be empty for exists and does not exist"
        errors.append(invalid_value("values", values, detail).message())
    if operator in ("gt", "lt"):
        detail = "for 'Gt', 'Lt' operators, the value must be an integer"
        errors += [
            invalid_value(f"values[{i}]", v, detail).message()
            for i, v in enumerate(values)
            if _int64(v) is None
        ]
    for i, value in enumerate(values):
        if value_errors := _value_errors(value):
            errors.append(invalid_value(f"values[{i}][{key}]", value, "; ".join(value_errors)).message())
    if errors:
        raise ValueError(_aggregate(errors))
    return LabelRequirement(key, operator, tuple(sorted(set(values))))


class LabelSelector:
    """A label selector: the AND of its requirements (kept sorted by key, as upstream does)."""

    __slots__ = ("requirements",)

    def __init__(self, requirements: Iterable[LabelRequirement] = ()) -> None:
        self.requirements = tuple(sorted(requirements, key=lambda r: r.key))

    @property
    def empty(self) -> bool:
        """True when the selector matches everything."""
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether an object with these labels is selected."""
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(map(str, self.requirements))

    def __repr__(self) -> str:
        return f"LabelSelector({str(self)!r})"


# Tokens: a two-character operator, a one-character symbol, or an identifier (a run of anything else).
_TOKEN = re.compile(r"[ \t\r\n]*(?:(!=|==|[!(),=<>])|([^ \t\r\n!(),=<>]+))")
_BINARY_OPERATORS = {"in": "in", "notin": "notin", "=": "=", "==": "==", "!=": "!=", ">": "gt", "<": "lt"}
_REQUIREMENT_START = ("id", "!")


class _Parser:
    """The recursive-descent parser of ``labels.Parse``; errors are :class:`ValueError`."""

    def __init__(self, text: str) -> None:
        self.tokens = [
            (symbol or (word if word in ("in", "notin") else "id"), symbol or word)
            for symbol, word in _TOKEN.findall(text)
        ]
        self.tokens.append(("end", ""))
        self.pos = 0

    def peek(self) -> tuple[str, str]:
        kind, literal = self.tokens[self.pos]
        return ("id" if kind in ("in", "notin") else kind), literal

    def take(self, keywords: bool = False) -> tuple[str, str]:
        """Consume a token; ``in``/``notin`` are identifiers except where an operator is expected."""
        kind, literal = self.tokens[self.pos] if keywords else self.peek()
        self.pos += 1
        return kind, literal

    def selector(self) -> list[LabelRequirement]:
        requirements: list[LabelRequirement] = []
        kind, literal = self.peek()
        if kind == "end":
            return requirements
        if kind not in _REQUIREMENT_START:
            raise ValueError(f"found '{literal}', expected: !, identifier, or 'end of string'")
        while True:
            try:
                requirements.append(self.requirement())
            except ValueError as e:
                raise ValueError(f"unable to parse requirement: {e}") from None
            kind, literal = self.take()
            if kind == "end":
                return requirements
            if kind != ",":
                raise ValueError(f"found '{literal}', expected: ',' or 'end of string'")
            kind, literal = self.peek()
            if kind not in _REQUIREMENT_START:
                raise ValueError(f"found '{literal}', expected: identifier after ','")

    def requirement(self) -> LabelRequirement:
        kind, key = self.take()
        negated = kind == "!"
        if negated:
            kind, key = self.take()
        if kind != "id":
            raise ValueError(f"found '{key}', expected: identifier")
        if key_errors := _key_errors(key):
            # Upstream validates the key against a nil field path first, hence "<nil>".
            raise ValueError(invalid_value("<nil>", key, "; ".join(key_errors)).message())
        if negated:
            return _requirement(key, "!", [])
        if self.peek()[0] in ("end", ","):
            return _requirement(key, "exists", [])
        kind, literal = self.take(keywords=True)
        operator = _BINARY_OPERATORS.get(kind)
        if operator is None:
            raise ValueError(f"found '{literal}', expected: in, notin, =, ==, !=, gt, lt")
        values = self.set_values() if operator in ("in", "notin") else self.exact_value()
        return _requirement(key, operator, values)

    def set_values(self) -> list[str]:
        kind, literal = self.take()
        if kind != "(":
            raise ValueError(f"found '{literal}' expected: '('")
        kind, literal = self.peek()
        if kind == ")":
            self.take()
            return [""]
        if kind not in ("id", ","):
            raise ValueError(f"found '{literal}', expected: ',', ')' or identifier")
        values: set[str] = set()
        while True:
            kind, literal = self.take()
            if kind == "id":
                values.add(literal)
                after, after_literal = self.peek()
                if after == ")":
                    break
                if after != ",":
                    raise ValueError(f"found '{after_literal}', expected: ',' or ')'")
            elif kind == ",":
                # Empty values between commas, as in "(,a)", "(a,,b)" and "(a,)", are "".
                if not values:
                    values.add("")
                after, _ = self.peek()
                if after == ")":
                    values.add("")
                    break
                if after == ",":
                    self.take()
                    values.add("")
            else:
                raise ValueError(f"found '{literal}', expected: ',', or identifier")
        self.take()
        return sorted(values)

    def exact_value(self) -> list[str]:
        if self.peek()[0] in ("end", ","):
            return [""]
        kind, literal = self.take()
        if kind != "id":
            raise ValueError(f"found '{literal}', expected: identifier")
        return [literal]


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse a ``labelSelector`` query parameter; syntax or validation errors are 400 BadRequest."""
    try:
        return LabelSelector(_Parser(text or "").selector())
    except ValueError as e:
        raise bad_request(str(e)) from None


_EXPRESSION_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def label_selector_from_dict(selector: Mapping[str, Any] | None) -> LabelSelector:
    """A ``metav1.LabelSelector``; ``None`` and ``{}`` match everything (webhook semantics).

    Raises :class:`ValueError` for an unknown operator or invalid keys/values.
    """
    if not selector:
        return LabelSelector()
    requirements = [_requirement(k, "=", [v]) for k, v in (selector.get("matchLabels") or {}).items()]
    for expression in selector.get("matchExpressions") or []:
        name = expression.get("operator", "")
        operator = _EXPRESSION_OPERATORS.get(name) if isinstance(name, str) else None
        if operator is None:
            raise ValueError(f"{go_value(name)} is not a valid label selector operator")
        requirements.append(
            _requirement(expression.get("key", ""), operator, list(expression.get("values") or []))
        )
    return LabelSelector(requirements)


# --- field selectors ------------------------------------------------------------------------------

# The first operator occurrence splits a term; the field itself cannot be escaped.
_FIELD_TERM = re.compile(r"(.*?)(!=|==|=)(.*)", re.DOTALL)


class FieldSelector:
    """A field selector: the AND of ``(field, op, value)`` requirements, ``op`` being ``=`` or ``!=``."""

    __slots__ = ("requirements",)

    def __init__(self, requirements: Iterable[tuple[str, str, str]] = ()) -> None:
        self.requirements = tuple(requirements)

    @property
    def empty(self) -> bool:
        """True when the selector matches everything."""
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether an object with these field values is selected; a missing field is ``""``."""
        return all((fields.get(f, "") == v) == (op == "=") for f, op, v in self.requirements)


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not backslash-escaped, keeping escapes for :func:`_unescape`."""
    terms, start, escaped = [], 0, False
    for i, c in enumerate(text):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _unescape(value: str) -> str:
    out, escaped = [], False
    for c in value:
        if escaped:
            if c not in "\\,=":
                raise bad_request(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in ",=":
            # Go prints the rune with %v, i.e. as its code point.
            raise bad_request(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if escaped:
        raise bad_request("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_field_selector(text: str | None, allowed: Collection[str], own_rules: bool = True) -> FieldSelector:
    """Parse a ``fieldSelector`` query parameter; terms are sorted, as upstream does.

    Syntax errors and fields not in ``allowed`` are 400 BadRequest. ``own_rules``: the kind has its
    own field-label conversion (``field label not supported: F``); kinds without one get apimachinery's
    ``DefaultMetaV1FieldSelectorConversion`` message.
    """
    requirements = []
    for term in sorted(_split_terms(text or "")):
        if not term:
            continue
        match = _FIELD_TERM.fullmatch(term)
        if match is None:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{term}'")
        field, op, value = match.groups()
        requirements.append((field, "!=" if op == "!=" else "=", _unescape(value)))
    for field, _, _ in requirements:
        if field not in allowed:
            if own_rules:
                raise bad_request(f"field label not supported: {field}")
            raise bad_request(
                f'"{field}" is not a known field selector: only "metadata.name", "metadata.namespace"'
            )
    return FieldSelector(requirements)


def single_name(selector: FieldSelector) -> str | None:
    """The name a selector pins with ``metadata.name=X`` (``RequiresExactMatch``), if any."""
    return next((v for f, op, v in selector.requirements if f == "metadata.name" and op == "="), None)
