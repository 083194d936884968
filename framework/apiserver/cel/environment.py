"""Compiling and evaluating expressions: cel-expr-python (the cel-cpp runtime) with the Kubernetes
libraries of ``framework.apiserver.cel.library`` registered, as k8s.io/apiserver's base environment
(``pkg/cel/environment/base.go``) has them."""

from __future__ import annotations

import functools
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional

from framework.apiserver.cel import ast, library
from framework.apiserver.cel import cost as costmod
from framework.apiserver.cel.errors import (
    CompileError,
    CostLimitExceeded,
    EvaluationError,
    compile_message,
    runtime_message,
)
from framework.apiserver.cel.fields_check import undefined_fields
from framework.apiserver.cel.library import format as format_library
from framework.apiserver.cel.library import ip as ip_library
from framework.apiserver.cel.types import DeclType
from framework.apiserver.cel.validators import literal_problems

# k8s.io/apiserver/pkg/apis/cel/config.go
PER_CALL_LIMIT = 1_000_000
RUNTIME_COST_BUDGET = 10_000_000
MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024


_ERROR = cel.Type.ERROR


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()
"""The value of an optional variable (``compile(optional_variables=...)``) that has none, as
``oldSelf`` under ``optionalOldSelf`` on create: ``oldSelf.hasValue()`` is false."""


@dataclass(frozen=True)
class CostEstimate:
    """The least and most an evaluation can cost, in cel-go's cost units."""

    min: int
    max: int


_VarKey = tuple[tuple[str, str], ...]


@functools.lru_cache(maxsize=64)
def _env(variables: _VarKey) -> Any:
    return cel.NewEnv(
        library.descriptor_pool(),
        variables={name: _cel_type(sig) for name, sig in variables},
        extensions=[ext_optional.ExtOptional(), ext_bindings.ExtBindings()],
        functions=library.function_decls(),
    )


_PRIMITIVES = {
    "dyn": cel.Type.DYN,
    "bool": cel.Type.BOOL,
    "int": cel.Type.INT,
    "uint": cel.Type.UINT,
    "double": cel.Type.DOUBLE,
    "string": cel.Type.STRING,
    "bytes": cel.Type.BYTES,
    "google.protobuf.Timestamp": cel.Type.TIMESTAMP,
    "google.protobuf.Duration": cel.Type.DURATION,
}


def _cel_type(sig: str) -> Any:
    """A ``DeclType.cel_signature`` as a checker type (cel.Type's own parser reads ``map(...)`` and
    ``list(...)`` as opaque types)."""
    if sig.startswith("list(") and sig.endswith(")"):
        return cel.Type.List(_cel_type(sig[5:-1]))
    if sig.startswith("map(") and sig.endswith(")"):
        key, _, value = sig[4:-1].partition(", ")
        return cel.Type.Map(_cel_type(key), _cel_type(value))
    return _PRIMITIVES.get(sig) or cel.Type(sig)


def _opt_names(name: str) -> tuple[str, str]:
    return f"__opt_{name}_value", f"__opt_{name}_set"


def compile(
    expression: str,
    *,
    variables: Mapping[str, DeclType | None],
    optional_variables: Collection[str] = (),
    cost_limit: int | None = PER_CALL_LIMIT,
) -> Program:
    """Parse and type-check ``expression`` against ``variables`` (``None``: ``dyn``).

    A name in ``optional_variables`` is typed ``optional(T)`` in the expression; its activation
    value is the plain value or ``ABSENT``. ``cost_limit`` is the default runtime limit of the
    program's evaluations (``None``: unlimited). Raises ``CompileError``.
    """
    source = format_library.rewrite(expression)
    line_offset = 0
    decls: dict[str, str] = {}
    for name, t in variables.items():
        sig = t.cel_signature() if t is not None else "dyn"
        if name in optional_variables:
            value_name, set_name = _opt_names(name)
            decls[value_name] = sig
            decls[set_name] = "bool"
        else:
            decls[name] = sig
    if optional_variables:
        # cel-expr-python cannot take an optional value in an activation: the optional is made in
        # the expression, on a line of its own so that error positions keep their columns.
        binds = []
        for name in optional_variables:
            value_name, set_name = _opt_names(name)
            binds.append(f"cel.bind({name}, {set_name} ? optional.of({value_name}) : optional.none(), ")
        source = "".join(binds) + "\n" + source + "\n" + ")" * len(binds)
        line_offset = 1
    env_key = tuple(sorted(decls.items()))
    env = _env(env_key)
    if source != expression:
        # Syntax errors are reported on the expression as written.
        try:
            env.compile(expression, disable_check=True)
        except RuntimeError as e:
            raise CompileError(compile_message(str(e))) from None
    try:
        checked = env.compile(source)
    except RuntimeError as e:
        rewritten = ip_library.string_conversions(source, compile_message(str(e)))
        if rewritten is None:
            raise CompileError(compile_message(str(e), line_offset)) from None
        try:
            checked = env.compile(rewritten)
        except RuntimeError as e2:
            raise CompileError(compile_message(str(e2), line_offset)) from None
        source = rewritten
    tree, info = ast.checked(checked.serialize())
    problems = literal_problems(tree, info, source)
    if any(t is not None and _has_objects(t) for t in variables.values()):
        problems += undefined_fields(tree, info, source, variables)
    if problems:
        raise CompileError(compile_message("\n".join(problems), line_offset, status=False))
    estimate, model = costmod.estimate(tree, dict(variables))
    prog = Program(
        expression, checked, _output_type(checked), estimate, frozenset(optional_variables), cost_limit, model
    )
    prog._env_key = env_key
    return prog


def _has_objects(t: DeclType) -> bool:
    if t.name == "object":
        return True
    return t.elem is not None and _has_objects(t.elem)


def _output_type(checked: Any) -> str:
    name = str(checked.return_type().name())
    # cel-cpp spells the primitive types in capitals (BOOL); CEL's own names are lower case.
    name = name.lower() if name.isupper() else name
    return name.replace("<", "(").replace(">", ")")


class Prepared(Mapping[str, Any]):
    """An activation converted for cel-cpp once (``Program.prepare``); reads as the plain mapping."""

    __slots__ = ("env_key", "plain", "prepared")

    def __init__(self, plain: Mapping[str, Any], env_key: _VarKey, prepared: Any) -> None:
        self.plain = plain
        self.env_key = env_key
        self.prepared = prepared

    def __getitem__(self, key: str) -> Any:
        return self.plain[key]

    def __iter__(self) -> Any:
        return iter(self.plain)

    def __len__(self) -> int:
        return len(self.plain)


class Program:
    """A compiled expression. ``output_type`` is the checked result type as CEL names it
    (``bool``, ``string``, ``dyn``, ...); ``estimated_cost`` the static cost range."""

    __slots__ = (
        "_checked",
        "_env_key",
        "_model",
        "_optional",
        "cost_limit",
        "estimated_cost",
        "expression",
        "output_type",
    )

    def __init__(
        self,
        expression: str,
        checked: Any,
        output_type: str,
        estimated_cost: CostEstimate,
        optional: frozenset[str],
        cost_limit: int | None,
        model: costmod.Model,
    ) -> None:
        self.expression = expression
        self._checked = checked
        self.output_type = output_type
        self.estimated_cost = estimated_cost
        self._optional = optional
        self.cost_limit = cost_limit
        self._model = model
        self._env_key: _VarKey = ()

    def selected_fields(self, *variables: str) -> frozenset[str] | None:
        """The fields the expression selects directly on ``variables`` (``self.a``), or None when
        it uses one of them otherwise: an activation needs no other field of them."""
        names = set(variables) | {_opt_names(v)[0] for v in variables}
        fields = ast.selected_fields(self._model.tree, names)
        return None if fields is None else frozenset(fields)

    @property
    def identifiers(self) -> frozenset[str]:
        """The variables the expression reads (``oldSelf`` makes a CRD rule a transition rule)."""
        return frozenset(ast.identifiers(self._model.tree))

    def evaluate(self, activation: Mapping[str, Any], *, cost_limit: int | None = -1) -> Any:
        """The expression's value (plain Python: bool, int, float, str, bytes, list, dict,
        datetime, timedelta, or a library object) for ``activation``; raises ``EvaluationError``
        (``CostLimitExceeded`` past ``cost_limit``, default: the program's; ``None``: no limit, and
        the cost is not computed)."""
        limit = self.cost_limit if cost_limit == -1 else cost_limit
        return self._run(activation, limit, limit is not None)[0]

    def evaluate_with_cost(
        self, activation: Mapping[str, Any], *, cost_limit: int | None = -1
    ) -> tuple[Any, int]:
        """``evaluate`` and the evaluation's actual cost (what counts against a request's budget)."""
        return self._run(activation, self.cost_limit if cost_limit == -1 else cost_limit, True)

    def cost_bound(self, object_size: int) -> int:
        """The most one evaluation can cost when every value comes from a JSON object of
        ``object_size`` bytes (no list or string in it can be longer): an upper bound of
        ``evaluate_with_cost``'s cost that needs no walk of the values."""
        return self._model.bound(object_size)

    def actual_cost(self, activation: Mapping[str, Any]) -> int:
        """The cost ``evaluate_with_cost`` charges for ``activation``, without evaluating."""
        plain = activation.plain if isinstance(activation, Prepared) else activation
        if self._optional:
            plain = self._optional_data(plain)
        return costmod.actual(self._model, plain)

    def prepare(self, activation: Mapping[str, Any]) -> Prepared:
        """``activation`` converted once for several evaluations: by this program and by every
        program compiled with the same variables (a CRD node's rules share one)."""
        return Prepared(activation, self._env_key, _env(self._env_key).Activation(dict(activation)))

    def _run(self, activation: Mapping[str, Any], limit: int | None, metered: bool) -> tuple[Any, int]:
        if isinstance(activation, Prepared):
            if activation.env_key == self._env_key and not self._optional:
                cost = costmod.actual(self._model, activation.plain) if metered else 0
                if limit is not None and cost > limit:
                    raise CostLimitExceeded()
                try:
                    return self._result(self._checked.eval(activation.prepared)), cost
                except RuntimeError as e:
                    raise EvaluationError(runtime_message(str(e))) from None
            activation = activation.plain
        data = self._optional_data(activation) if self._optional else activation
        cost = costmod.actual(self._model, data) if metered else 0
        if limit is not None and cost > limit:
            raise CostLimitExceeded()
        try:
            result = self._checked.eval(data=data)
        except RuntimeError as e:
            raise EvaluationError(runtime_message(str(e))) from None
        return self._result(result), cost

    def _optional_data(self, activation: Mapping[str, Any]) -> dict[str, Any]:
        data = dict(activation)
        for name in self._optional:
            value_name, set_name = _opt_names(name)
            v = data.pop(name, ABSENT)
            data[set_name] = v is not ABSENT
            data[value_name] = None if v is ABSENT else v
        return data

    @staticmethod
    def _result(result: Any) -> Any:
        value = result.value()
        if value is True or value is False:
            return value  # the common case, a rule's verdict: no error is a bool
        if result.type() == _ERROR:
            raise EvaluationError(runtime_message(str(result.value())))
        return library.to_python(result)


def cost_error_message(cost_name: str, cost: int, limit: int) -> str:
    """apiextensions-apiserver's ``getCostErrorMessage``."""
    factor = cost / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{math.floor(factor * 10 + 0.5) / 10:.1f}x"
    return (
        f"{cost_name} exceeds budget by factor of {text} (try simplifying the rule, or adding maxItems, "
        "maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
