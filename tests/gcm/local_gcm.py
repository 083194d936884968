"""Helpers for tests that run ``python -m gcm`` as a process of its own (imported as
``tests.gcm.local_gcm``; not collected): a configuration with every listener on a free loopback port,
and the process started with this checkout's gcm and no ``KUBE*`` variables from the caller."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3
import yaml

from framework.testing import free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Listeners:
    """The ports of the configuration :func:`write_config` wrote."""

    probes: int
    metrics: int
    webhooks: int


def write_config(directory: Path, name: str = "config.yaml", **extra: Any) -> tuple[Path, Listeners]:
    """A ControllerManagerConfiguration with health probes, metrics and webhooks on free 127.0.0.1
    ports (not the defaults: tests run next to each other), plus the top-level fields ``extra``."""
    ports = Listeners(free_port(), free_port(), free_port())
    cfg = {
        "apiVersion": "controllermanager.config.gardener.cloud/v1alpha1",
        "kind": "ControllerManagerConfiguration",
        "server": {
            "healthProbes": {"bindAddress": "127.0.0.1", "port": ports.probes},
            "metrics": {"bindAddress": "127.0.0.1", "port": ports.metrics},
            "webhooks": {"bindAddress": "127.0.0.1", "port": ports.webhooks},
        },
        **extra,
    }
    path = directory / name
    path.write_text(yaml.safe_dump(cfg))
    return path, ports


def start(home: Path, *args: str, log: Path) -> subprocess.Popen:
    """``python -m gcm ARGS`` in ``home`` (also its HOME), this checkout's gcm first on the path,
    output to ``log``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
    env |= {"HOME": str(home), "PYTHONPATH": str(ROOT)}
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "gcm", *args], cwd=home, env=env, stdout=out, stderr=subprocess.STDOUT
        )


def answers(url: str) -> bool:
    """Whether a GET of ``url`` answers 200 now (a probe like ``/readyz``; no answer is False)."""
    try:
        return urllib3.request("GET", url, timeout=1, retries=False).status == 200
    except urllib3.exceptions.HTTPError:
        return False
