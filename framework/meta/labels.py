"""Label selectors: ``k8s.io/apimachinery/pkg/labels`` and the ``metav1.LabelSelector`` helpers.

- :func:`parse` — ``labels.Parse`` of the string form (``app=web,tier in (a,b),!legacy``);
- :func:`label_selector_as_selector` — ``metav1.LabelSelectorAsSelector`` of the dict form
  (``matchLabels`` / ``matchExpressions``): ``None`` selects nothing, ``{}`` everything;
- :func:`selector_from_set` — ``labels.SelectorFromSet`` (every key equal to its value);
- :func:`as_selector` — any of these forms (or a :class:`Selector`) as a :class:`Selector`;
- :func:`validate_labels`, :func:`validate_label_selector` — ``ValidateLabels`` and
  ``metav1validation.ValidateLabelSelector`` as :class:`~framework.meta.field.ErrorList`;
- :func:`format_label_selector` — ``metav1.FormatLabelSelector`` (``<none>``, ``<error>``).

Parse and requirement errors are :class:`ValueError` with upstream's texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from framework.meta import field
from framework.meta.validation import is_qualified_name, is_valid_label_value

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "Requirement",
    "Selector",
    "as_selector",
    "format_label_selector",
    "label_selector_as_selector",
    "new_requirement",
    "parse",
    "selector_from_set",
    "validate_label_selector",
    "validate_labels",
]

_INT64 = re.compile(r"[+-]?[0-9]+")
_OPERATOR_SYMBOLS = {"gt": ">", "lt": "<"}
# selection.Operator values accepted by NewRequirement.
OPERATORS = ("=", "==", "!=", "in", "notin", "exists", "!", "gt", "lt")
# metav1.LabelSelectorOperator → selection.Operator.
_EXPRESSION_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


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


class Requirement(NamedTuple):
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


def new_requirement(key: Any, operator: str, values: Iterable[Any] = ()) -> Requirement:
    """``labels.NewRequirement``: validate, or raise :class:`ValueError` with the field errors."""
    values = list(values)
    errors = field.ErrorList()

    def bad_values(detail: str) -> None:
        errors.append(field.invalid("values", field.StringList(values), detail))

    if key_errors := _key_errors(key):
        errors.append(field.invalid("key", key, "; ".join(key_errors)))
    if operator in ("in", "notin"):
        if not values:
            bad_values("for 'in', 'notin' operators, values set can't be empty")
    elif operator in ("=", "==", "!="):
        if len(values) != 1:
            bad_values("exact-match compatibility requires one single value")
    elif operator in ("exists", "!"):
        if values:
            bad_values("values set must be empty for exists and does not exist")
    elif operator in ("gt", "lt"):
        if len(values) != 1:
            bad_values("for 'Gt', 'Lt' operators, exactly one value is required")
        detail = "for 'Gt', 'Lt' operators, the value must be an integer"
        errors += [
            field.invalid(f"values[{i}]", v, detail) for i, v in enumerate(values) if _int64(v) is None
        ]
    else:
        errors.append(field.not_supported("operator", operator, OPERATORS))
    for i, value in enumerate(values):
        if value_errors := _value_errors(value):
            errors.append(field.invalid(f"values[{i}][{key}]", value, "; ".join(value_errors)))
    if errors:
        raise ValueError(errors.to_aggregate())
    return Requirement(key, operator, tuple(sorted(set(values))))


class Selector:
    """``labels.Selector``: the AND of its requirements (kept sorted by key, as upstream does).

    The selector without requirements matches everything; :data:`NOTHING` matches nothing.
    """

    __slots__ = ("_nothing", "requirements")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        self.requirements = tuple(sorted(requirements, key=lambda r: r.key))
        self._nothing = nothing

    @property
    def empty(self) -> bool:
        """True when the selector matches everything (``Selector.Empty()``)."""
        return not self.requirements and not self._nothing

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether an object with these labels is selected."""
        if self._nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def add(self, *requirements: Requirement) -> Selector:
        """A new selector with more requirements (``Selector.Add``)."""
        return Selector((*self.requirements, *requirements), nothing=self._nothing)

    def __str__(self) -> str:
        return ",".join(map(str, self.requirements))

    def __repr__(self) -> str:
        return "Selector(NOTHING)" if self._nothing else f"Selector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Selector)
            and other.requirements == self.requirements
            and other._nothing == self._nothing
        )

    def __hash__(self) -> int:
        return hash((self.requirements, self._nothing))


EVERYTHING = Selector()
"""``labels.Everything()``."""
NOTHING = Selector(nothing=True)
"""``labels.Nothing()``."""


# --- the string form --------------------------------------------------------------------------------

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

    def selector(self) -> list[Requirement]:
        requirements: list[Requirement] = []
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

    def requirement(self) -> Requirement:
        kind, key = self.take()
        negated = kind == "!"
        if negated:
            kind, key = self.take()
        if kind != "id":
            raise ValueError(f"found '{key}', expected: identifier")
        if key_errors := _key_errors(key):
            # Upstream validates the key against a nil field path first, hence "<nil>".
            raise ValueError(field.invalid("<nil>", key, "; ".join(key_errors)).message())
        if negated:
            return new_requirement(key, "!", [])
        if self.peek()[0] in ("end", ","):
            return new_requirement(key, "exists", [])
        kind, literal = self.take(keywords=True)
        operator = _BINARY_OPERATORS.get(kind)
        if operator is None:
            raise ValueError(f"found '{literal}', expected: in, notin, =, ==, !=, gt, lt")
        values = self.set_values() if operator in ("in", "notin") else self.exact_value()
        return new_requirement(key, operator, values)

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


def parse(text: str | None) -> Selector:
    """``labels.Parse``: the string form; ``""``/``None`` selects everything. Raises ``ValueError``."""
    return Selector(_Parser(text or "").selector())


# --- the dict (metav1.LabelSelector) and set forms ------------------------------------------------


def label_selector_as_selector(selector: Mapping[str, Any] | None) -> Selector:
    """``metav1.LabelSelectorAsSelector``: ``None`` → :data:`NOTHING`, no requirements → everything.

    Raises :class:`ValueError` for an unknown operator or invalid keys/values.
    """
    if selector is None:
        return NOTHING
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    requirements = [new_requirement(k, "=", [v]) for k, v in match_labels.items()]
    for expression in expressions:
        name = expression.get("operator", "")
        operator = _EXPRESSION_OPERATORS.get(name) if isinstance(name, str) else None
        if operator is None:
            raise ValueError(f"{field.go_value(name)} is not a valid label selector operator")
        requirements.append(
            new_requirement(expression.get("key", ""), operator, expression.get("values") or [])
        )
    return Selector(requirements)


def selector_from_set(labels: Mapping[str, str] | None) -> Selector:
    """``labels.SelectorFromValidatedSet`` after validation: each key must equal its value."""
    return Selector(new_requirement(k, "=", [v]) for k, v in (labels or {}).items())


def as_selector(value: str | Mapping[str, Any] | Selector | None) -> Selector:
    """A selector from any accepted form: a :class:`Selector`, the string form, a ``LabelSelector``
    dict (``matchLabels`` / ``matchExpressions``), a plain ``{key: value}`` set, or ``None`` (all)."""
    if value is None:
        return EVERYTHING
    if isinstance(value, Selector):
        return value
    if isinstance(value, str):
        return parse(value)
    if isinstance(value, Mapping):
        if set(value) <= {"matchLabels", "matchExpressions"} and all(
            not isinstance(v, str) for v in value.values()
        ):
            return label_selector_as_selector(value)
        return selector_from_set(value)
    raise TypeError(f"a label selector must be a string, a dict or a Selector, not {type(value).__name__}")


def format_label_selector(selector: Mapping[str, Any] | None) -> str:
    """``metav1.FormatLabelSelector``: the string form, ``<none>`` when empty, ``<error>`` if invalid."""
    try:
        text = str(label_selector_as_selector(selector))
    except (ValueError, AttributeError, TypeError):
        return "<error>"
    return text or "<none>"


# --- validation ---------------------------------------------------------------------------------


def validate_labels(labels: Mapping[str, Any] | None, path: field.Path | str) -> field.ErrorList:
    """``ValidateLabels``: qualified-name keys and label values, every error at the map's path."""
    errs = field.ErrorList()
    for key, value in (labels or {}).items():
        errs.extend(field.invalid(path, key, m) for m in _key_errors(key))
        if not isinstance(value, str):
            errs.append(field.invalid(path, value, "label values must be strings"))
            continue
        errs.extend(field.invalid(path, value, m) for m in is_valid_label_value(value))
    return errs


def validate_label_selector(selector: Mapping[str, Any] | None, path: field.Path | str) -> field.ErrorList:
    """``metav1validation.ValidateLabelSelector`` with default options (values in expressions checked)."""
    if not selector:
        return field.ErrorList()
    base = field.Path(str(path))
    errs = validate_labels(selector.get("matchLabels"), base.child("matchLabels"))
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        p = base.child("matchExpressions").index(i)
        operator, values = expr.get("operator") or "", expr.get("values") or []
        if operator in ("In", "NotIn"):
            if not values:
                errs.append(
                    field.required(p.child("values"), "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errs.append(
                    field.forbidden(
                        p.child("values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(field.invalid(p.child("operator"), operator, "not a valid selector operator"))
        key = expr.get("key") or ""
        errs.extend(field.invalid(p.child("key"), key, m) for m in _key_errors(key))
        for j, value in enumerate(values):
            errs.extend(field.invalid(p.child("values").index(j), value, m) for m in _value_errors(value))
    return errs
