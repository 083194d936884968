"""CEL expressions of admission: ValidatingAdmissionPolicy validations, audit annotations, variables
and match conditions, and webhook ``matchConditions`` (k8s.io/apiserver ``pkg/admission/plugin/cel``,
``.../webhook/matchconditions``), on the engine of ``framework.apiserver.cel``.

Every admission variable is ``dyn`` to the checker here (kube-apiserver types ``object`` and
``params`` from their schemas only for ``status.typeChecking`` warnings, never to refuse a policy), so
a compiled expression depends only on its text and the variables its context declares.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from framework.apiserver import cel

# The variables each context declares (``authorizer`` is not offered: see docs/apiserver.md).
WEBHOOK_VARIABLES = ("object", "oldObject", "request")
POLICY_VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject", "variables")


@functools.lru_cache(maxsize=4096)
def compiled(expression: str, variables: tuple[str, ...]) -> cel.Program:
    """The program of ``expression`` with ``variables`` declared (``dyn``); raises ``cel.CompileError``."""
    # Unmetered: the engine's runtime cost is an upper bound from the values' sizes, which for an
    # absent field guarded by has() is unbounded; kube-apiserver meters the cost actually incurred.
    return cel.compile(expression, variables=dict.fromkeys(variables), cost_limit=None)


def compile_problem(expression: str, variables: tuple[str, ...]) -> str | None:
    """kube-apiserver's text for an expression that does not compile (``compilation failed: ERROR:
    <input>:1:6: ...``), or None."""
    try:
        compiled(expression, variables)
    except cel.CompileError as e:
        return f"compilation failed: {e.message}"
    return None


class ExpressionError(Exception):
    """An expression that failed at run time, with kube-apiserver's text (``expression 'X' resulted in
    error: ...``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def evaluate(expression: str, variables: tuple[str, ...], activation: Mapping[str, Any]) -> Any:
    """The value of ``expression`` for ``activation``; raises :class:`ExpressionError`."""
    try:
        program = compiled(expression, variables)
        return program.evaluate(activation)
    except cel.CompileError as e:  # only for objects stored before their expressions were checked
        raise ExpressionError(f"compilation failed: {e.message}") from None
    except cel.EvaluationError as e:
        raise ExpressionError(f"expression '{expression}' resulted in error: {e.message}") from None


def evaluate_bool(expression: str, variables: tuple[str, ...], activation: Mapping[str, Any]) -> bool:
    """A condition's value; a non-boolean result is an error as kube-apiserver reports it."""
    value = evaluate(expression, variables, activation)
    if not isinstance(value, bool):
        raise ExpressionError(f"expression '{expression}' resulted in error: no such overload")
    return value


def match_conditions(
    conditions: list[dict], variables: tuple[str, ...], activation: Mapping[str, Any]
) -> tuple[bool, str | None]:
    """``matchconditions.Matcher.Match``: (matches, error). A condition that is false ends the match
    at once (errors of the others do not count); otherwise the errors of all of them, aggregated."""
    problems: list[str] = []
    for condition in conditions:
        expression = condition.get("expression") or ""
        try:
            if not evaluate_bool(expression, variables, activation):
                return False, None
        except ExpressionError as e:
            problems.append(e.message)
    if problems:
        return True, problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
    return True, None
