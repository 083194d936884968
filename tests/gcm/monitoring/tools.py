"""Where the monitoring tests find Prometheus' binaries (not collected: no ``test_`` prefix).

``.ci/run`` puts Debian's ``prometheus`` package's binaries into ``.ci/cache/prometheus/bin``
(``hack/get-prometheus.sh``: ``apt-get download`` and ``dpkg -x``, no root); otherwise they are taken
from PATH. A test that needs one and finds neither is skipped, saying how to get it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MONITORING = ROOT / "manifests" / "monitoring"
CACHE_BIN = ROOT / ".ci" / "cache" / "prometheus" / "bin"


def binary(name: str) -> str:
    """The path of ``prometheus`` or ``promtool``; skips the test when there is none."""
    cached = CACHE_BIN / name
    if cached.is_file():
        return str(cached)
    found = shutil.which(name)
    if found is None:
        pytest.skip(
            f"{name} not found in {CACHE_BIN.relative_to(ROOT)} nor on PATH: run hack/get-prometheus.sh "
            "(Debian's prometheus package via apt-get download, no root) or install Prometheus"
        )
    return found
