"""docs/extension-guide.md shows only code the test suite runs, links what exists, and maps every
controllerutil helper."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import framework.controllerutil

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "extension-guide.md"
# Files whose code runs in tests: the examples (tests/docs loads each) and the docs tests themselves.
RUN_SOURCES = [
    *sorted((ROOT / "docs" / "examples").glob("*.py")),
    *sorted((ROOT / "tests" / "docs").glob("*.py")),
]


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


def code_lines(text: str) -> list[str]:
    """Non-blank lines, right-stripped (ruff formats the guide's blocks at top level: blank lines and
    indentation differ from the excerpted file)."""
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def dedented(lines: list[str]) -> list[str]:
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    return [line[indent:] for line in lines]


def excerpt_of(block: str, source: str) -> bool:
    """Whether ``block`` is a run of ``source``'s lines, re-indented as a whole."""
    want, have = dedented(code_lines(block)), code_lines(source)
    return any(dedented(have[i : i + len(want)]) == want for i in range(len(have) - len(want) + 1))


def test_every_python_block_is_code_a_test_runs():
    blocks = python_blocks(GUIDE.read_text())
    assert len(blocks) >= 8
    sources = [p.read_text() for p in RUN_SOURCES]
    for block in blocks:
        assert any(excerpt_of(block, source) for source in sources), (
            f"this guide block is not code from docs/examples or tests/docs:\n{block}"
        )


def test_every_example_file_is_run_by_a_test():
    tests = "".join(p.read_text() for p in (ROOT / "tests" / "docs").glob("test_*.py"))
    for example in (ROOT / "docs" / "examples").iterdir():
        assert example.name in tests or example.stem in tests, f"no test loads docs/examples/{example.name}"


def test_links_resolve():
    text = GUIDE.read_text()
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if target.startswith("http"):
            continue
        assert (GUIDE.parent / target).exists(), target


def test_the_table_maps_every_controllerutil_helper():
    text = GUIDE.read_text()
    table = text[text.index("## controller-runtime → framework") :]
    for name in framework.controllerutil.__all__:
        if name == "MutateFn":
            continue
        assert re.search(rf"\b{name}\b", table), f"{name} missing from the controller-runtime table"


def test_logging_setup_merges_the_reconcile_context():
    example = str(ROOT / "docs" / "examples" / "labeler.py")
    code = (
        "import importlib.util, structlog, sys\n"
        f"spec = importlib.util.spec_from_file_location('labeler', {example!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "m.configure_logging()\n"
        "structlog.contextvars.bind_contextvars(controller='mirror', name='cfg')\n"
        "structlog.get_logger('x').info('config written', operation='created')\n"
        "structlog.get_logger('x').debug('not shown')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(lines) == 1
    (line,) = lines
    assert line["event"] == "config written" and line["level"] == "info"
    assert (line["controller"], line["name"], line["operation"]) == ("mirror", "cfg", "created")
