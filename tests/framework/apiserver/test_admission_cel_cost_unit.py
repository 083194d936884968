"""Unit tests of admission CEL metering (``admission/expressions.py``, ``admission/policy_validator.py``)."""

from __future__ import annotations

import pytest

from framework.apiserver import cel
from framework.apiserver.admission import expressions, policy_validator
from framework.apiserver.admission.expressions import (
    MATCH_CONDITIONS_BUDGET,
    OUT_OF_BUDGET,
    POLICY_VARIABLES,
    Budget,
    OutOfBudget,
)

EXPENSIVE = "object.data.big.contains(object.data.big)"  # 883,600 and a few on 9,400 characters


def activation(big: str = "a" * 9400) -> dict:
    return {
        "object": {"data": {"big": big}},
        "oldObject": None,
        "request": {},
        "params": None,
        "namespaceObject": None,
    }


def test_the_cost_is_charged_and_a_budget_runs_out() -> None:
    budget = Budget(2_000_000)
    program = expressions.compiled(EXPENSIVE, POLICY_VARIABLES)
    assert expressions.run(program, activation(), budget) is True
    spent = 2_000_000 - budget.remaining
    assert 883_600 <= spent < 884_000
    expressions.run(program, activation(), budget)
    with pytest.raises(OutOfBudget) as e:
        expressions.run(program, activation(), budget)
    assert e.value.message == OUT_OF_BUDGET


def test_the_per_call_limit_cancels_and_charges_the_limit() -> None:
    budget = Budget(cel.RUNTIME_COST_BUDGET)
    with pytest.raises(cel.CostLimitExceeded) as e:
        expressions.run(expressions.compiled(EXPENSIVE, POLICY_VARIABLES), activation("a" * 20_000), budget)
    assert e.value.message == "operation cancelled: actual cost limit exceeded"
    assert cel.RUNTIME_COST_BUDGET - budget.remaining == cel.PER_CALL_LIMIT + 1


def test_match_conditions_evaluate_all_before_deciding() -> None:
    # a false condition does not save the budget: kube-apiserver's filter evaluates every condition
    conditions = [{"expression": "false"}] + [{"expression": EXPENSIVE}] * 3
    assert MATCH_CONDITIONS_BUDGET < 3 * 883_600
    assert expressions.match_conditions(conditions, POLICY_VARIABLES, activation()) == (True, OUT_OF_BUDGET)
    assert expressions.match_conditions(conditions[:3], POLICY_VARIABLES, activation()) == (False, None)


def test_variables_are_charged_once_per_pass_with_what_they_read() -> None:
    spec = {
        "variables": [
            {"name": "big", "expression": EXPENSIVE},
            {"name": "both", "expression": "variables.big && true"},
            {"name": "broken", "expression": "object.data.missing"},
        ]
    }
    act = activation()
    variables = policy_validator.Variables(spec, act)
    assert act["variables"] == {"big": True, "both": True}
    assert variables.errors == {
        "broken": 'composited variable "broken" fails to evaluate: no such key: missing'
    }
    budget = Budget(cel.RUNTIME_COST_BUDGET)
    reads_both = expressions.compiled("variables.both", POLICY_VARIABLES)
    first = variables.cost(reads_both, budget)
    assert first == variables.costs["both"] + variables.costs["big"] and first > 883_600
    assert variables.cost(reads_both, budget) == 0
    assert variables.cost(expressions.compiled("variables.big", POLICY_VARIABLES), budget) == 0
    assert variables.cost(expressions.compiled("variables.big", POLICY_VARIABLES), Budget(10)) > 0


def test_validate_reports_each_budget_as_kube_apiserver() -> None:
    spec = {"failurePolicy": "Fail", "validations": [{"expression": EXPENSIVE}] * 12}
    decisions = policy_validator.validate(spec, "p", "b", activation())
    assert [(d.message, d.deny) for d in decisions] == [(OUT_OF_BUDGET, False)]
    spec["failurePolicy"] = "Ignore"
    assert policy_validator.validate(spec, "p", "b", activation()) == []
    spec = {"validations": [{"expression": "true"}], "auditAnnotations": [{"valueExpression": "1 == 1"}]}
    (decision,) = policy_validator.validate(spec, "p", "b", activation())
    assert decision.deny and decision.message == (
        "valueExpression '1 == 1' resulted in unsupported return type: bool. Return type must be either "
        "string or null."
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("  ok  ", "ok"),
        ("two\nlines", "fallback"),
        ("x" * 5121, "fallback"),
        (7, "fallback"),
        (None, "fallback"),
    ],
)
def test_message_expression_values_as_kube_apiserver_takes_them(value, message) -> None:
    assert policy_validator._message({"expression": "e", "message": " fallback "}, value) == message
