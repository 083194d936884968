"""Generic modules of the API server name no built-in kind (issue 18): what the server knows about a
kind lives in its strategy (``kinds/<group>/<kind>.py``), and the generic code asks ``rt.<field>``.

The check reads the modules' string literals (docstrings and comments aside) and fails on any that is
a built-in kind's name, the way a ``("", "Namespace"): ...`` dispatch table or a ``kind == "Secret"``
branch would spell it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import framework.testing.apiserver as apiserver_pkg
from framework.testing.apiserver.catalog import builtin_resources
from framework.testing.apiserver.kinds import builtin_strategies

ROOT = Path(apiserver_pkg.__file__).parent

# The generic modules held to the rule so far; the list only grows.
CHECKED = ("validation.py", "decoding.py", "managed_fields")

# Literals that name a kind in a rule about that kind's *references*, not a dispatch on the served kind.
ALLOWED = {
    # ValidateOwnerReferences: a core/v1 Event may not be an owner, whatever kind is validated.
    ("validation.py", "Event"),
}


def _kind_names() -> set[str]:
    kinds = {e.kind for e in builtin_resources()} | {rt.kind for rt in builtin_strategies()}
    assert {"Namespace", "Pod", "Secret", "Role"} <= kinds  # the catalog was read
    return kinds


def _string_literals(tree: ast.AST) -> set[str]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    }


def _modules() -> list[str]:
    out: list[str] = []
    for name in CHECKED:
        path = ROOT / name
        out.extend(
            [str(p.relative_to(ROOT)) for p in sorted(path.rglob("*.py"))] if path.is_dir() else [name]
        )
    return out


@pytest.mark.parametrize("module", _modules())
def test_generic_module_names_no_builtin_kind(module: str) -> None:
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    named = sorted(s for s in _string_literals(tree) & _kind_names() if (module, s) not in ALLOWED)
    assert named == [], f"{module} spells built-in kinds {named}: declare it in the kinds' strategies"


def test_the_check_sees_a_kind_table() -> None:
    # The same reading finds the names in a dispatch table, so a passing module really has none.
    tree = ast.parse('SHAPES = {("", "Namespace"): 1}\nif kind == "Secret":\n    pass\n')
    assert _string_literals(tree) & _kind_names() == {"Namespace", "Secret"}
