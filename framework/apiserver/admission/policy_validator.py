"""One ValidatingAdmissionPolicy evaluated for one binding and one param, as k8s.io/apiserver's
``pkg/admission/plugin/policy/validating`` ``validator.Validate`` does it, with its cost budgets:

- ``matchConditions``: every condition, sharing ``MATCH_CONDITIONS_BUDGET`` (2,500,000);
- ``validations``: sharing ``RUNTIME_COST_BUDGET`` (10,000,000); running out of it is one failure
  (``validation failed due to running out of cost budget, no further validation rules will be run``);
- every ``messageExpression``, on what the validations left; running out of it turns every validation
  that did not fail with an error into ``failed messageExpression: validation failed due to ...``;
- ``auditAnnotations``: a budget of their own; running out of it is the policy's only failure.

Each evaluation stops at the per-call limit (``... resulted in error: operation cancelled: actual cost
limit exceeded``). ``variables`` are evaluated once per param; each pass is charged a variable's cost
(and that of the variables it reads) at the first expression that reads it, as kube-apiserver's lazy
variables are. A failure is handled by ``failurePolicy`` (``Fail``: a decision; ``Ignore``: none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from framework.apiserver import cel
from framework.apiserver.admission.expressions import (
    MESSAGE_VARIABLES,
    POLICY_VARIABLES,
    Budget,
    ExpressionError,
    OutOfBudget,
    compiled,
    match_conditions,
    run,
)
from framework.apiserver.machinery.jsonvalues import as_dict, as_list

# k8s.io/apiserver/pkg/apis/cel/config.go MaxEvaluatedMessageExpressionSizeBytes
MAX_MESSAGE_BYTES = 5 * 1024
_CEL_TYPE_NAMES = {bool: "bool", int: "int", float: "double", bytes: "bytes", list: "list", dict: "map"}


@dataclass
class Decision:
    """A failed validation or an expression failure of one policy under one binding. ``deny``: refused
    whatever the binding's ``validationActions`` (configuration and audit annotation errors)."""

    policy: str
    binding: str
    message: str
    reason: str = "Invalid"
    deny: bool = False


class Variables:
    """A policy's ``variables`` for one param: values (a failed one is absent), costs, and errors
    (``composited variable "v" fails to evaluate: ...``)."""

    def __init__(self, pspec: dict, activation: dict[str, Any]) -> None:
        self.values: dict[str, Any] = {}
        self.costs: dict[str, int] = {}
        self.reads: dict[str, frozenset[str]] = {}
        self.errors: dict[str, str] = {}
        activation["variables"] = self.values
        for var in as_list(pspec.get("variables")):
            var = as_dict(var)
            name = var.get("name") or ""
            try:
                program = compiled(var.get("expression") or "", POLICY_VARIABLES)
            except cel.CompileError as e:
                self.errors[name] = f'composited variable "{name}" fails to compile: {e.message}'
                self.costs[name], self.reads[name] = 0, frozenset()
                continue
            self.reads[name] = self.read_by(program)
            measure = Budget(cel.PER_CALL_LIMIT + 1)
            try:
                self.values[name] = run(program, activation, measure)
            except cel.EvaluationError as e:
                self.errors[name] = f'composited variable "{name}" fails to evaluate: {e.message}'
            self.costs[name] = cel.PER_CALL_LIMIT + 1 - measure.remaining

    def read_by(self, program: cel.Program) -> frozenset[str]:
        """The variables ``program`` reads (all of them when it uses ``variables`` other than by
        selecting a field)."""
        if "variables" not in program.identifiers:
            return frozenset()
        fields = program.selected_fields("variables")
        return frozenset(self.costs) if fields is None else fields & self.costs.keys()

    def cost(self, program: cel.Program, budget: Budget) -> int:
        """What the variables ``program`` reads cost ``budget`` (those it has not paid yet)."""
        total = 0
        pending = list(self.read_by(program))
        while pending:
            name = pending.pop()
            if name in budget.charged or name not in self.costs:
                continue
            budget.charged.add(name)
            total += self.costs[name]
            pending.extend(self.reads[name])
        return total

    def explain(self, message: str) -> str:
        """A read of a failed variable fails with the variable's error, as kube-apiserver reports it."""
        if message.startswith("no such key: "):
            return self.errors.get(message[len("no such key: ") :], message)
        return message


def evaluate(
    expression: str,
    activation: dict[str, Any],
    budget: Budget,
    variables: Variables,
    declared: tuple[str, ...] = POLICY_VARIABLES,
) -> Any:
    """The value of a policy expression; raises ``ExpressionError`` and ``OutOfBudget``."""
    try:
        program = compiled(expression, declared)
        return run(program, activation, budget, variables.cost(program, budget))
    except cel.CompileError as e:  # only for policies stored before their expressions were checked
        raise ExpressionError(f"compilation failed: {e.message}") from None
    except cel.EvaluationError as e:
        message = variables.explain(e.message)
        raise ExpressionError(f"expression '{expression}' resulted in error: {message}") from None


def validate(pspec: dict, pname: str, bname: str, activation: dict[str, Any]) -> list[Decision]:
    """The decisions of one policy for one binding and param (``activation`` has every variable but
    ``variables``)."""
    fail_closed = (pspec.get("failurePolicy") or "Fail") == "Fail"

    def failure(message: str, deny: bool = False) -> list[Decision]:
        return [Decision(pname, bname, message, deny=deny)] if fail_closed else []

    activation["variables"] = {}
    conditions = [as_dict(c) for c in as_list(pspec.get("matchConditions"))]
    if conditions:
        matches, problem = match_conditions(conditions, POLICY_VARIABLES, activation)
        if problem is not None:
            return failure(problem)
        if not matches:
            return []
    variables = Variables(pspec, activation)
    validations = [as_dict(v) for v in as_list(pspec.get("validations"))]
    budget = Budget(cel.RUNTIME_COST_BUDGET)
    results: list[bool | str] = []  # passed, failed, or the error
    try:
        for validation in validations:
            expression = validation.get("expression") or ""
            try:
                value = evaluate(expression, activation, budget, variables)
                if not isinstance(value, bool):
                    raise ExpressionError(f"expression '{expression}' resulted in error: no such overload")
                results.append(value)
            except ExpressionError as e:
                results.append(e.message)
    except OutOfBudget as e:
        return failure(e.message)
    messages, messages_failed = _messages(validations, activation, Budget(budget.remaining), variables)
    out: list[Decision] = []
    for validation, result, message in zip(validations, results, messages, strict=True):
        if isinstance(result, str):
            out += failure(result)
        elif messages_failed is not None:
            out += failure(messages_failed)
        elif not result:
            reason = validation.get("reason") or "Invalid"
            out.append(Decision(pname, bname, _message(validation, message), reason))
    try:
        out += _audit_annotations(pspec, activation, variables, failure)
    except OutOfBudget as e:
        return failure(e.message)
    return out


def _messages(
    validations: list[dict], activation: dict[str, Any], budget: Budget, variables: Variables
) -> tuple[list[Any], str | None]:
    """Every ``messageExpression``'s value (None where it has none or failed), and the failure of them
    all when the budget ran out."""
    values: list[Any] = [None] * len(validations)
    try:
        for i, validation in enumerate(validations):
            if validation.get("messageExpression"):
                try:
                    values[i] = evaluate(
                        validation["messageExpression"], activation, budget, variables, MESSAGE_VARIABLES
                    )
                except ExpressionError:
                    continue
    except OutOfBudget as e:
        return values, f"failed messageExpression: {e.message}"
    return values, None


def _message(validation: dict, value: Any) -> str:
    """``messageExpression``'s value when it is a usable string, else ``message``, else the expression."""
    message = value.strip() if isinstance(value, str) else ""
    if len(message.encode()) > MAX_MESSAGE_BYTES or "\n" in message:
        message = ""
    if not message and validation.get("message"):
        message = str(validation["message"]).strip()
    return message or f"failed expression: {str(validation.get('expression') or '').strip()}"


def _audit_annotations(pspec: dict, activation: dict[str, Any], variables: Variables, failure: Any) -> list:
    """Errors of ``auditAnnotations`` (their values have nowhere to go: no audit log); raises
    ``OutOfBudget``."""
    out: list[Decision] = []
    budget = Budget(cel.RUNTIME_COST_BUDGET)
    for annotation in as_list(pspec.get("auditAnnotations")):
        expression = as_dict(annotation).get("valueExpression") or ""
        try:
            value = evaluate(expression, activation, budget, variables)
        except ExpressionError as e:
            out += failure(e.message, True)
            continue
        if value is not None and not isinstance(value, str):
            kind = _CEL_TYPE_NAMES.get(type(value), type(value).__name__)
            out += failure(
                f"valueExpression '{expression}' resulted in unsupported return type: {kind}. "
                "Return type must be either string or null.",
                True,
            )
    return out
