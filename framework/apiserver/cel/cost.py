"""Cost of expressions in cel-go's units: the static estimate of cel-go's ``checker/cost.go`` (with
Kubernetes' function costs of ``k8s.io/apiserver/pkg/cel/library/cost.go``) from the declared
types' bounds, and the actual cost of one evaluation, the same model applied to the values' sizes.

Sizes without a declared bound (``maxItems``, ``maxProperties``, ``maxLength``) are bounded by the
request size as Kubernetes bounds them (a list of strings holds at most about 3 MiB / 3 items), which
is why a comprehension over an unbounded list is refused at CRD creation. The runtime figure is an
upper bound of cel-go's tracked cost (one value per comprehension body, its largest element)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from framework.apiserver.cel import types as ct
from framework.apiserver.cel.ast import Expr

if TYPE_CHECKING:
    from framework.apiserver.cel.environment import CostEstimate

U64 = 2**64 - 1
MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024
STRING_TRAVERSAL = 0.1
REGEX_LENGTH = 0.25
LIST_CREATE = 10
MAP_CREATE = 30
STRUCT_CREATE = 40


def _sat(v: int) -> int:
    return v if v < U64 else U64


def _factor(n: int, f: float) -> int:
    return _sat(math.ceil(n * f)) if n < U64 else U64


@dataclass(frozen=True)
class _Cost:
    min: int
    max: int

    def __add__(self, o: _Cost) -> _Cost:
        return _Cost(_sat(self.min + o.min), _sat(self.max + o.max))

    def times(self, n: tuple[int, int]) -> _Cost:
        return _Cost(_sat(self.min * n[0]), _sat(self.max * n[1]))


_ZERO = _Cost(0, 0)
# library/cost.go: an authorizer check costs enough that an expression can make only two
_AUTHZ_CHECK = _Cost(350_000, 350_000)
_ONE = _Cost(1, 1)
_UNKNOWN_SIZE = (0, U64)


class _Shape:
    """What is known of a value: its declared type (estimate) or the value itself (runtime)."""

    __slots__ = ("decl", "elem", "has_value", "size", "value", "variable")

    def __init__(
        self,
        decl: ct.DeclType | None = None,
        value: Any = None,
        has_value: bool = False,
        size: tuple[int, int] | None = None,
        variable: bool = False,
        elem: _Shape | None = None,
    ) -> None:
        self.elem = elem  # what each element is known to be (a map/filter result's)
        self.decl = decl
        self.value = value
        self.has_value = has_value
        self.size = size
        self.variable = variable  # derived from a variable (its size is not a constant)


_UNKNOWN = _Shape(size=_UNKNOWN_SIZE, variable=True)


def _declared_max(t: ct.DeclType, request_size: int) -> int:
    """The most elements (or characters) a value of ``t`` can have in a request of
    ``request_size`` bytes: its declared bound, else what fits (Kubernetes' ``estimateMax*``)."""
    if t.name in (ct.STRING, ct.BYTES, ct.DYN):
        derived = request_size - 2
    elif t.name == ct.LIST:
        derived = (request_size - 2) // ((t.elem.min_serialized_size if t.elem else 1) + 1)
    elif t.name in (ct.MAP, ct.OBJECT):
        derived = (request_size - 2) // ((t.elem.min_serialized_size if t.elem else 1) + 4)
    else:
        return U64
    return derived if t.max_elements is None else min(t.max_elements, max(derived, 0))


def _size(s: _Shape, request_size: int = MAX_REQUEST_SIZE_BYTES) -> tuple[int, int]:
    if s.size is not None:
        return s.size
    if s.has_value:
        v = s.value
        n = len(v) if isinstance(v, str | bytes | list | dict) else 1
        return (n, n)
    if s.decl is not None and s.decl.name in (ct.STRING, ct.BYTES, ct.LIST, ct.MAP, ct.OBJECT, ct.DYN):
        return (0, _declared_max(s.decl, request_size))
    return _UNKNOWN_SIZE


def _elem(s: _Shape, runtime: bool) -> _Shape:
    if s.elem is not None:
        return s.elem
    if s.has_value:
        v = s.value
        items = list(v) if isinstance(v, dict) else v if isinstance(v, list) else []
        if not items:
            return _Shape(value=None, has_value=True, variable=s.variable)
        # the largest element stands for all in the body's cost
        best = max(items, key=lambda x: len(x) if isinstance(x, str | bytes | list | dict) else 0)
        return _Shape(value=best, has_value=True, variable=s.variable)
    t = s.decl
    if t is not None:
        if t.name == ct.LIST and t.elem is not None:
            return _Shape(decl=t.elem, variable=True)
        if t.name in (ct.MAP, ct.OBJECT):
            return _Shape(decl=ct.STRING_TYPE, variable=True)
    return _UNKNOWN


def _index(s: _Shape, key: _Shape) -> _Shape:
    v = s.value
    if key.has_value:
        try:
            return _Shape(value=v[key.value], has_value=True, variable=s.variable)
        except (KeyError, IndexError, TypeError):
            pass
    return _elem(s, True)


def _select(s: _Shape, name: str) -> _Shape:
    if s.has_value:
        v = s.value
        if isinstance(v, dict) and name in v:
            return _Shape(value=v[name], has_value=True, variable=s.variable)
        # absent: the evaluation stops there (no such key) or a has() guard skips it; it costs
        # nothing more than a select
        return _Shape(value=None, has_value=True, variable=s.variable)
    t = s.decl
    if t is not None:
        if t.name == ct.OBJECT and name in t.fields:
            return _Shape(decl=t.fields[name], variable=True)
        if t.name == ct.MAP and t.elem is not None:
            return _Shape(decl=t.elem, variable=True)
    return _UNKNOWN


_STRING_LINEAR = {
    "lowerAscii",
    "upperAscii",
    "trim",
    "replace",
    "split",
    "substring",
    "charAt",
    "indexOf",
    "lastIndexOf",
    "join",
    "format",
    "url",
    "isURL",
    "ip",
    "isIP",
    "cidr",
    "isCIDR",
    "quantity",
    "isQuantity",
    "semver",
    "isSemver",
    "string",
    "bytes",
    "strings.quote",
    "validate",
}
_LIST_LINEAR = {"isSorted", "sum", "min", "max", "indexOf", "lastIndexOf", "join"}
_SAME_SIZE = {"lowerAscii", "upperAscii", "trim", "substring", "strings.quote", "string", "bytes"}


class _Estimator:
    def __init__(self, runtime: bool, request_size: int = MAX_REQUEST_SIZE_BYTES) -> None:
        self.runtime = runtime
        self.request_size = request_size
        self.size_dependent = False

    def _sz(self, s: _Shape) -> tuple[int, int]:
        return _size(s, self.request_size)

    def _used(self, s: _Shape) -> tuple[int, int]:
        if s.variable:
            self.size_dependent = True
        return self._sz(s)

    def walk(self, e: Expr | None, env: dict[str, _Shape]) -> tuple[_Cost, _Shape]:
        if e is None:
            return _ZERO, _UNKNOWN
        k = e.kind
        if k == "const":
            return _ZERO, _Shape(value=e.value, has_value=True)
        if k == "ident":
            return _ONE, env.get(e.name, _UNKNOWN)
        if k == "select":
            c, s = self.walk(e.target, env)
            if e.test_only:
                return c, _Shape(decl=ct.BOOL_TYPE)
            return c + _ONE, _select(s, e.name)
        if k == "list":
            total = _Cost(LIST_CREATE, LIST_CREATE)
            shapes = []
            for a in e.args:
                c, s = self.walk(a, env)
                total += c
                shapes.append(s)
            n = len(e.args)
            # Its elements are as large as its largest (cel-go's union of the items' sizes): a
            # comprehension over a literal list sees its items, not an unknown element.
            elem = max(shapes, key=lambda s: _size(s, self.request_size)[1]) if shapes else None
            return total, _Shape(size=(n, n), variable=any(s.variable for s in shapes), elem=elem)
        if k == "struct":
            total = _Cost(MAP_CREATE, MAP_CREATE) if e.keys else _Cost(STRUCT_CREATE, STRUCT_CREATE)
            for a in (*e.keys, *e.args):
                total += self.walk(a, env)[0]
            n = len(e.args)
            return total, _Shape(size=(n, n))
        if k == "comprehension":
            return self._comprehension(e, env)
        if k == "call":
            return self._call(e, env)
        return _ZERO, _UNKNOWN

    def _comprehension(self, e: Expr, env: dict[str, _Shape]) -> tuple[_Cost, _Shape]:
        rc, rs = self.walk(e.iter_range, env)
        n = self._used(rs) if rs.variable else self._sz(rs)
        ic, _ = self.walk(e.accu_init, env)
        inner = dict(env)
        if e.iter_var:
            elem = _elem(rs, self.runtime)
            if e.iter_var2:
                inner[e.iter_var] = _Shape(decl=ct.INT_TYPE)
                inner[e.iter_var2] = elem
            else:
                inner[e.iter_var] = elem
        if e.accu_var:
            inner[e.accu_var] = _UNKNOWN
        cc, _ = self.walk(e.loop_condition, inner)
        sc, _ = self.walk(e.loop_step, inner)
        res_c, res_s = self.walk(e.result, inner)
        body = (cc + sc).times(n)
        total = rc + ic + body + res_c
        result = res_s
        if e.accu_init is not None and e.accu_init.kind == "list":
            # map/filter: at most the range's size, of elements like the range's (exact for filter)
            elem = inner.get(e.iter_var2 or e.iter_var, _UNKNOWN)
            decl = ct.DeclType.list_of(elem.decl, n[1]) if elem.decl is not None else None
            result = _Shape(decl=decl, size=(0, n[1]), variable=rs.variable, elem=elem)
        return total, result

    def _call(self, e: Expr, env: dict[str, _Shape]) -> tuple[_Cost, _Shape]:
        fn = e.name
        if fn in ("_&&_", "_||_") and len(e.args) == 2:
            lc, _ = self.walk(e.args[0], env)
            rc, _ = self.walk(e.args[1], env)
            return _Cost(lc.min, _sat(lc.max + rc.max)), _Shape(decl=ct.BOOL_TYPE)
        if fn == "_?_:_" and len(e.args) == 3:
            cc, _ = self.walk(e.args[0], env)
            tc, ts = self.walk(e.args[1], env)
            fc, fs = self.walk(e.args[2], env)
            return _Cost(_sat(cc.min + min(tc.min, fc.min)), _sat(cc.max + max(tc.max, fc.max))), (
                ts if self._sz(ts)[1] >= self._sz(fs)[1] else fs
            )
        target: _Shape | None = None
        total = _ZERO
        if e.target is not None:
            c, target = self.walk(e.target, env)
            total += c
        shapes = []
        for a in e.args:
            c, s = self.walk(a, env)
            total += c
            shapes.append(s)
        call, result = self._function_cost(fn, e.overloads, target, shapes)
        return total + call, result

    def _function_cost(
        self, fn: str, overloads: tuple[str, ...], target: _Shape | None, args: list[_Shape]
    ) -> tuple[_Cost, _Shape]:
        ov = overloads[0] if overloads else ""
        subject = target if target is not None else (args[0] if args else None)
        if fn == "validate" and args:
            subject = args[0]  # the string a format validates
        if fn == "size":
            return _ONE, _Shape(decl=ct.INT_TYPE)
        if fn == "check" and target is not None:
            return _AUTHZ_CHECK, _UNKNOWN
        if fn == "_[_]" and len(args) == 2:
            return _ONE, _elem(args[0], self.runtime) if not args[0].has_value else _index(args[0], args[1])
        if fn in ("startsWith", "endsWith") and args:
            n = self._used(args[0]) if args[0].variable else self._sz(args[0])
            return _Cost(_factor(n[0], STRING_TRAVERSAL), _factor(n[1], STRING_TRAVERSAL)), _Shape(
                decl=ct.BOOL_TYPE
            )
        if fn == "contains" and target is not None and args:
            a, b = self._used(target), self._used(args[0])
            return (
                _Cost(
                    _sat(_factor(a[0], STRING_TRAVERSAL) * _factor(b[0], STRING_TRAVERSAL)),
                    _sat(_factor(a[1], STRING_TRAVERSAL) * _factor(b[1], STRING_TRAVERSAL)),
                ),
                _Shape(decl=ct.BOOL_TYPE),
            )
        if fn in ("matches", "find", "findAll") and subject is not None:
            pattern = args[-1] if target is not None else args[1] if len(args) > 1 else _UNKNOWN
            if fn == "findAll" and target is not None and len(args) == 2:
                pattern = args[0]
            s = self._used(subject)
            r = self._used(pattern) if pattern.variable else self._sz(pattern)
            lo = _sat(_factor(s[0] + 1, STRING_TRAVERSAL) * _factor(r[0], REGEX_LENGTH))
            hi = _sat(_factor(_sat(s[1] + 1), STRING_TRAVERSAL) * _factor(r[1], REGEX_LENGTH))
            return _Cost(lo, hi), _UNKNOWN
        if fn in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_") and len(args) == 2:
            a, b = self._sz(args[0]), self._sz(args[1])
            if any(
                isinstance(s.value, str | bytes) or (s.decl and s.decl.name in (ct.STRING, ct.BYTES))
                for s in args
            ):
                shortest = min(a[1], b[1])
                if args[0].variable or args[1].variable:
                    self.size_dependent = True
                return _Cost(1, max(1, _factor(shortest, STRING_TRAVERSAL))), _Shape(decl=ct.BOOL_TYPE)
            return _ONE, _Shape(decl=ct.BOOL_TYPE)
        if fn == "_+_" and len(args) == 2:
            a, b = self._used(args[0]), self._used(args[1])
            size = (_sat(a[0] + b[0]), _sat(a[1] + b[1]))
            if ov.startswith("add_string") or ov.startswith("add_bytes"):
                return _Cost(1, max(1, _factor(size[1], STRING_TRAVERSAL))), _Shape(size=size, variable=True)
            if ov.startswith("add_list"):
                return _ONE, _Shape(size=size, variable=True)
            return _ONE, _UNKNOWN
        if fn == "@in" and len(args) == 2:
            n = self._used(args[1])
            if ov.startswith("in_list"):
                return _Cost(1, max(1, n[1])), _Shape(decl=ct.BOOL_TYPE)
            return _ONE, _Shape(decl=ct.BOOL_TYPE)
        if fn.startswith("sets.") and len(args) == 2:
            a, b = self._used(args[0]), self._used(args[1])
            return _Cost(1, max(1, _sat(a[1] * b[1]))), _Shape(decl=ct.BOOL_TYPE)
        if (
            target is not None
            and fn in _LIST_LINEAR
            and (isinstance(target.value, list) or (target.decl is not None and target.decl.name == ct.LIST))
        ):
            n = self._used(target)
            return _Cost(1, max(1, n[1])), _UNKNOWN
        if fn in _STRING_LINEAR and subject is not None and subject is not _UNKNOWN:
            n = self._used(subject)
            result = _Shape(size=n, variable=subject.variable) if fn in _SAME_SIZE else _UNKNOWN
            return _Cost(1, max(1, _factor(n[1], STRING_TRAVERSAL))), result
        return _ONE, _UNKNOWN


@dataclass
class Model:
    """A compiled program's cost model: its tree and whether its cost depends on the values."""

    tree: Expr
    size_dependent: bool
    constant: int
    variables: dict[str, ct.DeclType | None] = field(default_factory=dict)
    _bounds: dict[int, int] = field(default_factory=dict)

    def bound(self, object_size: int) -> int:
        """The most one evaluation can cost on values of an object of ``object_size`` JSON bytes
        (the static estimate with that size in place of the request's), cached per power of 2."""
        if not self.size_dependent:
            return self.constant
        bucket = 1 << max(6, (object_size - 1).bit_length())
        if bucket >= MAX_REQUEST_SIZE_BYTES:
            return self.constant
        hit = self._bounds.get(bucket)
        if hit is None:
            hit = self._bounds[bucket] = estimate(self.tree, self.variables, bucket)[0].max
        return hit


def estimate(
    tree: Expr, variables: Mapping[str, ct.DeclType | None], request_size: int = MAX_REQUEST_SIZE_BYTES
) -> tuple[CostEstimate, Model]:
    """The static cost range of a checked expression whose variables have the given types, for
    values within a request of ``request_size`` bytes."""
    from framework.apiserver.cel.environment import CostEstimate

    est = _Estimator(runtime=False, request_size=request_size)
    env = {name: _Shape(decl=t or ct.DYN_TYPE, variable=True) for name, t in variables.items()}
    for name in variables:
        env[f"__opt_{name}_value"] = env[name]
    c, _ = est.walk(tree, env)
    return CostEstimate(c.min, c.max), Model(tree, est.size_dependent, c.max, dict(variables))


# Below this estimate a program is charged its estimate rather than walked again per evaluation
# (an overcharge of a few units, for a cheaper request).
_CHEAP = 20


def actual(model: Model, activation: Mapping[str, Any]) -> int:
    """The cost of evaluating the program on ``activation`` (the estimate's model on the values)."""
    if not model.size_dependent or model.constant <= _CHEAP:
        return model.constant
    est = _Estimator(runtime=True)
    env = {name: _Shape(value=v, has_value=True, variable=True) for name, v in activation.items()}
    c, _ = est.walk(model.tree, env)
    return c.max
