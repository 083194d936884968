"""CEL expressions of admission: ValidatingAdmissionPolicy validations, audit annotations, variables
and match conditions, and webhook ``matchConditions`` (k8s.io/apiserver ``pkg/admission/plugin/cel``,
``.../webhook/matchconditions``), on the engine of ``framework.apiserver.cel``.

Every admission variable is ``dyn`` to the checker here (kube-apiserver types ``object`` and
``params`` from their schemas only for ``status.typeChecking`` warnings, never to refuse a policy), so
a compiled expression depends only on its text and the variables its context declares.

Evaluations are metered as kube-apiserver meters them (``k8s.io/apiserver/pkg/apis/cel/config.go``):
each one against the per-call limit (``operation cancelled: actual cost limit exceeded``, an error of
that expression), and each pass over a list of expressions (``ForInput``: a policy's match conditions,
its validations, ...) against a :class:`Budget`; the pass ends at the first evaluation that does not
fit (:class:`OutOfBudget`). Costs are the engine's, computed from the values (docs/apiserver.md).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from framework.apiserver import cel
from framework.apiserver.auth.authenticator import MASTERS, UserInfo
from framework.apiserver.auth.authorizer import RBACAuthorizer, attributes_of
from framework.apiserver.cel.library import authz

if TYPE_CHECKING:
    from framework.apiserver.admission.review import Attributes
    from framework.apiserver.server import APIServer

# The variables each context declares (``compile.go``); a policy's messageExpressions have no
# ``authorizer`` (``plugin.go``'s ``expressionOptionalVars``).
WEBHOOK_VARIABLES = ("object", "oldObject", "request", "authorizer")
MESSAGE_VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject", "variables")
POLICY_VARIABLES = (*MESSAGE_VARIABLES, "authorizer")
AUTHORIZER_TYPE = cel.DeclType(authz.AUTHORIZER_NAME)

# k8s.io/apiserver/pkg/apis/cel/config.go: the budget of a webhook's or a binding's match conditions
# (validations and audit annotations have ``cel.RUNTIME_COST_BUDGET`` each).
MATCH_CONDITIONS_BUDGET = 2_500_000
OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"
# What cel-go has charged when it cancels an evaluation at the per-call limit.
_CANCELLED_COST = cel.PER_CALL_LIMIT + 1


@functools.lru_cache(maxsize=4096)
def compiled(expression: str, variables: tuple[str, ...]) -> cel.Program:
    """The program of ``expression`` with ``variables`` declared (``dyn``); raises ``cel.CompileError``."""
    declared = {name: AUTHORIZER_TYPE if name == "authorizer" else None for name in variables}
    return cel.compile(expression, variables=declared, cost_limit=cel.PER_CALL_LIMIT)


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


class OutOfBudget(Exception):
    """A pass whose budget ran out: no further expression of it is evaluated."""

    def __init__(self) -> None:
        super().__init__(OUT_OF_BUDGET)
        self.message = OUT_OF_BUDGET


class Budget:
    """What is left of one pass's runtime cost budget; ``charged`` are the policy variables whose
    cost it has paid (kube-apiserver evaluates a variable once per pass, on first use)."""

    __slots__ = ("charged", "remaining")

    def __init__(self, remaining: int) -> None:
        self.remaining = remaining
        self.charged: set[str] = set()

    def charge(self, cost: int) -> None:
        """Spend ``cost``; raises :class:`OutOfBudget` when it does not fit."""
        if cost > self.remaining:
            raise OutOfBudget()
        self.remaining -= cost


def run(program: cel.Program, activation: Mapping[str, Any], budget: Budget, extra_cost: int = 0) -> Any:
    """The value of ``program`` for ``activation``, its cost (and ``extra_cost``, what the variables it
    reads cost) charged to ``budget``; raises ``cel.EvaluationError`` (``CostLimitExceeded`` past the
    per-call limit) and :class:`OutOfBudget`."""
    cost = program.actual_cost(activation)
    if cost > cel.PER_CALL_LIMIT:
        budget.charge(extra_cost + _CANCELLED_COST)
        raise cel.CostLimitExceeded()
    budget.charge(extra_cost + cost)
    return program.evaluate(activation, cost_limit=None)


def evaluate(
    expression: str,
    variables: tuple[str, ...],
    activation: Mapping[str, Any],
    budget: Budget,
    extra_cost: int = 0,
) -> Any:
    """The value of ``expression`` for ``activation``; raises :class:`ExpressionError` and
    :class:`OutOfBudget`."""
    try:
        return run(compiled(expression, variables), activation, budget, extra_cost)
    except cel.CompileError as e:  # only for objects stored before their expressions were checked
        raise ExpressionError(f"compilation failed: {e.message}") from None
    except cel.EvaluationError as e:
        raise ExpressionError(f"expression '{expression}' resulted in error: {e.message}") from None


def evaluate_bool(
    expression: str, variables: tuple[str, ...], activation: Mapping[str, Any], budget: Budget
) -> bool:
    """A condition's value; a non-boolean result is an error as kube-apiserver reports it."""
    value = evaluate(expression, variables, activation, budget)
    if not isinstance(value, bool):
        raise ExpressionError(f"expression '{expression}' resulted in error: no such overload")
    return value


def match_conditions(
    conditions: list[dict], variables: tuple[str, ...], activation: Mapping[str, Any]
) -> tuple[bool, str | None]:
    """``matchconditions.Matcher.Match``: (matches, error). Every condition is evaluated (the filter's
    ``ForInput``), sharing :data:`MATCH_CONDITIONS_BUDGET`: running out of it is the error; otherwise a
    condition that is false means no match (errors of the others do not count), and else the errors of
    all of them, aggregated."""
    budget = Budget(MATCH_CONDITIONS_BUDGET)
    problems: list[str] = []
    matches = True
    for condition in conditions:
        expression = condition.get("expression") or ""
        try:
            if not evaluate_bool(expression, variables, activation, budget):
                matches = False
        except ExpressionError as e:
            problems.append(e.message)
        except OutOfBudget as e:
            return True, e.message
    if not matches:
        return False, None
    if problems:
        return True, problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
    return True, None


# --- the authorizer (k8s.io/apiserver/pkg/cel/library/authz.go) ------------------------------------


def authorizer(a: Attributes) -> Any:
    """The ``authorizer`` variable: checks for the requester of ``a``; ``authorizer.requestResource``
    is the request's resource."""
    user = a.user
    who = {"name": user.name, "uid": user.uid, "groups": list(user.groups), "extra": dict(user.extra)}
    resource = {
        "group": a.rt.group,
        "resource": a.rt.resource,
        "subresource": a.subresource,
        "namespace": a.namespace,
        "name": a.name,
    }
    return authz.authorizer_value(who, resource)


@contextmanager
def authorizing(server: APIServer) -> Iterator[None]:
    """Answer the ``authorizer``'s checks of the evaluations inside as the server authorizes requests
    (``RBAC``, or ``AlwaysAllow``: every check allowed, without a reason)."""
    rbac = server.authorizer if server.authorization == "RBAC" else None
    token = authz.AUTHORIZE.set(functools.partial(_authorize, rbac))
    try:
        yield
    finally:
        authz.AUTHORIZE.reset(token)


def _authorize(rbac: RBACAuthorizer | None, user: dict, attributes: dict) -> tuple[bool, str]:
    """(allowed, reason) as kube-apiserver's authorizers answer: ``RBAC: allowed by ...``; no reason
    for ``system:masters`` (the privileged group authorizer) nor for a denial."""
    groups = tuple(user.get("groups") or ())
    who = UserInfo(user["name"], user.get("uid") or "", groups, user.get("extra") or {})
    a = attributes_of(who, attributes if attributes.get("resourceRequest") else None, attributes)
    if rbac is None:
        return True, ""
    if not rbac.allowed(a):
        return False, ""
    if MASTERS in who.groups:
        return True, ""
    source = rbac.allowed_by(a)
    return True, f"RBAC: allowed by {source}" if source else ""
