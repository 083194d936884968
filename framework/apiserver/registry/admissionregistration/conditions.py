"""The CEL expressions of admission configuration, checked as kube-apiserver checks them on a write:
present, and compiling with the variables their context declares (``admission/expressions.py``)."""

from __future__ import annotations

from typing import Any

from framework.apiserver.admission.expressions import compile_problem
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict, as_list
from framework.meta import field
from framework.meta.validation import is_qualified_name

MAX_MATCH_CONDITIONS = 64


def expression_errors(expression: Any, path: str, variables: tuple[str, ...]) -> list[FieldError]:
    """``expression`` is required and must compile."""
    text = expression.strip() if isinstance(expression, str) else ""
    if not text:
        return [field.required(path, "expression is not specified")]
    problem = compile_problem(expression, variables)
    return [field.invalid(path, expression, problem)] if problem else []


def validate_match_conditions(conditions: Any, path: str, variables: tuple[str, ...]) -> list[FieldError]:
    """``validateMatchConditions``: named, unique, at most 64, each expression compiling."""
    errs: list[FieldError] = []
    items = as_list(conditions)
    if len(items) > MAX_MATCH_CONDITIONS:
        errs.append(field.too_many(path, len(items), MAX_MATCH_CONDITIONS))
    seen: set[str] = set()
    for i, condition in enumerate(as_dict(c) for c in items):
        name = condition.get("name") or ""
        if not name:
            errs.append(field.required(f"{path}[{i}].name"))
        else:
            errs += [field.invalid(f"{path}[{i}].name", name, m) for m in is_qualified_name(name)]
            if name in seen:
                errs.append(field.duplicate(f"{path}[{i}].name", name))
            seen.add(name)
        errs += expression_errors(condition.get("expression"), f"{path}[{i}].expression", variables)
    return errs
