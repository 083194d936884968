"""Every module of ``framework`` and ``gcm`` imports on its own in a fresh interpreter (no import
cycles, no reliance on another module having been imported first), and no production module pulls in
``framework.testing`` or (for ``framework``) ``gcm``.

One subprocess preloads the third-party modules (they are not what is tested and make up most of
the import time), then forks one child per module, a few at a time: each child starts without any
``framework``/``gcm`` module loaded and imports exactly one.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
import textwrap

import pytest

import framework
import gcm

# gcm --embedded runs the test API server on purpose (imported lazily by gcm.__main__).
MAY_IMPORT_TESTING = ("framework.testing", "gcm.embedded")

CHILD = textwrap.dedent(
    """
    import json, os, sys, traceback

    modules, may_import_testing = json.loads(sys.argv[1]), tuple(json.loads(sys.argv[2]))
    ours = ("framework", "gcm")


    def is_ours(name):
        return name.split(".")[0] in ours


    def fork(job):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            try:
                result = job()
            except BaseException:
                result = traceback.format_exc()
            os.write(write, result.encode()[:60000])  # within the pipe buffer: never blocks
            os._exit(0)
        os.close(write)
        return pid, read


    def collect(pid, read):
        os.waitpid(pid, 0)
        with os.fdopen(read, "rb") as f:
            return f.read().decode()


    def third_party():
        for name in modules:
            try:
                __import__(name)
            except BaseException:
                pass  # reported by the module's own child below
        return json.dumps(sorted(m for m in sys.modules if not is_ours(m) and not m.startswith("_")))


    def import_alone(name):
        def job():
            assert not [m for m in sys.modules if is_ours(m)]
            __import__(name)
            loaded = set(sys.modules)
            if not name.startswith(may_import_testing) and "framework.testing" in loaded:
                return "imports framework.testing"
            if name.startswith("framework") and any(m.split(".")[0] == "gcm" for m in loaded):
                return "a framework module imports gcm"
            return ""

        return job


    # Preload every third-party module a full import loads (learnt in a throwaway child): they are
    # not what is tested, and they are most of each child's import time.
    preload = json.loads(collect(*fork(third_party)))
    for name in preload:
        try:
            __import__(name)
        except BaseException:
            pass  # e.g. a platform-specific submodule; the child imports it itself if it needs it
    assert not [m for m in sys.modules if is_ours(m)]
    failures, running, todo = {}, {}, list(modules)
    jobs = max(2, os.cpu_count() or 1)
    while todo or running:
        while todo and len(running) < jobs:
            name = todo.pop()
            pid, read = fork(import_alone(name))
            running[pid] = (name, read)
        pid, _ = os.wait()
        name, read = running.pop(pid)
        with os.fdopen(read, "rb") as f:
            problem = f.read().decode()
        if problem:
            failures[name] = problem
    print(json.dumps(failures))
    """
)


def all_modules() -> list[str]:
    found = (
        m.name for pkg in (framework, gcm) for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")
    )
    return [*sorted(found), "framework", "gcm"]


@pytest.mark.timeout(600)
def test_every_module_imports_alone_in_a_fresh_interpreter():
    modules = all_modules()
    assert "framework.reconcile" in modules and "gcm.__main__" in modules
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(modules), json.dumps(MAY_IMPORT_TESTING)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    failures = json.loads(out.stdout.strip().splitlines()[-1])
    assert failures == {}, "\n\n".join(f"{name}: {problem}" for name, problem in failures.items())
