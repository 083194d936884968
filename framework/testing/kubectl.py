"""Run the real ``kubectl`` against a test API server, isolated from the user's environment.

``HOME`` and the working directory are a test's own directory (so kubectl's discovery cache is per
test), ``KUBE*`` variables are dropped, stdin is closed and every process has a timeout::

    def test_get(apiserver, tmp_path):
        kubectl = Kubectl(apiserver.kubeconfig, tmp_path)
        assert kubectl.json("get", "namespace", "default")["status"]["phase"] == "Active"
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
TIMEOUT = 30.0  # seconds, for every kubectl process


class Kubectl:
    """``kubectl --kubeconfig KUBECONFIG`` with ``HOME`` and the working directory set to ``home``."""

    def __init__(
        self, kubeconfig: str | os.PathLike, home: str | os.PathLike, timeout: float = TIMEOUT
    ) -> None:
        self.home = Path(home)
        self.timeout = timeout
        self.base = [KUBECTL, "--kubeconfig", str(kubeconfig)]
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {
            "HOME": str(self.home)
        }
        self.procs: list[subprocess.Popen] = []

    def run(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*self.base, *args],
            env=self.env,
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=self.timeout,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
        )

    def ok(self, *args: str, input: str | None = None) -> str:
        """Run a command that must succeed; return its stdout."""
        r = self.run(*args, input=input)
        assert r.returncode == 0, f"kubectl {' '.join(args)} exited {r.returncode}\n{r.stdout}\n{r.stderr}"
        return r.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "-o", "json"))

    def fails(self, *args: str, input: str | None = None) -> str:
        """Run a command that must fail; return its stderr."""
        r = self.run(*args, input=input)
        assert r.returncode != 0, f"kubectl {' '.join(args)} unexpectedly succeeded\n{r.stdout}\n{r.stderr}"
        return r.stderr

    def popen(self, *args: str) -> subprocess.Popen:
        """A long-running kubectl (``get -w``, ``wait``); :meth:`close` kills what is left."""
        proc = subprocess.Popen(
            [*self.base, *args],
            env=self.env,
            cwd=self.home,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.procs.append(proc)
        return proc

    def write(self, name: str, *docs: dict) -> str:
        """Write a manifest into the working directory; return its (relative) file name."""
        (self.home / name).write_text(yaml.safe_dump_all(docs))
        return name

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=self.timeout)
