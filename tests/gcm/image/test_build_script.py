"""``hack/build-image.sh`` (issue 17 §2) without building: its arguments. The build itself is exercised
by running it (``pytest -m image`` needs the image it makes)."""

from __future__ import annotations

import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "hack" / "build-image.sh"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=30)


def test_script_parses():
    r = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr


def test_help_describes_the_build():
    r = _run("--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Builds gcm's container image, localhost/gcm:dev")
    assert "--rebuild-base" in r.stdout and "debootstrap --variant=minbase bookworm" in r.stdout
    assert r.stdout.rstrip().endswith("MIRROR (default http://deb.debian.org/debian).")


def test_unknown_argument_exits_2_naming_it():
    r = _run("--rebuild")
    assert r.returncode == 2
    assert r.stderr == "build-image.sh: unknown argument '--rebuild' (see --help)\n"
    assert r.stdout == ""
