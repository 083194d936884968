"""The 60-second fixed-seed chaos run (issue 19): three gcm replicas under faults, then the checker.

Runs ``bench/chaos.py`` as an operator would and reads its figure line. The convergence bound is
generous (a loaded 2-core machine is slow, not wrong); the invariants themselves are exact.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(900)
def test_sixty_seconds_of_chaos_with_three_replicas_break_no_invariant() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "bench/chaos.py",
            "--seed",
            "19",
            "--minutes",
            "1",
            "--replicas",
            "3",
            "--convergence-s",
            "300",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    lines = proc.stdout.strip().splitlines()
    assert lines, proc.stderr[-3000:]
    figure = lines[-1]
    assert re.fullmatch(
        r"chaos seed=19 minutes=1 faults=\d+ writes=\d+ violations=\d+ unconverged=\d+"
        r" max_convergence_s=[\d.]+",
        figure,
    ), proc.stdout[-3000:]
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert " violations=0 unconverged=0 " in figure
    assert int(re.search(r"faults=(\d+)", figure).group(1)) > 0
    assert int(re.search(r"writes=(\d+)", figure).group(1)) > 0


def test_request_log_file_that_cannot_be_opened_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "framework.testing.apiserver",
            "--port",
            "0",
            "--kubeconfig",
            str(tmp_path / "kc"),
            "--request-log",
            str(tmp_path / "missing" / "log.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"python -m framework.testing.apiserver: --request-log {tmp_path / 'missing' / 'log.jsonl'}: "
        "No such file or directory"
    ]
