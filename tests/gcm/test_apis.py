"""Gardener's API names are spelled once: in ``gcm.apis.constants`` (the configuration's own group in
``gcm.config.types``), never again in another ``gcm`` module (docstrings aside)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import gcm
from gcm.apis import constants

ROOT = Path(gcm.__file__).parent
CONSTANTS = Path(constants.__file__)


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def string_literals() -> dict[str, set[Path]]:
    """Every string literal (f-string parts included, docstrings not) of every gcm module -> files."""
    found: dict[str, set[Path]] = defaultdict(set)
    for path in ROOT.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                found[node.value].add(path)
    return found


def gardener_names() -> dict[str, str]:
    """The string constants of gcm.apis.constants that name a Gardener API object or key."""
    return {
        name: value
        for name, value in vars(constants).items()
        if name.isupper() and isinstance(value, str) and ("gardener" in value or name.startswith("FINALIZER"))
    }


def test_each_gardener_domain_string_is_spelled_in_exactly_one_file():
    literals = string_literals()
    spelled = {v: files for v, files in literals.items() if "gardener.cloud" in v}
    assert spelled, "the scan found no Gardener strings at all"
    twice = {
        v: sorted(str(f.relative_to(ROOT)) for f in files) for v, files in spelled.items() if len(files) != 1
    }
    assert twice == {}


def test_gardener_labels_annotations_api_versions_and_finalizer_live_in_gcm_apis():
    literals = string_literals()
    names = gardener_names()
    for key in ("LABEL_PROJECT_NAME", "LABEL_ROLE", "ANNOTATION_NAMESPACE_PROJECT", "FINALIZER_GARDENER"):
        assert key in names
    elsewhere = {
        name: sorted(str(f.relative_to(ROOT)) for f in literals.get(value, set()) if f != CONSTANTS)
        for name, value in names.items()
    }
    assert {name: files for name, files in elsewhere.items() if files} == {}
    # The API versions are built from their groups, the kinds from the API versions: each group once.
    assert literals[constants.GROUP_CORE] == {CONSTANTS}
    assert literals[constants.GROUP_SECURITY] == {CONSTANTS}
    for kind in (constants.PROJECT, constants.SHOOT, constants.CREDENTIALS_BINDING):
        assert literals[kind[1]] == {CONSTANTS}, kind
