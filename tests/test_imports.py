"""Every module of ``framework`` and ``gcm`` imports on its own in a fresh interpreter (no import
cycles, no reliance on another module having been imported first), and no production module pulls in
``framework.testing`` or (for ``framework``) ``gcm``.

One subprocess preloads the third-party modules (they are not what is tested and make up most of
the import time), then forks one child per package, a few at a time: each starts without any
``framework``/``gcm`` module loaded, imports the package (what Python imports first for any module in
it) and forks one grandchild per module of the package, which imports exactly that module.
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

# Only the test support imports itself; production code (gcm --embedded too) uses framework.apiserver.
MAY_IMPORT_TESTING = ("framework.testing",)

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
            __import__(name)
            loaded = set(sys.modules)
            if not name.startswith(may_import_testing) and "framework.testing" in loaded:
                return "imports framework.testing"
            if name.startswith("framework") and any(m.split(".")[0] == "gcm" for m in loaded):
                return "a framework module imports gcm"
            return ""

        return job


    def run(jobs, parallel):
        # {name: problem} of the forked jobs {name: job}, `parallel` at a time.
        failures, running, todo = {}, {}, list(jobs.items())
        while todo or running:
            while todo and len(running) < parallel:
                name, job = todo.pop()
                pid, read = fork(job)
                running[pid] = (name, read)
            pid, _ = os.wait()
            name, read = running.pop(pid)
            problem = collect_from(read)
            if problem:
                failures[name] = problem
        return failures


    def collect_from(read):
        with os.fdopen(read, "rb") as f:
            return f.read().decode()


    def package_then_modules(package, names):
        # Import `package` (with its parents: what Python imports first for any module in it), then
        # each of `names` in a child of its own. A fresh interpreter does the same imports in the same
        # order, but imports `package` once per module: framework.apiserver's ~160 modules
        # each imported the whole API server.

        def job():
            assert not [m for m in sys.modules if is_ours(m)]
            try:
                __import__(package)
            except BaseException:
                # Every module in it fails the same way (the package's own child says why).
                return json.dumps({name: f"its package {package} does not import" for name in names})
            return json.dumps(run({name: import_alone(name) for name in names}, 1))

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
    by_package = {}
    for name in modules:
        by_package.setdefault(name.rpartition(".")[0], []).append(name)
    jobs = {name: import_alone(name) for name in by_package.pop("", [])}  # framework and gcm
    jobs |= {f"package {p}": package_then_modules(p, names) for p, names in by_package.items()}
    failures = {}
    for name, problem in run(jobs, max(2, os.cpu_count() or 1)).items():
        if not name.startswith("package "):
            failures[name] = problem
            continue
        try:
            failures.update(json.loads(problem))
        except ValueError:  # cut short by the pipe limit, or the child died
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
