"""How long the test API server takes to start: ``APIServer().__enter__()`` (HTTPS, as the pytest
fixture starts it), median of N starts after one warm-up start, each measured in a fresh subprocess.

Run: ``python bench/fixture_start_bench.py [--starts 15] [--rounds 3] [--baseline REV]``.
With ``--baseline REV`` the same is measured for that git revision (exported to a temp directory)
in alternating rounds, and the ratio new / baseline is printed: both sides share the machine's load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEASURE = r"""
import statistics, sys, time
sys.path.insert(0, sys.argv[1])
from framework.testing import APIServer
with APIServer():
    pass  # imports, the catalog and the CA: what a test session pays once
times = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    server = APIServer()
    server.__enter__()
    times.append(time.perf_counter() - t)
    server.__exit__(None, None, None)
print(statistics.median(times) * 1000)
"""


def measure(tree: Path, starts: int) -> float:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(tree), str(starts)], capture_output=True, text=True, check=True
    ).stdout
    return float(out.split()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--starts", type=int, default=15, help="starts per round (median taken)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--baseline", metavar="REV", help="also measure this git revision, alternating")
    args = p.parse_args()
    trees = {"current": ROOT}
    with tempfile.TemporaryDirectory() as tmp:
        if args.baseline:
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.baseline], capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            trees["baseline"] = Path(tmp)
        figures: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                figures[name].append(measure(tree, args.starts))
        for name, values in figures.items():
            rounds = ", ".join(f"{v:.1f}" for v in values)
            print(f"{name:9} start median {statistics.median(values):6.1f} ms  (rounds: {rounds})")
        if args.baseline:
            ratio = statistics.median(figures["current"]) / statistics.median(figures["baseline"])
            print(f"current / baseline: {ratio:.2f}")


if __name__ == "__main__":
    main()
