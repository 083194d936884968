"""The house's layout (issue 32): ``framework.testing`` holds only what a test suite imports, the API
server lives in ``framework.apiserver``, and nothing under ``framework/`` knows Gardener."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import framework
import framework.testing

FRAMEWORK = Path(framework.__file__).parent
TESTING = Path(framework.testing.__file__).parent
LIMIT = 1500
# Gardener's groups, labels and annotations (``*.gardener.cloud``) and its kinds; citing Gardener's
# source for a behaviour (``Gardener's kubernetes.MergeOwnerReferences``) is fine.
GARDENER = re.compile(
    r"gardener\.cloud|\b(Projects?|Shoots?|Seeds?|Plants?|BackupEntry|SecretBinding|CredentialsBinding)\b"
)
GARDENER_GROUP = re.compile(r"gardener\.cloud")


def test_framework_testing_is_small_and_holds_no_server_code() -> None:
    files = sorted(TESTING.rglob("*.py"))
    assert {p.name for p in files} >= {"__init__.py", "pytest_plugin.py", "polling.py"}
    assert all(p.parent == TESTING for p in files), "no subpackages: the server lives in framework.apiserver"
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files)
    assert lines < LIMIT, f"framework/testing holds {lines} lines"
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("framework.apiserver")
        }
        # Only the public face: the package itself, never its internals.
        assert imported <= {"framework.apiserver"}, f"{path.name} imports {imported}"


def test_nothing_under_framework_names_gardener() -> None:
    # framework/types is generated from Kubernetes' own API docs, where "Projects" is a verb
    # ("Projects an auto-rotating credential bundle ..."): only the group name is a finding there.
    generated = FRAMEWORK / "types"
    named = [
        f"{p.relative_to(FRAMEWORK)}:{n}"
        for p in sorted(FRAMEWORK.rglob("*"))
        if p.is_file() and p.suffix in (".py", ".json")
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if (GARDENER_GROUP if p.is_relative_to(generated) else GARDENER).search(line)
    ]
    assert named == []


def test_the_check_finds_a_gardener_group_or_kind() -> None:
    assert GARDENER.search('GROUP = "core.gardener.cloud"')
    assert GARDENER.search('if rt.kind in ("Project", "Shoot"):')
    assert not GARDENER.search("(as Gardener's ``kubernetes.MergeOwnerReferences`` does)")
