"""gcm's manifests as package data (issue 16 §5): ``manifests/`` stays the deploy source, ``gcm/manifests``
links to it, and a wheel carries the files, so ``pip install .`` (not editable) then ``python -m gcm
--embedded`` works outside a checkout.

The wheel test builds gcm with pip from a copy of the checkout (build isolation: setuptools comes from
the package index, as for any user) and runs it with ``-S`` and an explicit ``PYTHONPATH`` (the
installed wheel, then this venv's site-packages for the dependencies), so neither the checkout nor the
editable install can be imported.
"""

from __future__ import annotations

import importlib.resources
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest
import urllib3
from kubernetes import client
from kubernetes import config as kube_config

from framework.testing import eventually, free_port
from gcm.embedded import load_documents, manifests_dir
from tests.gcm import local_gcm

REPO = Path(__file__).resolve().parents[3]
MANIFESTS = REPO / "manifests"
IGNORED = (".git", ".venv", "build", "*.egg-info", "__pycache__", ".hypothesis", ".gcm")


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_package_resources_are_the_top_level_manifests():
    shipped = importlib.resources.files("gcm") / "manifests"
    assert manifests_dir() == shipped
    assert (REPO / "gcm" / "manifests").is_symlink(), "gcm/manifests must stay a link to manifests/"
    assert (REPO / "gcm" / "manifests").resolve() == MANIFESTS.resolve()
    assert _files(Path(str(shipped))) == _files(MANIFESTS)
    kinds = {d["kind"] for d in load_documents(manifests_dir() / "deploy")}
    assert {"Deployment", "ConfigMap", "ClusterRole", "ValidatingWebhookConfiguration"} <= kinds


def test_package_data_glob_covers_every_manifest():
    """A manifest the ``package-data`` glob misses would be in the checkout but not in a wheel."""
    globs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert globs["gcm.manifests"] == ["**/*.yaml", "**/*.json"]
    assert all(name.endswith((".yaml", ".json")) for name in _files(MANIFESTS)), sorted(_files(MANIFESTS))


def _isolated_env(first: Path) -> dict[str, str]:
    """``first`` then this venv's site-packages (dependencies); no checkout, no editable finder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE", "PYTHON"))}
    env["PYTHONPATH"] = os.pathsep.join([str(first), sysconfig.get_paths()["purelib"]])
    env["HOME"] = str(first)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the checkout (setuptools' build/ would otherwise linger in it)."""
    src, out = tmp_path_factory.mktemp("src") / "gcm", tmp_path_factory.mktemp("wheel")
    shutil.copytree(REPO, src, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED))
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    (path,) = out.glob("gcm-*.whl")
    return path


def test_wheel_carries_the_manifests(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = {n.removeprefix("gcm/manifests/") for n in z.namelist() if n.startswith("gcm/manifests/")}
    assert names == _files(MANIFESTS)


def test_installed_wheel_runs_embedded_outside_a_checkout(wheel, tmp_path):
    site = tmp_path / "site"
    r = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    env = _isolated_env(site)
    where = subprocess.run(
        [sys.executable, "-S", "-c", "import gcm.embedded as e; print(e.manifests_dir())"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.stdout.strip() == str(site / "gcm" / "manifests"), where.stderr

    api = free_port()
    config, ports = local_gcm.write_config(tmp_path)
    probes = ports.probes
    kubeconfig = tmp_path / "kubeconfig"
    log = tmp_path / "gcm.log"
    argv = ["--embedded", "--embedded-port", str(api), "--embedded-kubeconfig", str(kubeconfig)]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-S", "-m", "gcm", *argv, "--config", str(config)],
            env=env,
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        http = urllib3.PoolManager(retries=False, timeout=5)

        def ready() -> bool:
            assert proc.poll() is None, f"gcm exited with {proc.returncode}:\n{log.read_text()}"
            return http.request("GET", f"http://127.0.0.1:{probes}/readyz").status == 200

        eventually(ready, timeout=90, interval=0.2, message="/readyz", ignore=(urllib3.exceptions.HTTPError,))
        # The CRDs came from the wheel's package data: the embedded server serves Projects.
        api_client = kube_config.new_client_from_config(str(kubeconfig))
        crds = client.ApiextensionsV1Api(api_client).list_custom_resource_definition()
        assert "projects.core.gardener.cloud" in {c.metadata.name for c in crds.items}
        api_client.close()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    assert code == 0, log.read_text()
