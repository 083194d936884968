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
            "framework.apiserver",
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
        f"python -m framework.apiserver: --request-log {tmp_path / 'missing' / 'log.jsonl'}: "
        "No such file or directory"
    ]


def _checker(tmp_path: Path, entries: list[dict], pauses: dict[str, list[list[float]]]):
    """A Chaos whose checker reads ``entries`` as its request log, with ``pauses`` as recorded."""
    import argparse
    import json
    import shutil

    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import chaos
    finally:
        sys.path.pop(0)
    run = chaos.Chaos(argparse.Namespace(seed=1, minutes=1.0, replicas=1))
    shutil.rmtree(run.dir)  # the checker reads only the log given here
    run.request_log = tmp_path / "requests.jsonl"
    run.request_log.write_text("".join(json.dumps(e) + "\n" for e in entries))
    run.world.pauses = pauses
    return run, chaos


def _lease_and_write(code: int, write_t: float) -> list[dict]:
    user = "system:serviceaccount:garden:gcm-0"
    lease = {"ns": "garden", "name": "gardener-controller-manager-leader-election"}
    return [
        {
            "t": 100.0,
            "end": 100.1,
            "user": user,
            "verb": "update",
            "resource": "leases.coordination.k8s.io",
            "code": 200,
            "holder": "0-abc",
            "duration": 15,
            **lease,
        },
        {
            "t": write_t,
            "end": write_t + 0.01,
            "user": user,
            "verb": "create",
            "resource": "events",
            "ns": "garden-p",
            "name": "e1",
            "code": code,
        },
    ]


@pytest.mark.parametrize(
    ("code", "paused", "violation"),
    [
        (429, True, False),  # passed the lease check, stopped in flight, refused: a note
        (429, False, True),  # sent late with no pause to explain it: a guard bug
        (201, True, True),  # written after the term: unsafe whatever the reason
    ],
)
def test_a_late_write_is_a_violation_unless_refused_after_a_pause_in_flight(
    tmp_path: Path, code: int, paused: bool, violation: bool
) -> None:
    pauses = {"system:serviceaccount:garden:gcm-0": [[110.0, 117.0]]} if paused else {}
    run, _ = _checker(tmp_path, _lease_and_write(code, 117.5), pauses)
    assert run.check_log() == 1
    late = [text for text, _ in run.violations if "after its lease expired" in text]
    notes = [n for n in run.notes if "paused in flight" in n]
    assert (len(late), len(notes)) == ((1, 0) if violation else (0, 1)), (run.violations, run.notes)


def test_a_write_within_the_term_is_no_violation(tmp_path: Path) -> None:
    run, _ = _checker(tmp_path, _lease_and_write(201, 110.0), {})
    assert run.check_log() == 1
    assert run.violations == [] and run.notes == []


@pytest.mark.parametrize("stamped", [True, False])
def test_a_project_deleted_at_once_is_checked_against_its_last_answered_timestamp(
    tmp_path: Path, stamped: bool
) -> None:
    """A Project without finalizers is gone with its DELETE, whose answer (a Status) carries no
    staleAutoDeleteTimestamp: the stamp is the one the last write of that Project answered."""
    user = "system:serviceaccount:garden:gcm-0"
    lease, status = _lease_and_write(200, 101.0)
    status.update(resource="projects.core.gardener.cloud/status", verb="patch", ns=None, name="p1")
    status["staleAutoDelete"] = "1970-01-01T00:00:00Z" if stamped else None  # due before t=102
    delete = {"t": 102.0, "end": 102.01, "user": user, "verb": "delete", "ns": None, "name": "p1",
              "resource": "projects.core.gardener.cloud", "code": 200}  # fmt: skip
    run, _ = _checker(tmp_path, [lease, status, delete], {})
    run.check_log()
    texts = [text for text, _ in run.violations]
    assert texts == ([] if stamped else [f"{user} deleted Project p1 without an auto-delete timestamp"])
