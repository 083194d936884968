"""docs/extension-guide.md, "From zero to a running operator": every ``sh walkthrough`` block runs, in
order, as one bash script in an empty directory; the script fails at the first command that fails."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from framework.testing import free_port

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "extension-guide.md"


def walkthrough_blocks(text: str) -> list[str]:
    return re.findall(r"^```sh walkthrough\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


def test_the_walkthrough_runs_command_by_command(tmp_path):
    blocks = walkthrough_blocks(GUIDE.read_text())
    script = "\n".join(blocks)
    for command in (
        "python -m framework init",
        "python -m framework create api",
        "python -m framework create webhook",
        "--kind Memcached --no-controller",
        "--conversion --spoke v1beta1",
        "tests/test_memcached_conversion.py",
        "python -m framework generate\n",
        "python -m pytest",
        "python -m framework.apiserver",
        "python -m memcached_operator",
        "kubectl --kubeconfig kubeconfig wait memcached/memcached-sample --for=condition=Ready",
    ):
        assert command in script, f"the walkthrough lost `{command.strip()}`"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE", "PYTEST", "FRAMEWORK_PATH"))}
    env.update(
        # `python` is this interpreter; the framework is this checkout (as if installed).
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(ROOT),
        HOME=str(tmp_path),
        WEBHOOK_PORT=str(free_port()),
    )
    wrapped = (
        "set -euo pipefail\n"
        # Background processes (the API server, the manager) are stopped with SIGTERM at the end.
        "trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT\n" + script
    )
    run = subprocess.run(
        ["bash", "-c", wrapped], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=150
    )
    assert run.returncode == 0, f"stdout:\n{run.stdout[-4000:]}\nstderr:\n{run.stderr[-4000:]}"
    # The project's own tests, then its conversion test after the second version was added.
    assert len(re.findall(r"^\d+ passed", run.stdout, flags=re.MULTILINE)) == 2, run.stdout
    assert "An example field of Memcached" in run.stdout  # kubectl explain shows the field's docstring
    assert "memcached.cache.example.com/memcached-sample condition met" in run.stdout
