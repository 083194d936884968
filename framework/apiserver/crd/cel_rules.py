"""The ``x-kubernetes-validations`` rules of a structural schema, compiled (as
k8s.io/apiextensions-apiserver's ``pkg/apiserver/schema/cel``): the CEL type of each schema node
(``model.SchemaDeclType``), one compiled program per rule and message expression, rule field paths,
and the cost bounds the validator meters by (the CRD's checks of the rules are ``cel_definition``'s).

``rule_tree(schema)`` gives the compiled tree the validator walks (``cel_validation``); it is cached
per schema object, as kube-apiserver compiles a CRD's rules once per version.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from framework.apiserver import cel
from framework.apiserver.cel import types as ct
from framework.apiserver.crd.values import (
    EMBEDDED,
    INT_OR_STRING,
    PRESERVE,
    has_rules,
    join_path,
    schema_type,
)

# apiextensions-apiserver's validation.go
STATIC_ESTIMATED_COST_LIMIT = 10_000_000
STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000
SUPPORTED_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]
MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES = 5 * 1024

NEWLINES = re.compile(r"[\n\r]+")


@dataclass
class CompiledRule:
    """One entry of ``x-kubernetes-validations`` with its programs. ``error`` is the compile
    problem's detail (``compilation failed: ...``) when the rule does not compile."""

    index: int
    spec: dict
    program: cel.Program | None = None
    message_program: cel.Program | None = None
    error: str | None = None
    message_error: str | None = None
    uses_old_self: bool = False
    field_path: str = ""

    @property
    def rule(self) -> str:
        return str(self.spec.get("rule") or "")

    @property
    def optional_old_self(self) -> bool:
        return self.spec.get("optionalOldSelf") is True

    def error_string(self) -> str:
        """``ruleErrorString``: the message if any, else the rule."""
        msg = self.spec.get("message")
        return msg.strip() if isinstance(msg, str) and msg else self.rule.strip()


@dataclass
class Node:
    """A schema node on the path to some rule (nodes without rules below them are left out)."""

    schema: dict
    decl: ct.DeclType
    rules: list[CompiledRule] = field(default_factory=list)
    properties: dict[str, Node] = field(default_factory=dict)
    items: Node | None = None
    additional: Node | None = None
    is_resource_root: bool = False
    # The most all rules here and below can cost on one object (None: unbounded), set on the root.
    cost_bound: int | None = None
    # The rules without oldSelf as one program returning the list of their results: one evaluation
    # (one conversion of ``self``) for all of them where no cost is metered.
    combined: cel.Program | None = None
    combined_rules: list[CompiledRule] = field(default_factory=list)
    # the fields of self/oldSelf the rules read, when they only select fields (None: all of it)
    reads: frozenset[str] | None = None
    # the rules without oldSelf (those ``combined`` holds when there are two or more)
    combinable: list[CompiledRule] = field(default_factory=list)
    # on the root: the combinable rules of the root and of the objects below it through properties,
    # as one program returning one list of results per member (``flat_members``: the node and its
    # property path), so that an object's rules outside lists and maps take one evaluation
    flat: cel.Program | None = None
    flat_members: list[tuple[Node, tuple[str, ...]]] = field(default_factory=list)
    flat_reads: frozenset[str] | None = None

    @property
    def type_name(self) -> str:
        """The schema's ``type``, the bad value kube-apiserver reports (``Invalid value: "object"``)."""
        return schema_type(self.schema)

    @property
    def list_type(self) -> str:
        return str(self.schema.get("x-kubernetes-list-type") or "atomic")

    @property
    def map_keys(self) -> list[str]:
        return [k for k in self.schema.get("x-kubernetes-list-map-keys") or [] if isinstance(k, str)]

    @property
    def correlatable_map(self) -> bool:
        """``MapIsCorrelatable``: only an atomic map's properties have no old values."""
        return self.schema.get("x-kubernetes-map-type") != "atomic"


# --- declared types (model.SchemaDeclType) -----------------------------------------------------------

_META_DECL = ct.DeclType.object_of({"name": ct.STRING_TYPE, "generateName": ct.STRING_TYPE})


def decl_type(s: dict, is_resource_root: bool = False) -> ct.DeclType:
    """The CEL type of values of schema ``s`` with the bounds the cost estimate uses."""
    if s.get(INT_OR_STRING) is True:
        return ct.DeclType(ct.DYN, min_serialized_size=1)
    stype = schema_type(s)
    if stype == "array":
        items: dict = s["items"] if isinstance(s.get("items"), dict) else {}
        return ct.DeclType.list_of(
            decl_type(items, items.get(EMBEDDED) is True), int_or_none(s.get("maxItems"))
        )
    if stype == "object" or (not stype and (s.get("properties") or is_resource_root)):
        props: dict = s["properties"] if isinstance(s.get("properties"), dict) else {}
        addl = s.get("additionalProperties")
        if isinstance(addl, dict) and not props:
            return ct.DeclType.map_of(
                decl_type(addl, addl.get(EMBEDDED) is True), int_or_none(s.get("maxProperties"))
            )
        if not props and s.get(PRESERVE) is True and not is_resource_root:
            return ct.DeclType(ct.DYN, min_serialized_size=2)
        fields = {k: decl_type(v, v.get(EMBEDDED) is True) for k, v in props.items() if isinstance(v, dict)}
        if is_resource_root:
            fields["apiVersion"] = ct.STRING_TYPE
            fields["kind"] = ct.STRING_TYPE
            fields["metadata"] = _META_DECL
        return ct.DeclType.object_of(fields, int_or_none(s.get("maxProperties")))
    if stype == "string":
        fmt = s.get("format")
        if fmt == "byte":
            return ct.DeclType(ct.BYTES, max_elements=int_or_none(s.get("maxLength")), min_serialized_size=2)
        if fmt == "duration":
            return ct.DURATION_TYPE
        if fmt in ("date", "date-time"):
            return ct.TIMESTAMP_TYPE
        return ct.DeclType.string(int_or_none(s.get("maxLength")))
    if stype == "integer":
        return ct.INT_TYPE
    if stype == "number":
        return ct.DOUBLE_TYPE
    if stype == "boolean":
        return ct.BOOL_TYPE
    return ct.DYN_TYPE


def int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


# --- compiling ---------------------------------------------------------------------------------------

_OLD_SELF_NAMES = frozenset({"oldSelf", "__opt_oldSelf_value", "__opt_oldSelf_set"})
_OLD_SELF = re.compile(r"\boldSelf\b")
_STRING_LITERAL = re.compile(
    r"""(?s)[rRbB]*('''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")"""
)


def _uses_old_self(expression: str) -> bool:
    return bool(_OLD_SELF.search(_STRING_LITERAL.sub("''", expression)))


def _compile(
    expression: str,
    variables: dict[str, ct.DeclType | None],
    optional: tuple[str, ...],
    what: str,
    output: str,
) -> tuple[cel.Program | None, str | None]:
    """The program and, when it does not compile or its type is not ``output``, kube's detail
    (``compilation failed: ...``, ``cel expression must evaluate to a bool``)."""
    try:
        prog = cel.compile(expression, variables=variables, optional_variables=optional)
    except cel.CompileError as e:
        return None, f"{what}compilation failed: {e.message}"
    if prog.output_type not in (output, "dyn"):
        return prog, f"{what or 'cel expression '}must evaluate to a {output}"
    return prog, None


def compile_rule(index: int, spec: dict, decl: ct.DeclType) -> CompiledRule:
    """``cel.Compile`` of one rule: the program, its message expression, whether it is a
    transition rule, and kube's detail for a rule that does not compile."""
    cr = CompiledRule(index, spec)
    rule = cr.rule
    if not rule.strip():
        return cr
    cr.uses_old_self = _uses_old_self(rule)
    optional = ("oldSelf",) if cr.optional_old_self else ()
    variables: dict[str, ct.DeclType | None] = {"self": decl, "oldSelf": decl}
    prog, cr.error = _compile(rule, variables, optional, "", "bool")
    if prog is not None:
        cr.program = prog if cr.error is None else None
        cr.uses_old_self = bool(prog.identifiers & _OLD_SELF_NAMES)
    msg_expr = spec.get("messageExpression")
    if isinstance(msg_expr, str) and msg_expr.strip():
        mprog, cr.message_error = _compile(msg_expr, variables, optional, "messageExpression ", "string")
        cr.message_program = mprog if cr.message_error is None else None
    fp = spec.get("fieldPath")
    if isinstance(fp, str) and fp.strip():
        cr.field_path = normalize_field_path(fp) or ""
    return cr


def _reads(node: Node) -> frozenset[str] | None:
    if node.decl.name != ct.OBJECT:
        return None
    reads: set[str] = set()
    for cr in node.rules:
        for prog in (cr.program, cr.message_program):
            if prog is None:
                continue
            fields = prog.selected_fields("self", "oldSelf")
            if fields is None:
                return None
            reads |= fields
    return frozenset(reads)


def _combine(node: Node) -> None:
    rules = [
        cr
        for cr in node.rules
        if cr.program is not None and not cr.uses_old_self and not cr.optional_old_self
    ]
    node.combinable = rules
    if len(rules) < 2:
        return
    # each rule on lines of its own: a trailing // comment ends at its line
    source = "[" + ",".join(f"(\n{cr.rule}\n)" for cr in rules) + "]"
    try:
        node.combined = cel.compile(
            source, variables={"self": node.decl, "oldSelf": node.decl}, cost_limit=None
        )
    except cel.CompileError:
        return
    node.combined_rules = rules


def build_tree(s: dict, is_resource_root: bool = True) -> Node | None:
    """The compiled rules of schema ``s`` and below, or ``None`` when there are none."""
    decl = decl_type(s, is_resource_root)
    node = Node(s, decl, is_resource_root=is_resource_root)
    for i, spec in enumerate(s.get("x-kubernetes-validations") or []):
        if isinstance(spec, dict):
            node.rules.append(compile_rule(i, spec, decl))
    _combine(node)
    node.reads = _reads(node)
    props = s.get("properties")
    if isinstance(props, dict):
        for k, v in props.items():
            if isinstance(v, dict):
                child = build_tree(v, v.get(EMBEDDED) is True)
                if child is not None:
                    node.properties[k] = child
    items = s.get("items")
    if isinstance(items, dict):
        node.items = build_tree(items, items.get(EMBEDDED) is True)
    addl = s.get("additionalProperties")
    if isinstance(addl, dict):
        node.additional = build_tree(addl, addl.get(EMBEDDED) is True)
    if node.rules or node.properties or node.items or node.additional:
        return node
    return None


_cache: OrderedDict[int, tuple[dict, Node | None]] = OrderedDict()
_cache_lock = threading.Lock()


def rule_tree(schema: dict) -> Node | None:
    """``build_tree`` of a CRD version's schema, compiled once per schema object."""
    key = id(schema)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] is schema:
            _cache.move_to_end(key)
            return hit[1]
    tree = build_tree(schema) if has_rules(schema) else None
    if tree is not None:
        tree.cost_bound = _cost_bound(tree, 1)
        _flatten(tree)
    with _cache_lock:
        _cache[key] = (schema, tree)
        while len(_cache) > 256:
            _cache.popitem(last=False)
    return tree


def _flat_members(node: Node, path: tuple[str, ...], out: list[tuple[Node, tuple[str, ...]]]) -> None:
    if node.combinable:
        out.append((node, path))
    for name, child in node.properties.items():
        # through objects only: list items and map values are many, an embedded resource is a root
        if child.decl.name == ct.OBJECT and not child.is_resource_root:
            _flat_members(child, (*path, name), out)


def _flatten(root: Node) -> None:
    members: list[tuple[Node, tuple[str, ...]]] = []
    _flat_members(root, (), members)
    if len(members) < 2:
        return
    parts = []
    for node, path in members:
        rules = "[" + ",".join(f"(\n{cr.rule}\n)" for cr in node.combinable) + "]"
        if not path:
            parts.append(rules)
            continue
        conds, access, decl = [], "self", root.decl
        for name in path:
            access += "." + decl.escapes.get(name, name)
            decl = decl.fields[decl.escapes.get(name, name)]
            conds.append(f"has({access}) && {access} != null")
        parts.append(f"({' && '.join(conds)}) ? cel.bind(self, {access}, {rules}) : []")
    try:
        prog = cel.compile(
            "[" + ",\n".join(parts) + "]",
            variables={"self": root.decl, "oldSelf": root.decl},
            cost_limit=None,
        )
    except cel.CompileError:
        return
    root.flat, root.flat_members = prog, members
    root.flat_reads = prog.selected_fields("self")


def mul_bound(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a * b


def _cost_bound(node: Node, cardinality: int | None) -> int | None:
    """Σ of each rule's (and message expression's) estimated cost times how many values its node
    can have in one object; None when some node's count is unbounded (no maxItems/maxProperties)."""
    total = 0
    for cr in node.rules:
        for prog in (cr.program, cr.message_program):
            if prog is not None:
                if cardinality is None or prog.estimated_cost.max > cel.PER_CALL_LIMIT:
                    return None  # unbounded, or one evaluation could pass the per-call limit
                total += prog.estimated_cost.max * cardinality
    children: list[tuple[Node | None, int | None]] = [(n, cardinality) for n in node.properties.values()]
    children.append((node.items, mul_bound(cardinality, int_or_none(node.schema.get("maxItems")))))
    children.append((node.additional, mul_bound(cardinality, int_or_none(node.schema.get("maxProperties")))))
    for child, card in children:
        if child is None:
            continue
        sub = _cost_bound(child, card)
        if sub is None:
            return None
        total += sub
    return total


# --- fieldPath (ValidFieldPath) ------------------------------------------------------------------------

_PATH_TOKEN = re.compile(r"\.([^.\[\]]+)|\[('(?:\\.|[^'\\])*')\]")
_UNESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "'": "'",
    "\\": "\\",
}


def parse_field_path(path: str) -> list[tuple[str, bool]] | None:
    """The steps of a rule's ``fieldPath`` (``.a.b``, ``['key']``): (name, bracketed), or None."""
    steps: list[tuple[str, bool]] = []
    pos = 0
    while pos < len(path):
        m = _PATH_TOKEN.match(path, pos)
        if m is None:
            return None
        if m.group(1) is not None:
            steps.append((m.group(1), False))
        else:
            raw = m.group(2)[1:-1]
            out, i = [], 0
            while i < len(raw):
                if raw[i] == "\\" and i + 1 < len(raw):
                    if raw[i + 1] not in _UNESCAPES:
                        return None
                    out.append(_UNESCAPES[raw[i + 1]])
                    i += 2
                else:
                    out.append(raw[i])
                    i += 1
            steps.append(("".join(out), True))
        pos = m.end()
    return steps


def valid_field_path(path: str, s: dict) -> list[str] | None:
    """The field-path elements of ``path`` if every step names a property (or a map key) of
    schema ``s`` (``ValidFieldPath``), else None."""
    steps = parse_field_path(path)
    if steps is None:
        return None
    out: list[str] = []
    cur = s
    for name, bracketed in steps:
        props = cur.get("properties")
        addl = cur.get("additionalProperties")
        if isinstance(props, dict) and props:
            if name not in props or not isinstance(props[name], dict):
                return None
            out.append(name)
            cur = props[name]
        elif isinstance(addl, dict):
            out.append(f"[{name}]")
            cur = addl
        else:
            return None
        del bracketed
    return out


def normalize_field_path(path: str) -> str | None:
    steps = parse_field_path(path)
    if steps is None:
        return None
    text = ""
    for name, bracketed in steps:
        text = text + f"[{name}]" if bracketed else join_path(text, name)
    return text
