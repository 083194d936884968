"""Evaluating a custom resource's ``x-kubernetes-validations`` (k8s.io/apiextensions-apiserver
``pkg/apiserver/schema/cel/validation.go``): every rule at every schema level, ``self`` the value
there and ``oldSelf`` its correlated old value (through properties of non-atomic maps and items of
``x-kubernetes-list-type: map`` lists), transition rules only where an old value exists (or with
``optionalOldSelf``), ``message``/``messageExpression``/``reason``/``fieldPath``, the runtime cost
budget, and ratcheting (``CRDValidationRatcheting``, on by default since 1.30): on update an error
of a rule without ``oldSelf`` on a value that did not change is a warning, not a failure.
"""

from __future__ import annotations

import base64
import datetime
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from framework.apiserver import cel
from framework.apiserver.cel import types as ct
from framework.apiserver.crd.cel_rules import (
    MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES,
    CompiledRule,
    Node,
    rule_tree,
)
from framework.apiserver.crd.values import join_path
from framework.apiserver.machinery.errors import FieldError, duplicate, forbidden, invalid_value, required
from framework.meta import jsoncodec
from framework.meta.field import go_quote

log = structlog.get_logger(__name__)

_NO_FURTHER = "no further validation rules will be run"
OUT_OF_BUDGET = "validation failed due to running out of cost budget, " + _NO_FURTHER


@dataclass
class _State:
    errs: list[FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    budget: int = cel.RUNTIME_COST_BUDGET
    metered: bool = True
    flat_done: set[int] = field(default_factory=set)  # nodes whose combinable rules ran flat
    object_size: int = cel.MAX_REQUEST_SIZE_BYTES
    # evaluations charged their bound rather than their cost, settled when the budget runs short
    pending: list[tuple[cel.Program, Mapping[str, Any], int]] = field(default_factory=list)

    def settle(self) -> None:
        """Charge the pending evaluations their actual cost instead of their bound."""
        for prog, activation, bound in self.pending:
            self.budget += bound - prog.actual_cost(activation)
        self.pending.clear()


class _OutOfBudget(Exception):
    pass


def validate(schema: dict, obj: Any, old: Any | None) -> tuple[list[FieldError], list[str]]:
    """The field errors of ``obj``'s rules (``old``: the stored object on an update) and the
    warnings of ratcheted errors."""
    tree = rule_tree(schema)
    if tree is None:
        return [], []
    # A CRD whose every rule, times the most values it can apply to, stays within the request's
    # budget cannot run out of it: its evaluations are not metered.
    st = _State(metered=tree.cost_bound is None or tree.cost_bound > cel.RUNTIME_COST_BUDGET)
    if st.metered:
        # every list and string of the object is bounded by its size: each evaluation costs at most
        # its estimate for that size, which needs no walk of the values
        st.object_size = len(jsoncodec.dumps(obj))
    if tree.flat is not None and not st.metered:
        _validate_flat(tree, obj, old, st)
    try:
        _validate(tree, "", obj, old, old, True, False, st)
    except _OutOfBudget:
        pass
    return st.errs, st.warnings


def _validate(
    node: Node, path: str, obj: Any, old: Any, rold: Any, corr: bool, parent_ratchet: bool, st: _State
) -> None:
    """``old`` is the value ``oldSelf`` sees (None: none); ``rold`` the value ratcheting compares
    with, correlated by map keys and map-list keys even through atomic maps (``corr`` false: not
    correlatable, the nearest correlated parent's equality holds)."""
    if obj is None:
        return
    ratchet = (rold is not None and rold == obj) if corr else parent_ratchet
    if node.rules:
        _validate_rules(node, path, obj, old, st, ratchet=ratchet)
    if isinstance(obj, dict):
        old_map = old if isinstance(old, dict) and node.correlatable_map else None
        rold_map = rold if corr and isinstance(rold, dict) else None
        for k, v in obj.items():
            sub = node.properties.get(k)
            sub_path = join_path(path, k)
            if sub is None:
                sub = node.additional
                sub_path = f"{path}[{k}]"
                if sub is None:
                    continue
            ov = old_map.get(k) if old_map is not None else None
            rv = rold_map.get(k) if rold_map is not None else None
            _validate(sub, sub_path, v, ov, rv, corr, ratchet, st)
    elif isinstance(obj, list) and node.items is not None:
        old_items = _map_list_index(node, old)
        rold_items = _map_list_index(node, rold) if corr else None
        item_corr = rold_items is not None
        for i, v in enumerate(obj):
            key = _map_key(node, v) if old_items is not None or rold_items is not None else None
            ov = old_items.get(key) if old_items is not None else None
            rv = rold_items.get(key) if rold_items is not None else None
            _validate(node.items, f"{path}[{i}]", v, ov, rv, item_corr, ratchet, st)


def _map_key(node: Node, item: Any) -> tuple | None:
    if not isinstance(item, dict):
        return None
    return tuple(repr(item.get(k)) for k in node.map_keys)


def _map_list_index(node: Node, old: Any) -> dict[tuple | None, Any] | None:
    """Old items by their map keys (``x-kubernetes-list-type: map``); other lists do not correlate."""
    if node.list_type != "map" or not isinstance(old, list):
        return None
    return {_map_key(node, it): it for it in old}


# --- values as CEL sees them (UnstructuredToVal) ---------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _needs_conversion(t: ct.DeclType) -> bool:
    if t.name in (ct.DOUBLE, ct.TIMESTAMP, ct.DURATION, ct.BYTES):
        return True
    if t.name in (ct.LIST, ct.MAP):
        return t.elem is not None and _needs_conversion(t.elem)
    if t.name == ct.OBJECT:
        return (
            bool(t.escapes) or "metadata" in t.fields or any(_needs_conversion(f) for f in t.fields.values())
        )
    return False


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNIT = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def _parse_duration(text: str) -> datetime.timedelta | str:
    s = text
    sign = -1 if s.startswith("-") else 1
    s = s.lstrip("+-")
    if s == "0":
        return datetime.timedelta(0)
    pos, total = 0, 0.0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if m is None:
            return text
        total += float(m.group(1)) * _DURATION_UNIT[m.group(2)]
        pos = m.end()
    return datetime.timedelta(seconds=sign * total) if s else text


def _parse_timestamp(text: str) -> datetime.datetime | str:
    try:
        if len(text) == 10:
            return datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.UTC)
        value = datetime.datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return text
    return value if value.tzinfo else value.replace(tzinfo=datetime.UTC)


def to_cel(value: Any, t: ct.DeclType) -> Any:
    """A JSON value as the rule sees it: numbers of ``number`` fields as doubles, date-times,
    durations and bytes decoded, and the ``metadata`` of a resource root reduced to ``name`` and
    ``generateName`` (all a rule may read)."""
    if value is None or not _needs_conversion(t):
        return value
    name = t.name
    if name == ct.DOUBLE:
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if name == ct.TIMESTAMP:
        return _parse_timestamp(value) if isinstance(value, str) else value
    if name == ct.DURATION:
        return _parse_duration(value) if isinstance(value, str) else value
    if name == ct.BYTES:
        if isinstance(value, str):
            try:
                return base64.b64decode(value, validate=True)
            except ValueError:
                return value
        return value
    if name == ct.LIST and isinstance(value, list) and t.elem is not None:
        return [to_cel(v, t.elem) for v in value]
    if name == ct.MAP and isinstance(value, dict) and t.elem is not None:
        return {k: to_cel(v, t.elem) for k, v in value.items()}
    if name == ct.OBJECT and isinstance(value, dict):
        out = {}
        for k, v in value.items():
            name = t.escapes.get(k, k)  # rules see foo-bar as foo__dash__bar
            ft = t.fields.get(name)
            if k == "metadata" and "metadata" in t.fields and isinstance(v, dict):
                out[k] = {mk: v[mk] for mk in ("name", "generateName") if mk in v}
            elif ft is not None:
                out[name] = to_cel(v, ft)
            else:
                out[k] = v
        return out
    return value


# --- rules ---------------------------------------------------------------------------------------------


def _validate_rules(node: Node, path: str, obj: Any, old: Any, st: _State, *, ratchet: bool) -> None:
    fld = path or "<nil>"
    type_name = node.type_name
    if st.budget <= 0:
        st.settle()
    if st.budget <= 0:
        st.errs.append(
            invalid_value(
                fld,
                type_name,
                OUT_OF_BUDGET,
            )
        )
        raise _OutOfBudget
    self_value = to_cel(_only(obj, node), node.decl)
    old_value = to_cel(_only(old, node), node.decl) if old is not None else None
    shared: Any = None  # the activation the node's rules share, converted once
    done: set[int] = {cr.index for cr in node.combinable} if id(node) in st.flat_done else set()
    if node.combined is not None and not st.metered and not done:
        shared = node.combined.prepare({"self": self_value, "oldSelf": old_value})
        try:
            results = node.combined.evaluate(shared, cost_limit=None)
        except cel.EvaluationError:
            results = None  # some rule failed to evaluate: each runs alone below, to report which
        if results is not None:
            for cr, result in zip(node.combined_rules, results, strict=True):
                done.add(cr.index)
                if result is not True:
                    _failed(cr, path, fld, type_name, shared, st, ratchet)
    for cr in node.rules:
        if cr.index in done:
            continue
        if cr.error is not None:
            st.errs.append(invalid_value(fld, type_name, "rule compile error: " + cr.error))
            continue
        if cr.program is None:
            continue
        if cr.uses_old_self and old is None and not cr.optional_old_self:
            continue
        activation: Mapping[str, Any]
        if cr.optional_old_self:
            activation = {"self": self_value, "oldSelf": old_value if old is not None else cel.ABSENT}
        else:
            if shared is None:
                shared = cr.program.prepare({"self": self_value, "oldSelf": old_value})
            activation = shared
        try:
            result = _evaluate(cr.program, activation, st)
        except cel.CostLimitExceeded as e:
            if st.budget < cel.PER_CALL_LIMIT:
                msg = OUT_OF_BUDGET
            else:
                msg = (
                    f"'{e.message}': no further validation rules will be run due to call cost exceeds limit"
                    f" for rule: {cr.error_string()}"
                )
            st.errs.append(invalid_value(fld, type_name, msg))
            raise _OutOfBudget from None
        except cel.EvaluationError as e:
            if e.message.startswith("no such overload"):
                msg = (
                    f"'{e.message}': call arguments did not match a supported operator, function or macro "
                    f"signature for rule: {cr.error_string()}"
                )
            else:
                msg = f"{e.message} evaluating rule: {cr.error_string()}"
            st.errs.append(invalid_value(fld, type_name, msg))
            continue
        if result is not True:
            _failed(cr, path, fld, type_name, activation, st, ratchet)


def _validate_flat(root: Node, obj: Any, old: Any, st: _State) -> None:
    """The combinable rules of the root and the objects below it, in one evaluation; a rule that
    fails to evaluate sends them all back to the per-node walk (which reports it)."""
    assert root.flat is not None
    reads = root.flat_reads
    value = (
        {k: v for k, v in obj.items() if k in reads} if reads is not None and isinstance(obj, dict) else obj
    )
    try:
        results = root.flat.evaluate({"self": to_cel(value, root.decl), "oldSelf": None}, cost_limit=None)
    except cel.EvaluationError:
        return
    for (node, path), node_results in zip(root.flat_members, results, strict=True):
        st.flat_done.add(id(node))
        if all(r is True for r in node_results):
            continue
        value, old_value = _at(obj, path), _at(old, path)
        activation = {
            "self": to_cel(value, node.decl),
            "oldSelf": to_cel(old_value, node.decl) if old_value is not None else None,
        }
        ratchet = old_value is not None and old_value == value
        fld = ".".join(path) or "<nil>"
        for cr, result in zip(node.combinable, node_results, strict=True):
            if result is not True:
                _failed(cr, ".".join(path), fld, node.type_name, activation, st, ratchet)


def _at(value: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        if not isinstance(value, dict):
            return None
        value = value.get(name)
    return value


def _only(value: Any, node: Node) -> Any:
    """The part of an object the node's rules read (all of it unless they only select fields)."""
    reads = node.reads
    if reads is None or not isinstance(value, dict):
        return value
    escapes = node.decl.escapes
    return {k: v for k, v in value.items() if escapes.get(k, k) in reads}


def _failed(
    cr: CompiledRule,
    path: str,
    fld: str,
    type_name: str,
    activation: Mapping[str, Any],
    st: _State,
    ratchet: bool,
) -> None:
    """The field error of a rule that did not hold (a warning when ratcheted)."""
    err_path = fld if not cr.field_path else _field_path(path, cr.field_path)
    detail = _message(cr, activation, st, err_path, type_name)
    err = _error_for_reason(err_path, type_name, detail, cr.spec.get("reason"))
    if not cr.uses_old_self and ratchet:
        st.warnings.append(err.message())
    else:
        st.errs.append(err)


def _field_path(path: str, rule_path: str) -> str:
    if rule_path.startswith("["):
        return (path or "") + rule_path
    return join_path(path, rule_path)


def _evaluate(prog: cel.Program, activation: Mapping[str, Any], st: _State) -> Any:
    """One evaluation, its cost charged to the request's budget when the CRD needs metering: its
    bound for the object's size while the bounds fit the limits, else its actual cost."""
    if not st.metered:
        return prog.evaluate(activation, cost_limit=None)
    bound = prog.cost_bound(st.object_size)
    if bound <= cel.PER_CALL_LIMIT and bound <= st.budget:
        value = prog.evaluate(activation, cost_limit=None)
        st.budget -= bound
        st.pending.append((prog, activation, bound))
        return value
    st.settle()
    value, cost = prog.evaluate_with_cost(activation, cost_limit=min(cel.PER_CALL_LIMIT, st.budget))
    st.budget -= cost
    return value


def _message(cr: CompiledRule, activation: Mapping[str, Any], st: _State, fld: str, type_name: str) -> str:
    """``evalMessageExpression``: the message expression's text, else the rule's message."""
    if cr.message_program is not None:
        expr = cr.spec.get("messageExpression")
        try:
            value = _evaluate(cr.message_program, activation, st)
        except cel.CostLimitExceeded:
            if st.budget < cel.PER_CALL_LIMIT:
                detail = (
                    "messageExpression evaluation failed due to running out of cost budget, " + _NO_FURTHER
                )
            else:
                detail = (
                    "no further validation rules will be run due to call cost exceeds limit for "
                    f"messageExpression: {go_quote(str(expr))}"
                )
            st.errs.append(invalid_value(fld, type_name, detail))
            raise _OutOfBudget from None
        except cel.EvaluationError as e:
            log.debug("messageExpression evaluation failed", error=e.message)
        else:
            if isinstance(value, str):
                text = value.strip()
                if text and len(text) <= MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES and "\n" not in text:
                    return text
    msg = cr.spec.get("message")
    if isinstance(msg, str) and msg:
        return msg.strip()
    return f"failed rule: {cr.error_string()}"


_REASONS: dict[Any, Callable[[str, str, str], FieldError]] = {
    "FieldValueForbidden": lambda p, _t, d: forbidden(p, d),
    "FieldValueRequired": lambda p, _t, d: required(p, d),
    "FieldValueDuplicate": lambda p, t, _d: duplicate(p, t),
}


def _error_for_reason(path: str, type_name: str, detail: str, reason: Any) -> FieldError:
    make = _REASONS.get(reason)
    return make(path, type_name, detail) if make else invalid_value(path, type_name, detail)
