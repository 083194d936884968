"""Helpers of the scaffold tests: run ``python -m framework`` commands in a directory, and check that a
refused command names why and changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from framework.__main__ import main

ROOT = Path(__file__).resolve().parents[3]


def run(monkeypatch: pytest.MonkeyPatch, cwd: Path, *argv: str) -> int:
    """``python -m framework ARGV`` in ``cwd``; its exit code."""
    monkeypatch.chdir(cwd)
    return main(list(argv))


def scaffold(root: Path, *commands: list[str]) -> Path:
    """Run each command in ``root`` (each must succeed); ``root``."""
    with pytest.MonkeyPatch.context() as mp:
        for argv in commands:
            assert run(mp, root, *argv) == 0, argv
    return root


def assert_refused(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    """The command exits 2 with ``error: MESSAGE`` and leaves every file of ``project`` as it was."""
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert run(monkeypatch, project, *argv) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before
