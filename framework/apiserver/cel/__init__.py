"""CEL for the API server: the Common Expression Language as Kubernetes uses it (CRD
``x-kubernetes-validations``, ValidatingAdmissionPolicy, webhook ``matchConditions``).

The interpreter is cel-expr-python (Google's Python binding of cel-cpp; docs/apiserver.md says
why); this package adds only what Kubernetes adds: its function libraries (``library``), its cost
model (``cost``) and cel-go's error texts (``errors``).

API (stable; additions only)::

    from framework.apiserver import cel

    prog = cel.compile(
        "self.replicas <= self.maxReplicas",
        variables={"self": cel.DeclType.object_of({...}), "oldSelf": None},  # None: dyn
        optional_variables=(),          # names typed optional(T); pass cel.ABSENT for "none"
        cost_limit=cel.PER_CALL_LIMIT,  # runtime limit of each evaluation (None: unlimited)
    )                                   # raises cel.CompileError (.message is cel-go's report)
    prog.output_type                    # "bool", "string", "dyn", ... (checked result type)
    prog.estimated_cost                 # cel.CostEstimate(min, max), cel-go units
    prog.evaluate({"self": obj})        # plain Python value; raises cel.EvaluationError
    value, cost = prog.evaluate_with_cost({"self": obj}, cost_limit=remaining_budget)
                                        # raises cel.CostLimitExceeded (an EvaluationError)
    cel.cost_error_message("estimated rule cost", cost, limit)  # apiextensions' wording
    prog.identifiers                    # frozenset of the variables it reads
    shared = prog.prepare({"self": obj, "oldSelf": old})  # converted once, for every program
    other.evaluate(shared)              # compiled with the same variables (a cel.Prepared)
    prog.cost_bound(object_size)        # upper bound of one evaluation's cost on values of an
                                        # object of that many JSON bytes (cached; no walk)
    prog.actual_cost(activation)        # the cost evaluate_with_cost would charge, not evaluating
    prog.selected_fields("self")        # {"a", ...} when it only selects self.a, ...; else None

Compile errors include what cel-go's checker and Kubernetes' AST validators report and cel-cpp's
checker does not: ``undefined field`` for objects declared with ``DeclType.object_of`` (property names
escaped as Kubernetes escapes them: ``types.escape``), invalid duration/timestamp/regex literals and
mixed-type list/map literals. Evaluations stop after 10,000 comprehension iterations (cel-cpp's
limit, not configurable through cel-expr-python).

Activations hold JSON-like values (dict, list, str, int, float, bool, None) and, where the
declared type says so, ``datetime``/``timedelta``/``bytes``. ``CompileError.message`` and
``EvaluationError.message`` carry cel-go's texts (``ERROR: <input>:1:6: ...``, ``no such key: x``),
which kube-apiserver embeds in its own messages. Types for declarations: ``DeclType`` and the
``*_TYPE`` constants of ``framework.apiserver.cel.types``. Constants: ``PER_CALL_LIMIT``,
``RUNTIME_COST_BUDGET``, ``MAX_REQUEST_SIZE_BYTES`` (k8s.io/apiserver/pkg/apis/cel/config.go).
"""

from framework.apiserver.cel.environment import (
    ABSENT,
    MAX_REQUEST_SIZE_BYTES,
    PER_CALL_LIMIT,
    RUNTIME_COST_BUDGET,
    CostEstimate,
    Prepared,
    Program,
    compile,
    cost_error_message,
)
from framework.apiserver.cel.errors import CompileError, CostLimitExceeded, EvaluationError
from framework.apiserver.cel.types import DeclType

__all__ = [
    "ABSENT",
    "MAX_REQUEST_SIZE_BYTES",
    "PER_CALL_LIMIT",
    "RUNTIME_COST_BUDGET",
    "CompileError",
    "CostEstimate",
    "CostLimitExceeded",
    "DeclType",
    "EvaluationError",
    "Prepared",
    "Program",
    "compile",
    "cost_error_message",
]
